//! Background jobs: commands that go on after their call returned (started with
//! `background`, handed over at a timeout, or processes a shell left running).
//!
//! - here: the public types, and the table of one session's jobs (limit reservations,
//!   start, list, end notices, kill, the session's end);
//! - `drive`: the task that keeps reading a job (the same `Pump` as a call) into its files;
//! - `read`: reads of what a job's files gained since the previous read, and waits for
//!   output, a pattern or the end.
//!
//! A running job stays in the table; a finished one stays until more than
//! `Config::keep_finished_jobs` have finished after it and its end was reported or read
//! (`Jobs::evict`); its files stay under the spill cap. The session's end kills every job's
//! process group. `render` words everything about jobs for the model.

mod drive;
mod read;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::process::Signal;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::collect::Detached;
pub use crate::collect::JobOrigin;
use crate::config::Budget;
use crate::error::Error;
use crate::lock;
use crate::outcome::Note;
pub use crate::outcome::{JobInfo, JobStatus};
use crate::output::{Capture, StreamKind, StreamStats};
use crate::process::group::GroupGuard;

/// How many "job N ended" notes one result carries at most.
const MAX_NOTICES: usize = 5;

/// The answer to a read of a job (`bash_output`) or a kill (`bash_kill`).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobOutput {
    /// The job as the read found it, before reading its files (so a read that says it ended
    /// shows all of its output).
    pub job: JobInfo,
    /// stdout written since the previous read (whole lines while the job runs), windowed
    /// like a call's output.
    pub stdout: String,
    /// stderr written since the previous read, as `stdout`.
    pub stderr: String,
    /// Counts of the new part of stdout; `full_output_path` is the job's whole file.
    pub stdout_stats: StreamStats,
    /// Counts of the new part of stderr; `full_output_path` is the job's whole file.
    pub stderr_stats: StreamStats,
    /// The pattern waited for, if any.
    pub pattern: Option<String>,
    /// Whether a new line matched `pattern`; `None` when no pattern was given.
    pub pattern_matched: Option<bool>,
    /// How long the read waited, in milliseconds.
    pub waited_ms: u64,
    /// Problems with the job's files or the read, a pattern that no line matched, a kill
    /// that found the job already ended.
    pub notes: Vec<Note>,
}

/// Every job of a session (`bash_jobs`).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobList {
    /// The jobs, oldest first: running ones and those that ended.
    pub jobs: Vec<JobInfo>,
}

/// How a job ended.
#[derive(Clone, Debug)]
struct Ended {
    exit_code: Option<i32>,
    signal: Option<String>,
    status: JobStatus,
    runtime: Duration,
    timed_out: bool,
}

/// What readers wait on: bumped at every write to the files, and at the end.
#[derive(Clone, Debug, Default)]
struct State {
    version: u64,
    ended: Option<Ended>,
}

/// Read positions in a job's two files.
#[derive(Clone, Copy, Debug, Default)]
struct Cursor {
    stdout: u64,
    stderr: u64,
}

#[derive(Debug)]
struct Job {
    id: u64,
    command: String,
    description: Option<String>,
    cwd: PathBuf,
    pid: Option<i32>,
    origin: JobOrigin,
    started: Instant,
    stdout_path: PathBuf,
    stderr_path: PathBuf,
    state: watch::Sender<State>,
    kill: CancellationToken,
    kill_signal: Mutex<Signal>,
    /// Shared with the task's pump: the session's end kills the group through it.
    guard: Arc<GroupGuard>,
    cursor: Mutex<Cursor>,
    /// Held through a whole read, so that two reads at once do not show the same part.
    reading: tokio::sync::Mutex<()>,
    /// Text or binary, as the job's captures decided: reads window parts accordingly.
    kinds: Mutex<[StreamKind; 2]>,
    /// What went wrong with the job's files (a write error, the spill cap), once each.
    file_problems: Mutex<Vec<Note>>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// A read showed the job ended: it may be evicted.
    seen_ended: std::sync::atomic::AtomicBool,
}

