//! Spawn stage: `Plan` → `Running`. The only place a process is created.
//!
//! Every command runs as the leader of a new session and process group (setsid(2)), so
//! the whole tree can be signalled at once and nothing in it has a controlling terminal;
//! stdin is /dev/null, because programs read stdin when it is not a TTY and would wait
//! forever on an inherited pipe. The `GroupGuard` kills the group with SIGKILL when its
//! last owner lets go before the group was seen empty.
//!
//! The shell is started with posix_spawn(3) and `POSIX_SPAWN_SETSID`, not fork and exec:
//! glibc and musl start the child sharing this process's memory (`CLONE_VM|CLONE_VFORK`),
//! where a fork of this multi-threaded server copies its page tables, makes every page
//! copy-on-write and interrupts the other threads' CPUs to flush their TLBs. Measured
//! through the MCP server, `bash true` took 0.5–1.0 ms less (ARCHITECTURE.md, "Spawning").
//! The price: nothing can run in the child before exec, so PR_SET_PDEATHSIG is not set
//! (a SIGKILL of agent-bash leaves the shell to run out; an ordinary exit still stops every
//! group).
//!
//! The shell is waited for through a pidfd (Linux 5.4), which tokio watches like any other
//! descriptor; where the kernel has none, its status is polled.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustix::pipe::PipeFlags;
use rustix::process::{Pid, PidfdFlags};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe::Receiver;

use super::group::{GroupGuard, Tree};
use crate::error::Error;
use crate::plan::{Confined, Plan, ScriptFile};
use crate::sandbox::launcher::Launch;
use crate::sandbox::supervisor::{EXITED, EXITED_ALONE, FAILED, STARTED};

/// Capacity asked for each output pipe (the Linux default is 64 KiB).
const PIPE_BYTES: usize = 1024 * 1024;

/// How often a shell's status is polled on a kernel without pidfds.
const STATUS_POLL: Duration = Duration::from_millis(10);

/// The reading end of one of the command's output pipes.
pub(crate) type PipeReader = Receiver;

/// A started command: the shell, its pipes, and the guard over its process group.
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) shell: Shell,
    pub(crate) stdout: PipeReader,
    pub(crate) stderr: PipeReader,
    pub(crate) guard: Arc<GroupGuard>,
    pub(crate) started: Instant,
    /// A long command's script, kept until the command is over.
    pub(crate) script: Option<ScriptFile>,
}

/// Starts `plan`: the shell directly, or under its supervisor when the plan is confined.
///
/// # Errors
/// `Error::Spawn` when the program cannot be executed; `Error::Sandbox` when the
/// supervisor could not confine and start it.
pub(crate) async fn start(plan: Plan) -> Result<Running, Error> {
    let spawn_error = |source| Error::Spawn {
        argv0: plan.program.clone(),
        source,
    };
    let (stdout, stdout_writer) = output_pipe().map_err(spawn_error)?;
    let (stderr, stderr_writer) = output_pipe().map_err(spawn_error)?;
    let started = Instant::now();
    let stdio = Stdio::Pipes {
        stdout: stdout_writer.as_raw_fd(),
        stderr: stderr_writer.as_raw_fd(),
    };
    let direct = |plan: &Plan| -> Result<(Shell, GroupGuard), Error> {
        let pid = posix_spawn(plan, &stdio).map_err(spawn_error)?;
        Ok((Shell::new(pid), GroupGuard::new(Some(pid))))
    };
    let (shell, guard) = match &plan.confined {
        None => direct(&plan)?,
        Some(confined) => match supervised(&plan, confined, &stdio).await {
            // Supervision alone is best effort: the call runs as it would without it.
            Err(Error::Sandbox { .. }) if confined.confinement.only_supervised() => direct(&plan)?,
            started => started?,
        },
    };
    // The child has its copies; the command's end of the pipes must close with it alone.
    drop((stdout_writer, stderr_writer));
    let stdout = Receiver::from_owned_fd(stdout).map_err(spawn_error)?;
    let stderr = Receiver::from_owned_fd(stderr).map_err(spawn_error)?;
    Ok(Running {
        shell,
        stdout,
        stderr,
        guard: Arc::new(guard),
        started,
        script: plan.script,
    })
}

