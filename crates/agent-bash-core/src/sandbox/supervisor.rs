//! The supervisor of a confined call: this program re-executed, single-threaded, before
//! any runtime starts (`agent-bash __agent-bash-supervise CONFINEMENT PROGRAM ARGS…`).
//!
//! It makes itself the subreaper of the call's tree, forks the shell's process, which
//! confines itself (`confine::enter`) and execs the shell in a session of its own, and
//! then waits: it reaps every process that ends up its child (a daemon that double-forked
//! out of the session included), reports the shell's exit, and exits once the whole tree
//! is gone. Its descriptors:
//!
//! - 3, the report pipe (to the engine): `P` + the shell's pid once it runs (or `E` + why
//!   it could not be started), then, when the shell exits, its wait status after `Y` (the
//!   tree is gone with it) or `X` (processes of the tree run on). The pipe closes when the
//!   tree is gone, before the supervisor cleans up and exits.
//! - 4, the control pipe (from the engine): each byte is a signal for every process of the
//!   tree; its end (the engine let go of the call, or died) kills the tree.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::confine;
use super::decide::Confinement;
use crate::process::procs;

/// The first argument that makes this program a supervisor.
pub(crate) const SUPERVISE: &str = "__agent-bash-supervise";
/// The supervisor's end of the report pipe.
pub(crate) const REPORT_FD: RawFd = 3;
/// The supervisor's end of the control pipe.
pub(crate) const CONTROL_FD: RawFd = 4;
/// Report: the shell runs; its pid follows (4 bytes, native order).
pub(crate) const STARTED: u8 = b'P';
/// Report: the shell could not be started; why follows, to the end of the pipe.
pub(crate) const FAILED: u8 = b'E';
/// Report: the shell exited, processes of its tree run on; its wait status follows (4
/// bytes, native order).
pub(crate) const EXITED: u8 = b'X';
/// Report: the shell exited and nothing of its tree is left; its wait status follows.
pub(crate) const EXITED_ALONE: u8 = b'Y';
/// How many rounds of SIGKILL a tree that keeps forking gets before the supervisor gives
/// up on it (a pids cgroup bounds a fork bomb long before).
const KILL_ROUNDS: usize = 1000;

/// Runs this process as a supervisor, and exits, when its arguments ask for one; returns
/// at once otherwise. A program that embeds the engine and confines calls calls it first
/// thing in `main`, before any thread starts, and names itself as the supervisor
/// (`Config::supervisor`).
pub fn supervise_if_asked() {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(OsStr::new(SUPERVISE)) {
        return;
    }
    let rest: Vec<OsString> = args.collect();
    let code = if rest.first().is_some_and(|first| first == "--probe") {
        let probe = serde_json::to_string(&super::probe()).unwrap_or_default();
        i32::from(std::io::stdout().write_all(probe.as_bytes()).is_err())
    } else {
        supervise(&rest)
    };
    std::process::exit(code);
}

fn supervise(args: &[OsString]) -> i32 {
    // SAFETY: the engine placed these two descriptors for this process; nothing else here
    // owns them.
    let (report, control) = unsafe {
        (
            File::from_raw_fd(REPORT_FD),
            OwnedFd::from_raw_fd(CONTROL_FD),
        )
    };
    for fd in [REPORT_FD, CONTROL_FD] {
        // SAFETY: marks our own descriptor close-on-exec, so that the shell does not get it.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    match Supervisor::start(args, report, control) {
        Ok(mut supervisor) => {
            supervisor.watch();
            0
        }
        Err((mut report, why)) => {
            let mut message = vec![FAILED];
            message.extend_from_slice(why.as_bytes());
            let _ = report.write_all(&message);
            126
        }
    }
}

/// The supervisor's state: the shell it started and the pipes to the engine.
struct Supervisor {
    shell: i32,
    /// Open until the tree is gone: its end tells the engine so.
    report: Option<File>,
    shell_done: bool,
    control: Option<OwnedFd>,
    /// SIGCHLD, read through a signalfd.
    children: OwnedFd,
    cgroup: Option<Cgroup>,
}

