//! One terminal: how a call waits on it (`Until`), what its answer shows, and the watch
//! that closes it once idle or too old.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use regex::{Regex, RegexBuilder};

use super::start::scrollback;
use super::wait::{self, Activity};
use super::{HANGUP_GRACE, PATTERN_WAIT, SETTLE, Terminal, TerminalWait};
use crate::error::Error;
use crate::lock;
use crate::output::window::Share;
use crate::plan::StopTimes;
use crate::process::group::GroupGuard;
use crate::process::stop::{self, GROUP_POLL};
use crate::session::Session;
use crate::terminal_answer::{TerminalAnswer, TerminalNote, TerminalState, WaitEnd};

/// What a call waits for, checked.
#[derive(Debug)]
pub(super) struct Until {
    pub(super) max: Duration,
    pub(super) pattern: Option<Regex>,
    /// The `wait_for` as given, for the answer.
    pub(super) pattern_text: Option<String>,
    /// End the wait once the terminal has been quiet for `SETTLE`.
    pub(super) settle: bool,
    /// The screen may match only after this many reads (a send: not the screen as it was
    /// before the input); `None`: the screen as it is.
    pub(super) screen_after: Option<u64>,
}

impl Until {
    /// The wait `wait` asks for; `default` without `wait_secs` nor `wait_for`.
    pub(super) fn new(
        wait: &TerminalWait,
        default: Duration,
        session: &Session,
    ) -> Result<Until, Error> {
        let max_wait = session.config.max_wait.as_secs();
        if let Some(got) = wait.wait_secs.filter(|&secs| secs > max_wait) {
            return Err(Error::Wait { got, max: max_wait });
        }
        let pattern = match &wait.wait_for {
            Some(pattern) => Some(
                RegexBuilder::new(pattern)
                    .multi_line(true)
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|err| Error::Pattern {
                        pattern: pattern.clone(),
                        reason: err.to_string(),
                    })?,
            ),
            None => None,
        };
        let max = match (wait.wait_secs, &pattern) {
            (Some(secs), _) => Duration::from_secs(secs),
            (None, Some(_)) => PATTERN_WAIT,
            (None, None) => default,
        };
        Ok(Until {
            max,
            settle: pattern.is_none(),
            pattern,
            pattern_text: wait.wait_for.clone(),
            screen_after: None,
        })
    }
}

/// Stops the process trees of `guards` together: SIGHUP (what a terminal's hang-up sends;
/// an interactive bash ignores SIGTERM but not SIGHUP), then after `HANGUP_GRACE` the stop
/// machine (SIGTERM, the grace, SIGKILL) for what is left.
pub(super) async fn stop_trees(guards: &[&GroupGuard], times: StopTimes) {
    for guard in guards {
        guard.signal(rustix::process::Signal::HUP);
    }
    let hung_up = Instant::now() + HANGUP_GRACE;
    while Instant::now() < hung_up && guards.iter().any(|guard| guard.alive()) {
        tokio::time::sleep(GROUP_POLL).await;
    }
    let left: Vec<&GroupGuard> = guards
        .iter()
        .copied()
        .filter(|guard| guard.alive())
        .collect();
    stop::stop_groups(&left, rustix::process::Signal::TERM, times).await;
    for guard in guards {
        if !guard.alive() {
            // A group id is a pid, and pids are reused: an empty group is not ours to kill.
            guard.disarm();
        }
    }
}

/// How long a terminal lives.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lifetime {
    pub(super) idle: Duration,
    pub(super) max_age: Duration,
    pub(super) opened: Instant,
    pub(super) stop: StopTimes,
    pub(super) drain: Duration,
}