/// Starts the supervisor of a confined plan, and waits for its report that the shell runs
/// (or why it could not). A launcher that died with the request (its report pipe ended
/// without a word) is replaced, and the request made again, once.
pub(crate) async fn supervised(
    plan: &Plan,
    confined: &Confined,
    stdio: &Stdio<'_>,
) -> Result<(Shell, GroupGuard), Error> {
    let mut again = true;
    loop {
        let (mut shell, pipes) = launch_supervisor(plan, confined, stdio)?;
        let started = shell.started().await;
        if !launch_again(&shell, confined, &mut again) {
            return supervised_shell(shell, pipes, started);
        }
    }
}

/// `supervised`, waiting for the supervisor's word without a runtime (a terminal is
/// started under its table's lock).
pub(crate) fn supervised_blocking(
    plan: &Plan,
    confined: &Confined,
    stdio: &Stdio<'_>,
) -> Result<(Shell, GroupGuard), Error> {
    let mut again = true;
    loop {
        let (mut shell, pipes) = launch_supervisor(plan, confined, stdio)?;
        let started = shell.started_blocking();
        if !launch_again(&shell, confined, &mut again) {
            return supervised_shell(shell, pipes, started);
        }
    }
}

/// Whether a launch no supervisor ever answered is made again: once, when the launcher
/// died with it.
fn launch_again(shell: &Shell, confined: &Confined, again: &mut bool) -> bool {
    shell.unheard && std::mem::take(again) && confined.launcher.forget_if_gone()
}

fn supervised_shell(
    shell: Shell,
    (control, end): (OwnedFd, OwnedFd),
    started: Result<(i32, i32), String>,
) -> Result<(Shell, GroupGuard), Error> {
    let (pid, supervisor) = started.map_err(|reason| Error::Sandbox { reason })?;
    let tree = Tree {
        supervisor,
        control,
        end,
        gone: shell.tree_gone.clone(),
    };
    Ok((shell, GroupGuard::supervised(pid, tree)))
}

/// Asks the launcher for the supervisor of a confined plan; returns the shell it will
/// report on, and the engine's ends of the control pipe and of the report pipe (a copy,
/// whose end says that the tree is gone).
fn launch_supervisor(
    plan: &Plan,
    confined: &Confined,
    stdio: &Stdio<'_>,
) -> Result<(Shell, (OwnedFd, OwnedFd)), Error> {
    let failed = |reason: String| Error::Sandbox { reason };
    let io_failed = |err: io::Error| {
        let hint = crate::error::descriptor_hint(&err);
        failed(format!("the supervisor: {err}{hint}"))
    };
    let mut argv = vec![c_string(plan.program.as_os_str().as_bytes()).map_err(io_failed)?];
    for arg in &plan.args {
        argv.push(c_string(arg.as_bytes()).map_err(io_failed)?);
    }
    let launch = Launch {
        confinement: confined.confinement.clone(),
        cwd: c_string(plan.cwd.as_os_str().as_bytes()).map_err(io_failed)?,
        terminal: match stdio {
            Stdio::Pipes { .. } => None,
            Stdio::Terminal { slave } => Some((*slave).to_owned()),
        },
        argv,
        env: environment(plan, |name, value| {
            confined.confinement.keeps_variable(name, value)
        })
        .map_err(io_failed)?,
    };
    let (report, report_writer) =
        rustix::pipe::pipe_with(PipeFlags::CLOEXEC).map_err(|e| io_failed(e.into()))?;
    let (control_reader, control) =
        rustix::pipe::pipe_with(PipeFlags::CLOEXEC).map_err(|e| io_failed(e.into()))?;
    let mut fds = vec![report_writer.as_fd(), control_reader.as_fd()];
    if let Stdio::Pipes { stdout, stderr } = stdio {
        // SAFETY: the caller keeps the call's pipe ends open while this runs.
        fds.extend(unsafe {
            [
                BorrowedFd::borrow_raw(*stdout),
                BorrowedFd::borrow_raw(*stderr),
            ]
        });
    }
    confined
        .launcher
        .launch(&launch, &fds)
        .map_err(|err| failed(format!("the sandbox's launcher: {err}")))?;
    drop((report_writer, control_reader));
    let end = rustix::io::fcntl_dupfd_cloexec(&report, 0).map_err(|e| io_failed(e.into()))?;
    let shell = Shell::supervised(report).map_err(io_failed)?;
    Ok((shell, (control, end)))
}

