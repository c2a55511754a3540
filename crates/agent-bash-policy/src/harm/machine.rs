//! The machine itself: disks, firmware and boot, the running kernel, power, and signals
//! to every process.

use super::*;

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
            crate::paths::names_disk(&Arg {
                text: value.to_owned(),
                ..arg.clone()
            })
        })
    };
    if crate::commands::makes_file_system(&name) {
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
        // A path loads any file; `-r` unloads a driver the machine may be running on;
        // some modules open the hardware itself (`msr`: CPU registers, `nbd`: disks served
        // over the network).
        "modprobe" => {
            operands(form).any(|arg| {
                arg.text.contains('/')
                    || matches!(arg.text.as_str(), "msr" | "nbd" | "phram" | "mtdram")
            }) || has(form, &["-r", "--remove", "--remove-holders"])
        }
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

/// True if `form` signals every process, or every process but some: `pkill -v`, a pattern
/// matching any name (`pkill .`, `killall -r '.*'`), all of a user's (`pkill -u root`), the
/// children of init (`pkill -P 1`).
pub(crate) fn kill_many(form: &[Arg]) -> bool {
    let name = name(form);
    if name == "loginctl" {
        // Ends every process of a user (or of every session).
        return form.get(1).is_some_and(|sub| {
            matches!(
                sub.text.as_str(),
                "terminate-user" | "kill-user" | "kill-session"
            )
        });
    }
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
/// True if `form` cuts the machine off or takes away what it stands on, as a shutdown
/// would: the network interface down, a firewall that drops everything or is flushed with
/// it, `sshd` or the journal masked or stopped, the root or home file system unmounted or
/// made read-only, a disk filled (`fallocate -l 900G`, `dd` from `/dev/zero` with no
/// `count`).
pub(crate) fn cuts_off(form: &[Arg]) -> bool {
    let name = name(form);
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let has_word = |word: &str| words.contains(&word);
    match &*name {
        "ip" => has_word("link") && has_word("down") || (has_word("addr") && has_word("flush")),
        "ifconfig" | "ifdown" => has_word("down") || name == "ifdown",
        "nmcli" => has_word("off") && (has_word("networking") || has_word("radio")),
        "iptables" | "ip6tables" => {
            words.windows(2).any(|pair| {
                matches!(pair[0], "-P" | "--policy") && matches!(pair[1], "INPUT" | "OUTPUT")
            }) && (has_word("DROP") || has_word("REJECT"))
        }
        "nft" => has_word("flush") && has_word("ruleset"),
        "ufw" => {
            has_word("deny")
                && (has_word("incoming") || has_word("outgoing"))
                && has_word("default")
        }
        "systemctl" => {
            words
                .iter()
                .any(|word| matches!(*word, "mask" | "stop" | "disable" | "kill"))
                && words.iter().any(|word| {
                    matches!(
                        word.trim_end_matches(".service"),
                        "sshd"
                            | "ssh"
                            | "systemd-journald"
                            | "systemd-logind"
                            | "dbus"
                            | "systemd-networkd"
                            | "NetworkManager"
                            | "networking"
                    )
                })
        }
        "umount" => {
            words.iter().any(|word| {
                matches!(
                    word.trim_end_matches('/'),
                    "" | "/home" | "/usr" | "/var" | "/boot" | "/etc" | "/proc" | "/sys" | "/dev"
                ) && !word.starts_with('-')
            }) || has_word("-a")
        }
        "mount" => {
            words
                .iter()
                .any(|word| word.contains("remount") && word.contains("ro"))
                && words
                    .iter()
                    .any(|word| matches!(*word, "/" | "/home" | "/usr" | "/var"))
        }
        // The clock turned back: certificates, builds and logs stop making sense.
        "timedatectl" => has_word("set-time") || (has_word("set-ntp") && has_word("false")),
        // Swap off with memory filled: the out-of-memory killer takes whatever it picks.
        "swapoff" => has_word("-a") || has_word("--all"),
        "stress-ng" | "stress" => words.iter().any(|word| {
            word.strip_suffix('%')
                .and_then(|number| number.parse::<u32>().ok())
                .is_some_and(|percent| percent >= 90)
        }),
        "fallocate" => {
            words
                .windows(2)
                .any(|pair| matches!(pair[0], "-l" | "--length") && huge_size(pair[1]))
                || words
                    .iter()
                    .any(|word| word.strip_prefix("-l").is_some_and(huge_size))
        }
        "dd" => {
            words
                .iter()
                .any(|word| matches!(*word, "if=/dev/zero" | "if=/dev/urandom" | "if=/dev/random"))
                && words.iter().any(|word| word.starts_with("of="))
                && !words.iter().any(|word| word.starts_with("count="))
        }
        _ => false,
    }
}

/// True for a size of 100 GB or more (`900G`, `1T`).
fn huge_size(size: &str) -> bool {
    let digits: String = size.chars().take_while(char::is_ascii_digit).collect();
    let number: u64 = digits.parse().unwrap_or(0);
    match size[digits.len()..]
        .chars()
        .next()
        .map(|c| c.to_ascii_uppercase())
    {
        Some('G') => number >= 100,
        Some('T' | 'P' | 'E') => number >= 1,
        _ => false,
    }
}

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
