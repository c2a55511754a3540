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

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::pipe::PipeFlags;
use rustix::process::{Pid, PidfdFlags};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe::Receiver;

use super::group::GroupGuard;
use crate::error::Error;
use crate::plan::{Plan, ScriptFile};

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

/// Starts `plan`.
///
/// # Errors
/// `Error::Spawn` when the program cannot be executed.
pub(crate) fn start(plan: Plan) -> Result<Running, Error> {
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
    let pid = posix_spawn(&plan, &stdio).map_err(spawn_error)?;
    // The child has its copies; the command's end of the pipes must close with it alone.
    drop((stdout_writer, stderr_writer));
    let shell = Shell::new(pid);
    let guard = Arc::new(GroupGuard::new(Some(pid)));
    let stdout = Receiver::from_owned_fd(stdout).map_err(spawn_error)?;
    let stderr = Receiver::from_owned_fd(stderr).map_err(spawn_error)?;
    Ok(Running {
        shell,
        stdout,
        stderr,
        guard,
        started,
        script: plan.script,
    })
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
fn environment(plan: &Plan) -> io::Result<Vec<CString>> {
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

/// posix_spawn(3) of the plan's program in a new session, with the standard descriptors of
/// `stdio`, and every signal at its default disposition (this process ignores SIGPIPE, and
/// an ignored signal stays ignored across exec).
pub(crate) fn posix_spawn(plan: &Plan, stdio: &Stdio<'_>) -> io::Result<i32> {
    let mut argv = vec![c_string(plan.program.as_os_str().as_bytes())?];
    for arg in &plan.args {
        argv.push(c_string(arg.as_bytes())?);
    }
    let envp = environment(plan)?;
    let cwd = c_string(plan.cwd.as_os_str().as_bytes())?;
    let null = c_string(b"/dev/null")?;
    let argv = null_terminated(&argv);
    let envp = null_terminated(&envp);
    let spawn = if has_slash(&plan.program) {
        libc::posix_spawn
    } else {
        libc::posix_spawnp
    };
    // SAFETY: every pointer handed to libc points into `argv`, `envp`, `cwd`, `null` or the
    // two structures below, all alive until after posix_spawn returns; each structure is
    // initialised before use and destroyed once.
    unsafe {
        let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
        check(libc::posix_spawn_file_actions_init(&mut actions))?;
        if let Err(err) = check(libc::posix_spawnattr_init(&mut attr)) {
            libc::posix_spawn_file_actions_destroy(&mut actions);
            return Err(err);
        }
        let prepared = (|| {
            // glibc and musl run setsid before the file actions: a terminal opened here
            // becomes the controlling terminal of the new session.
            let (stdin, stdin_flags, stdout, stderr) = match stdio {
                Stdio::Pipes { stdout, stderr } => {
                    (null.as_c_str(), libc::O_RDONLY, *stdout, *stderr)
                }
                Stdio::Terminal { slave } => (*slave, libc::O_RDWR, 0, 0),
            };
            check(libc::posix_spawn_file_actions_addopen(
                &mut actions,
                0,
                stdin.as_ptr(),
                stdin_flags,
                0,
            ))?;
            check(libc::posix_spawn_file_actions_adddup2(
                &mut actions,
                stdout,
                1,
            ))?;
            check(libc::posix_spawn_file_actions_adddup2(
                &mut actions,
                stderr,
                2,
            ))?;
            check(libc::posix_spawn_file_actions_addchdir_np(
                &mut actions,
                cwd.as_ptr(),
            ))?;
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            every_signal(&mut all);
            libc::sigemptyset(&mut none);
            check(libc::posix_spawnattr_setsigdefault(&mut attr, &all))?;
            check(libc::posix_spawnattr_setsigmask(&mut attr, &none))?;
            // The constants' C types differ between libc's targets; each fits a short.
            let flags = [
                libc::POSIX_SPAWN_SETSID as libc::c_short,
                libc::POSIX_SPAWN_SETSIGDEF as libc::c_short,
                libc::POSIX_SPAWN_SETSIGMASK as libc::c_short,
            ];
            let flags = flags.into_iter().fold(0, |all, flag| all | flag);
            check(libc::posix_spawnattr_setflags(&mut attr, flags))
        })();
        let mut pid: libc::pid_t = 0;
        let spawned = prepared.and_then(|()| {
            check(spawn(
                &mut pid,
                argv[0],
                &actions,
                &attr,
                argv.as_ptr(),
                envp.as_ptr(),
            ))
        });
        libc::posix_spawn_file_actions_destroy(&mut actions);
        libc::posix_spawnattr_destroy(&mut attr);
        spawned.map(|()| pid)
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

fn has_slash(program: &Path) -> bool {
    program.as_os_str().as_bytes().contains(&b'/')
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

/// The shell process, waited for without holding a thread.
#[derive(Debug)]
pub(crate) struct Shell {
    pid: i32,
    /// Readable once the process has exited; `None` on kernels without pidfds.
    pidfd: Option<AsyncFd<OwnedFd>>,
    status: Option<ExitStatus>,
}

impl Shell {
    pub(crate) fn new(pid: i32) -> Shell {
        let pidfd = Pid::from_raw(pid)
            .and_then(|pid| rustix::process::pidfd_open(pid, PidfdFlags::NONBLOCK).ok())
            // SAFETY: the OwnedFd moves into the AsyncFd, which keeps it open until dropped.
            .and_then(|fd| unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.ok());
        Shell {
            pid,
            pidfd,
            status: None,
        }
    }

    /// The exit status, once the shell has exited. Cancel-safe.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            match &self.pidfd {
                Some(pidfd) => pidfd.readable().await?.clear_ready(),
                None => tokio::time::sleep(STATUS_POLL).await,
            }
        }
    }

    /// The exit status if the shell has exited, without waiting.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            let mut raw = 0;
            // SAFETY: waitpid(2) on our own child, writing to a local.
            let reaped = unsafe { libc::waitpid(self.pid, &mut raw, libc::WNOHANG) };
            if reaped < 0 {
                return Err(io::Error::last_os_error());
            }
            if reaped == self.pid {
                self.status = Some(ExitStatus::from_raw(raw));
            }
        }
        Ok(self.status)
    }
}

impl Drop for Shell {
    /// A shell dropped before it was reaped (its group is being killed by its guard) is
    /// reaped by a short-lived thread, so that no zombie is left in a long-lived server.
    fn drop(&mut self) {
        if matches!(self.try_wait(), Ok(None)) {
            let pid = self.pid;
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
            let mut running = start(plan("/bin/bash", script, env)).unwrap();
            let mut out = String::new();
            running.stdout.read_to_string(&mut out).await.unwrap();
            let status = running.shell.wait().await.unwrap();
            (out, status, running.shell.pid)
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
        let _runtime = runtime();
        let _entered = _runtime.enter();
        let err = start(plan("/nonexistent/bash", "true", vec![])).unwrap_err();
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
            let running = start(plan("/bin/bash", "sleep 0.2", vec![])).unwrap();
            running.shell.pid
        });
        // Unreaped, it would stay in /proc as a zombie for as long as this process lives.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Path::new(&format!("/proc/{pid}")).exists() {
            assert!(Instant::now() < deadline, "pid {pid} was never reaped");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
