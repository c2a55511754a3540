//! Background jobs: commands that go on after their call returned (started with
//! `background`, handed over at a timeout, or processes a shell left running).
//!
//! A job's task keeps reading its pipes through the same output stages as a call
//! (`output::Capture`), writing each stream to the job's file as it comes. Reads window the
//! part of the files written since the previous read; the job's status and its files stay
//! until the session ends, and the session's end kills every job's process group.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::process::Signal;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::collect::{DetachReason, Detached, READ_CHUNK_BYTES};
use crate::config::Budget;
use crate::error::Error;
use crate::exit;
use crate::output::{Capture, StreamKind, StreamOutput, StreamStats, window};
use crate::spawn::GroupGuard;

/// How soon a job whose pipes are closed first checks whether its group is empty. Each
/// check looks through /proc (a millisecond or two), so the wait doubles after each check,
/// up to `IDLE_POLL_MAX`: a short-lived leftover is seen ending at once, and a long-lived
/// daemon's job costs next to nothing.
const IDLE_POLL_MIN: Duration = Duration::from_millis(50);
const IDLE_POLL_MAX: Duration = Duration::from_secs(2);

/// How often a job being stopped checks its group.
const KILL_POLL: Duration = Duration::from_millis(20);

/// How many "job N ended" lines one result carries at most.
const MAX_NOTICES: usize = 5;

/// Where a job is.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    Running,
    /// The shell exited on its own (`exit_code`).
    Exited,
    /// The shell was killed by `signal` (or, for leftover processes, `bash_kill` stopped them).
    Killed,
    /// The processes a shell left running have all ended (their exit codes are unknown).
    Ended,
}

/// What one job is, for listings and results.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobInfo {
    pub job_id: u64,
    pub command: String,
    pub cwd: PathBuf,
    /// The process group (the shell's pid).
    pub pid: Option<i32>,
    /// How it became a job.
    pub origin: DetachReason,
    pub status: JobStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    /// Since the command started, until now or its end.
    pub runtime_ms: u64,
    /// The job was stopped at the `timeout_secs` it was started with.
    #[serde(default)]
    pub timed_out: bool,
    /// Bytes in the job's stdout and stderr files so far.
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub stdout_path: PathBuf,
    pub stderr_path: PathBuf,
}

/// The answer to a read of a job (`bash_output`) or a kill (`bash_kill`).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobOutput {
    pub job: JobInfo,
    /// stdout written since the previous read, windowed like a call's output.
    pub stdout: String,
    pub stderr: String,
    /// Counts of that new part; `full_output_path` is the job's whole file.
    pub stdout_stats: StreamStats,
    pub stderr_stats: StreamStats,
    /// The pattern waited for, if any, and whether a new line matched it.
    pub pattern: Option<String>,
    pub pattern_matched: Option<bool>,
    /// How long the read waited.
    pub waited_ms: u64,
    pub notes: Vec<String>,
}

/// Every job of a session (`bash_jobs`).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobList {
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
    cwd: PathBuf,
    pid: Option<i32>,
    origin: DetachReason,
    started: Instant,
    stdout_path: PathBuf,
    stderr_path: PathBuf,
    state: watch::Sender<State>,
    kill: CancellationToken,
    kill_signal: Mutex<Signal>,
    guard: Mutex<GroupGuard>,
    cursor: Mutex<Cursor>,
    /// Held through a whole read, so that two reads at once do not show the same part.
    reading: tokio::sync::Mutex<()>,
    /// Text or binary, as the job's captures decided: reads window parts accordingly.
    kinds: Mutex<[StreamKind; 2]>,
    /// What went wrong with the job's files (a write error, the spill cap), once each.
    file_problems: Mutex<Vec<String>>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// The jobs of one session.
#[derive(Debug, Default)]
pub struct Jobs {
    table: Mutex<BTreeMap<u64, Arc<Job>>>,
    /// The last id handed out.
    last_id: AtomicU64,
    /// Reservations not yet started or given back: they count against the limit.
    starting: AtomicUsize,
    /// Jobs that ended and whose end no result has mentioned yet.
    unreported: Arc<Mutex<Vec<u64>>>,
}

/// A place for one job under the limit, and its id (`Jobs::reserve`).
#[derive(Debug)]
pub struct Reservation<'a> {
    jobs: &'a Jobs,
    id: u64,
}