/// A pipe for one output stream: the reading end (non-blocking, ours) and the writing end
/// (for the child). Both close on exec; posix_spawn's dup2 gives the child its own copy.
fn output_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    // Only the reading end becomes non-blocking (`Receiver::from_owned_fd`): the writer
    // blocks, as programs expect of their stdout.
    let (reader, writer) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC)?;
    // Larger pipes mean fewer wake-ups of writer and reader on a flood. Best effort: the
    // kernel caps it (/proc/sys/fs/pipe-max-size) and the default still works.
    let _ = rustix::pipe::fcntl_setpipe_size(reader.as_fd(), PIPE_BYTES);
    Ok((reader, writer))
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte"))
}

/// The environment the command gets: ours, less `env_remove`, with `env` set over it.
fn environment(plan: &Plan, keep: impl Fn(&OsStr, &OsStr) -> bool) -> io::Result<Vec<CString>> {
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| {
            let set = plan.env.iter().any(|(key, _)| OsStr::new(key) == name);
            let removed = plan.env_remove.iter().any(|key| OsStr::new(key) == name);
            !set && !removed
        })
        .collect();
    vars.extend(
        plan.env
            .iter()
            .map(|(name, value)| (name.into(), value.into())),
    );
    vars.into_iter()
        .filter(|(name, value)| keep(name, value))
        .map(|(name, value)| {
            let mut entry = name.into_vec();
            entry.push(b'=');
            entry.extend(value.into_vec());
            c_string(&entry)
        })
        .collect()
}

/// Where a child's standard descriptors come from.
pub(crate) enum Stdio<'a> {
    /// stdin from /dev/null; stdout and stderr the writing ends of the call's pipes.
    Pipes { stdout: RawFd, stderr: RawFd },
    /// All three the terminal (the slave side of a pseudo-terminal) at this path, opened
    /// after setsid(2) and without `O_NOCTTY`, so that it becomes the child's controlling
    /// terminal and the child's group its foreground group (`terminal::pty`).
    Terminal { slave: &'a std::ffi::CStr },
}

/// posix_spawn(3) of the plan's program and arguments in a new session, in its directory
/// and environment, with the standard descriptors of `stdio` and every signal at its
/// default disposition (this process ignores SIGPIPE, and an ignored signal stays ignored
/// across exec).
pub(crate) fn posix_spawn(plan: &Plan, stdio: &Stdio<'_>) -> io::Result<i32> {
    let mut argv = vec![c_string(plan.program.as_os_str().as_bytes())?];
    for arg in &plan.args {
        argv.push(c_string(arg.as_bytes())?);
    }
    let env = environment(plan, |_, _| true)?;
    let cwd = c_string(plan.cwd.as_os_str().as_bytes())?;
    spawn_program(&argv, &env, stdio, &cwd)
}

