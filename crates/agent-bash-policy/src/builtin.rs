//! Built-in deny rules: commands no coding agent should run, recognized from their words
//! whatever the spelling (flag order, quoting, wrappers, nesting).
//!
//! Each rule is a predicate over one command the shell runs (and, for redirections, input and
//! function calls, over the command's context). Pure: looks at words, runs nothing.

use crate::commands::{self, ProgramSource};
use crate::harm;
use crate::paths::{Target, classify, classify_in, is_block_device, normalize};
use crate::walk::{Found, Stdin};
use crate::words::Arg;

/// A built-in rule.
pub(crate) struct Builtin {
    pub name: &'static str,
    /// What it denies, for documentation and `agent-bash config`.
    pub description: &'static str,
    /// The reason shown to the model.
    pub reason: &'static str,
    /// True if the rule matches `form`, one of the commands `found` runs through wrappers.
    test: fn(&Found, &[Arg]) -> bool,
}

impl Builtin {
    pub(crate) fn matches(&self, found: &Found) -> bool {
        found.each_form().any(|form| (self.test)(found, form))
    }
}

pub(crate) const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "rm-root",
        description: "recursive rm of /, /* or the home directory (~, ~/, $HOME, ${HOME}, ~/*)",
        reason: "recursively deleting the root or home directory destroys the system or the user's files",
        test: rm_root,
    },
    Builtin {
        name: "rm-system-dir",
        description: "recursive rm of a top-level system directory (/usr, /etc, /bin, /var, /home, …)",
        reason: "recursively deleting a top-level system directory breaks the machine",
        test: rm_system_dir,
    },
    Builtin {
        name: "no-preserve-root",
        description: "any command with --no-preserve-root",
        reason: "--no-preserve-root exists only to let a command act on / itself",
        test: no_preserve_root,
    },
    Builtin {
        name: "find-delete-root",
        description: "find starting at / (or at the home directory with no test such as -name) with -delete or -exec rm",
        reason: "deleting files found from the root or home directory can wipe the system or the user's files",
        test: find_delete_root,
    },
    Builtin {
        name: "mkfs",
        description: "creating a file system: mkfs, mkfs.*, mke2fs, mkdosfs, mkntfs, newfs*",
        reason: "creating a file system erases the device it is made on",
        test: mkfs,
    },
    Builtin {
        name: "dd-block-device",
        description: "dd with of= a disk block device (/dev/sd*, /dev/nvme*, /dev/vd*, /dev/mapper/*, …)",
        reason: "dd onto a disk device overwrites its data",
        test: dd_block_device,
    },
    Builtin {
        name: "redirect-block-device",
        description: "a >, >>, &>, >| or <> redirection onto a disk block device",
        reason: "writing to a disk device overwrites its data",
        test: redirect_block_device,
    },
    Builtin {
        name: "wipe-block-device",
        description: "shred, wipefs, blkdiscard, tee or cp onto a disk block device",
        reason: "this overwrites or discards the data of a disk device",
        test: wipe_block_device,
    },
    Builtin {
        name: "fork-bomb",
        description: "a function that calls itself in the background or twice in one pipeline (:(){ :|:& };:), or an endless loop that starts a background command each turn and never waits",
        reason: "a function or loop that keeps starting processes without end exhausts the machine (fork bomb)",
        test: fork_bomb,
    },
    Builtin {
        name: "chmod-root",
        description: "chmod, chown or chgrp -R on / (or /*) or a top-level system directory",
        reason: "recursively changing permissions or owners from the root breaks the system",
        test: chmod_root,
    },
    Builtin {
        name: "download-to-shell",
        description: "running downloaded code: curl/wget piped or fed to sh, bash, zsh, dash, ksh, fish, python, perl, ruby, node, php, eval or source",
        reason: "running a script straight from the network executes code nobody has reviewed; download it to a file and inspect it first",
        test: download_to_shell,
    },
    Builtin {
        name: "shutdown",
        description: "shutdown, reboot, halt, poweroff, systemctl/loginctl poweroff|reboot|halt|kexec, init 0|6; the machine cut off: network down, a firewall dropping everything, sshd or the journal masked, a system file system unmounted or made read-only, the disk filled",
        reason: "shutting down, rebooting or cutting off the machine stops everyone's work",
        test: shutdown,
    },
    Builtin {
        name: "project-history",
        description: "deleting or moving .git or its objects, expiring the reflog now, deleting a shared branch's ref, a filter-branch that removes every file",
        reason: "this destroys the project's history, which no later command can bring back",
        test: harm::project_history,
    },
    Builtin {
        name: "user-files",
        description: "recursive delete, move or permission change of the home directory, a folder directly in it (~/src, ~/.ssh) or below a system directory; deleting or truncating a credential or start-up file; rsync --delete, find -exec truncate, git clean aimed there",
        reason: "this destroys the user's files outside the project (a home folder, credentials, start-up files) or the system's own files",
        test: harm::user_files,
    },
    Builtin {
        name: "disk-write",
        description: "a program other than a reader (lsblk, blkid, fdisk -l, …) given a disk device: image tools, partition-table and secure-erase tools, `pv`, …",
        reason: "writing a disk device, its partition table or its firmware destroys its data",
        test: harm::disk_write,
    },
    Builtin {
        name: "firmware",
        description: "flashrom -w, efibootmgr changes, grub-install, fwupdmgr install, bootctl install, mokutil --disable-validation",
        reason: "changing firmware or the boot configuration can leave the machine unable to start",
        test: harm::firmware,
    },
    Builtin {
        name: "kernel",
        description: "insmod, rmmod, modprobe, kexec, sysctl -w, writes under /proc/sys, /sys/kernel, /sys/firmware, /dev/mem",
        reason: "changing the running kernel (modules, sysctl settings, core_pattern) affects the whole machine and can run code as root",
        test: harm::kernel,
    },
    Builtin {
        name: "privilege",
        description: "setuid/setgid modes, setcap, joining sudo/wheel/docker, visudo, writes to sudoers, passwd, shadow, ld.so.preload, cron, systemd units, PAM, ~/.ssh/authorized_keys, /etc/hosts pointed elsewhere; administrator rights on a cloud account or repository",
        reason: "this grants privileges (here or on a remote account) or plants code that runs later as another user or at login",
        test: harm::privilege,
    },
    Builtin {
        name: "persistence",
        description: "crontab, at, systemctl link/enable --now, enable-linger, or shell start-up files (~/.bashrc, ~/.profile, ~/.gitconfig, …) given more than exports and aliases",
        reason: "this installs code that runs later, outside this session (a scheduled job or a shell start-up file)",
        test: harm::persistence,
    },
    Builtin {
        name: "system-packages",
        description: "removing a package the system needs (libc6, bash, coreutils, systemd, …) or any removal with the safety checks forced off",
        reason: "removing a package the system needs leaves the machine unable to run programs or boot",
        test: harm::system_packages,
    },
    Builtin {
        name: "remote-destroy",
        description: "forced push, deletion or mirror of a shared branch; terraform/pulumi destroy; gh repo/release delete; cloud, bucket, cluster and database deletions",
        reason: "this destroys something on a remote system that cannot be taken back from here",
        test: harm::remote_destroy,
    },
    Builtin {
        name: "reverse-shell",
        description: "a shell wired to a network connection: bash -i >& /dev/tcp/…, nc -e, socat TCP:… EXEC:…, interpreter code joining a socket to a shell, a shell fed from a pipe alongside nc",
        reason: "this hands a shell on this machine to whoever is at the other end of a network connection",
        test: reverse_shell,
    },
    Builtin {
        name: "secret-exfiltration",
        description: "a credential file (~/.ssh/id_*, ~/.aws, ~/.netrc, ~/.kube, …) or the whole environment read in a command that sends data to another machine; the whole repository pushed to a remote the same command adds",
        reason: "this sends credentials, the environment (which holds secrets) or the whole repository to another machine",
        test: exfiltration,
    },
    Builtin {
        name: "kill-all",
        description: "kill with pid -1 (every process) or 1 (init), with any signal but 0",
        reason: "killing pid -1 signals every process the user owns (pid 1 is init)",
        test: kill_all,
    },
];