/// A terminal's watch: closes it once nobody used it for `idle`, or at `max_age`. Ends
/// when the terminal is dropped. (It starts while the terminal is being made: it looks at
/// it only after the first deadline.)
pub(super) async fn watch(terminal: std::sync::Weak<Terminal>, lifetime: Lifetime) {
    let age_at = lifetime.opened + lifetime.max_age;
    let mut next = (lifetime.opened + lifetime.idle).min(age_at);
    loop {
        tokio::time::sleep_until(next.into()).await;
        let Some(strong) = terminal.upgrade() else {
            return;
        };
        let idle_at = *lock(&strong.last_used) + lifetime.idle;
        let now = Instant::now();
        let note = if now >= age_at {
            TerminalNote::ClosedAge {
                secs: lifetime.max_age.as_secs(),
            }
        } else if now >= idle_at {
            TerminalNote::ClosedIdle {
                secs: lifetime.idle.as_secs(),
            }
        } else {
            next = idle_at.min(age_at);
            continue;
        };
        *lock(&strong.closed) = Some(note);
        strong.stop(lifetime.stop, lifetime.drain).await;
        return;
    }
}

impl Terminal {
    /// Marks the terminal used now (the idle timeout counts from here).
    pub(super) fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    /// Stops the program's tree (hang-up, SIGTERM, SIGKILL), and waits at most `drain`
    /// for its task to read what it wrote.
    pub(super) async fn stop(&self, times: StopTimes, drain: Duration) {
        stop_trees(&[self.guard.as_ref()], times).await;
        self.ended(drain).await;
    }

    /// Waits at most `limit` for the program's end to be seen (exited, output read).
    pub(super) async fn ended(&self, limit: Duration) {
        let mut changes = self.live.changed.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        while !lock(&self.live.inner).ended {
            if tokio::time::timeout_at(deadline, changes.changed())
                .await
                .is_err()
            {
                return;
            }
        }
    }

    /// The foreground process group of the terminal, if it has one.
    fn foreground(&self) -> Option<i32> {
        let group = rustix::termios::tcgetpgrp(self.master.get_ref()).ok()?;
        Some(group.as_raw_nonzero().get())
    }

    /// True if the terminal is at a shell's prompt: its foreground group is led by a shell,
    /// and a line editor (readline, zle) has the terminal out of canonical mode. A shell in
    /// canonical mode runs a builtin that reads a line (`read -s` for a password), which is
    /// not a command; a shell without a line editor (sh, dash) counts in either mode.
    pub(super) fn at_shell_prompt(&self) -> bool {
        let Some(shell) = self.foreground().and_then(wait::shell) else {
            return false;
        };
        let editing = rustix::termios::tcgetattr(self.master.get_ref()).map_or(true, |modes| {
            !modes
                .local_modes
                .contains(rustix::termios::LocalModes::ICANON)
        });
        editing || wait::PLAIN_SHELLS.contains(&shell)
    }

    /// What the foreground group does.
    fn activity(&self) -> Activity {
        match self.foreground() {
            Some(group) => wait::activity(group, &self.tty),
            None => Activity::Busy,
        }
    }

    /// True if the program waits for input: blocked on the terminal, and both the terminal
    /// and the program's block quiet long enough. The block counts from the first look
    /// that saw it, not from the last output: a program that starts slowly, writes its
    /// prompt and blocks has been quiet since it started, while its prompt may still be on
    /// its way through the pty (found on a loaded CI machine: an empty screen said waiting).
    fn waiting(&self, last_activity: Instant) -> bool {
        let activity = self.activity();
        let now = Instant::now();
        let mut since = lock(&self.blocked_since);
        if activity == Activity::Busy {
            *since = None;
            return false;
        }
        let seen = match *since {
            Some(seen) if seen >= last_activity => seen,
            _ => *since.insert(now),
        };
        activity.waiting(
            now.duration_since(last_activity)
                .min(now.duration_since(seen)),
        )
    }

    /// Waits as `until` says, then answers.
    pub(super) async fn respond(&self, session: &Session, until: &Until) -> TerminalAnswer {
        let began = Instant::now();
        let end = self.wait(until).await;
        self.answer(session, end, began.elapsed(), until.pattern_text.clone())
    }

    /// Waits until the pattern matches, the program waits for input or ends, the
    /// terminal is quiet (if `until.settle`), or `until.max` passes.
    async fn wait(&self, until: &Until) -> WaitEnd {
        if until.max.is_zero() && until.pattern.is_none() {
            return WaitEnd::NoWait;
        }
        let mut changes = self.live.changed.subscribe();
        lock(&self.live.inner)
            .screen
            .watch_scrollback(until.pattern.clone());
        let began = Instant::now();
        let end = loop {
            if let Some(end) = self.check(until, began) {
                break end;
            }
            tokio::select! {
                _ = changes.changed() => {}
                () = tokio::time::sleep(wait::POLL) => {}
            }
        };
        lock(&self.live.inner).screen.watch_scrollback(None);
        end
    }