/// The jobs of one session.
#[derive(Debug, Default)]
pub(crate) struct Jobs {
    table: Mutex<BTreeMap<u64, Arc<Job>>>,
    /// The last id handed out.
    last_id: AtomicU64,
    /// The first id handed out (`Config::first_id`; 0 stands for 1).
    first_id: u64,
    /// Reservations not yet started or given back: they count against the limit.
    starting: AtomicUsize,
    /// Jobs that ended and whose end no result has mentioned yet.
    unreported: Arc<Mutex<Vec<u64>>>,
    /// Ids reserved for a job that never started (the call kept its command): not evicted
    /// jobs, for the answer to a read of them.
    never_started: Mutex<Vec<u64>>,
    /// How many finished jobs are kept (`Config::keep_finished_jobs`); `None` until set.
    keep: Mutex<Option<usize>>,
}

/// A place for one job under the limit, and its id (`Jobs::reserve`).
#[derive(Debug)]
pub(crate) struct Reservation<'a> {
    jobs: &'a Jobs,
    id: u64,
    started: bool,
}

impl Reservation<'_> {
    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.jobs.starting.fetch_sub(1, Ordering::Relaxed);
        if !self.started {
            lock(&self.jobs.never_started).push(self.id);
        }
    }
}

/// A new job's command, for `Jobs::start`: what is left of the call, and its captures
/// (`Capture::hand_over`) writing to the job's files.
pub(crate) struct Start<'a> {
    pub(crate) command: &'a str,
    pub(crate) description: Option<&'a str>,
    pub(crate) cwd: &'a Path,
    pub(crate) detached: Detached,
    pub(crate) stdout: Capture,
    pub(crate) stdout_path: PathBuf,
    pub(crate) stderr: Capture,
    pub(crate) stderr_path: PathBuf,
    /// Stop the job (as `bash_kill` would) once it has run this long since it started.
    pub(crate) timeout: Option<Duration>,
}

impl Jobs {
    /// No jobs yet; the first one will have the id `first` (at least 1).
    pub(crate) fn numbered_from(first: u64) -> Jobs {
        let first = first.max(1);
        let mut jobs = Jobs::default();
        jobs.last_id.store(first - 1, Ordering::Relaxed);
        jobs.first_id = first;
        jobs
    }