/// The options and operands of a GNU-style command line (options may follow operands; `--`
/// ends them).
fn split_options(form: &[Arg]) -> (Vec<&str>, Vec<&Arg>) {
    let mut options = Vec::new();
    let mut operands = Vec::new();
    let mut options_done = false;
    for arg in form.iter().skip(1) {
        if !options_done && arg.text == "--" {
            options_done = true;
        } else if !options_done && arg.text.len() > 1 && arg.text.starts_with('-') {
            options.push(arg.text.as_str());
        } else {
            operands.push(arg);
        }
    }
    (options, operands)
}

/// True if `option` is a short-option cluster holding `letter` (`-rf` holds `r`).
fn short_cluster_has(option: &str, letter: char) -> bool {
    !option.starts_with("--") && option[1..].contains(letter)
}

/// True if `option` is `--long` or an abbreviation of it at least `min_len` characters long
/// (GNU getopt accepts unambiguous abbreviations).
fn long_option_is(option: &str, long: &str, min_len: usize) -> bool {
    option.len() >= min_len && long.starts_with(option)
}

fn name(form: &[Arg]) -> std::borrow::Cow<'_, str> {
    commands::program_name(form).unwrap_or_default()
}

/// The operands of `rm` if it deletes recursively.
fn rm_recursive_operands(form: &[Arg]) -> Vec<&Arg> {
    if name(form) != "rm" {
        return Vec::new();
    }
    let (options, operands) = split_options(form);
    let recursive = options.iter().any(|option| {
        short_cluster_has(option, 'r')
            || short_cluster_has(option, 'R')
            || long_option_is(option, "--recursive", 3)
    });
    if recursive { operands } else { Vec::new() }
}

