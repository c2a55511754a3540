//! Spawn stage: `Plan` → `Running`. The only place a process is created.
//!
//! Every command runs as the leader of a new session and process group (setsid(2)), so
//! the whole tree can be signalled at once and nothing in it has a controlling terminal;
//! stdin is /dev/null, because programs read stdin when it is not a TTY and would wait
//! forever on an inherited pipe; PR_SET_PDEATHSIG makes the shell die if this process
//! dies, so a crashed tool leaves no shell behind. The `GroupGuard` kills the group with
//! SIGKILL when its last owner lets go before the group was seen empty.

use std::os::fd::AsFd;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Instant;

use rustix::process::Signal;
use tokio::process::{Child, ChildStderr, ChildStdout};

use super::group::GroupGuard;
use crate::error::Error;
use crate::plan::{Plan, ScriptFile};

/// Capacity asked for each output pipe (the Linux default is 64 KiB).
const PIPE_BYTES: usize = 1024 * 1024;

/// A started command: the shell, its pipes, and the guard over its process group.
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) child: Child,
    pub(crate) stdout: ChildStdout,
    pub(crate) stderr: ChildStderr,
    pub(crate) guard: Arc<GroupGuard>,
    pub(crate) started: Instant,
    /// A long command's script, kept until the command is over.
    pub(crate) script: Option<ScriptFile>,
}

/// Starts `plan`.
///
/// # Errors
/// `Error::Spawn` when the program cannot be executed.
///
/// # Caveats
/// PR_SET_PDEATHSIG fires when the *thread* that spawned the child exits. Tokio's worker
/// threads live as long as the runtime, so spawn from async code, not from `spawn_blocking`.
pub(crate) fn start(plan: Plan) -> Result<Running, Error> {
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
    let spawn_error = |source| Error::Spawn {
        argv0: plan.program.clone(),
        source,
    };
    let mut child = command.spawn().map_err(spawn_error)?;
    let guard = Arc::new(GroupGuard::new(
        child.id().and_then(|id| i32::try_from(id).ok()),
    ));
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(spawn_error(std::io::Error::other(
            "the child's pipes were not created",
        )));
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
        script: plan.script,
    })
}