    /// A place for one more job, if fewer than `max` jobs are running or about to start.
    /// Its id is new in this session (ids start at 1). Dropping the reservation unused
    /// gives the place back.
    pub(crate) fn reserve(&self, max: usize) -> Option<Reservation<'_>> {
        // Under the table's lock, so that two calls cannot both take the last place.
        let table = lock(&self.table);
        let running = table.values().filter(|job| job.running()).count();
        if running + self.starting.load(Ordering::Relaxed) >= max {
            return None;
        }
        self.starting.fetch_add(1, Ordering::Relaxed);
        drop(table);
        Some(Reservation {
            jobs: self,
            id: self.last_id.fetch_add(1, Ordering::Relaxed) + 1,
            started: false,
        })
    }

    /// Jobs still running.
    pub(crate) fn running(&self) -> usize {
        lock(&self.table)
            .values()
            .filter(|job| job.running())
            .count()
    }

    /// Makes `start` the job `reservation` was for, and starts its task. Reads of the job
    /// begin at the end of what its files hold now (a call handed over at its timeout
    /// already showed that). Needs a tokio runtime.
    pub(crate) fn start(&self, mut reservation: Reservation<'_>, mut start: Start<'_>) -> JobInfo {
        reservation.started = true;
        let id = reservation.id;
        start.stdout.flush();
        start.stderr.flush();
        let guard = start.detached.pump.guard().clone();
        let job = Arc::new(Job {
            id,
            command: start.command.to_string(),
            description: start.description.map(str::to_string),
            cwd: start.cwd.to_path_buf(),
            pid: guard.leader(),
            origin: start.detached.origin,
            started: start.detached.pump.started(),
            stdout_path: start.stdout_path,
            stderr_path: start.stderr_path,
            state: watch::Sender::new(State::default()),
            kill: CancellationToken::new(),
            kill_signal: Mutex::new(Signal::TERM),
            guard,
            cursor: Mutex::new(Cursor::default()),
            reading: tokio::sync::Mutex::new(()),
            kinds: Mutex::new([start.stdout.kind(), start.stderr.kind()]),
            file_problems: Mutex::new(Vec::new()),
            task: Mutex::new(None),
            seen_ended: std::sync::atomic::AtomicBool::new(false),
        });
        *lock(&job.cursor) = job.file_lengths();
        let task = tokio::spawn(drive::drive(
            job.clone(),
            start.detached.pump,
            [start.stdout, start.stderr],
            start.timeout,
            self.unreported.clone(),
        ));
        *lock(&job.task) = Some(task);
        let mut table = lock(&self.table);
        table.insert(id, job.clone());
        // The job now counts as running: the reservation's place is taken over.
        drop(reservation);
        drop(table);
        job.info()
    }

    fn get(&self, id: u64) -> Result<Arc<Job>, Error> {
        let table = lock(&self.table);
        if let Some(job) = table.get(&id) {
            return Ok(job.clone());
        }
        // Ids are never reused: one handed out, started and gone was evicted.
        let handed_out = id >= self.first_id.max(1) && id <= self.last_id.load(Ordering::Relaxed);
        if handed_out && !lock(&self.never_started).contains(&id) {
            return Err(Error::EvictedJob {
                id,
                keep: lock(&self.keep).unwrap_or(0),
            });
        }
        Err(Error::UnknownJob {
            id,
            known: table.keys().copied().collect(),
        })
    }

    /// Lets go of the oldest finished jobs beyond the `keep` most recent, among those whose
    /// end a result has reported or a read has shown: a job still running, or one whose end
    /// nobody has seen, stays. An evicted job's task is over and its group disarmed: what
    /// goes is its table entry (its files stay, under the spill cap).
    pub(crate) fn evict(&self, keep: usize) {
        *lock(&self.keep) = Some(keep);
        let mut table = lock(&self.table);
        let finished: Vec<u64> = table
            .values()
            .filter(|job| !job.running())
            .map(|job| job.id)
            .collect();
        let Some(excess) = finished
            .len()
            .checked_sub(keep)
            .filter(|excess| *excess > 0)
        else {
            return;
        };
        let unreported = lock(&self.unreported).clone();
        let evicted: Vec<u64> = finished
            .into_iter()
            .filter(|id| {
                !unreported.contains(id)
                    || table
                        .get(id)
                        .is_some_and(|job| job.seen_ended.load(Ordering::Relaxed))
            })
            .take(excess)
            .collect();
        for id in evicted {
            table.remove(&id);
        }
    }

    /// Every job, oldest first.
    pub(crate) fn list(&self) -> JobList {
        JobList {
            jobs: lock(&self.table).values().map(|job| job.info()).collect(),
        }
    }

    /// Notes for the jobs that ended since the last result said so (at most a few).
    pub(crate) fn take_notices(&self) -> Vec<Note> {
        let ended = std::mem::take(&mut *lock(&self.unreported));
        let table = lock(&self.table);
        let mut notices: Vec<Note> = ended
            .iter()
            .filter_map(|id| table.get(id))
            .take(MAX_NOTICES)
            .map(|job| Note::JobEnded { job: job.info() })
            .collect();
        if ended.len() > MAX_NOTICES {
            notices.push(Note::MoreJobsEnded {
                count: ended.len() - MAX_NOTICES,
            });
        }
        notices
    }

    /// The output of job `id` since the previous read, after waiting up to `wait` for the
    /// job to end or for new output (a line matching `pattern`, if given).
    ///
    /// # Errors
    /// `UnknownJob`, `Pattern`.
    pub(crate) async fn output(
        &self,
        id: u64,
        wait: Duration,
        pattern: Option<&str>,
        budget: Budget,
    ) -> Result<JobOutput, Error> {
        let job = self.get(id)?;
        let output = read::output(&job, wait, pattern, budget).await?;
        if output.job.status != JobStatus::Running {
            job.seen_ended.store(true, Ordering::Relaxed);
            lock(&self.unreported).retain(|ended| *ended != id);
        }
        Ok(output)
    }

    /// Stops job `id`'s process tree (`signal`, then SIGKILL after the grace) and returns
    /// its final output, waiting at most `bound` for the stop. A job that already ended
    /// answers with its final status.
    ///
    /// # Errors
    /// `UnknownJob`.
    pub(crate) async fn kill(
        &self,
        id: u64,
        signal: Signal,
        bound: Duration,
        budget: Budget,
    ) -> Result<JobOutput, Error> {
        let job = self.get(id)?;
        let already_ended = !job.running();
        if !already_ended {
            job.stop(signal);
        }
        job.wait_ended(tokio::time::Instant::now() + bound).await;
        let mut output = self.output(id, Duration::ZERO, None, budget).await?;
        if already_ended {
            output.notes.push(Note::AlreadyEnded);
        }
        lock(&self.unreported).retain(|ended| *ended != id);
        Ok(output)
    }

    /// Stops every running job as `kill` would, all at once. Returns once every job has
    /// ended, or after `bound` (a tree stuck in the kernel is left to `kill_all`).
    pub(crate) async fn stop_all(&self, bound: Duration) {
        let jobs: Vec<Arc<Job>> = lock(&self.table).values().cloned().collect();
        for job in &jobs {
            if job.running() {
                job.stop(Signal::TERM);
            }
        }
        let limit = tokio::time::Instant::now() + bound;
        for job in &jobs {
            job.wait_ended(limit).await;
        }
    }

    /// Kills every job's process group now (SIGKILL) and stops their tasks.
    pub(crate) fn kill_all(&self) {
        for job in lock(&self.table).values() {
            job.guard.signal(Signal::KILL);
            if let Some(task) = lock(&job.task).take() {
                task.abort();
            }
            // A job whose task is gone has ended, for whoever still reads it.
            job.end(Ended {
                exit_code: None,
                signal: Some(crate::exit::signal_name(Signal::KILL.as_raw())),
                status: JobStatus::Killed,
                runtime: job.started.elapsed(),
                timed_out: false,
            });
        }
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        self.kill_all();
    }
}

