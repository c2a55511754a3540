//! The pump: one event loop over a running command, shared by calls (`collect`) and
//! background jobs (`jobs::drive`).
//!
//! It reads both pipes into the stream captures, notices the shell's exit, drives a stop
//! (`stop::Stop`) when asked, and, for a job, watches a group whose shell is gone with a
//! back-off. Each `next` returns one `Event`; the caller adds its own triggers (a deadline,
//! a cancellation, progress reports) around it. `next` is cancel-safe: every branch it
//! waits on can be dropped without losing data.

use std::future::pending;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::process::Signal;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::{Instant as TokioInstant, sleep_until};

use super::group::GroupGuard;
use super::spawn::{PipeReader, Running, Shell};
use super::stop::{GROUP_POLL, Stop};
use crate::output::{Capture, Stream};
use crate::plan::ScriptFile;
use crate::plan::StopTimes;

/// Bytes read from a pipe at a time.
pub const READ_CHUNK_BYTES: usize = 256 * 1024;

/// How soon a watched group whose shell is gone (or whose pipes closed) is first checked.
/// Each check looks through /proc (a millisecond or two), so the wait doubles after each
/// check, up to `WATCH_MAX`: a short-lived leftover is seen ending at once, and a
/// long-lived daemon costs next to nothing.
const WATCH_MIN: Duration = Duration::from_millis(50);
const WATCH_MAX: Duration = Duration::from_secs(2);

/// What happened to the command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// Bytes of this stream were fed to its capture.
    Output(Stream),
    /// This stream ended (EOF, or a read error).
    Closed(Stream),
    /// The shell exited (`Pump::status`: `None` if its status could not be collected).
    Exited,
    /// A stop is over: the group emptied (or SIGKILL could not empty it in time), what was
    /// left in the pipes was read for the drain time, and the pipes are closed.
    Stopped,
    /// A watched group (`Pump::watch_group`) was found empty.
    GroupEmpty,
}

/// A running command and everything that drives it.
#[derive(Debug)]
pub(crate) struct Pump {
    child: Option<Shell>,
    stdout: Option<PipeReader>,
    stderr: Option<PipeReader>,
    /// Reserved, not zeroed: a quiet command touches none of it.
    out_buf: Vec<u8>,
    err_buf: Vec<u8>,
    guard: Arc<GroupGuard>,
    status: Option<ExitStatus>,
    started: Instant,
    times: StopTimes,
    /// Read this long after a stop is over, then close the pipes.
    drain: Duration,
    stop: Stop,
    drain_until: Option<TokioInstant>,
    /// The idle watch's current period, when the group is watched.
    watch: Option<Duration>,
    next_check: Option<TokioInstant>,
    /// Whether the last check of the group found it empty.
    seen_empty: bool,
    /// A long command's script, removed once the command is over.
    _script: Option<ScriptFile>,
}

impl Pump {
    /// Drives `running`; stops take `times`, and read what is left for `drain`.
    pub(crate) fn new(running: Running, times: StopTimes, drain: Duration) -> Pump {
        Pump {
            child: Some(running.shell),
            stdout: Some(running.stdout),
            stderr: Some(running.stderr),
            out_buf: Vec::with_capacity(READ_CHUNK_BYTES),
            err_buf: Vec::with_capacity(READ_CHUNK_BYTES),
            guard: running.guard,
            status: None,
            started: running.started,
            times,
            drain,
            stop: Stop::NotAsked,
            drain_until: None,
            watch: None,
            next_check: None,
            seen_empty: false,
            _script: running.script,
        }
    }

    /// The next event. Feeds output to `stdout` and `stderr` as it comes.
    ///
    /// Waits forever when nothing is left to wait for (`is_idle`).
    pub(crate) async fn next(&mut self, stdout: &mut Capture, stderr: &mut Capture) -> Event {
        loop {
            if self.drain_until.is_some() && self.pipes_closed() {
                // Nothing left to drain.
                self.drain_until = None;
                return Event::Stopped;
            }
            let check_at = self.check_at();
            tokio::select! {
                read = read_some(&mut self.stdout, &mut self.out_buf) => {
                    return self.on_read(Stream::Stdout, read, stdout);
                }
                read = read_some(&mut self.stderr, &mut self.err_buf) => {
                    return self.on_read(Stream::Stderr, read, stderr);
                }
                exit = wait_child(&mut self.child) => {
                    self.on_exit(exit);
                    return Event::Exited;
                }
                () = sleep_until_some(self.drain_until) => {
                    self.drain_until = None;
                    self.close_pipes();
                    return Event::Stopped;
                }
                () = sleep_until_some(check_at) => {
                    if let Some(event) = self.check() {
                        return event;
                    }
                }
            }
        }
    }

    fn on_read(&mut self, stream: Stream, read: std::io::Result<usize>, to: &mut Capture) -> Event {
        let buf = match stream {
            Stream::Stdout => &mut self.out_buf,
            Stream::Stderr => &mut self.err_buf,
        };
        match read {
            Ok(n) if n > 0 => {
                to.feed(buf);
                buf.clear();
                Event::Output(stream)
            }
            Ok(_) | Err(_) => {
                match stream {
                    Stream::Stdout => self.stdout = None,
                    Stream::Stderr => self.stderr = None,
                }
                // A closed pipe is most often the end: look at the group at once.
                self.check_soon();
                Event::Closed(stream)
            }
        }
    }

