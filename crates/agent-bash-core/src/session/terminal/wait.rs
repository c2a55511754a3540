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

/// The same for a program that waits for the terminal with a timeout (poll or select
/// with one): top between refreshes waits for a key, but vim on its way out waits 100 ms
/// for the terminal's late answers, and is not waiting for the model.
pub(crate) const TIMED_QUIET: Duration = Duration::from_millis(300);

/// How often a waiting call looks again when nothing is written.
pub(crate) const POLL: Duration = Duration::from_millis(10);

/// What the foreground group of a terminal is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Activity {
    /// A process of the group is blocked reading the terminal without a timeout, and none
    /// runs.
    Reading,
    /// A process of the group waits for the terminal with a timeout (or one we cannot
    /// read), and none runs.
    ReadingTimed,
    /// Anything else: running, sleeping on something else, or no group to look at.
    Busy,
}

impl Activity {
    /// True if the program waits for input, given how long the terminal has been quiet.
    pub(crate) fn waiting(self, quiet: Duration) -> bool {
        match self {
            Activity::Reading => quiet >= QUIET,
            Activity::ReadingTimed => quiet >= TIMED_QUIET,
            Activity::Busy => false,
        }
    }
}

/// How a process waits for the terminal, if it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Blocked {
    No,
    Forever,
    WithTimeout,
}

/// What the foreground process group `group` of the terminal `tty` (the slave's path,
/// `/dev/pts/N`) is doing.
pub(crate) fn activity(group: i32, tty: &Path) -> Activity {
    let mut found = Activity::Busy;
    for pid in members(group) {
        match state(pid) {
            Some('R' | 'D') => return Activity::Busy,
            Some('S') => match blocked_on_terminal(pid, tty) {
                Blocked::Forever => found = Activity::Reading,
                Blocked::WithTimeout if found == Activity::Busy => found = Activity::ReadingTimed,
                Blocked::WithTimeout | Blocked::No => {}
            },
            _ => {}
        }
    }
    found
}

/// The name of the leader of the foreground group `group` if it is a shell (bash, sh,
/// zsh…).
pub(crate) fn shell(group: i32) -> Option<&'static str> {
    let comm = std::fs::read_to_string(format!("/proc/{group}/comm")).unwrap_or_default();
    SHELLS
        .iter()
        .copied()
        .find(|shell| *shell == comm.trim_end())
}

/// Shells, as /proc/PID/comm names them.
const SHELLS: [&str; 9] = [
    "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox",
];

/// Shells without a line editor: their prompt reads the terminal in canonical mode, as
/// their `read` builtin does.
pub(crate) const PLAIN_SHELLS: [&str; 4] = ["sh", "dash", "ash", "busybox"];

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

/// Whether (and how) `pid` sleeps waiting for input from the terminal `tty`.
fn blocked_on_terminal(pid: i32, tty: &Path) -> Blocked {
    let syscall = std::fs::read_to_string(format!("/proc/{pid}/syscall"));
    let Some((number, args)) = syscall.ok().as_deref().and_then(parse_syscall) else {
        // Unreadable, `running`, or a format we do not know: the wait channel.
        return if by_wait_channel(pid, tty) {
            Blocked::WithTimeout
        } else {
            Blocked::No
        };
    };
    let on_terminal = if READS.contains(&number) {
        i32::try_from(args[0]).is_ok_and(|fd| is_terminal(pid, fd, tty))
    } else {
        WAITS.contains(&number) && has_terminal_open(pid, tty)
    };
    match (on_terminal, forever(number, &args)) {
        (false, _) => Blocked::No,
        (true, true) => Blocked::Forever,
        (true, false) => Blocked::WithTimeout,
    }
}

/// True if system call `number` with `args` waits without a timeout: a blocking read; a
/// select or ppoll without a timeout (a null pointer); a poll or epoll_wait with a
/// negative one.
fn forever(number: i64, args: &[u64; 6]) -> bool {
    let negative = |arg: u64| (arg as i32) < 0;
    match number {
        _ if READS.contains(&number) => true,
        libc::SYS_pselect6 => args[4] == 0,
        libc::SYS_ppoll | libc::SYS_epoll_pwait2 => {
            args[2 + usize::from(number == libc::SYS_epoll_pwait2)] == 0
        }
        libc::SYS_epoll_pwait => negative(args[3]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_select => args[4] == 0,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_poll => negative(args[2]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_epoll_wait => negative(args[3]),
        _ => false,
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

/// The system call number and its six arguments from a /proc/PID/syscall line
/// (`0 0x3 0x7ffd… …`, then the stack and instruction pointers); `None` for `running` or
/// `-1 …` (not in a system call).
fn parse_syscall(line: &str) -> Option<(i64, [u64; 6])> {
    let mut fields = line.split_ascii_whitespace();
    let number: i64 = fields.next()?.parse().ok()?;
    let mut args = [0u64; 6];
    for arg in &mut args {
        *arg = u64::from_str_radix(fields.next()?.strip_prefix("0x")?, 16).ok()?;
    }
    (number >= 0).then_some((number, args))
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
            Some((0, [3, 0x7ffd8f638e47, 1, 5, 5, 7]))
        );
        let (number, args) =
            parse_syscall("270 0x1 0x7fff409693f0 0x0 0x0 0x0 0x7 0x7f 0x7f").unwrap();
        assert!(
            forever(number, &args),
            "readline's pselect6 without a timeout"
        );
        let (number, args) =
            parse_syscall("270 0x1 0x7ffe3b 0x0 0x7ffe3c 0x7ffe3d 0x0 0x7f 0x7f").unwrap();
        assert!(!forever(number, &args), "vim's pselect6 with one");
        assert_eq!(parse_syscall("running\n"), None);
        assert_eq!(parse_syscall("-1 0x7ffd 0x7f\n"), None);
    }

    #[test]
    fn a_group_that_does_not_exist_is_busy() {
        assert_eq!(activity(i32::MAX, Path::new("/dev/pts/0")), Activity::Busy);
        assert_eq!(shell(i32::MAX), None);
    }
}
