//! Is the program waiting for input? Decided from evidence in /proc, never from prompt
//! strings: the terminal's foreground process group (`tcgetpgrp` on the master) has a
//! process blocked reading the terminal, and none of its processes is running.
//!
//! "Blocked reading the terminal", per process: in state `S`, inside a system call that
//! waits for input (`/proc/PID/syscall`: read or readv of a descriptor that is the
//! terminal, or select, poll, epoll of a process that has the terminal open: bash's
//! readline, Python's REPL and vim wait in pselect6/poll). Where the system call cannot be
//! read (another user's process, a kernel without `CONFIG_HAVE_ARCH_TRACEHOOK`), the kernel
//! function it sleeps in (`/proc/PID/wchan`) stands in: `n_tty_read`/`wait_woken` or a
//! poll/select wait, with the terminal on standard input.
//!
//! The caller adds the other half of the evidence, a quiet period with no output and no
//! input (`QUIET`): the pty's buffers are flushed to the reader asynchronously, so a program
//! can be seen blocked a moment before its last output arrives, or before it wakes to
//! input just written.
//!
//! Read-only: never signals, never waits.

use std::path::Path;
use std::time::Duration;

/// How long the terminal must be quiet (no output read, no input written) before a
/// program blocked reading it counts as waiting for input.
pub(crate) const QUIET: Duration = Duration::from_millis(40);

/// How often a waiting call looks again when nothing is written.
pub(crate) const POLL: Duration = Duration::from_millis(10);

/// What the foreground group of a terminal is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Activity {
    /// A process of the group is blocked reading the terminal, and none runs.
    Reading,
    /// Anything else: running, sleeping on something else, or no group to look at.
    Busy,
}

/// What the foreground process group `group` of the terminal `tty` (the slave's path,
/// `/dev/pts/N`) is doing.
pub(crate) fn activity(group: i32, tty: &Path) -> Activity {
    let mut reading = false;
    for pid in members(group) {
        match state(pid) {
            Some('R' | 'D') => return Activity::Busy,
            Some('S') => reading = reading || blocked_on_terminal(pid, tty),
            _ => {}
        }
    }
    if reading {
        Activity::Reading
    } else {
        Activity::Busy
    }
}

/// True if the leader of the foreground group `group` is a shell (bash, sh, zsh…): the
/// terminal is at a shell prompt, or the shell runs a builtin.
pub(crate) fn is_shell(group: i32) -> bool {
    let comm = std::fs::read_to_string(format!("/proc/{group}/comm")).unwrap_or_default();
    matches!(
        comm.trim_end(),
        "bash" | "sh" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "fish" | "busybox"
    )
}

/// The processes of group `group`: the leader first (usually the only one), then the rest
/// from a walk of /proc.
fn members(group: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        // SAFETY: getpgid(2) only reads the process table.
        .filter(|&pid| unsafe { libc::getpgid(pid) } == group)
        .collect()
}

/// The state letter of `pid` (`R`, `S`, `D`, `Z`…), from /proc/PID/stat.
fn state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let (_, fields) = stat.rsplit_once(')')?;
    fields.split_ascii_whitespace().next()?.chars().next()
}

/// True if `pid` sleeps waiting for input from the terminal `tty`.
fn blocked_on_terminal(pid: i32, tty: &Path) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/syscall")) {
        Ok(syscall) => match parse_syscall(&syscall) {
            Some((number, first)) if READS.contains(&number) => {
                i32::try_from(first).is_ok_and(|fd| is_terminal(pid, fd, tty))
            }
            Some((number, _)) if WAITS.contains(&number) => has_terminal_open(pid, tty),
            Some(_) => false,
            // `running`, or a format we do not know: look at the wait channel.
            None => by_wait_channel(pid, tty),
        },
        Err(_) => by_wait_channel(pid, tty),
    }
}

/// The fallback when the system call cannot be read: the kernel function `pid` sleeps in.
fn by_wait_channel(pid: i32, tty: &Path) -> bool {
    let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
    let waiting = [
        "n_tty_read",
        "wait_woken",
        "poll_schedule_timeout",
        "do_select",
    ]
    .iter()
    .any(|name| wchan.starts_with(name))
        || wchan.starts_with("ep_poll")
        || wchan.starts_with("do_epoll_wait");
    waiting && is_terminal(pid, 0, tty)
}

/// The system call number and first argument of a /proc/PID/syscall line
/// (`0 0x3 0x7ffd… …`); `None` for `running` or `-1 …` (not in a system call).
fn parse_syscall(line: &str) -> Option<(i64, u64)> {
    let mut fields = line.split_ascii_whitespace();
    let number: i64 = fields.next()?.parse().ok()?;
    let first = fields.next()?.strip_prefix("0x")?;
    let first = u64::from_str_radix(first, 16).ok()?;
    (number >= 0).then_some((number, first))
}

/// True if descriptor `fd` of `pid` is the terminal `tty`.
fn is_terminal(pid: i32, fd: i32, tty: &Path) -> bool {
    std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).is_ok_and(|target| names(&target, tty))
}

/// True if `target` (where a descriptor leads) is the terminal `tty`: its own path, or
/// `/dev/tty`, the process's controlling terminal (`getpass` and `less` read that), which
/// for a process of the terminal's foreground group is the terminal.
fn names(target: &Path, tty: &Path) -> bool {
    target == tty || target == Path::new("/dev/tty")
}

/// True if some descriptor of `pid` is the terminal `tty` (a process waiting in poll or
/// select on several descriptors: which ones cannot be read from /proc).
fn has_terminal_open(pid: i32, tty: &Path) -> bool {
    // The standard descriptors first: nearly always one of them.
    if (0..3).any(|fd| is_terminal(pid, fd, tty)) {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    entries
        .filter_map(Result::ok)
        .any(|entry| std::fs::read_link(entry.path()).is_ok_and(|target| names(&target, tty)))
}

/// System calls that read one descriptor (its number is the first argument).
const READS: [i64; 2] = [libc::SYS_read, libc::SYS_readv];

/// System calls that wait on several descriptors at once.
#[cfg(target_arch = "x86_64")]
const WAITS: [i64; 8] = [
    libc::SYS_pselect6,
    libc::SYS_ppoll,
    libc::SYS_epoll_pwait,
    libc::SYS_epoll_pwait2,
    libc::SYS_select,
    libc::SYS_poll,
    libc::SYS_epoll_wait,
    libc::SYS_epoll_wait_old,
];

/// System calls that wait on several descriptors at once (architectures with only the
/// generic table: no select, poll or epoll_wait).
#[cfg(not(target_arch = "x86_64"))]
const WAITS: [i64; 4] = [
    libc::SYS_pselect6,
    libc::SYS_ppoll,
    libc::SYS_epoll_pwait,
    libc::SYS_epoll_pwait2,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syscall_lines_are_read_in_their_three_shapes() {
        assert_eq!(
            parse_syscall("0 0x3 0x7ffd8f638e47 0x1 0x5 0x5 0x7 0x7ffd 0x7f\n"),
            Some((0, 3))
        );
        assert_eq!(
            parse_syscall("270 0x1 0x7fff409693f0 0x0 0x0 0x0 0x7 0x7f 0x7f"),
            Some((270, 1))
        );
        assert_eq!(parse_syscall("running\n"), None);
        assert_eq!(parse_syscall("-1 0x7ffd 0x7f\n"), None);
    }

    #[test]
    fn a_group_that_does_not_exist_is_busy() {
        assert_eq!(activity(i32::MAX, Path::new("/dev/pts/0")), Activity::Busy);
        assert!(!is_shell(i32::MAX));
    }
}