/// posix_spawn(3) of `argv` (its first a path, or a name looked up in PATH) as
/// `posix_spawn` does a plan's: in a new session, in `cwd`, with the environment `env`
/// (`NAME=value` each) and the standard descriptors of `stdio`, every signal at its
/// default. The supervisor starts a confined shell with it too.
pub(crate) fn spawn_program(
    argv: &[CString],
    env: &[CString],
    stdio: &Stdio<'_>,
    cwd: &CStr,
) -> io::Result<i32> {
    let null = c_string(b"/dev/null")?;
    let pointers = null_terminated(argv);
    let envp = null_terminated(env);
    let Some(program) = argv.first() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no program"));
    };
    let spawn = if program.as_bytes().contains(&b'/') {
        libc::posix_spawn
    } else {
        libc::posix_spawnp
    };
    // SAFETY: every pointer handed to libc points into `pointers`, `envp`, `cwd` or `null`,
    // all alive until the spawn returns.
    unsafe {
        spawn_prepared(spawn, &pointers, envp.as_ptr(), |actions, attr| {
            add_file_actions(actions, stdio, &null, cwd)?;
            set_attributes(attr, true)
        })
    }
}

/// posix_spawn(3) of a helper of this program (`argv[0]`, a path) in a process group of
/// its own (a new session's setsid(2) took 1 ms here, in the caller's way: the scheduler
/// makes a group for each session), in this process's environment, with /dev/null as its
/// standard descriptors and each (from, to) of `extra` placed, every signal at its default.
pub(crate) fn posix_spawn_with(argv: &[CString], extra: &[(RawFd, RawFd)]) -> io::Result<i32> {
    let null = c_string(b"/dev/null")?;
    let pointers = null_terminated(argv);
    unsafe extern "C" {
        static environ: *const *mut libc::c_char;
    }
    // SAFETY: every pointer handed to libc points into `pointers` or `null`, alive until the
    // spawn returns; `environ` is this process's environment.
    unsafe {
        spawn_prepared(libc::posix_spawn, &pointers, environ, |actions, attr| {
            set_attributes(attr, false)?;
            for number in 0..=2 {
                check(libc::posix_spawn_file_actions_addopen(
                    actions,
                    number,
                    null.as_ptr(),
                    libc::O_RDWR,
                    0,
                ))?;
            }
            for &(fd, number) in extra {
                check(libc::posix_spawn_file_actions_adddup2(actions, fd, number))?;
            }
            Ok(())
        })
    }
}

/// posix_spawn(3) or posix_spawnp(3) (`spawn`) of `argv` (null-terminated, its first the
/// program) with the environment `envp`, once `prepare` has filled the file actions and
/// the attributes; both structures are initialised before and destroyed after.
///
/// # Safety
/// `argv` and `envp` point to null-terminated arrays of NUL-terminated strings, and the
/// strings `prepare` hands to libc stay alive, until this returns.
unsafe fn spawn_prepared(
    spawn: unsafe extern "C" fn(
        *mut libc::pid_t,
        *const libc::c_char,
        *const libc::posix_spawn_file_actions_t,
        *const libc::posix_spawnattr_t,
        *const *mut libc::c_char,
        *const *mut libc::c_char,
    ) -> libc::c_int,
    argv: &[*mut libc::c_char],
    envp: *const *mut libc::c_char,
    prepare: impl FnOnce(
        &mut libc::posix_spawn_file_actions_t,
        &mut libc::posix_spawnattr_t,
    ) -> io::Result<()>,
) -> io::Result<i32> {
    // SAFETY: each structure is initialised before use and destroyed once; the pointers
    // are the caller's to keep alive.
    unsafe {
        let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
        check(libc::posix_spawn_file_actions_init(&mut actions))?;
        if let Err(err) = check(libc::posix_spawnattr_init(&mut attr)) {
            libc::posix_spawn_file_actions_destroy(&mut actions);
            return Err(err);
        }
        let mut pid: libc::pid_t = 0;
        let spawned = prepare(&mut actions, &mut attr).and_then(|()| {
            check(spawn(
                &mut pid,
                argv[0],
                &actions,
                &attr,
                argv.as_ptr(),
                envp,
            ))
        });
        libc::posix_spawn_file_actions_destroy(&mut actions);
        libc::posix_spawnattr_destroy(&mut attr);
        spawned.map(|()| pid)
    }
}

