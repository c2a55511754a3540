//! Collect stage: a running command → `Captured`. Drives the command's `Pump` until the
//! call is over: enforces the deadline, stops the tree on cancellation, reports progress,
//! and decides what becomes of processes still running.
//!
//! Completion is decided by the shell's exit, not by EOF on the pipes: a background
//! grandchild (`sleep 30 &`, a dev server) keeps the pipes open long after the shell is
//! gone, and waiting for EOF is the classic bash-tool hang. After the shell exits we read
//! for at most `io_drain` more, then return and report who is still running.
//!
//! On timeout or cancellation the whole tree is stopped (`process::stop`), and reading goes
//! on meanwhile so no output already written is lost. Whatever happens, this returns within
//! `Limits::bound()`.

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use rustix::process::Signal;
use serde::{Deserialize, Serialize};
use tokio::time::{Instant as TokioInstant, sleep_until};
use tokio_util::sync::CancellationToken;

use crate::output::Capture;
use crate::plan::Limits;
use crate::process::group::GroupGuard;
use crate::process::pump::{Event, Pump, sleep_until_some};
use crate::procs::ProcessInfo;

/// How often a running call reports progress, when asked to.
pub const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);

/// What a running call has done so far (`render::progress` words it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Time since the shell started.
    pub elapsed: Duration,
    /// Bytes of stdout read so far, counted as they leave secret redaction.
    pub stdout_bytes: u64,
    /// Bytes of stderr read so far, counted as they leave secret redaction.
    pub stderr_bytes: u64,
    /// Lines completed on both streams.
    pub lines: u64,
}

/// What a call's caller can do to it while it runs: cancel it, and watch its progress.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hooks<'a> {
    pub(crate) cancel: &'a CancellationToken,
    pub(crate) progress: Option<&'a tokio::sync::watch::Sender<Progress>>,
}

/// What is left of the command when its call is over.
#[derive(Debug)]
pub(crate) enum Rest {
    /// Nothing: the tree is gone.
    Gone,
    /// Processes the shell left running (`Captured::left_running`), not handed over:
    /// whoever keeps the guard decides when they die.
    Leftovers(Arc<GroupGuard>),
    /// The command, handed over to go on as a job.
    Detached(Box<Detached>),
}

/// A command handed over to go on as a job: whatever of it is still open.
#[derive(Debug)]
pub(crate) struct Detached {
    pub(crate) origin: JobOrigin,
    pub(crate) pump: Pump,
}

/// A finished call, before its outcome is assembled.
#[derive(Debug)]
pub(crate) struct Captured {
    /// The shell's exit status; `None` if it could not be collected, or runs on as a job.
    pub(crate) status: Option<ExitStatus>,
    pub(crate) timed_out: bool,
    pub(crate) cancelled: bool,
    pub(crate) duration: Duration,
    pub(crate) stdout: Capture,
    pub(crate) stderr: Capture,
    /// Processes of the command's tree still alive after the shell exited.
    pub(crate) left_running: Vec<ProcessInfo>,
    pub(crate) rest: Rest,
}

/// A command started as a background job: nothing is read here, everything is handed
/// over.
pub(crate) fn in_background(pump: Pump, stdout: Capture, stderr: Capture) -> Captured {
    Captured {
        status: None,
        timed_out: false,
        cancelled: false,
        duration: pump.started().elapsed(),
        stdout,
        stderr,
        left_running: Vec::new(),
        rest: Rest::Detached(Box::new(Detached {
            origin: JobOrigin::Background,
            pump,
        })),
    }
}

