//! Spawn stage: `Plan` -> `Running`. The only place a process is created.
//!
//! Every command runs as the leader of a new session and process group (setsid(2)), so
//! the whole tree can be signalled at once and nothing in it has a controlling terminal;
//! stdin is /dev/null, because programs read stdin when it is not a TTY and would wait
//! forever on an inherited pipe; PR_SET_PDEATHSIG makes the shell die if this process
//! dies, so a crashed tool leaves no shell behind. The `GroupGuard` kills the group with
//! SIGKILL if the `Running` is dropped before the group was seen empty.

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Instant;

use rustix::process::{Pid, Signal};
use tokio::process::{Child, ChildStderr, ChildStdout};

use crate::error::Error;

/// Capacity asked for each output pipe (the Linux default is 64 KiB).
const PIPE_BYTES: usize = 1024 * 1024;

/// Everything needed to start one command. Built by the session; pure data.
#[derive(Clone, Debug)]
pub struct Plan {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// Removed from the inherited environment.
    pub env_remove: Vec<String>,
    /// Set over the inherited environment (after the removals).
    pub env: Vec<(String, String)>,
}

/// A started command: the shell, its pipes, and the guard over its process group.
#[derive(Debug)]
pub struct Running {
    pub child: Child,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
    pub guard: GroupGuard,
    pub started: Instant,
}

/// Starts `plan`.
///
/// # Errors
/// `Error::Spawn` when the program cannot be executed.
///
/// # Caveats
/// PR_SET_PDEATHSIG fires when the *thread* that spawned the child exits. Tokio's worker
/// threads live as long as the runtime, so spawn from async code, not from `spawn_blocking`.
pub fn start(plan: &Plan) -> Result<Running, Error> {
    let mut command = tokio::process::Command::new(&plan.program);
    for name in &plan.env_remove {
        command.env_remove(name);
    }
    command
        .args(&plan.args)
        .current_dir(&plan.cwd)
        .envs(plan.env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    let parent = rustix::process::getpid();
    // SAFETY: the closure runs between fork and exec and only makes raw system calls
    // (setsid, prctl, getppid), which are async-signal-safe; it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            rustix::process::setsid()?;
            rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
            // The parent may have died before the death signal was armed.
            if rustix::process::getppid() != Some(parent) {
                return Err(std::io::Error::other("agent-bash exited during spawn"));
            }
            Ok(())
        });
    }
    let started = Instant::now();
    let mut child = command.spawn().map_err(|source| Error::Spawn {
        argv0: plan.program.clone(),
        source,
    })?;
    let pid = child.id().and_then(|id| Pid::from_raw(id as i32));
    let guard = GroupGuard {
        leader: pid,
        seen_member: AtomicI32::new(0),
    };
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(Error::Spawn {
            argv0: plan.program.clone(),
            source: std::io::Error::other("the child's pipes were not created"),
        });
    };
    // Larger pipes mean fewer wake-ups of writer and reader on a flood. Best effort: the
    // kernel caps it (/proc/sys/fs/pipe-max-size) and the default still works.
    for pipe in [stdout.as_fd(), stderr.as_fd()] {
        let _ = rustix::pipe::fcntl_setpipe_size(pipe, PIPE_BYTES);
    }
    Ok(Running {
        child,
        stdout,
        stderr,
        guard,
        started,
    })
}

/// Owns a process group: signals it, and kills it with SIGKILL when dropped while armed.
#[derive(Debug)]
pub struct GroupGuard {
    leader: Option<Pid>,
    /// A live member seen by the last `alive` (0: none), checked first next time.
    seen_member: AtomicI32,
}

impl GroupGuard {
    /// A guard over nothing.
    pub fn none() -> GroupGuard {
        GroupGuard {
            leader: None,
            seen_member: AtomicI32::new(0),
        }
    }

    /// The group's id (the shell's pid), if known.
    pub fn leader(&self) -> Option<i32> {
        self.leader.map(Pid::as_raw_nonzero).map(|pid| pid.get())
    }

    /// Sends `signal` to every process of the group, and to the processes of the
    /// command's session that moved to a group of their own (`setpgid`: GNU `timeout`,
    /// `set -m`), which signalling the group alone would miss.
    pub fn signal(&self, signal: Signal) {
        if let Some(leader) = self.leader {
            // ESRCH (the group is gone) is the outcome we want.
            let _ = rustix::process::kill_process_group(leader, signal);
            for pid in crate::procs::moved_members(leader.as_raw_nonzero().get()) {
                if let Some(pid) = Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(pid, signal);
                }
            }
        }
    }

    /// True if and only if a live (non-zombie) process remains in the command's session
    /// (its group, or a group one of its processes moved to).
    pub fn alive(&self) -> bool {
        let Some(leader) = self.leader else {
            return false;
        };
        // The member found last time is most often still there (a server, a daemon): one
        // check of it instead of a walk through /proc.
        let leader = leader.as_raw_nonzero().get();
        let seen = self.seen_member.load(Ordering::Relaxed);
        if seen != 0 && crate::procs::is_live_member(seen, leader) {
            return true;
        }
        let found = crate::procs::any_member(leader);
        self.seen_member
            .store(found.unwrap_or(0), Ordering::Relaxed);
        found.is_some()
    }

    /// The group is known empty (or handed to someone else): dropping no longer kills.
    ///
    /// Disarming matters because a process group id is a pid, and pids are reused.
    pub fn disarm(&mut self) -> Option<i32> {
        let leader = self.leader();
        self.leader = None;
        leader
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.signal(Signal::KILL);
    }
}
