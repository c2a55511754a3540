//! A job's task: keeps reading the command's pipes (its `Pump`, the same driver a call
//! uses) into the job's files until the shell has exited, the pipes are closed and no
//! process of its group is alive, or until it is stopped.

use std::os::unix::process::ExitStatusExt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant as TokioInstant;

use super::{Ended, Job, JobStatus};
use crate::exit;
use crate::lock;
use crate::outcome::Note;
use crate::output::{Capture, Stream};
use crate::process::pump::{Event, Pump};

/// Reads the job's pipes into its files until the job is over, then records how it ended.
pub(super) async fn drive(
    job: Arc<Job>,
    mut pump: Pump,
    mut captures: [Capture; 2],
    timeout: Option<Duration>,
    unreported: Arc<Mutex<Vec<u64>>>,
) {
    // A job of processes a finished shell left running has no exit status of its own.
    let had_shell = !pump.exited();
    let mut deadline = timeout.map(|timeout| TokioInstant::from(job.started + timeout));
    let mut timed_out = false;
    // Once the shell is gone, whoever holds the pipes may have left the session (a
    // daemon): the group is watched so that an empty one is let go of (its id is a pid,
    // and pids are reused).
    pump.watch_group();
    while !pump.finished() {
        let [stdout, stderr] = &mut captures;
        tokio::select! {
            event = pump.next(stdout, stderr) => match event {
                Event::Output(stream) => {
                    let capture = &mut captures[stream.index()];
                    capture.flush();
                    note_stream(&job, stream, capture);
                    job.state.send_modify(|state| state.version += 1);
                }
                Event::GroupEmpty if pump.exited() && !pump.stop_begun() => job.guard.disarm(),
                _ => {}
            },
            () = crate::process::pump::sleep_until_some(deadline), if !pump.stop_begun() => {
                // Stopped as `bash_kill` would: the signal, then SIGKILL after the grace.
                timed_out = true;
                deadline = None;
                job.kill.cancel();
            },
            () = job.kill.cancelled(), if !pump.stop_begun() => {
                pump.stop(*lock(&job.kill_signal));
            },
        }
    }
    for (stream, capture) in [Stream::Stdout, Stream::Stderr].into_iter().zip(captures) {
        if let Some(error) = capture.into_file().error {
            job.note_problem(Note::JobFileIncomplete { stream, error });
        }
    }
    let stopped = pump.stop_begun();
    let status = pump.status().filter(|_| had_shell);
    if !pump.stop_begun() || !job.guard.alive() {
        job.guard.disarm();
    }
    let runtime = job.started.elapsed();
    let killed_by_us = stopped.then(|| exit::signal_name(lock(&job.kill_signal).as_raw()));
    let (status, exit_code, signal) = match status {
        Some(status) if status.code().is_some() => (JobStatus::Exited, status.code(), None),
        Some(status) => (
            JobStatus::Killed,
            None,
            status.signal().map(exit::signal_name),
        ),
        None if had_shell || stopped => (JobStatus::Killed, None, killed_by_us),
        None => (JobStatus::Ended, None, None),
    };
    lock(&unreported).push(job.id);
    job.end(Ended {
        exit_code,
        signal,
        status,
        runtime,
        timed_out,
    });
}

/// Records what a job's capture decided (text or binary) and what went wrong with its
/// file, for reads.
fn note_stream(job: &Job, stream: Stream, capture: &Capture) {
    lock(&job.kinds)[stream.index()] = capture.kind();
    if let Some(problem) = capture.file_problem() {
        job.note_problem(Note::JobFileProblem { stream, problem });
    }
}
