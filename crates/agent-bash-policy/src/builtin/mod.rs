//! Built-in deny rules: commands no coding agent should run, recognized from their words
//! whatever the spelling (flag order, quoting, wrappers, nesting).
//!
//! Each rule is a predicate over one command the shell runs (and, for redirections, input and
//! function calls, over the command's context). Pure: looks at words, runs nothing. The
//! table is here; the rules live in this folder by what they protect.

use crate::commands;
use crate::harm;
use crate::words::Arg;
use crate::words::Found;

mod disks;
mod download;
mod machine;
mod trees;

pub(crate) use disks::file_system_on_unknown_device;
use disks::{dd_block_device, mkfs, redirect_block_device, wipe_block_device};
use download::download_to_shell;
use machine::{kill_all, shutdown};
use trees::{chmod_root, find_delete_root, no_preserve_root, rm_root, rm_system_dir};
pub(crate) use trees::{empty_expansion_deletes_root, find_delete};

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
        description: "setuid/setgid modes, setcap, joining sudo/wheel/docker, visudo, writes to sudoers, passwd, shadow, ld.so.preload, cron, systemd units, PAM, ~/.ssh/authorized_keys, agent-bash's own user settings, /etc/hosts pointed elsewhere; administrator rights on a cloud account or repository",
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

fn reverse_shell(found: &Found, form: &[Arg]) -> bool {
    found.reverse_shell || harm::reverse_shell(found, form)
}

fn exfiltration(found: &Found, _: &[Arg]) -> bool {
    found.exfiltrates
}

fn fork_bomb(found: &Found, _: &[Arg]) -> bool {
    found.fork_bomb
}