/// The child's descriptors, 0 to 2 from `stdio`, and its directory.
///
/// # Safety
/// `actions` is initialised.
unsafe fn add_file_actions(
    actions: &mut libc::posix_spawn_file_actions_t,
    stdio: &Stdio<'_>,
    null: &CString,
    cwd: &CStr,
) -> io::Result<()> {
    // SAFETY: the strings outlive the actions' use (the caller's posix_spawn).
    unsafe {
        // glibc and musl run setsid before the file actions: a terminal opened here
        // becomes the controlling terminal of the new session.
        let (stdin, stdin_flags, stdout, stderr) = match stdio {
            Stdio::Pipes { stdout, stderr } => (null.as_c_str(), libc::O_RDONLY, *stdout, *stderr),
            Stdio::Terminal { slave } => (*slave, libc::O_RDWR, 0, 0),
        };
        check(libc::posix_spawn_file_actions_addopen(
            actions,
            0,
            stdin.as_ptr(),
            stdin_flags,
            0,
        ))?;
        check(libc::posix_spawn_file_actions_adddup2(actions, stdout, 1))?;
        check(libc::posix_spawn_file_actions_adddup2(actions, stderr, 2))?;
        check(libc::posix_spawn_file_actions_addchdir_np(
            actions,
            cwd.as_ptr(),
        ))?;
        Ok(())
    }
}

/// A new session (or, without `session`, a process group of its own), every signal at its
/// default, none blocked.
///
/// # Safety
/// `attr` is initialised.
unsafe fn set_attributes(attr: &mut libc::posix_spawnattr_t, session: bool) -> io::Result<()> {
    // SAFETY: sets fields of an initialised attribute structure from locals.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        every_signal(&mut all);
        libc::sigemptyset(&mut none);
        check(libc::posix_spawnattr_setsigdefault(attr, &all))?;
        check(libc::posix_spawnattr_setsigmask(attr, &none))?;
        // The constants' C types differ between libc's targets; each fits a short.
        let group = if session {
            libc::POSIX_SPAWN_SETSID as libc::c_short
        } else {
            check(libc::posix_spawnattr_setpgroup(attr, 0))?;
            libc::POSIX_SPAWN_SETPGROUP as libc::c_short
        };
        let flags = [
            group,
            libc::POSIX_SPAWN_SETSIGDEF as libc::c_short,
            libc::POSIX_SPAWN_SETSIGMASK as libc::c_short,
        ];
        let flags = flags.into_iter().fold(0, |all, flag| all | flag);
        check(libc::posix_spawnattr_setflags(attr, flags))
    }
}

/// Adds to `set` the signals sigfillset(3) leaves out: glibc keeps its internal signals
/// (32 and 33: thread cancellation and timers, setxid) out of every set it fills, and its
/// posix_spawn then sets them to *ignored* in the child unless they are in the set of
/// signals to reset, and an ignored signal stays ignored across exec. A program that uses
/// a glibc timer thread (vim waits for its terminal's answers that way before it exits)
/// then waits forever. Set directly: sigaddset refuses these signals. musl resets every
/// handled signal itself.
fn every_signal(set: &mut libc::sigset_t) {
    #[cfg(target_env = "gnu")]
    {
        let words = (set as *mut libc::sigset_t).cast::<libc::c_ulong>();
        // SAFETY: glibc's sigset_t is an array of unsigned longs, bit `n - 1` for signal
        // `n`; signals 32 and 33 are in its first 64 bits, which on every target are the
        // first word (64-bit) or the second (32-bit).
        unsafe {
            if libc::c_ulong::BITS == 64 {
                *words |= (1 << 31) | (1 << 32);
            } else {
                *words |= 1 << 31;
                *words.add(1) |= 1;
            }
        }
    }
    #[cfg(not(target_env = "gnu"))]
    let _ = set;
}