/// Drives `pump` until the call is over, feeding `stdout` and `stderr`.
pub(crate) async fn collect(
    mut pump: Pump,
    limits: &Limits,
    hooks: Hooks<'_>,
    mut stdout: Capture,
    mut stderr: Capture,
) -> Captured {
    let deadline = TokioInstant::from(pump.started() + limits.timeout);
    let (mut timed_out, mut cancelled, mut detach) = (false, false, None);
    let mut drain_until = None;
    let first_report = TokioInstant::from(pump.started() + PROGRESS_INTERVAL);
    let mut report = tokio::time::interval_at(first_report, PROGRESS_INTERVAL);
    loop {
        if pump.pipes_closed() && pump.exited() && !pump.stopping() {
            break;
        }
        tokio::select! {
            event = pump.next(&mut stdout, &mut stderr) => match event {
                // The status is lost: nothing more to wait for.
                Event::Exited if pump.status().is_none() => break,
                Event::Exited if !pump.stop_begun() => {
                    drain_until = Some(TokioInstant::now() + limits.io_drain);
                }
                Event::Stopped => break,
                _ => {}
            },
            () = sleep_until(deadline), if !pump.stop_begun() && !pump.exited() => {
                timed_out = true;
                if limits.detach_on_timeout {
                    detach = Some(JobOrigin::Timeout);
                    break;
                }
                pump.stop(Signal::TERM);
            },
            () = hooks.cancel.cancelled(), if !pump.stop_begun() => {
                cancelled = true;
                pump.stop(Signal::TERM);
            },
            _ = report.tick(), if hooks.progress.is_some() => {
                if let Some(progress) = hooks.progress {
                    progress.send_replace(Progress {
                        elapsed: pump.started().elapsed(),
                        stdout_bytes: stdout.raw_bytes(),
                        stderr_bytes: stderr.raw_bytes(),
                        lines: stdout.lines_so_far() + stderr.lines_so_far(),
                    });
                }
            },
            () = sleep_until_some(drain_until), if !pump.stopping() => break,
        }
    }
    let mut captured = Captured {
        status: None,
        timed_out,
        cancelled,
        duration: pump.started().elapsed(),
        stdout,
        stderr,
        left_running: Vec::new(),
        rest: Rest::Gone,
    };
    settle(&mut captured, pump, limits, detach);
    captured
}

/// What becomes of the command once its call is over: processes still running are
/// listed, and handed over (`detach`, or as leftovers when `limits` allow) or kept under
/// the guard; the streams of a command that does not go on are closed.
fn settle(captured: &mut Captured, mut pump: Pump, limits: &Limits, detach: Option<JobOrigin>) {
    let guard = pump.guard().clone();
    let mut detach = detach;
    if detach.is_none() && guard.alive() {
        captured.left_running = guard.members();
        if limits.detach_leftovers && !pump.stop_begun() && !captured.left_running.is_empty() {
            detach = Some(JobOrigin::Leftover);
        }
    }
    if detach != Some(JobOrigin::Timeout) {
        captured.status = pump.try_status();
    }
    captured.rest = match detach {
        // A detached command's streams go on (`Capture::hand_over`): their line being
        // assembled is not over.
        Some(origin) => Rest::Detached(Box::new(Detached { origin, pump })),
        None => {
            // The streams are over: flush what the output stages still hold, so that
            // their demands on the budget are final.
            captured.stdout.close();
            captured.stderr.close();
            kept(guard, &captured.left_running)
        }
    };
}

/// The guard kept for processes left running, or nothing once the group is known empty.
fn kept(guard: Arc<GroupGuard>, left_running: &[ProcessInfo]) -> Rest {
    if left_running.is_empty() {
        guard.disarm();
        Rest::Gone
    } else {
        Rest::Leftovers(guard)
    }
}

/// Takes back a command that was handed over but cannot become a job after all: a shell
/// still running is killed with its tree (its last output still read), and the streams
/// are closed. Processes a finished shell left running stay listed, under the guard.
pub(crate) async fn take_back(captured: &mut Captured) {
    let Rest::Detached(detached) = std::mem::replace(&mut captured.rest, Rest::Gone) else {
        return;
    };
    let mut pump = detached.pump;
    if !pump.exited() {
        pump.stop(Signal::KILL);
        while pump.next(&mut captured.stdout, &mut captured.stderr).await != Event::Stopped {}
        captured.status = pump.try_status();
    }
    captured.stdout.close();
    captured.stderr.close();
    let guard = pump.guard().clone();
    if guard.alive() && captured.left_running.is_empty() {
        captured.left_running = guard.members();
    }
    captured.rest = kept(guard, &captured.left_running);
}

/// How a command became a job.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobOrigin {
    /// The caller asked for it (`background`).
    Background,
    /// The deadline passed while the shell ran.
    Timeout,
    /// The shell exited; processes it started ran on.
    Leftover,
}