impl Job {
    fn running(&self) -> bool {
        self.state.borrow().ended.is_none()
    }

    /// Asks the job's task to stop the tree with `signal` (then SIGKILL after the grace).
    fn stop(&self, signal: Signal) {
        *lock(&self.kill_signal) = signal;
        self.kill.cancel();
    }

    /// Records the job's end, unless it already ended.
    fn end(&self, ended: Ended) {
        self.state.send_if_modified(|state| {
            if state.ended.is_some() {
                return false;
            }
            state.version += 1;
            state.ended = Some(ended);
            true
        });
    }

    /// Waits until the job has ended, or `limit`.
    async fn wait_ended(&self, limit: tokio::time::Instant) {
        let mut changes = self.state.subscribe();
        while changes.borrow_and_update().ended.is_none() {
            if !matches!(
                tokio::time::timeout_at(limit, changes.changed()).await,
                Ok(Ok(()))
            ) {
                return;
            }
        }
    }

    /// Records a problem with the job's files, once per kind and stream.
    fn note_problem(&self, problem: Note) {
        let mut problems = lock(&self.file_problems);
        if !problems.iter().any(|known| known.same_kind(&problem)) {
            problems.push(problem);
        }
    }

    fn file_lengths(&self) -> Cursor {
        let len = |path: &Path| std::fs::metadata(path).map_or(0, |meta| meta.len());
        Cursor {
            stdout: len(&self.stdout_path),
            stderr: len(&self.stderr_path),
        }
    }

    fn info(&self) -> JobInfo {
        let state = self.state.borrow().clone();
        let lengths = self.file_lengths();
        let ended = state.ended.unwrap_or(Ended {
            exit_code: None,
            signal: None,
            status: JobStatus::Running,
            runtime: self.started.elapsed(),
            timed_out: false,
        });
        JobInfo {
            job_id: self.id,
            command: self.command.clone(),
            description: self.description.clone(),
            cwd: self.cwd.clone(),
            pid: self.pid,
            origin: self.origin,
            status: ended.status,
            exit_code: ended.exit_code,
            signal: ended.signal,
            runtime_ms: millis(ended.runtime),
            timed_out: ended.timed_out,
            stdout_bytes: lengths.stdout,
            stderr_bytes: lengths.stderr,
            stdout_path: self.stdout_path.clone(),
            stderr_path: self.stderr_path.clone(),
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_hold_places_under_the_limit_and_ids_are_never_reused() {
        let jobs = Jobs::default();
        let first = jobs.reserve(2).expect("a first place");
        let second = jobs.reserve(2).expect("a second place");
        assert!(jobs.reserve(2).is_none(), "two of two taken");
        assert_eq!((first.id(), second.id()), (1, 2));
        drop(first);
        let third = jobs.reserve(2).expect("a place given back");
        assert_eq!(third.id(), 3, "ids are new even when a place is reused");
        assert!(jobs.reserve(0).is_none());
        drop((second, third));
        assert_eq!(jobs.starting.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn an_unknown_job_names_the_known_ones() {
        let jobs = Jobs::default();
        let error = jobs.get(7).err().map(|error| error.to_string());
        assert_eq!(
            error.as_deref(),
            Some("no job 7 in this session; it has none")
        );
        assert!(jobs.list().jobs.is_empty());
        assert!(jobs.take_notices().is_empty());
    }
}
