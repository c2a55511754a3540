//! Collect stage: `Running` -> `Captured`. Reads both pipes until the command is done,
//! enforces the deadline, and stops the process tree when it must.
//!
//! Completion is decided by the shell's exit, not by EOF on the pipes: a background
//! grandchild (`sleep 30 &`, a dev server) keeps the pipes open long after the shell is
//! gone, and waiting for EOF is the classic bash-tool hang. After the shell exits we read
//! for at most `io_drain` more, then return and report who is still running.
//!
//! On timeout or cancellation the whole group gets SIGTERM, then SIGKILL after the grace
//! (or as soon as the group is empty), and reading goes on meanwhile so no output already
//! written is lost. Whatever happens, this returns by `timeout + kill_grace + 2 × io_drain`.

use std::process::ExitStatus;
use std::time::{Duration, Instant};

use rustix::process::Signal;
use tokio::io::AsyncReadExt;
use tokio::time::sleep_until;
use tokio_util::sync::CancellationToken;

use crate::output::Capture;
use crate::procs::ProcessInfo;
use crate::spawn::{GroupGuard, Running};

/// Bytes read from a pipe at a time.
pub const READ_CHUNK_BYTES: usize = 256 * 1024;

/// How often a stopping group is checked for survivors.
const GROUP_POLL: Duration = Duration::from_millis(20);

/// How often a running call reports progress, when asked to.
pub const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);

/// What a running call has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub elapsed: Duration,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// Lines completed on both streams.
    pub lines: u64,
}

/// The time limits of one call, and what may become a background job.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub timeout: Duration,
    pub kill_grace: Duration,
    pub io_drain: Duration,
    /// At the deadline, hand the running command over (`Captured::detached`) instead of
    /// stopping it.
    pub detach_on_timeout: bool,
    /// When the shell has exited but its processes run on, hand them over instead of
    /// leaving them (listed) to the session's end.
    pub detach_leftovers: bool,
}

/// Why a command became a background job.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DetachReason {
    /// The caller asked for it (`background`).
    Background,
    /// The deadline passed while the shell ran.
    Timeout,
    /// The shell exited; processes it started ran on.
    Leftover,
}

/// What a job needs to go on collecting a command: whatever of it is still open.
#[derive(Debug)]
pub struct Detached {
    pub reason: DetachReason,
    /// The shell, while it has not exited.
    pub child: Option<tokio::process::Child>,
    pub stdout: Option<tokio::process::ChildStdout>,
    pub stderr: Option<tokio::process::ChildStderr>,
    pub started: Instant,
}

/// A finished call, before rendering.
#[derive(Debug)]
pub struct Captured {
    /// The shell's exit status; `None` only if it could not be collected.
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration: Duration,
    pub stdout: Capture,
    pub stderr: Capture,
    /// Processes of the command's tree still alive after the shell exited.
    pub left_running: Vec<ProcessInfo>,
    /// Armed while `left_running` is not empty or the call was detached: whoever keeps it
    /// decides when they die.
    pub guard: GroupGuard,
    /// The command, handed over to run on as a job (see `Limits`).
    pub detached: Option<Detached>,
}

/// A command started as a background job: nothing is read here, everything is handed
/// over.
pub fn started_in_background(running: Running, stdout: Capture, stderr: Capture) -> Captured {
    Captured {
        status: None,
        timed_out: false,
        cancelled: false,
        duration: running.started.elapsed(),
        stdout,
        stderr,
        left_running: Vec::new(),
        guard: running.guard,
        detached: Some(Detached {
            reason: DetachReason::Background,
            child: Some(running.child),
            stdout: Some(running.stdout),
            stderr: Some(running.stderr),
            started: running.started,
        }),
    }
}

/// Why the tree is being stopped, and how far along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    No,
    /// SIGTERM sent; SIGKILL at this instant unless the group empties first.
    Terminating {
        kill_at: Instant,
    },
    /// SIGKILL sent, or the group emptied after SIGTERM.
    Done,
}