    fn on_exit(&mut self, exit: std::io::Result<ExitStatus>) {
        // An error means the status is lost, not that the shell runs on.
        self.status = match (exit, self.child.as_mut()) {
            (Ok(status), _) => Some(status),
            (Err(_), Some(child)) => child.try_wait().ok().flatten(),
            (Err(_), None) => None,
        };
        self.child = None;
        self.check_soon();
    }

    /// When the group should be checked next, if at all.
    fn check_at(&self) -> Option<TokioInstant> {
        let watched = self.watch.is_some() && (self.pipes_closed() || self.child.is_none());
        (self.stop.active() || watched)
            .then_some(self.next_check)
            .flatten()
    }

    fn check_soon(&mut self) {
        if self.watch.is_some() && !self.stop.active() {
            self.next_check = Some(TokioInstant::now());
        }
    }

    /// One look at the group: for a stop, or for the idle watch.
    fn check(&mut self) -> Option<Event> {
        let alive = self.guard.alive();
        self.seen_empty = !alive;
        let now = TokioInstant::now();
        if self.stop.active() {
            self.next_check = Some(now + GROUP_POLL);
            if self.stop.check(&self.guard, alive) {
                // What the tree wrote before it died is still in the pipes.
                self.drain_until = Some(now + self.drain);
                self.next_check = self.watch.map(|_| now + WATCH_MIN);
            }
            return None;
        }
        let period = self
            .watch
            .map_or(WATCH_MIN, |period| (period * 2).min(WATCH_MAX));
        self.watch = Some(period);
        self.next_check = Some(now + period);
        (!alive).then_some(Event::GroupEmpty)
    }

    /// Sends `signal` to the tree, then SIGKILL after the grace (see `stop`). Reading goes
    /// on meanwhile; `Event::Stopped` says when it is over.
    pub(crate) fn stop(&mut self, signal: Signal) {
        self.stop.begin(&self.guard, signal, self.times);
        self.next_check = Some(TokioInstant::now() + GROUP_POLL);
    }

    /// Watches the group from now on (for a job): once the shell is gone or the pipes are
    /// closed, it is checked with a back-off, and `Event::GroupEmpty` says when it is empty.
    pub(crate) fn watch_group(&mut self) {
        self.watch = Some(WATCH_MIN);
        self.next_check = Some(TokioInstant::now());
    }

    /// Stops reading: whoever still holds the pipes (a process that left the session) is
    /// no longer listened to.
    pub(crate) fn close_pipes(&mut self) {
        self.stdout = None;
        self.stderr = None;
    }

    /// True once a stop was asked for.
    pub(crate) fn stop_begun(&self) -> bool {
        self.stop.begun()
    }

    /// True while a stop is under way (its drain included).
    pub(crate) fn stopping(&self) -> bool {
        self.stop.active() || self.drain_until.is_some()
    }

    pub(crate) fn pipes_closed(&self) -> bool {
        self.stdout.is_none() && self.stderr.is_none()
    }

    /// True once the shell's exit was seen.
    pub(crate) fn exited(&self) -> bool {
        self.child.is_none()
    }

    /// True when a job has nothing left to follow: the pipes are closed, and the shell and
    /// its group are gone (or a stop is over, whoever survived it).
    pub(crate) fn finished(&self) -> bool {
        self.pipes_closed()
            && (self.stop == Stop::Over || (self.child.is_none() && self.seen_empty))
    }

    /// The shell's exit status, once it exited (and could be collected).
    pub(crate) fn status(&self) -> Option<ExitStatus> {
        self.status
    }

    /// The status of a shell whose exit was not seen yet, if it has exited meanwhile.
    pub(crate) fn try_status(&mut self) -> Option<ExitStatus> {
        if self.status.is_none()
            && let Some(child) = self.child.as_mut()
            && let Ok(Some(status)) = child.try_wait()
        {
            self.status = Some(status);
            self.child = None;
        }
        self.status
    }

    pub(crate) fn started(&self) -> Instant {
        self.started
    }

    pub(crate) fn guard(&self) -> &Arc<GroupGuard> {
        &self.guard
    }
}

async fn read_some<R: AsyncRead + Unpin>(
    reader: &mut Option<R>,
    buffer: &mut Vec<u8>,
) -> std::io::Result<usize> {
    match reader {
        Some(reader) => reader.read_buf(buffer).await,
        None => pending().await,
    }
}

async fn wait_child(child: &mut Option<Shell>) -> std::io::Result<ExitStatus> {
    match child {
        Some(child) => child.wait().await,
        None => pending().await,
    }
}

pub(crate) async fn sleep_until_some(deadline: Option<TokioInstant>) {
    match deadline {
        Some(deadline) => sleep_until(deadline).await,
        None => pending().await,
    }
}