impl Supervisor {
    fn start(
        args: &[OsString],
        mut report: File,
        control: OwnedFd,
    ) -> Result<Supervisor, (File, String)> {
        let started = launch(args);
        match started {
            Ok((shell, children, cgroup)) => {
                let mut message = vec![STARTED];
                message.extend_from_slice(&shell.to_ne_bytes());
                let _ = report.write_all(&message);
                Ok(Supervisor {
                    shell,
                    report: Some(report),
                    shell_done: false,
                    control: Some(control),
                    children,
                    cgroup,
                })
            }
            Err(why) => Err((report, why)),
        }
    }

    /// Reaps, reports and obeys until the tree is gone.
    fn watch(&mut self) {
        loop {
            if self.reap() {
                // The tree is gone: the engine learns it from the pipe's end, before the
                // cleanup (a cgroup's removal can take milliseconds).
                self.report = None;
                return;
            }
            let mut fds = [
                libc::pollfd {
                    fd: self.children.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.control.as_ref().map_or(-1, AsRawFd::as_raw_fd),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: poll(2) over two descriptors we own, held in a local array.
            if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
                continue;
            }
            if fds[0].revents != 0 {
                let mut info = [0u8; 128 * 8];
                // SAFETY: reads pending signal records into a local buffer.
                unsafe {
                    libc::read(
                        self.children.as_raw_fd(),
                        info.as_mut_ptr().cast(),
                        info.len(),
                    )
                };
            }
            if fds[1].revents != 0 {
                self.obey();
            }
        }
    }

    /// Reaps every child that ended, reporting the shell's status. True once no child is
    /// left and the shell's end was reported: the tree is gone.
    fn reap(&mut self) -> bool {
        loop {
            let mut status = 0;
            // SAFETY: waitpid(2) on any child, writing to a local.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            match pid {
                0 => return false,
                -1 => return self.shell_done,
                pid if pid == self.shell => {
                    self.shell_done = true;
                    let tag = if has_children() { EXITED } else { EXITED_ALONE };
                    if let Some(report) = &mut self.report {
                        let mut message = vec![tag];
                        message.extend_from_slice(&status.to_ne_bytes());
                        let _ = report.write_all(&message);
                    }
                }
                _ => {}
            }
        }
    }

    /// Reads the engine's orders: signals for the tree, or the end of the pipe.
    fn obey(&mut self) {
        let Some(control) = &self.control else {
            return;
        };
        let mut orders = [0u8; 64];
        let read = rustix::io::read(control, &mut orders);
        match read {
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Ok(0) | Err(_) => {
                self.control = None;
                self.kill_tree();
            }
            Ok(count) => {
                for &signal in &orders[..count] {
                    signal_tree(i32::from(signal));
                }
            }
        }
    }

    /// SIGKILL for every process of the tree, round after round until none is left.
    fn kill_tree(&mut self) {
        for _ in 0..KILL_ROUNDS {
            if signal_tree(libc::SIGKILL) == 0 {
                return;
            }
            self.reap();
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        if let Some(cgroup) = self.cgroup.take() {
            cgroup.remove();
        }
    }
}

/// Whether this process has a child (running, or ended and not yet reaped).
fn has_children() -> bool {
    // SAFETY: waitid(2) that neither waits nor reaps, writing to a local.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        ) == 0
    }
}

/// Sends `signal` to every live descendant of this process; returns how many there were.
fn signal_tree(signal: i32) -> usize {
    let tree = procs::descendants(std::process::id().cast_signed());
    for &pid in &tree {
        // SAFETY: kill(2) of a process of our own tree.
        unsafe { libc::kill(pid, signal) };
    }
    tree.len()
}