impl Reservation<'_> {
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.jobs.starting.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A new job's command, for `Jobs::start`: what is left of the call, and its captures
/// (`Capture::hand_over`) writing to the job's files.
pub struct Start<'a> {
    pub command: &'a str,
    pub cwd: &'a Path,
    pub detached: Detached,
    pub guard: GroupGuard,
    pub stdout: Capture,
    pub stdout_path: PathBuf,
    pub stderr: Capture,
    pub stderr_path: PathBuf,
    pub kill_grace: Duration,
    /// Stop the job (as `bash_kill` would) once it has run this long since it started.
    pub timeout: Option<Duration>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Jobs {
    /// A place for one more job, if fewer than `max` jobs are running or about to start.
    /// Its id is new in this session (ids start at 1). Dropping the reservation unused
    /// gives the place back.
    pub fn reserve(&self, max: usize) -> Option<Reservation<'_>> {
        // Under the table's lock, so that two calls cannot both take the last place.
        let table = lock(&self.table);
        let running = table
            .values()
            .filter(|job| job.state.borrow().ended.is_none())
            .count();
        if running + self.starting.load(Ordering::Relaxed) >= max {
            return None;
        }
        self.starting.fetch_add(1, Ordering::Relaxed);
        drop(table);
        Some(Reservation {
            jobs: self,
            id: self.last_id.fetch_add(1, Ordering::Relaxed) + 1,
        })
    }

    /// Jobs still running.
    pub fn running(&self) -> usize {
        lock(&self.table)
            .values()
            .filter(|job| job.state.borrow().ended.is_none())
            .count()
    }

    /// Makes `start` the job `reservation` was for, and starts its task. Reads of the job
    /// begin at the end of what its files hold now (a call handed over at its timeout
    /// already showed that). Needs a tokio runtime.
    pub fn start(&self, reservation: Reservation<'_>, mut start: Start<'_>) -> JobInfo {
        let id = reservation.id;
        start.stdout.flush();
        start.stderr.flush();
        let pid = start.guard.leader();
        let job = Arc::new(Job {
            id,
            command: start.command.to_string(),
            cwd: start.cwd.to_path_buf(),
            pid,
            origin: start.detached.reason,
            started: start.detached.started,
            stdout_path: start.stdout_path,
            stderr_path: start.stderr_path,
            state: watch::Sender::new(State::default()),
            kill: CancellationToken::new(),
            kill_signal: Mutex::new(Signal::TERM),
            guard: Mutex::new(start.guard),
            cursor: Mutex::new(Cursor::default()),
            reading: tokio::sync::Mutex::new(()),
            kinds: Mutex::new([start.stdout.kind(), start.stderr.kind()]),
            file_problems: Mutex::new(Vec::new()),
            task: Mutex::new(None),
        });
        *lock(&job.cursor) = file_lengths(&job);
        let task = tokio::spawn(drive(
            job.clone(),
            start.detached,
            start.stdout,
            start.stderr,
            start.kill_grace,
            start.timeout,
            self.unreported.clone(),
        ));
        *lock(&job.task) = Some(task);
        let mut table = lock(&self.table);
        table.insert(id, job.clone());
        // The job now counts as running: the reservation's place is taken over.
        drop(reservation);
        drop(table);
        info(&job)
    }

    fn get(&self, id: u64) -> Result<Arc<Job>, Error> {
        let table = lock(&self.table);
        table.get(&id).cloned().ok_or_else(|| {
            let known = if table.is_empty() {
                "it has none".to_string()
            } else {
                let ids: Vec<String> = table.keys().map(u64::to_string).collect();
                format!("its jobs are {}", ids.join(", "))
            };
            Error::UnknownJob { id, known }
        })
    }

    /// Every job, oldest first.
    pub fn list(&self) -> JobList {
        JobList {
            jobs: lock(&self.table).values().map(|job| info(job)).collect(),
        }
    }

    /// Lines for the jobs that ended since the last result said so (at most a few).
    pub fn take_notices(&self) -> Vec<String> {
        let ended = std::mem::take(&mut *lock(&self.unreported));
        let table = lock(&self.table);
        let mut notices: Vec<String> = ended
            .iter()
            .filter_map(|id| table.get(id))
            .take(MAX_NOTICES)
            .map(|job| notice(&info(job)))
            .collect();
        if ended.len() > MAX_NOTICES {
            notices.push(format!(
                "{} more jobs ended; bash_jobs lists them",
                ended.len() - MAX_NOTICES
            ));
        }
        notices
    }

    /// The output of job `id` since the previous read, after waiting up to `wait` for the
    /// job to end or for new output (a line matching `pattern`, if given).
    ///
    /// # Errors
    /// `UnknownJob`, `Pattern`.
    pub async fn output(
        &self,
        id: u64,
        wait: Duration,
        pattern: Option<&str>,
        budget: Budget,
    ) -> Result<JobOutput, Error> {
        let job = self.get(id)?;
        let regex = pattern
            .map(|pattern| {
                regex::bytes::Regex::new(pattern).map_err(|err| Error::Pattern {
                    pattern: pattern.to_string(),
                    reason: err.to_string(),
                })
            })
            .transpose()?;
        let began = Instant::now();
        let deadline = tokio::time::Instant::now() + wait;
        let mut changes = job.state.subscribe();
        let mut scan = *lock(&job.cursor);
        let mut matched = false;
        loop {
            let ended = changes.borrow_and_update().ended.is_some();
            let lengths = file_lengths(&job);
            let cursor = *lock(&job.cursor);
            if let Some(regex) = &regex {
                // Off the async workers: a flooding job's new part can be large.
                let (regex, paths) = (
                    regex.clone(),
                    (job.stdout_path.clone(), job.stderr_path.clone()),
                );
                let scanned = tokio::task::spawn_blocking(move || {
                    let matched =
                        scan_lines(&paths.0, &mut scan.stdout, lengths.stdout, &regex, ended)
                            || scan_lines(
                                &paths.1,
                                &mut scan.stderr,
                                lengths.stderr,
                                &regex,
                                ended,
                            );
                    (matched, scan)
                })
                .await;
                if let Ok((found, scanned_to)) = scanned {
                    (matched, scan) = (found, scanned_to);
                }
                if matched {
                    break;
                }
            } else if has_new_line(&job, cursor, lengths, ended) {
                break;
            }
            if ended || wait.is_zero() {
                break;
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => break,
            }
        }
        let waited = began.elapsed();
        let mut output = read_new(&job, budget).await;
        output.waited_ms = millis(waited);
        if let Some(pattern) = pattern {
            output.pattern = Some(pattern.to_string());
            output.pattern_matched = Some(matched);
            if !matched {
                let why = if output.job.status == JobStatus::Running {
                    format!("in {} s", waited.as_secs())
                } else {
                    "before the job ended".into()
                };
                output
                    .notes
                    .push(format!("no new line matched {pattern:?} {why}"));
            }
        }
        if output.job.status != JobStatus::Running {
            lock(&self.unreported).retain(|ended| *ended != id);
        }
        Ok(output)
    }

    /// Stops job `id`'s process tree (`signal`, then SIGKILL after the grace) and returns
    /// its final output. A job that already ended answers with its final status.
    ///
    /// # Errors
    /// `UnknownJob`.
    pub async fn kill(
        &self,
        id: u64,
        signal: Signal,
        grace: Duration,
        budget: Budget,
    ) -> Result<JobOutput, Error> {
        let job = self.get(id)?;
        let already_ended = job.state.borrow().ended.is_some();
        if !already_ended {
            *lock(&job.kill_signal) = signal;
            job.kill.cancel();
        }
        // The task stops the tree within the grace (+ the time SIGKILL takes).
        wait_ended(
            &job,
            tokio::time::Instant::now() + grace * 2 + Duration::from_secs(2),
        )
        .await;
        let mut output = self.output(id, Duration::ZERO, None, budget).await?;
        if already_ended {
            output.notes.push("the job had already ended".into());
        }
        lock(&self.unreported).retain(|ended| *ended != id);
        Ok(output)
    }

    /// Stops every running job as `kill` would, all at once: SIGTERM to each group, then
    /// SIGKILL to what is left after `grace`. Returns once every job has ended, or shortly
    /// after the grace (a tree stuck in the kernel is left to `kill_all`).
    pub async fn stop_all(&self, grace: Duration) {
        let jobs: Vec<Arc<Job>> = lock(&self.table).values().cloned().collect();
        for job in &jobs {
            if job.state.borrow().ended.is_none() {
                *lock(&job.kill_signal) = Signal::TERM;
                job.kill.cancel();
            }
        }
        let limit = tokio::time::Instant::now() + grace + Duration::from_secs(1);
        for job in &jobs {
            wait_ended(job, limit).await;
        }
    }

    /// Kills every job's process group now (SIGKILL) and stops their tasks.
    pub fn kill_all(&self) {
        for job in lock(&self.table).values() {
            lock(&job.guard).signal(Signal::KILL);
            if let Some(task) = lock(&job.task).take() {
                task.abort();
            }
            // A job whose task is gone has ended, for whoever still reads it.
            job.state.send_if_modified(|state| {
                if state.ended.is_some() {
                    return false;
                }
                state.version += 1;
                state.ended = Some(Ended {
                    exit_code: None,
                    signal: Some(exit::signal_name(Signal::KILL.as_raw())),
                    status: JobStatus::Killed,
                    runtime: job.started.elapsed(),
                    timed_out: false,
                });
                true
            });
        }
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Waits until `job` has ended, or `limit`.
async fn wait_ended(job: &Job, limit: tokio::time::Instant) {
    let mut changes = job.state.subscribe();
    while changes.borrow_and_update().ended.is_none() {
        if !matches!(
            tokio::time::timeout_at(limit, changes.changed()).await,
            Ok(Ok(()))
        ) {
            return;
        }
    }
}

/// One line saying how a job ended.
pub fn notice(job: &JobInfo) -> String {
    format!(
        "[job {} {} after {} s: `{}`]",
        job.job_id,
        how_it_is(job),
        job.runtime_ms / 1000,
        clip(&job.command, 80)
    )
}

/// `is running`, `exited 3`, `was killed by SIGTERM at its timeout`, …
pub fn how_it_is(job: &JobInfo) -> String {
    let how = match (job.status, job.exit_code, &job.signal) {
        (JobStatus::Running, _, _) => "is running".into(),
        (JobStatus::Exited, Some(code), _) => format!("exited {code}"),
        (JobStatus::Killed, _, Some(signal)) => format!("was killed by {signal}"),
        (JobStatus::Killed, _, None) => "was killed".into(),
        (JobStatus::Ended, _, _) => "ended (its processes all exited)".into(),
        (JobStatus::Exited, None, _) => "exited".into(),
    };
    if job.timed_out {
        format!("{how} at its timeout")
    } else {
        how
    }
}

fn clip(text: &str, chars: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None if line.len() < text.len() => format!("{line}…"),
        None => line.to_string(),
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn info(job: &Job) -> JobInfo {
    let state = job.state.borrow().clone();
    let lengths = file_lengths(job);
    let (status, exit_code, signal, runtime, timed_out) = match state.ended {
        Some(ended) => (
            ended.status,
            ended.exit_code,
            ended.signal,
            ended.runtime,
            ended.timed_out,
        ),
        None => (JobStatus::Running, None, None, job.started.elapsed(), false),
    };
    JobInfo {
        job_id: job.id,
        command: job.command.clone(),
        cwd: job.cwd.clone(),
        pid: job.pid,
        origin: job.origin,
        status,
        exit_code,
        signal,
        runtime_ms: millis(runtime),
        timed_out,
        stdout_bytes: lengths.stdout,
        stderr_bytes: lengths.stderr,
        stdout_path: job.stdout_path.clone(),
        stderr_path: job.stderr_path.clone(),
    }
}

fn file_lengths(job: &Job) -> Cursor {
    let len = |path: &Path| std::fs::metadata(path).map_or(0, |meta| meta.len());
    Cursor {
        stdout: len(&job.stdout_path),
        stderr: len(&job.stderr_path),
    }
}

/// Windows what the job's files gained since its cursor, and moves the cursor past it.
async fn read_new(job: &Arc<Job>, budget: Budget) -> JobOutput {
    let _one_read_at_a_time = job.reading.lock().await;
    // Status first: once it says ended, the files are complete.
    let info_before = info(job);
    let kinds = *lock(&job.kinds);
    let from = *lock(&job.cursor);
    let running = info_before.status == JobStatus::Running;
    let lengths = Cursor {
        stdout: info_before.stdout_bytes,
        stderr: info_before.stderr_bytes,
    };
    let paths = (job.stdout_path.clone(), job.stderr_path.clone());
    let windowed = tokio::task::spawn_blocking(move || {
        let to = Cursor {
            stdout: line_end(&paths.0, from.stdout, lengths.stdout, running),
            stderr: line_end(&paths.1, from.stderr, lengths.stderr, running),
        };
        let stdout = window_part("stdout", &paths.0, from.stdout, to.stdout, budget, kinds[0]);
        let stderr = window_part("stderr", &paths.1, from.stderr, to.stderr, budget, kinds[1]);
        let (out_share, err_share) = window::allocate(&budget, stdout.demand(), stderr.demand());
        (to, stdout.finish(out_share), stderr.finish(err_share))
    })
    .await;
    let windowed = windowed.map(|(to, stdout, stderr)| {
        // Moved only now: a read dropped while it windows leaves the output unread.
        *lock(&job.cursor) = to;
        (stdout, stderr)
    });
    let (stdout, stderr) = windowed.unwrap_or_else(|err| {
        let failed = StreamOutput {
            text: format!("[cannot read the job's output: {err}]"),
            stats: StreamStats::default(),
        };
        (failed.clone(), failed)
    });
    JobOutput {
        job: info_before,
        stdout: stdout.text,
        stderr: stderr.text,
        stdout_stats: stdout.stats,
        stderr_stats: stderr.stats,
        pattern: None,
        pattern_matched: None,
        waited_ms: 0,
        notes: lock(&job.file_problems).clone(),
    }
}

/// True if and only if a read would show something new: a complete line past `cursor`
/// (or anything, once the job has ended).
fn has_new_line(job: &Job, cursor: Cursor, lengths: Cursor, ended: bool) -> bool {
    line_end(&job.stdout_path, cursor.stdout, lengths.stdout, !ended) > cursor.stdout
        || line_end(&job.stderr_path, cursor.stderr, lengths.stderr, !ended) > cursor.stderr
}

/// Where a read of a running job's file `from..to` should stop: after the last complete
/// line, since a line still being written (or a write still being copied in: the file
/// grows a page at a time) belongs to the next read. A part with no line end is read
/// whole once it is longer than a line the model could be shown anyway.
fn line_end(path: &Path, from: u64, to: u64, running: bool) -> u64 {
    const LOOK_BACK: u64 = 64 * 1024;
    if !running || to <= from {
        return to;
    }
    let start = to.saturating_sub(LOOK_BACK).max(from);
    let mut tail = Vec::new();
    let read = File::open(path).and_then(|mut file| {
        file.seek(SeekFrom::Start(start))?;
        file.take(to - start).read_to_end(&mut tail)
    });
    if read.is_err() {
        return to;
    }
    match memchr::memrchr(b'\n', &tail) {
        Some(newline) => start + newline as u64 + 1,
        None if to - from >= LOOK_BACK => to,
        None => from,
    }
}

/// Feeds bytes `from..to` of `path` through a reading capture.
fn window_part(
    name: &'static str,
    path: &Path,
    from: u64,
    to: u64,
    budget: Budget,
    kind: StreamKind,
) -> Capture {
    let mut capture = Capture::reading(name, budget, path.to_path_buf(), kind);
    if to > from
        && let Ok(mut file) = File::open(path)
        && file.seek(SeekFrom::Start(from)).is_ok()
    {
        let mut part = file.take(to - from);
        let mut buffer = vec![0u8; 64 * 1024];
        while let Ok(n) = part.read(&mut buffer) {
            if n == 0 {
                break;
            }
            capture.feed(&buffer[..n]);
        }
    }
    capture.close();
    capture
}

/// Looks for a line matching `regex` among the complete lines of `path` from `*position`
/// to `end` (and the last line without a newline too, if `at_end`: the job has ended), and
/// moves `*position` past the lines it read.
fn scan_lines(
    path: &Path,
    position: &mut u64,
    end: u64,
    regex: &regex::bytes::Regex,
    at_end: bool,
) -> bool {
    const LONGEST_LINE: usize = 64 * 1024;
    if end <= *position {
        return false;
    }
    let Ok(mut file) = File::open(path) else {
        return false;
    };
    if file.seek(SeekFrom::Start(*position)).is_err() {
        return false;
    }
    let mut part = file.take(end - *position);
    let mut buffer = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut consumed = *position;
    // Bytes of the line being read that are already behind `consumed`.
    let mut partial = 0u64;
    while let Ok(n) = part.read(&mut buffer) {
        if n == 0 {
            break;
        }
        let mut rest = &buffer[..n];
        while let Some(newline) = memchr::memchr(b'\n', rest) {
            let room = LONGEST_LINE.saturating_sub(line.len());
            line.extend_from_slice(&rest[..newline.min(room)]);
            consumed += partial + newline as u64 + 1;
            partial = 0;
            let hit = regex.is_match(&line);
            line.clear();
            rest = &rest[newline + 1..];
            if hit {
                *position = consumed;
                return true;
            }
        }
        let room = LONGEST_LINE.saturating_sub(line.len());
        line.extend_from_slice(&rest[..rest.len().min(room)]);
        partial += rest.len() as u64;
    }
    if at_end && partial > 0 && regex.is_match(&line) {
        *position = consumed + partial;
        return true;
    }
    *position = consumed;
    false
}

async fn read_some<R: AsyncRead + Unpin>(
    reader: &mut Option<R>,
    buffer: &mut Vec<u8>,
) -> std::io::Result<usize> {
    match reader {
        Some(reader) => reader.read_buf(buffer).await,
        None => std::future::pending().await,
    }
}

async fn sleep_until_some(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

async fn wait_child(child: &mut Option<tokio::process::Child>) -> std::io::Result<ExitStatus> {
    match child {
        Some(child) => child.wait().await,
        None => std::future::pending().await,
    }
}

/// Records what a job's capture decided (text or binary) and what went wrong with its
/// file, for reads.
fn note_stream(job: &Job, stream: usize, capture: &Capture) {
    lock(&job.kinds)[stream] = capture.kind();
    if let Some(problem) = capture.file_problem() {
        let name = if stream == 0 { "stdout" } else { "stderr" };
        note_problem(job, format!("the job's {name} file: {problem}"));
    }
}

fn note_problem(job: &Job, problem: String) {
    let mut problems = lock(&job.file_problems);
    // One line per stream: its first problem (a stream past the cap is noted at every read).
    let key = problem.split(':').next().unwrap_or_default().to_string();
    if !problems.iter().any(|known| known.starts_with(&key)) {
        problems.push(problem);
    }
}

/// A job's task: reads its pipes into its files until the shell has exited, the pipes are
/// closed and no process of its group is alive (or it is killed).
async fn drive(
    job: Arc<Job>,
    detached: Detached,
    mut stdout: Capture,
    mut stderr: Capture,
    grace: Duration,
    timeout: Option<Duration>,
    unreported: Arc<Mutex<Vec<u64>>>,
) {
    let Detached {
        mut child,
        stdout: mut out_pipe,
        stderr: mut err_pipe,
        ..
    } = detached;
    let has_shell = child.is_some();
    let mut out_buf = Vec::with_capacity(READ_CHUNK_BYTES);
    let mut err_buf = Vec::with_capacity(READ_CHUNK_BYTES);
    let mut status: Option<ExitStatus> = None;
    let mut kill_at: Option<Instant> = None;
    let mut deadline = timeout.map(|timeout| tokio::time::Instant::from(job.started + timeout));
    let mut timed_out = false;
    let mut poll_every = IDLE_POLL_MIN;
    let mut next_poll = tokio::time::Instant::now() + poll_every;
    let bump = |job: &Job| job.state.send_modify(|state| state.version += 1);
    loop {
        let pipes_closed = out_pipe.is_none() && err_pipe.is_none();
        tokio::select! {
            read = read_some(&mut out_pipe, &mut out_buf) => match read {
                Ok(0) | Err(_) => {
                    // Look at the group at once: this is most often the end.
                    out_pipe = None;
                    next_poll = tokio::time::Instant::now();
                }
                Ok(_) => {
                    stdout.feed(&out_buf);
                    out_buf.clear();
                    stdout.flush();
                    note_stream(&job, 0, &stdout);
                    bump(&job);
                }
            },
            read = read_some(&mut err_pipe, &mut err_buf) => match read {
                Ok(0) | Err(_) => {
                    err_pipe = None;
                    next_poll = tokio::time::Instant::now();
                }
                Ok(_) => {
                    stderr.feed(&err_buf);
                    err_buf.clear();
                    stderr.flush();
                    note_stream(&job, 1, &stderr);
                    bump(&job);
                }
            },
            exit = wait_child(&mut child) => {
                status = exit.ok();
                child = None;
                next_poll = tokio::time::Instant::now();
            },
            () = sleep_until_some(deadline), if kill_at.is_none() => {
                // Stopped as `bash_kill` would: TERM, then KILL after the grace.
                timed_out = true;
                deadline = None;
                job.kill.cancel();
            },
            () = job.kill.cancelled(), if kill_at.is_none() => {
                lock(&job.guard).signal(*lock(&job.kill_signal));
                kill_at = Some(Instant::now() + grace);
                poll_every = KILL_POLL;
                next_poll = tokio::time::Instant::now();
            },
            // Once the shell is gone, whoever holds the pipes may have left the session
            // (a daemon): the group is watched so that an empty one is let go of (its id
            // is a pid, and pids are reused).
            () = tokio::time::sleep_until(next_poll), if pipes_closed || kill_at.is_some() || child.is_none() => {
                if kill_at.is_none() {
                    poll_every = (poll_every * 2).min(IDLE_POLL_MAX);
                }
                next_poll = tokio::time::Instant::now() + poll_every;
                let alive = lock(&job.guard).alive();
                if let Some(at) = kill_at {
                    if alive && Instant::now() >= at {
                        lock(&job.guard).signal(Signal::KILL);
                    }
                    // Pipes held by a process that left the group: stop waiting for them.
                    if !alive && Instant::now() >= at {
                        out_pipe = None;
                        err_pipe = None;
                    }
                }
                if out_pipe.is_none() && err_pipe.is_none() && child.is_none() && !alive {
                    break;
                }
                if !alive && child.is_none() && kill_at.is_none() {
                    lock(&job.guard).disarm();
                }
            },
        }
    }
    for (name, capture) in [("stdout", stdout), ("stderr", stderr)] {
        let kept = capture.into_file();
        if let Some(error) = kept.error {
            note_problem(
                &job,
                format!("the job's {name} file is incomplete: {error}"),
            );
        }
    }
    lock(&job.guard).disarm();
    let killed_by_us = kill_at.map(|_| exit::signal_name(lock(&job.kill_signal).as_raw()));
    let ended = match status {
        Some(status) if status.code().is_some() => Ended {
            exit_code: status.code(),
            signal: None,
            status: JobStatus::Exited,
            runtime: job.started.elapsed(),
            timed_out,
        },
        Some(status) => Ended {
            exit_code: None,
            signal: status.signal().map(exit::signal_name),
            status: JobStatus::Killed,
            runtime: job.started.elapsed(),
            timed_out,
        },
        None if has_shell || killed_by_us.is_some() => Ended {
            exit_code: None,
            signal: killed_by_us,
            status: JobStatus::Killed,
            runtime: job.started.elapsed(),
            timed_out,
        },
        None => Ended {
            exit_code: None,
            signal: None,
            status: JobStatus::Ended,
            runtime: job.started.elapsed(),
            timed_out,
        },
    };
    lock(&unreported).push(job.id);
    job.state.send_modify(|state| {
        state.version += 1;
        state.ended = Some(ended);
    });
}

/// Parses a signal name (`TERM`, `SIGTERM`, `term`, or a number).
///
/// # Errors
/// `Error::Signal` for a name it does not know.
pub fn parse_signal(name: &str) -> Result<Signal, Error> {
    let upper = name.trim().to_ascii_uppercase();
    let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
    let signal = match bare {
        "TERM" | "15" => Signal::TERM,
        "INT" | "2" => Signal::INT,
        "HUP" | "1" => Signal::HUP,
        "KILL" | "9" => Signal::KILL,
        "QUIT" | "3" => Signal::QUIT,
        "USR1" | "10" => Signal::USR1,
        "USR2" | "12" => Signal::USR2,
        _ => {
            return Err(Error::Signal {
                name: name.to_string(),
            });
        }
    };
    Ok(signal)
}