    /// One look at the terminal for a wait: why it is over, if it is.
    fn check(&self, until: &Until, began: Instant) -> Option<WaitEnd> {
        let (matched, ended, last_activity) = {
            let inner = lock(&self.live.inner);
            let screen_may_match = until.screen_after.is_none_or(|reads| inner.reads > reads);
            let matched = until.pattern.as_ref().is_some_and(|pattern| {
                inner.screen.scrollback_matched()
                    || (screen_may_match && pattern.is_match(&inner.screen.shot().text))
            });
            (matched, inner.ended, inner.last_activity)
        };
        let quiet = last_activity.elapsed();
        if matched {
            return Some(WaitEnd::Matched);
        }
        if ended {
            return Some(WaitEnd::Exited);
        }
        // A pattern wait ends on a program waiting for input only once the terminal has
        // also been quiet for `SETTLE`: a program that polls its input while it works (top,
        // a test runner in watch mode) may still print what is waited for.
        let settled = until.pattern.is_none() || quiet >= SETTLE;
        if settled && quiet >= wait::QUIET && self.waiting(last_activity) {
            return Some(WaitEnd::WaitingForInput);
        }
        if until.settle && quiet >= SETTLE {
            return Some(WaitEnd::Quiet);
        }
        (began.elapsed() >= until.max).then_some(WaitEnd::TimedOut)
    }

    /// The answer now: the screen, the scrollback since the previous answer (windowed and
    /// spilled), the state. `end`: why the wait before it ended.
    pub(super) fn answer(
        &self,
        session: &Session,
        end: WaitEnd,
        waited: Duration,
        wait_for: Option<String>,
    ) -> TerminalAnswer {
        let number = self.answers.fetch_add(1, Ordering::Relaxed) + 1;
        let next = scrollback(session, self.id, number);
        let (shot, (rows, cols), capture, exit, last_activity) = {
            let mut inner = lock(&self.live.inner);
            let (capture, _) = inner.screen.take_scrollback(next);
            (
                inner.screen.shot(),
                inner.screen.size(),
                capture,
                inner.exit,
                inner.last_activity,
            )
        };
        let state = match (exit, end) {
            (Some(_), _) => TerminalState::Exited,
            (None, WaitEnd::WaitingForInput) => TerminalState::WaitingForInput,
            (None, _) if last_activity.elapsed() >= wait::QUIET && self.waiting(last_activity) => {
                TerminalState::WaitingForInput
            }
            (None, _) => TerminalState::Running,
        };
        let budget = session.config.budget;
        // The screen is always shown whole; the scrollback gets the rest of the budget,
        // and at least half of it.
        let share = Share {
            bytes: budget
                .bytes
                .saturating_sub(shot.text.len())
                .max(budget.bytes / 2),
            lines: budget
                .lines
                .saturating_sub(usize::from(rows))
                .max(budget.lines / 2),
        };
        let scrollback = capture.finish(share);
        let screen =
            String::from_utf8_lossy(&session.secrets.redact(shot.text.as_bytes())).into_owned();
        use std::os::unix::process::ExitStatusExt as _;
        let mut notes = Vec::new();
        notes.extend(lock(&self.closed).clone());
        TerminalAnswer {
            id: self.id,
            command: self.command.clone(),
            state,
            exit_code: exit.and_then(|status| status.code()),
            signal: exit
                .and_then(|status| status.signal())
                .map(crate::exit::signal_name),
            screen,
            rows,
            cols,
            cursor_row: shot.cursor.0,
            cursor_col: shot.cursor.1,
            alternate_screen: shot.alternate,
            scrollback: scrollback.text,
            scrollback_stats: scrollback.stats,
            waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
            wait_end: end,
            wait_for,
            refused: None,
            notes,
        }
    }
}