fn null_terminated(strings: &[CString]) -> Vec<*mut libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr().cast_mut())
        .chain(std::iter::once(std::ptr::null_mut()))
        .collect()
}

/// posix_spawn's functions return the error number instead of setting errno.
fn check(code: libc::c_int) -> io::Result<()> {
    match code {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

/// The shell process, waited for without holding a thread: our child, or, for a confined
/// call, the process its supervisor reports on.
#[derive(Debug)]
pub(crate) struct Shell {
    /// Our child, the shell; 0 for a supervised shell (the launcher is its supervisor's
    /// parent).
    child: i32,
    /// Readable once the child has exited; `None` on kernels without pidfds.
    pidfd: Option<AsyncFd<OwnedFd>>,
    /// A confined shell's report pipe: the supervisor says there that the shell runs, then
    /// how it exited.
    report: Option<Report>,
    /// Set when the supervisor said that the shell's tree ended with it.
    tree_gone: Arc<AtomicBool>,
    /// Set when the report pipe ended without a word: no supervisor ever wrote to it.
    unheard: bool,
    status: Option<ExitStatus>,
    reaped: bool,
}

/// The engine's end of a supervisor's report pipe, and what was read but not yet used.
#[derive(Debug)]
struct Report {
    pipe: AsyncFd<OwnedFd>,
    pending: Vec<u8>,
    ended: bool,
}

impl Report {
    /// Reads what the pipe holds now (without waiting).
    fn read_now(&mut self) -> io::Result<()> {
        let mut buffer = [0u8; 512];
        while !self.ended {
            match rustix::io::read(self.pipe.get_ref(), &mut buffer) {
                Ok(0) => self.ended = true,
                Ok(count) => self.pending.extend_from_slice(&buffer[..count]),
                Err(rustix::io::Errno::AGAIN) => return Ok(()),
                Err(rustix::io::Errno::INTR) => {}
                Err(err) => return Err(err.into()),
            }
        }
        Ok(())
    }

    /// Waits until the pipe may have more to read.
    async fn more(&mut self) -> io::Result<()> {
        if !self.ended {
            self.pipe.readable().await?.clear_ready();
        }
        self.read_now()
    }

    /// The `N` numbers of the message `tag` at the head of what was read, taken off it.
    fn take<const N: usize>(&mut self, tag: u8) -> Option<[i32; N]> {
        let length = 1 + 4 * N;
        if self.pending.first() != Some(&tag) || self.pending.len() < length {
            return None;
        }
        let mut numbers = [0; N];
        for (number, bytes) in numbers.iter_mut().zip(self.pending[1..length].chunks(4)) {
            *number = i32::from_ne_bytes(bytes.try_into().ok()?);
        }
        self.pending.drain(..length);
        Some(numbers)
    }
}

impl Shell {
    pub(crate) fn new(pid: i32) -> Shell {
        Shell {
            child: pid,
            pidfd: pidfd(pid),
            report: None,
            tree_gone: Arc::new(AtomicBool::new(false)),
            unheard: false,
            status: None,
            reaped: false,
        }
    }

    /// The shell a supervisor starts, reporting on `report`.
    fn supervised(report: OwnedFd) -> io::Result<Shell> {
        rustix::io::ioctl_fionbio(&report, true)?;
        Ok(Shell {
            child: 0,
            pidfd: None,
            report: Some(Report {
                // SAFETY: the OwnedFd moves into the AsyncFd, which keeps it open until dropped.
                pipe: unsafe { AsyncFd::register_with_interest(report, Interest::READABLE) }?,
                pending: Vec::new(),
                ended: false,
            }),
            tree_gone: Arc::new(AtomicBool::new(false)),
            unheard: false,
            status: None,
            reaped: true,
        })
    }

    /// Waits for the supervisor's word that the shell runs: the shell's pid and the
    /// supervisor's, or why it does not.
    async fn started(&mut self) -> Result<(i32, i32), String> {
        loop {
            if let Some(started) = self.started_now() {
                return started;
            }
            if let Some(report) = &mut self.report
                && let Err(err) = report.more().await
            {
                return Err(err.to_string());
            }
        }
    }

    /// `started`, waiting in poll(2) rather than in the runtime.
    fn started_blocking(&mut self) -> Result<(i32, i32), String> {
        loop {
            if let Some(started) = self.started_now() {
                return started;
            }
            if let Some(report) = &self.report {
                let mut fd = libc::pollfd {
                    fd: report.pipe.get_ref().as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: poll(2) of one descriptor we own, waiting until it is readable.
                unsafe { libc::poll(&mut fd, 1, -1) };
            }
        }
    }

    /// The supervisor's word that the shell runs, if it came (read without waiting).
    fn started_now(&mut self) -> Option<Result<(i32, i32), String>> {
        let report = self.report.as_mut()?;
        if let Err(err) = report.read_now() {
            return Some(Err(err.to_string()));
        }
        if let Some([shell, supervisor]) = report.take(STARTED) {
            return Some(Ok((shell, supervisor)));
        }
        if !report.ended {
            return None;
        }
        let why = match report.pending.split_first() {
            Some((&FAILED, why)) => String::from_utf8_lossy(why).into_owned(),
            _ => {
                self.unheard = true;
                "the supervisor ended without starting the shell".to_string()
            }
        };
        Some(Err(why))
    }

    /// The exit status, once the shell has exited. Cancel-safe.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            match (&mut self.report, &self.pidfd) {
                (Some(report), _) => report.more().await?,
                (None, Some(pidfd)) => pidfd.readable().await?.clear_ready(),
                (None, None) => tokio::time::sleep(STATUS_POLL).await,
            }
        }
    }

    /// The exit status if the shell has exited, without waiting.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_some() {
            return Ok(self.status);
        }
        let Some(report) = &mut self.report else {
            self.status = self.try_reap()?;
            return Ok(self.status);
        };
        report.read_now()?;
        if let Some([raw]) = report.take(EXITED) {
            self.status = Some(ExitStatus::from_raw(raw));
        } else if let Some([raw]) = report.take(EXITED_ALONE) {
            self.tree_gone.store(true, Ordering::Relaxed);
            self.status = Some(ExitStatus::from_raw(raw));
        } else if report.ended {
            // The supervisor is gone without a word on the shell: it ends on its own only
            // once the shell has, so it was killed (SIGKILL: the OOM killer, or a person).
            // Its tree went to the launcher, a subreaper, which killed it.
            self.status = Some(ExitStatus::from_raw(libc::SIGKILL));
        }
        Ok(self.status)
    }

    /// Reaps the child if it has exited.
    fn try_reap(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.reaped {
            return Ok(None);
        }
        let mut raw = 0;
        // SAFETY: waitpid(2) on our own child, writing to a local.
        let reaped = unsafe { libc::waitpid(self.child, &mut raw, libc::WNOHANG) };
        if reaped < 0 {
            return Err(io::Error::last_os_error());
        }
        self.reaped = reaped == self.child;
        Ok(self.reaped.then(|| ExitStatus::from_raw(raw)))
    }
}