fn rm_root(found: &Found, form: &[Arg]) -> bool {
    rm_recursive_operands(form)
        .into_iter()
        .any(|arg| matches!(classify_in(found, arg), Target::Root | Target::Home))
}

fn rm_system_dir(found: &Found, form: &[Arg]) -> bool {
    rm_recursive_operands(form)
        .into_iter()
        .any(|arg| classify_in(found, arg) == Target::SystemDir)
}

/// Why the command is unknown if `rm` deletes recursively an operand that is `/` or `/*`
/// when its expansions are empty: `rm -rf "$dir/"`, `"$dir"/*`, `"$a/$b"` (an unset or
/// empty variable is an empty string to bash).
pub(crate) fn empty_expansion_deletes_root(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let operand = rm_recursive_operands(form)
            .into_iter()
            .find(|arg| !arg.literal && only_slashes_and_stars(&without_expansions(&arg.text)))?;
        Some(format!(
            "`rm` deletes `{}`, which is `/` or everything under it if its variables are \
             empty or unset; whether they are is only known when the shell runs it",
            operand.text
        ))
    })
}

/// Why the command is unknown if it makes a file system on a device named at run time
/// (`mkfs.ext4 $DEV`): the `mkfs` rule denies it on a disk, and which one it is cannot be seen.
pub(crate) fn file_system_on_unknown_device(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let name = name(form);
        if !commands::makes_file_system(&name) {
            return None;
        }
        let device = split_options(form).1.into_iter().find(|arg| !arg.literal)?;
        Some(format!(
            "`{name}` makes a file system on `{}`, which is only known when the shell runs it",
            device.text
        ))
    })
}

fn only_slashes_and_stars(text: &str) -> bool {
    text.contains('/') && text.bytes().all(|byte| matches!(byte, b'/' | b'*'))
}