/// Starts the shell, confined: the supervisor's part (subreaper, cgroup, SIGCHLD) and the
/// fork. Returns the shell's pid once it runs (its exec succeeded).
fn launch(args: &[OsString]) -> Result<(i32, OwnedFd, Option<Cgroup>), String> {
    let [spec, program, ..] = args else {
        return Err("the supervisor needs a confinement and a program".into());
    };
    let spec: Confinement = serde_json::from_slice(spec.as_bytes())
        .map_err(|err| format!("the supervisor's confinement: {err}"))?;
    let argv = args[1..]
        .iter()
        .map(|arg| CString::new(arg.as_bytes()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| "an argument holds a NUL byte".to_string())?;
    let _ = program;
    // SAFETY: prctl(2) and signal(2) on this process alone.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let cgroup = match &spec.layers.pids_cgroup {
        Some(dir) => {
            let processes = spec.limits.map_or(0, |limits| limits.processes);
            Some(Cgroup::create(dir, processes)?)
        }
        None => None,
    };
    let children = child_signals().map_err(|err| format!("signalfd: {err}"))?;
    // A terminal's supervisor was started with the terminal as its controlling one: it
    // gives it up, for the shell's process to take in a session of its own. (Giving it up
    // sends this process SIGHUP, which it ignores; the shell gets it back at its default.)
    // SAFETY: isatty, signal and ioctl(TIOCNOTTY) on this process's own stdin.
    unsafe {
        if libc::isatty(0) == 1 {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            libc::ioctl(0, libc::TIOCNOTTY);
        }
    }
    let (errors, error_writer) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|err| format!("pipe: {err}"))?;
    // SAFETY: this process is single-threaded (the supervisor starts no thread), so the
    // child may allocate; it execs or exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        drop(errors);
        let why = match confine::enter(&spec, cgroup.as_ref()) {
            Ok(()) => exec(&argv),
            Err(why) => why,
        };
        let _ = File::from(error_writer).write_all(why.as_bytes());
        // SAFETY: leaves the child without running the parent's destructors.
        unsafe { libc::_exit(126) };
    }
    drop(error_writer);
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    // The command's output pipes (or its terminal) must close when its last process does,
    // not with this one.
    if let Ok(null) = File::options().read(true).write(true).open("/dev/null") {
        // SAFETY: replaces this process's own standard descriptors.
        unsafe {
            libc::dup2(null.as_raw_fd(), 0);
            libc::dup2(null.as_raw_fd(), 1);
            libc::dup2(null.as_raw_fd(), 2);
        }
    }
    let mut why = String::new();
    let _ = File::from(errors).read_to_string(&mut why);
    if !why.is_empty() {
        let mut status = 0;
        // SAFETY: reaps the child that failed to start.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        if let Some(cgroup) = cgroup {
            cgroup.remove();
        }
        return Err(why);
    }
    Ok((pid, children, cgroup))
}

/// Execs the shell with every signal unblocked and at its default; returns why it failed.
fn exec(argv: &[CString]) -> String {
    let mut pointers: Vec<*const libc::c_char> = argv.iter().map(|arg| arg.as_ptr()).collect();
    pointers.push(std::ptr::null());
    // SAFETY: resets this (child) process's signal state, then execs with a
    // null-terminated argument array that outlives the call.
    unsafe {
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::signal(libc::SIGHUP, libc::SIG_DFL);
        libc::execvp(pointers[0], pointers.as_ptr());
    }
    format!(
        "{}: {}",
        argv[0].to_string_lossy(),
        std::io::Error::last_os_error()
    )
}

/// Blocks SIGCHLD and returns a signalfd that reads it.
fn child_signals() -> std::io::Result<OwnedFd> {
    // SAFETY: sets this process's signal mask and makes a signalfd from a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// The pids cgroup of one supervised call, removed when the supervisor ends.
pub(super) struct Cgroup(PathBuf);

impl Cgroup {
    fn create(base: &Path, processes: u64) -> Result<Cgroup, String> {
        let dir = base.join(std::process::id().to_string());
        let made = std::fs::create_dir(&dir)
            .or_else(|err| match err.kind() {
                std::io::ErrorKind::AlreadyExists => Ok(()),
                _ => Err(err),
            })
            .and_then(|()| std::fs::write(dir.join("pids.max"), processes.to_string()));
        made.map_err(|err| format!("the pids cgroup {}: {err}", dir.display()))?;
        Ok(Cgroup(dir))
    }

    /// Moves the calling process into the cgroup.
    pub(super) fn join(&self) -> std::io::Result<()> {
        std::fs::write(self.0.join("cgroup.procs"), std::process::id().to_string())
    }

    fn remove(self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}