/// Runs the collect loop for `running`, feeding `stdout` and `stderr`. If `progress` is
/// given, it gets the call's `Progress` every `PROGRESS_INTERVAL`.
pub async fn wait(
    mut running: Running,
    limits: Limits,
    cancel: &CancellationToken,
    progress: Option<&tokio::sync::watch::Sender<Progress>>,
    mut stdout: Capture,
    mut stderr: Capture,
) -> Captured {
    let deadline = running.started + limits.timeout;
    // Reserved, not zeroed: a quiet command touches none of it (no memset, no page faults).
    let mut out_buf = Vec::with_capacity(READ_CHUNK_BYTES);
    let mut err_buf = Vec::with_capacity(READ_CHUNK_BYTES);
    let (mut out_open, mut err_open) = (true, true);
    let mut status: Option<ExitStatus> = None;
    let (mut timed_out, mut cancelled) = (false, false);
    let mut stop = Stop::No;
    let mut drain_until: Option<Instant> = None;
    let mut poll = tokio::time::interval(GROUP_POLL);
    let first_report = tokio::time::Instant::from(running.started + PROGRESS_INTERVAL);
    let mut report = tokio::time::interval_at(first_report, PROGRESS_INTERVAL);
    let far_future = Instant::now() + Duration::from_secs(86_400 * 365);
    let mut detach = None;

    loop {
        let terminating = matches!(stop, Stop::Terminating { .. });
        if !out_open && !err_open && status.is_some() && !terminating {
            break;
        }
        tokio::select! {
            read = running.stdout.read_buf(&mut out_buf), if out_open => match read {
                Ok(0) | Err(_) => out_open = false,
                Ok(_) => {
                    stdout.feed(&out_buf);
                    out_buf.clear();
                }
            },
            read = running.stderr.read_buf(&mut err_buf), if err_open => match read {
                Ok(0) | Err(_) => err_open = false,
                Ok(_) => {
                    stderr.feed(&err_buf);
                    err_buf.clear();
                }
            },
            exit = running.child.wait(), if status.is_none() => {
                // An error here means the status is lost, not that the shell runs on.
                status = exit.ok();
                if status.is_none() {
                    status = running.child.try_wait().ok().flatten();
                }
                if stop == Stop::No {
                    drain_until = Some(Instant::now() + limits.io_drain);
                }
                if status.is_none() {
                    break;
                }
            },
            () = sleep_until(deadline.into()), if stop == Stop::No && status.is_none() => {
                timed_out = true;
                if limits.detach_on_timeout {
                    detach = Some(DetachReason::Timeout);
                    break;
                }
                stop = begin_stop(&running.guard, limits);
            },
            () = cancel.cancelled(), if stop == Stop::No => {
                cancelled = true;
                stop = begin_stop(&running.guard, limits);
            },
            _ = poll.tick(), if terminating => {
                if let Stop::Terminating { kill_at } = stop {
                    let alive = running.guard.alive();
                    if alive && Instant::now() >= kill_at {
                        running.guard.signal(Signal::KILL);
                    }
                    if !alive || Instant::now() >= kill_at {
                        stop = Stop::Done;
                        drain_until = Some(Instant::now() + limits.io_drain);
                    }
                }
            },
            _ = report.tick(), if progress.is_some() => {
                if let Some(progress) = progress {
                    progress.send_replace(Progress {
                        elapsed: running.started.elapsed(),
                        stdout_bytes: stdout.raw_bytes(),
                        stderr_bytes: stderr.raw_bytes(),
                        lines: stdout.lines_so_far() + stderr.lines_so_far(),
                    });
                }
            },
            () = sleep_until(drain_until.unwrap_or(far_future).into()), if drain_until.is_some() && !terminating => break,
        }
    }

    let mut guard = running.guard;
    let mut left_running = Vec::new();
    if stop == Stop::Done {
        // SIGKILL is delivered asynchronously: wait (bounded) until the tree is gone, so
        // that "killed" in the result is true when the caller reads it.
        kill_until_gone(&guard, limits.io_drain).await;
    }
    if detach.is_none()
        && guard.alive()
        && let Some(leader) = guard.leader()
    {
        left_running = crate::procs::members(leader);
        if limits.detach_leftovers && stop == Stop::No && !left_running.is_empty() {
            detach = Some(DetachReason::Leftover);
        }
    }
    if left_running.is_empty() && detach.is_none() {
        guard.disarm();
    }
    if status.is_none() && detach != Some(DetachReason::Timeout) {
        status = running.child.try_wait().ok().flatten();
    }
    // The streams are over (or abandoned): flush what the output stages still hold, so
    // that their demands on the budget are final. A detached command's streams go on
    // (`Capture::hand_over`): their line being assembled is not over.
    if detach.is_none() {
        stdout.close();
        stderr.close();
    }
    let detached = detach.map(|reason| Detached {
        reason,
        child: status.is_none().then_some(running.child),
        stdout: out_open.then_some(running.stdout),
        stderr: err_open.then_some(running.stderr),
        started: running.started,
    });
    Captured {
        status,
        timed_out,
        cancelled,
        duration: running.started.elapsed(),
        stdout,
        stderr,
        left_running,
        guard,
        detached,
    }
}

fn begin_stop(guard: &GroupGuard, limits: Limits) -> Stop {
    guard.signal(Signal::TERM);
    Stop::Terminating {
        kill_at: Instant::now() + limits.kill_grace,
    }
}

/// Takes back a command that was handed over (`Captured::detached`) but cannot become a
/// job after all: a shell still running is killed with its group (SIGKILL; its status is
/// awaited, bounded), and the streams are closed. Processes a finished shell left running
/// stay in `left_running`, under the still-armed guard.
pub async fn undetach(captured: &mut Captured, detached: Detached) {
    if let Some(mut child) = detached.child {
        captured.guard.signal(Signal::KILL);
        let limit = Duration::from_secs(2);
        if let Ok(Ok(status)) = tokio::time::timeout(limit, child.wait()).await {
            captured.status = Some(status);
        }
        kill_until_gone(&captured.guard, limit).await;
        if !captured.guard.alive() {
            captured.guard.disarm();
        }
    }
    captured.stdout.close();
    captured.stderr.close();
}

/// SIGKILLs the group until it is gone (SIGKILL is delivered asynchronously), for at most
/// `limit`.
async fn kill_until_gone(guard: &GroupGuard, limit: Duration) {
    let give_up = Instant::now() + limit;
    while guard.alive() && Instant::now() < give_up {
        guard.signal(Signal::KILL);
        tokio::time::sleep(GROUP_POLL).await;
    }
}