/// `text` with its `$name`, `${…}`, `$(…)` and backquoted parts left out.
fn without_expansions(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('$', Some('{' | '(')) => {
                let (open, close) = if chars.next() == Some('{') {
                    ('{', '}')
                } else {
                    ('(', ')')
                };
                let mut depth = 1;
                for inner in chars.by_ref() {
                    depth += usize::from(inner == open);
                    depth -= usize::from(inner == close);
                    if depth == 0 {
                        break;
                    }
                }
            }
            ('$', Some(next)) if next.is_ascii_alphanumeric() || "_@*#?!$-".contains(*next) => {
                let special = !(next.is_ascii_alphabetic() || *next == '_');
                if special {
                    chars.next();
                } else {
                    while chars
                        .next_if(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .is_some()
                    {}
                }
            }
            ('`', _) => {
                for inner in chars.by_ref() {
                    if inner == '`' {
                        break;
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn no_preserve_root(_: &Found, form: &[Arg]) -> bool {
    let min_len = match &*name(form) {
        "rm" | "chmod" => 3,
        "chown" | "chgrp" => 6,
        _ => "--no-preserve-root".len(),
    };
    split_options(form)
        .0
        .iter()
        .any(|option| long_option_is(option, "--no-preserve-root", min_len))
}

fn find_delete_root(_: &Found, form: &[Arg]) -> bool {
    find_delete(form).is_some_and(|found| found.from_root || (found.from_home && !found.narrowed))
}

/// A `find` that deletes what it finds (`-delete`, `-exec rm`): where it starts, and whether
/// a test narrows what it deletes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FindDelete {
    /// A start point is `/` (or `/*`, …).
    pub(crate) from_root: bool,
    /// A start point is the home directory.
    pub(crate) from_home: bool,
    /// A test picks files by name, path, age or size (`-name '*.pyc'`): not everything.
    pub(crate) narrowed: bool,
}

/// Tests of `find` that pick some files, not every file (`-type f` alone is every file).
const NARROWING_TESTS: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-newer",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-size",
    "-empty",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-perm",
    "-links",
    "-inum",
    "-samefile",
];

/// `form` as a deleting `find`, if it is one.
pub(crate) fn find_delete(form: &[Arg]) -> Option<FindDelete> {
    if name(form) != "find" {
        return None;
    }
    let mut index = 1;
    // Leading options: -H, -L, -P, -D debugopts, -O level.
    while let Some(arg) = form.get(index) {
        match arg.text.as_str() {
            "-H" | "-L" | "-P" | "--" => index += 1,
            "-D" => index += 2,
            text if text.starts_with("-O") => index += 1,
            _ => break,
        }
    }
    let starts: Vec<Target> = form[index.min(form.len())..]
        .iter()
        .take_while(|arg| {
            !(arg.text.starts_with('-') || matches!(arg.text.as_str(), "(" | ")" | "!" | ","))
        })
        .map(classify)
        .collect();
    // `-exec rm`, also through wrappers (`-exec sudo rm -rf {} +`).
    let deletes = form.iter().enumerate().any(|(at, arg)| {
        matches!(arg.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
            && form.get(at + 1..).is_some_and(|command| {
                crate::forms::forms(command)
                    .iter()
                    .any(|start| name(&command[*start..]) == "rm")
            })
    }) || form.iter().any(|arg| arg.text == "-delete");
    let from_home = starts.contains(&Target::Home);
    // A name pattern that matches every name narrows nothing; in home, `.*` picks the
    // dot-files: the configuration and the credentials.
    let narrows = |pair: &[Arg]| {
        NARROWING_TESTS.contains(&pair[0].text.as_str())
            && !matches!(pair[1].text.as_str(), "*" | "*.*" | "?*" | "*/*")
            && !(from_home && pair[1].text == ".*")
    };
    let dot_files = from_home
        && form.windows(2).any(|pair| {
            matches!(pair[0].text.as_str(), "-name" | "-iname") && pair[1].text == ".*"
        });
    deletes.then(|| FindDelete {
        from_root: starts.contains(&Target::Root) || starts.contains(&Target::SystemDir),
        from_home,
        narrowed: !dot_files && form.windows(2).any(narrows),
    })
}

/// A file system made on a disk device: an image file (`mkfs.ext4 disk.img`) or no operand
/// at all (`mkfs --help`) erases nothing.
fn mkfs(_: &Found, form: &[Arg]) -> bool {
    commands::makes_file_system(&name(form))
        && split_options(form).1.into_iter().any(is_block_device)
}

fn dd_block_device(_: &Found, form: &[Arg]) -> bool {
    matches!(&*name(form), "dd" | "dcfldd")
        && form.iter().skip(1).any(|arg| {
            arg.text.strip_prefix("of=").is_some_and(|path| {
                is_block_device(&Arg {
                    text: path.to_owned(),
                    ..arg.clone()
                })
            })
        })
}

fn redirect_block_device(found: &Found, _: &[Arg]) -> bool {
    found
        .redirects
        .iter()
        .any(|redirect| redirect.writes() && is_block_device(&redirect.target))
}

fn wipe_block_device(_: &Found, form: &[Arg]) -> bool {
    let (_, operands) = split_options(form);
    match &*name(form) {
        "shred" | "blkdiscard" | "tee" | "mkswap" => operands.into_iter().any(is_block_device),
        "wipefs" => wipefs_erases(form) && operands.into_iter().any(is_block_device),
        "ddrescue" => operands.get(1).is_some_and(|out| is_block_device(out)),
        "cp" => operands.last().is_some_and(|last| is_block_device(last)),
        _ => false,
    }
}

/// True if `wipefs` erases (`-a`, `--all`, `-o`, `--offset`) rather than lists, and not
/// with `-n`/`--no-act`.
fn wipefs_erases(form: &[Arg]) -> bool {
    let (options, _) = split_options(form);
    let has = |letter: char, long: &str| {
        options
            .iter()
            .any(|option| short_cluster_has(option, letter) || long_option_is(option, long, 3))
    };
    (has('a', "--all") || has('o', "--offset")) && !has('n', "--no-act")
}

fn reverse_shell(found: &Found, form: &[Arg]) -> bool {
    found.reverse_shell || harm::reverse_shell(found, form)
}

fn exfiltration(found: &Found, _: &[Arg]) -> bool {
    found.exfiltrates
}

fn fork_bomb(found: &Found, _: &[Arg]) -> bool {
    found.fork_bomb
}

fn chmod_root(found: &Found, form: &[Arg]) -> bool {
    if !matches!(&*name(form), "chmod" | "chown" | "chgrp") {
        return false;
    }
    let (options, operands) = split_options(form);
    let recursive = options
        .iter()
        .any(|option| short_cluster_has(option, 'R') || long_option_is(option, "--recursive", 5));
    recursive
        && operands.into_iter().any(|arg| {
            matches!(
                classify_in(found, arg),
                Target::Root | Target::SystemDir | Target::Home
            )
        })
}

/// True unless `form` is Deno running a module with no permission to run programs or write
/// files (Deno confines a module to what its flags allow).
fn unconfined_remote_module(form: &[Arg]) -> bool {
    name(form) != "deno"
        || form.iter().any(|arg| {
            matches!(arg.text.as_str(), "-A" | "--allow-all")
                || arg.text.starts_with("--allow-run")
                || arg.text.starts_with("--allow-write")
                || arg.text.starts_with("--allow-ffi")
        })
}

fn download_to_shell(found: &Found, form: &[Arg]) -> bool {
    if found.runs_download {
        return true;
    }
    // Interpreter code that fetches code and evaluates it (`exec(urlopen(…).read())`,
    // `fetch(…).then(eval)`), or a program run from a URL (`deno run https://…`).
    if commands::program(form).is_some_and(|name| commands::is_language_interpreter(&name))
        && ((harm::fetches_in_code(form)
            && form
                .iter()
                .skip(1)
                .any(|arg| harm::evaluates_code(&arg.text)))
            || (matches!(commands::program_source(form),
                Some(commands::ProgramSource::File(arg)) if arg.text.contains("://"))
                && unconfined_remote_module(form)))
    {
        return true;
    }
    // A package installed from a plain-http or bare-address URL or index (`npm i -g
    // http://203.0.113.4/p.tgz`, `pip install --index-url http://…`): its install scripts
    // run as fetched, from a source anyone on the way can replace.
    let python_pip = form
        .windows(2)
        .any(|pair| pair[0].text == "-m" && pair[1].text == "pip");
    if (python_pip
        || matches!(
            &*name(form),
            "npm" | "pnpm" | "yarn" | "bun" | "pip" | "pip3" | "uv" | "pipx" | "gem" | "cargo"
        ))
        && form
            .iter()
            .any(|arg| matches!(arg.text.as_str(), "install" | "i" | "add"))
        && form.iter().skip(1).any(|arg| {
            let url = arg
                .text
                .split_once('=')
                .filter(|(option, _)| option.starts_with("--"))
                .map_or(arg.text.as_str(), |(_, value)| value);
            url.strip_prefix("http://").is_some_and(|rest| {
                let host = rest.split(['/', ':']).next().unwrap_or("");
                !harm::is_loopback(host)
            }) || url
                .strip_prefix("https://")
                .and_then(|rest| rest.split(['/', ':']).next())
                .is_some_and(|host| {
                    host.parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| !ip.is_loopback())
                })
        })
    {
        return true;
    }
    // A build or compose file handed over as a download (`gradle -I <(curl …)`,
    // `docker compose -f <(curl …) up`).
    if form.windows(2).any(|pair| {
        matches!(
            pair[0].text.as_str(),
            "-I" | "--init-script" | "-f" | "--file" | "-c" | "--config" | "--settings" | "-s"
        ) && pair[1].download
    }) {
        return true;
    }
    // Interpreter code fed on input that fetches code and evaluates it.
    if commands::program(form).is_some_and(|name| commands::is_language_interpreter(&name))
        && found
            .redirects
            .iter()
            .filter_map(|redirect| redirect.body.as_deref())
            .any(|body| {
                harm::fetches_in_code(&[Arg::literal(""), Arg::literal(body)])
                    && harm::evaluates_code(body)
            })
    {
        return true;
    }
    // A makefile read from a download (`curl … | make -f -`).
    if found.stdin == Stdin::DownloadPipe && crate::runners::stdin_makefile(form) {
        return true;
    }
    // A package runner handed an archive straight from a URL (`npx --yes https://…/x.tgz`):
    // its install scripts and its binary run as downloaded.
    if matches!(
        &*name(form),
        "npx" | "bunx" | "pnpx" | "uvx" | "pipx" | "pnpm" | "yarn" | "npm"
    ) && form.iter().skip(1).any(|arg| {
        let text = arg
            .text
            .trim_start_matches("--from=")
            .trim_start_matches("--package=");
        (text.starts_with("http://") || text.starts_with("https://"))
            && [".tgz", ".tar.gz", ".whl", ".zip"]
                .iter()
                .any(|end| text.ends_with(end))
    }) && !form
        .iter()
        .any(|arg| matches!(arg.text.as_str(), "install" | "add" | "i"))
    {
        return true;
    }
    // awk reading a download (a command string it runs, or a file from `<(curl …)`) and
    // printing to a shell (`print | "sh"`).
    if matches!(&*name(form), "awk" | "gawk" | "mawk" | "nawk")
        && form.iter().skip(1).any(|arg| {
            arg.text.contains("| \"sh\"")
                || arg.text.contains("|\"sh\"")
                || arg.text.contains("| \"bash\"")
                || arg.text.contains("|\"bash\"")
        })
        && form.iter().skip(1).any(|arg| {
            arg.download
                || ["\"curl ", "\"wget ", "\"fetch "]
                    .iter()
                    .any(|start| arg.text.contains(start))
        })
    {
        return true;
    }
    // A shell started with a downloaded start-up file (`bash --rcfile <(curl …)`).
    if commands::program(form).is_some_and(|name| commands::is_shell(&name))
        && form.windows(2).any(|pair| {
            matches!(pair[0].text.as_str(), "--rcfile" | "--init-file") && pair[1].download
        })
    {
        return true;
    }
    // A command whose name is only known at run time, fed a download (`curl … | "$SHELL"`).
    if found.stdin == Stdin::DownloadPipe
        && commands::program(form).is_none()
        && form.first().is_some_and(|first| !first.literal)
    {
        return true;
    }
    // `$(curl …)` as the command: the download's output is run.
    if form.first().is_some_and(|first| first.download) {
        return true;
    }
    if name(form) == "eval" {
        return form.iter().skip(1).any(|arg| arg.download);
    }
    let reads_stdin = match commands::program_source(form) {
        // Database shells run their input's shell escapes (`.shell`, `\!`, `system`).
        None if commands::input_reaches_shell(&name(form))
            && !form
                .iter()
                .any(|arg| matches!(arg.text.as_str(), "-c" | "-e" | "--command" | "-f")) =>
        {
            true
        }
        // `bash /dev/fd/3 3< <(curl …)`: the script is what the redirection of fd 3 reads.
        Some(ProgramSource::File(arg)) if fd_path(&arg.text).is_some() => {
            let fd = fd_path(&arg.text);
            return found
                .redirects
                .iter()
                .any(|redirect| redirect.fd == fd && redirect.target.download);
        }
        Some(ProgramSource::Inline(arg) | ProgramSource::File(arg)) => return arg.download,
        Some(ProgramSource::Stdin) => true,
        None => commands::shell_reads_stdin(form),
    };
    // From a pipe after a download, a here-document holding `$(curl …)`, or `< <(curl …)`.
    reads_stdin
        && (found.stdin == Stdin::DownloadPipe
            || found.redirects.iter().any(|redirect| {
                (redirect.body.is_some() || redirect.op == "<") && redirect.target.download
            }))
}

/// The descriptor `/dev/fd/N` or `/proc/self/fd/N` names.
fn fd_path(text: &str) -> Option<i32> {
    text.strip_prefix("/dev/fd/")
        .or_else(|| text.strip_prefix("/proc/self/fd/"))
        .and_then(|n| n.parse().ok())
}

/// systemd targets that stop, restart or suspend the machine.
const STOPPING_TARGETS: &[&str] = &[
    "poweroff.target",
    "reboot.target",
    "halt.target",
    "kexec.target",
    "soft-reboot.target",
    "rescue.target",
    "emergency.target",
    "suspend.target",
    "hibernate.target",
    "ctrl-alt-del.target",
];

fn shutdown(found: &Found, form: &[Arg]) -> bool {
    if harm::power(form) || harm::cuts_off(form) {
        return true;
    }
    // `echo b > /proc/sysrq-trigger` reboots at once; `tee /proc/sysrq-trigger` too.
    let sysrq = |arg: &Arg| normalize(&arg.text) == ["proc", "sysrq-trigger"];
    if found
        .redirects
        .iter()
        .any(|redirect| redirect.writes() && sysrq(&redirect.target))
        || (name(form) == "tee" && form.iter().skip(1).any(sysrq))
    {
        return true;
    }
    let name = name(form);
    match &*name {
        "shutdown" | "reboot" | "halt" | "poweroff" => true,
        "systemctl" | "loginctl" => {
            let mut words = form.iter().skip(1);
            while let Some(arg) = words.next() {
                match arg.text.as_str() {
                    // Options that take a value in the next word.
                    "-H" | "-M" | "-t" | "-p" | "-n" | "-o" | "-s" | "--host" | "--machine"
                    | "--type" | "--property" | "--lines" | "--output" | "--signal" => {
                        words.next();
                    }
                    text if text.starts_with('-') => {}
                    verb => {
                        return matches!(
                            verb,
                            "poweroff"
                                | "reboot"
                                | "halt"
                                | "kexec"
                                | "soft-reboot"
                                | "suspend"
                                | "hibernate"
                                | "hybrid-sleep"
                                | "rescue"
                                | "emergency"
                        ) || (matches!(verb, "start" | "isolate" | "restart")
                            && words.any(|unit| STOPPING_TARGETS.contains(&unit.text.as_str())));
                    }
                }
            }
            false
        }
        "init" | "telinit" => form
            .get(1)
            .is_some_and(|arg| matches!(arg.text.as_str(), "0" | "6")),
        _ => false,
    }
}

fn kill_all(_: &Found, form: &[Arg]) -> bool {
    if harm::kill_many(form) {
        return true;
    }
    if name(form) == "killall5" {
        // Signals every process (but its own session); `-0` sends nothing.
        return !form.iter().skip(1).any(|arg| arg.text == "-0");
    }
    if name(form) != "kill" {
        return false;
    }
    let mut index = 1;
    // One signal option first: `-9`, `-KILL`, `-SIGKILL`, `-s KILL`, `-n 9`; or a listing.
    let signal = match form.get(index).map(|arg| arg.text.as_str()) {
        Some("-s" | "-n" | "--signal") => {
            index += 2;
            form.get(index - 1).map(|arg| arg.text.as_str())
        }
        Some("-l" | "-L" | "--list" | "--table") => return false,
        Some(text) if text.starts_with('-') && text != "--" && text.len() > 1 => {
            index += 1;
            Some(&text[1..])
        }
        _ => None,
    };
    // Signal 0 sends nothing: `kill -0 PID` asks whether the process exists.
    if signal.is_some_and(|signal| signal.parse::<i64>() == Ok(0)) {
        return false;
    }
    if form.get(index).is_some_and(|arg| arg.text == "--") {
        index += 1;
    }
    // As bash reads a pid: `-01` is -1, `001` is 1.
    form.iter()
        .skip(index)
        .any(|arg| matches!(arg.text.parse::<i64>(), Ok(-1 | 1)))
}