/// A pidfd of `pid`, watched by tokio; `None` on kernels without pidfds.
fn pidfd(pid: i32) -> Option<AsyncFd<OwnedFd>> {
    Pid::from_raw(pid)
        .and_then(|pid| rustix::process::pidfd_open(pid, PidfdFlags::NONBLOCK).ok())
        // SAFETY: the OwnedFd moves into the AsyncFd, which keeps it open until dropped.
        .and_then(|fd| unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.ok())
}

impl Drop for Shell {
    /// A child dropped before it was reaped (its group is being killed by its guard, or a
    /// supervisor waits for the processes its shell left) is reaped by a short-lived
    /// thread, so that no zombie is left in a long-lived server.
    fn drop(&mut self) {
        if matches!(self.try_reap(), Ok(None)) && !self.reaped {
            let pid = self.child;
            let _ = std::thread::Builder::new()
                .name("agent-bash-reap".into())
                .spawn(move || {
                    let mut raw = 0;
                    // SAFETY: waitpid(2) on our own child, writing to a local.
                    unsafe { libc::waitpid(pid, &mut raw, 0) };
                });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Limits;
    use crate::process::stop::StopTimes;
    use std::path::Path;
    use tokio::io::AsyncReadExt;

    fn plan(program: &str, script: &str, env: Vec<(String, String)>) -> Plan {
        Plan {
            program: program.into(),
            args: vec!["-c".into(), script.into()],
            cwd: "/".into(),
            env_remove: vec!["HOME".into()],
            env,
            script: None,
            limits: Limits {
                timeout: Duration::from_secs(10),
                stop: StopTimes {
                    grace: Duration::from_secs(1),
                },
                io_drain: Duration::from_millis(100),
                background: false,
                detach_on_timeout: false,
                detach_leftovers: false,
                job_timeout: None,
            },
            confined: None,
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// Runs `script` and returns its stdout and exit status.
    fn run(script: &str, env: Vec<(String, String)>) -> (String, ExitStatus, i32) {
        runtime().block_on(async {
            let mut running = start(plan("/bin/bash", script, env)).await.unwrap();
            let mut out = String::new();
            running.stdout.read_to_string(&mut out).await.unwrap();
            let status = running.shell.wait().await.unwrap();
            (out, status, running.shell.child)
        })
    }

    /// The state posix_spawn leaves the shell in: a session and group of its own, no
    /// signal blocked or ignored (this process ignores SIGPIPE), stdin empty, the plan's
    /// directory and environment.
    #[test]
    fn the_shell_leads_a_new_session_with_default_signals_and_the_plans_environment() {
        let script = "echo $$; cut -d' ' -f6,5 /proc/$$/stat; \
            grep -E '^Sig(Blk|Ign)' /proc/self/status; pwd; echo \"${HOME-unset} $EXTRA\"; \
            cat; exit 7";
        let env = vec![("EXTRA".to_string(), "set by the plan".to_string())];
        let (out, status, pid) = run(script, env);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.first(), Some(&pid.to_string().as_str()), "{out}");
        assert_eq!(
            lines.get(1),
            Some(&format!("{pid} {pid}").as_str()),
            "group and session: {out}"
        );
        let mask = |name: &str| {
            lines
                .iter()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        };
        assert_eq!(mask("SigBlk:"), Some(0), "{out}");
        // Nothing ignored: not SIGPIPE (this process ignores it), nor glibc's internal
        // signals 32 and 33 (its posix_spawn would leave them ignored).
        assert_eq!(mask("SigIgn:"), Some(0), "{out}");
        assert_eq!(lines.get(4), Some(&"/"), "{out}");
        assert_eq!(lines.get(5), Some(&"unset set by the plan"), "{out}");
        assert_eq!(lines.len(), 6, "stdin is empty: {out}");
        assert_eq!(status.code(), Some(7));
    }

    #[test]
    fn a_program_that_cannot_run_is_a_spawn_error() {
        let err = runtime()
            .block_on(start(plan("/nonexistent/bash", "true", vec![])))
            .unwrap_err();
        let Error::Spawn { source, .. } = err else {
            panic!("{err:?}");
        };
        assert_eq!(source.kind(), io::ErrorKind::NotFound);
    }

    /// A shell whose `Shell` is dropped before its exit was collected is still reaped:
    /// no zombie stays behind in a long-lived server.
    #[test]
    fn a_dropped_shell_is_reaped() {
        let runtime = runtime();
        let pid = runtime.block_on(async {
            let running = start(plan("/bin/bash", "sleep 0.2", vec![])).await.unwrap();
            running.shell.child
        });
        // Unreaped, it would stay in /proc as a zombie for as long as this process lives.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Path::new(&format!("/proc/{pid}")).exists() {
            assert!(Instant::now() < deadline, "pid {pid} was never reaped");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
