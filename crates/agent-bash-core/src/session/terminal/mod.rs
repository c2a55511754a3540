//! Terminal sessions: programs that need a terminal (a REPL, `git rebase -i`, `less`, `top`,
//! an installer's questions), driven by the model across calls. `bash` stays pipe-based;
//! this is the other tool family.
//!
//! ```text
//! open ─policy check (one parse; ask → Approver)─▶ plan (the session's environment, a
//!      terminal's TERM) ─pty::start (posix_spawn, the pty as controlling terminal)─▶ Terminal
//!      pty::drive (task): master ─▶ Screen (vt100) ─rows scrolling off─▶ Capture (scrollback)
//! send ─keys─▶ bytes ─(at a shell prompt: the typed lines through the policy)─▶ master
//!      ─wait: match │ waiting for input (wait.rs) │ exit │ quiet │ timeout─▶ answer
//! ```
//!
//! Every answer shows the screen as text (redacted), the cursor, the scrollback since the
//! previous answer (windowed and spilled like a stream of `bash`), the state (running,
//! waiting for input, exited) and how long it waited. A table per session holds the
//! terminals: a limit on how many are open, an idle timeout and a maximum age (each
//! terminal's watch task closes it), all closed with the session.
//!
//! Compromises, said plainly:
//! - The policy sees what was typed at a shell prompt since the last Enter; editing keys
//!   (arrows, history, Tab completion) change the line in ways it cannot see. Several lines
//!   sent at once to a shell are checked together, as one script.
//! - "At a shell prompt" means the leader of the terminal's foreground group is a shell
//!   (bash, sh, zsh…) whose line editor holds the terminal (not in canonical mode). A shell
//!   started inside another program (`:!sh` in vim) counts too; a shell without a line
//!   editor (sh, dash) counts whatever it reads, a password for its `read` builtin included.

mod keys;
mod pty;
mod screen;
mod wait;

use std::collections::BTreeMap;
use std::num::NonZeroU16;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use regex::{Regex, RegexBuilder};
use tokio::io::unix::AsyncFd;

use super::Session;
use crate::audit;
use crate::error::Error;
use crate::lock;
use crate::output::window::Share;
use crate::output::{Capture, Stream};
use crate::plan::Plan;
use crate::policy::{self, Approval, Approver, Decision, Refusal};
use crate::process::group::GroupGuard;
use crate::process::stop::{self, GROUP_POLL, StopTimes};
use crate::terminal_answer::{TerminalAnswer, TerminalNote, TerminalState, WaitEnd};
use pty::Live;
use screen::Screen;
use wait::Activity;

pub use keys::KNOWN as KEY_NAMES;

/// Rows of a terminal unless `terminal_open` says otherwise, and the range it may ask for.
pub const DEFAULT_ROWS: u16 = 24;
/// Columns of a terminal unless `terminal_open` says otherwise.
pub const DEFAULT_COLS: u16 = 80;
const ROWS: (u16, u16) = (2, 100);
const COLS: (u16, u16) = (20, 300);

/// How long `terminal_open` waits for the first screen at most.
pub const OPEN_WAIT: Duration = Duration::from_secs(5);
/// How long `terminal_send` waits unless `wait_secs` says otherwise (30 s with `wait_for`).
pub const SEND_WAIT: Duration = Duration::from_secs(10);
/// The wait of a `wait_for` without `wait_secs`.
pub const PATTERN_WAIT: Duration = Duration::from_secs(30);
/// Without `wait_for`, a wait also ends once the terminal has been quiet this long (no
/// output, no input) although the program is not waiting for input (it works silently).
pub const SETTLE: Duration = Duration::from_secs(1);
/// Between the hang-up of a terminal being closed and SIGTERM to what is left.
const HANGUP_GRACE: Duration = Duration::from_millis(500);

/// What `terminal_open` starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TerminalOpen {
    /// Shell code run as `bash -c COMMAND`; `None`: an interactive bash (`--norc
    /// --noprofile` unless `terminal.rc_files`).
    pub command: Option<String>,
    /// Directory to start in, relative to the root or absolute (default: the root).
    pub cwd: Option<PathBuf>,
    /// Rows (default 24, 2 to 100).
    pub rows: Option<u64>,
    /// Columns (default 80, 20 to 300).
    pub cols: Option<u64>,
    /// The terminal is closed at this age, in seconds (default and most:
    /// `terminal.max_age_secs`).
    pub timeout_secs: Option<u64>,
}

/// What a call waits for before it answers. Without `wait_for`, the wait ends once the
/// program waits for input (blocked reading the terminal, no output for a moment), ends,
/// or the terminal is quiet for `SETTLE`; with it, once it matches, the program ends, or it
/// waits for input with the terminal quiet for `SETTLE`. Either way at most `wait_secs`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TerminalWait {
    /// Longest wait, in seconds (default: 10 s for a send, 30 s with `wait_for`, none for a
    /// view without `wait_for`).
    pub wait_secs: Option<u64>,
    /// A regex: the wait ends when it matches a line of the screen (after new output, for a
    /// send) or a line that scrolled off.
    pub wait_for: Option<String>,
}

/// What `terminal_send` types: `text` as is (a newline is the Enter key), then `keys`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TerminalInput {
    /// Text typed as is.
    pub text: Option<String>,
    /// Named keys typed after the text (`Enter`, `Ctrl-C`, `Up`…; see `KEY_NAMES`).
    pub keys: Vec<String>,
    /// What to wait for after typing.
    pub wait: TerminalWait,
}

/// The session's terminals.
#[derive(Debug, Default)]
pub(crate) struct Terminals {
    table: Mutex<BTreeMap<u64, Arc<Terminal>>>,
    /// Ids given so far; never reused within a session.
    last_id: AtomicU64,
}

/// One terminal: the program, its pty, and what its task keeps up to date.
#[derive(Debug)]
pub(crate) struct Terminal {
    id: u64,
    command: String,
    cwd: PathBuf,
    tty: PathBuf,
    master: Arc<AsyncFd<OwnedFd>>,
    live: Arc<Live>,
    guard: Arc<GroupGuard>,
    /// When a call last used it (the idle timeout counts from here).
    last_used: Mutex<Instant>,
    /// What was typed at a shell prompt since the last Enter.
    typed: Mutex<String>,
    /// When the foreground group was first seen blocked on the terminal, in the stretch
    /// of looks that still see it so with nothing read or written since.
    blocked_since: Mutex<Option<Instant>>,
    /// Why the watch task closed it, if it did.
    closed: Mutex<Option<TerminalNote>>,
    /// One call at a time looks at a terminal (each answer takes the scrollback).
    turn: tokio::sync::Mutex<()>,
    /// Answers so far (their number names the scrollback files).
    answers: AtomicU64,
    tasks: [tokio::task::AbortHandle; 2],
}

impl Drop for Terminal {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        // The guard's last owner kills the group on drop.
    }
}

/// What a call waits for, checked.
#[derive(Debug)]
struct Until {
    max: Duration,
    pattern: Option<Regex>,
    /// The `wait_for` as given, for the answer.
    pattern_text: Option<String>,
    /// End the wait once the terminal has been quiet for `SETTLE`.
    settle: bool,
    /// The screen may match only after this many reads (a send: not the screen as it was
    /// before the input); `None`: the screen as it is.
    screen_after: Option<u64>,
}

impl Until {
    /// The wait `wait` asks for; `default` without `wait_secs` nor `wait_for`.
    fn new(wait: &TerminalWait, default: Duration, session: &Session) -> Result<Until, Error> {
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

impl Terminals {
    /// No terminals yet; the first one will have the id `first` (at least 1).
    pub(crate) fn numbered_from(first: u64) -> Terminals {
        let terminals = Terminals::default();
        terminals.last_id.store(first.max(1) - 1, Ordering::Relaxed);
        terminals
    }

    /// The terminal `id`.
    fn get(&self, id: u64) -> Result<Arc<Terminal>, Error> {
        let table = lock(&self.table);
        table
            .get(&id)
            .cloned()
            .ok_or_else(|| Error::UnknownTerminal {
                id,
                known: table.keys().copied().collect(),
            })
    }

    /// Opens a terminal running `open.command` (or an interactive bash), once the policy
    /// allows it, and answers with its first screen.
    pub(crate) async fn open(
        &self,
        session: &Session,
        open: TerminalOpen,
        approver: &impl Approver,
    ) -> Result<TerminalAnswer, Error> {
        let rows = size("rows", open.rows, DEFAULT_ROWS, ROWS)?;
        let cols = size("cols", open.cols, DEFAULT_COLS, COLS)?;
        let mut request = crate::request::Request::new(open.command.as_deref().unwrap_or("bash"));
        request.cwd = open.cwd.clone();
        let call = crate::request::validate(&request, &session.root, &session.config)?;
        session
            .spill_dir
            .check_base()
            .map_err(|reason| Error::OutputDir { reason })?;
        let max_age = session.config.terminal.max_age;
        let max_age = open.timeout_secs.map_or(max_age, |secs| {
            Duration::from_secs(secs.max(1)).min(max_age)
        });
        // Sent from another agent-bash whose policy decided it already (`caller_decides`).
        let checked = check(
            session,
            &call.command,
            approver,
            session.config.caller_decides,
        )
        .await;
        if let Some(refusal) = checked.refusal.clone() {
            record(
                session,
                0,
                "open",
                &call.command,
                &call.cwd,
                &checked,
                false,
            );
            return Ok(TerminalAnswer {
                command: call.command,
                state: TerminalState::Exited,
                refused: Some(refusal),
                ..TerminalAnswer::default()
            });
        }
        let start = Start {
            command: &call.command,
            cwd: &call.cwd,
            default_shell: open.command.is_none(),
            rows,
            cols,
            max_age,
        };
        let terminal = self.start(session, &start)?;
        let mut notes = Vec::new();
        notes.extend(record(
            session,
            terminal.id,
            "open",
            &call.command,
            &call.cwd,
            &checked,
            true,
        ));
        let until = Until {
            max: OPEN_WAIT,
            pattern: None,
            pattern_text: None,
            settle: true,
            screen_after: None,
        };
        let _turn = terminal.turn.lock().await;
        let mut answer = terminal.respond(session, &until).await;
        terminal.touch();
        answer.notes.extend(notes);
        Ok(answer)
    }

    /// Starts a terminal under the table's lock, so that concurrent opens never exceed the
    /// limit. Terminals whose program ended make room, oldest first.
    fn start(&self, session: &Session, start: &Start<'_>) -> Result<Arc<Terminal>, Error> {
        let max = session.config.terminal.max_sessions;
        let mut table = lock(&self.table);
        while table.len() >= max {
            let ended = table
                .iter()
                .find(|(_, terminal)| lock(&terminal.live.inner).ended)
                .map(|(id, _)| *id);
            match ended {
                Some(id) => table.remove(&id),
                None => return Err(Error::TerminalLimit { max }),
            };
        }
        let id = self.last_id.fetch_add(1, Ordering::Relaxed) + 1;
        let plan = plan(session, start)?;
        let started = pty::start(&plan, start.rows, start.cols)?;
        let screen = Screen::new(start.rows, start.cols, scrollback(session, id, 0));
        let live = Arc::new(Live::new(screen));
        let master = started.master.clone();
        let drive = tokio::spawn(pty::drive(
            master,
            started.shell,
            live.clone(),
            session.config.io_drain,
        ));
        let config = &session.config;
        let lifetime = Lifetime {
            idle: config.terminal.idle,
            max_age: start.max_age,
            opened: Instant::now(),
            stop: session.stop_times(),
            drain: config.io_drain,
        };
        let terminal = Arc::new_cyclic(|weak: &std::sync::Weak<Terminal>| {
            let watch = tokio::spawn(watch(weak.clone(), lifetime));
            Terminal {
                id,
                command: start.command.to_string(),
                cwd: start.cwd.to_path_buf(),
                tty: started.tty,
                master: started.master,
                live,
                guard: started.guard,
                last_used: Mutex::new(Instant::now()),
                typed: Mutex::new(String::new()),
                blocked_since: Mutex::new(None),
                closed: Mutex::new(None),
                turn: tokio::sync::Mutex::new(()),
                answers: AtomicU64::new(0),
                tasks: [drive.abort_handle(), watch.abort_handle()],
            }
        });
        table.insert(id, terminal.clone());
        Ok(terminal)
    }

    /// Types `input` into terminal `id` (unless the policy refuses a line typed at a shell
    /// prompt) and answers once the wait is over.
    pub(crate) async fn send(
        &self,
        session: &Session,
        id: u64,
        input: TerminalInput,
        approver: &impl Approver,
    ) -> Result<TerminalAnswer, Error> {
        let terminal = self.get(id)?;
        let mut until = Until::new(&input.wait, SEND_WAIT, session)?;
        let _turn = terminal.turn.lock().await;
        terminal.touch();
        let application_cursor = lock(&terminal.live.inner).screen.application_cursor();
        let bytes = typed_bytes(&input, application_cursor)?;
        if lock(&terminal.live.inner).exit.is_some() {
            let mut answer = terminal.answer(session, WaitEnd::NoWait, Duration::ZERO, None);
            answer.notes.insert(0, TerminalNote::NotSent);
            return Ok(answer);
        }
        let typed = lock(&terminal.typed).clone();
        let at_prompt = terminal.at_shell_prompt();
        let (lines, rest) = shell_lines(&typed, &input);
        let checked = match (at_prompt, lines.is_empty()) {
            // Always checked here, target or not: only this side knows what is a line
            // typed at a shell prompt.
            (true, false) => Some(check(session, &lines.join("\n"), approver, false).await),
            _ => None,
        };
        let unchecked = Checked::unchecked();
        let decided = checked.as_ref().unwrap_or(&unchecked);
        let refused = decided.refusal.is_some();
        let shown = shown_input(&input, checked.is_some());
        let mut notes: Vec<TerminalNote> = record(
            session,
            id,
            "send",
            &shown,
            &terminal.cwd,
            decided,
            !refused,
        )
        .into_iter()
        .collect();
        if let Some(refusal) = &decided.refusal {
            let mut answer = terminal.answer(session, WaitEnd::NoWait, Duration::ZERO, None);
            answer.refused = Some(refusal.clone());
            answer.notes.extend(notes);
            return Ok(answer);
        }
        *lock(&terminal.typed) = if at_prompt { rest } else { String::new() };
        let reads_before = {
            let mut inner = lock(&terminal.live.inner);
            inner.last_activity = Instant::now();
            inner.reads
        };
        pty::write(&terminal.master, &bytes)
            .await
            .map_err(|err| Error::Terminal {
                reason: format!("cannot type into terminal {id}: {err}"),
            })?;
        lock(&terminal.live.inner).last_activity = Instant::now();
        until.screen_after = Some(reads_before);
        let mut answer = terminal.respond(session, &until).await;
        terminal.touch();
        notes.append(&mut answer.notes);
        answer.notes = notes;
        Ok(answer)
    }

    /// Terminal `id`'s screen and new scrollback, after the wait `wait` asks for (none by
    /// default).
    pub(crate) async fn view(
        &self,
        session: &Session,
        id: u64,
        wait: TerminalWait,
    ) -> Result<TerminalAnswer, Error> {
        let terminal = self.get(id)?;
        let until = Until::new(&wait, Duration::ZERO, session)?;
        let _turn = terminal.turn.lock().await;
        terminal.touch();
        let answer = terminal.respond(session, &until).await;
        terminal.touch();
        Ok(answer)
    }

    /// Ends terminal `id`: hang-up, then SIGTERM and SIGKILL for what is left of its
    /// process tree; answers with its last screen.
    pub(crate) async fn close(&self, session: &Session, id: u64) -> Result<TerminalAnswer, Error> {
        let terminal = self.get(id)?;
        let _turn = terminal.turn.lock().await;
        let began = Instant::now();
        terminal
            .stop(session.stop_times(), session.config.io_drain)
            .await;
        lock(&self.table).remove(&id);
        let unchecked = Checked::unchecked();
        let notes = record(
            session,
            id,
            "close",
            &terminal.command,
            &terminal.cwd,
            &unchecked,
            true,
        );
        let mut answer = terminal.answer(session, WaitEnd::Exited, began.elapsed(), None);
        answer.notes.extend(notes);
        Ok(answer)
    }

    /// Ends every terminal gently (hang-up, SIGTERM, SIGKILL), for a session that ends.
    pub(crate) async fn stop_all(&self, times: StopTimes, drain: Duration) {
        let terminals: Vec<Arc<Terminal>> = lock(&self.table).values().cloned().collect();
        let guards: Vec<&GroupGuard> = terminals.iter().map(|t| t.guard.as_ref()).collect();
        stop_trees(&guards, times).await;
        for terminal in &terminals {
            terminal.ended(drain).await;
        }
    }

    /// How many terminals are open.
    pub(crate) fn open_count(&self) -> usize {
        lock(&self.table).len()
    }

    /// SIGKILL to every terminal's process tree.
    pub(crate) fn kill_all(&self) {
        let terminals = std::mem::take(&mut *lock(&self.table));
        for terminal in terminals.values() {
            terminal.guard.signal(rustix::process::Signal::KILL);
        }
    }
}

/// Stops the process trees of `guards` together: SIGHUP (what a terminal's hang-up sends;
/// an interactive bash ignores SIGTERM but not SIGHUP), then after `HANGUP_GRACE` the stop
/// machine (SIGTERM, the grace, SIGKILL) for what is left.
async fn stop_trees(guards: &[&GroupGuard], times: StopTimes) {
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
struct Lifetime {
    idle: Duration,
    max_age: Duration,
    opened: Instant,
    stop: StopTimes,
    drain: Duration,
}

/// A terminal's watch: closes it once nobody used it for `idle`, or at `max_age`. Ends
/// when the terminal is dropped. (It starts while the terminal is being made: it looks at
/// it only after the first deadline.)
async fn watch(terminal: std::sync::Weak<Terminal>, lifetime: Lifetime) {
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
    fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    /// Stops the program's tree (hang-up, SIGTERM, SIGKILL), and waits at most `drain`
    /// for its task to read what it wrote.
    async fn stop(&self, times: StopTimes, drain: Duration) {
        stop_trees(&[self.guard.as_ref()], times).await;
        self.ended(drain).await;
    }

    /// Waits at most `limit` for the program's end to be seen (exited, output read).
    async fn ended(&self, limit: Duration) {
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
    fn at_shell_prompt(&self) -> bool {
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
    async fn respond(&self, session: &Session, until: &Until) -> TerminalAnswer {
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
    fn answer(
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

/// What `Terminals::start` needs to know.
struct Start<'a> {
    command: &'a str,
    cwd: &'a Path,
    /// No command was given: an interactive bash.
    default_shell: bool,
    rows: NonZeroU16,
    cols: NonZeroU16,
    max_age: Duration,
}

/// `what` (`rows`, `cols`) as asked for, or `default`, within `range`.
fn size(
    what: &'static str,
    asked: Option<u64>,
    default: u16,
    range: (u16, u16),
) -> Result<NonZeroU16, Error> {
    let (min, max) = range;
    let value = asked.unwrap_or(u64::from(default));
    u16::try_from(value)
        .ok()
        .filter(|value| (min..=max).contains(value))
        .and_then(NonZeroU16::new)
        .ok_or(Error::TerminalSize {
            what,
            got: value,
            min,
            max,
        })
}

/// What a terminal starts: the session's bash running the command (or interactive), in
/// the session's environment without the non-interactive overrides (pagers, editors and
/// prompts work in a terminal), with a terminal's `TERM`. The same `Plan` as a call's, so
/// that the sandbox's transform applies to it alike.
///
/// # Errors
/// `Error::Sandbox` when the session's sandbox cannot confine it.
fn plan(session: &Session, start: &Start<'_>) -> Result<Plan, Error> {
    let args: Vec<std::ffi::OsString> = if !start.default_shell {
        vec!["-c".into(), start.command.into()]
    } else if session.config.terminal.rc_files {
        vec!["-i".into()]
    } else {
        vec!["--norc".into(), "--noprofile".into(), "-i".into()]
    };
    let mut env: Vec<(String, String)> = vec![
        ("TERM".into(), "xterm-256color".into()),
        ("AGENT_BASH".into(), "1".into()),
    ];
    env.extend(session.config.env_set.iter().cloned());
    let mut env_remove = session.env_remove().to_vec();
    // The size is the terminal's (TIOCGWINSZ), not an inherited guess.
    env_remove.extend(["COLUMNS".into(), "LINES".into()]);
    // The session's sandbox, as for a call.
    let confined = crate::plan::confined(session.sandboxing((None, None))?, (None, None))?;
    Ok(Plan {
        program: session.bash().to_path_buf(),
        args,
        cwd: start.cwd.to_path_buf(),
        env_remove,
        env,
        script: None,
        limits: crate::plan::Limits {
            timeout: start.max_age,
            stop: session.stop_times(),
            io_drain: session.config.io_drain,
            background: true,
            detach_on_timeout: false,
            detach_leftovers: false,
            job_timeout: Some(start.max_age),
        },
        confined,
    })
}

/// The capture of terminal `id`'s scrollback for its answer `number`.
fn scrollback(session: &Session, id: u64, number: u64) -> Capture {
    Capture::new(
        Stream::Stdout,
        session.config.budget,
        session.spill_dir.clone(),
        format!("terminal-{id}-{number:04}-scrollback"),
        session.config.spill_cap_bytes,
    )
    .named("scrollback")
    .redacting(&session.secrets)
}

/// A policy decision on something a terminal runs.
struct Checked {
    decision: &'static str,
    rule: Option<String>,
    refusal: Option<Refusal>,
}

impl Checked {
    /// For what the policy does not look at (input to a program other than a shell).
    fn unchecked() -> Checked {
        Checked {
            decision: "unchecked",
            rule: None,
            refusal: None,
        }
    }
}

/// The policy's decision on `command` (one parse; `ask` goes to `approver`), and the
/// refusal when it may not run.
async fn check(
    session: &Session,
    command: &str,
    approver: &impl Approver,
    caller_decided: bool,
) -> Checked {
    let shell = session.shell.definitions();
    let mut verdict = policy::check(&session.policy, command, caller_decided, &shell.definitions);
    if verdict.decision == Decision::Suggest {
        // A terminal is where the shell itself is wanted: a suggestion is for `bash` calls.
        verdict.decision = Decision::Allow;
        verdict.rule = None;
        verdict.reason = None;
    }
    let approval = match verdict.decision {
        Decision::Ask => approver.approve(command, &verdict).await,
        Decision::Allow | Decision::Suggest | Decision::Deny => Approval::NotAsked,
    };
    let refused = match verdict.decision {
        Decision::Allow | Decision::Suggest => false,
        Decision::Ask => approval != Approval::Approved,
        Decision::Deny => true,
    };
    let refusal = refused.then(|| {
        policy::refusal(
            &verdict,
            approval,
            session.policy.allowing(command).as_ref(),
            &session.user_file(),
        )
    });
    Checked {
        decision: policy::decision_name(verdict.decision),
        rule: verdict.rule.clone(),
        refusal,
    }
}

/// Appends an action on terminal `id` to the audit log; a failure to is a note.
fn record(
    session: &Session,
    id: u64,
    action: &'static str,
    command: &str,
    cwd: &Path,
    checked: &Checked,
    ran: bool,
) -> Option<TerminalNote> {
    let path = match session.audit_path() {
        Ok(Some(path)) => path,
        Ok(None) => return None,
        Err(error) => return Some(TerminalNote::AuditFailed { error }),
    };
    let entry = audit::Entry::terminal(
        id,
        action,
        command,
        cwd,
        checked.decision,
        checked.rule.as_deref(),
        ran,
    );
    audit::append(&path, &entry)
        .err()
        .map(|error| TerminalNote::AuditFailed { error })
}

/// The bytes `input` types: the text (a newline is the Enter key, `\r`), then the keys.
///
/// # Errors
/// `Error::Key` for a key name it does not know.
fn typed_bytes(input: &TerminalInput, application_cursor: bool) -> Result<Vec<u8>, Error> {
    let mut bytes: Vec<u8> = input
        .text
        .as_deref()
        .unwrap_or_default()
        .replace("\r\n", "\r")
        .replace('\n', "\r")
        .into_bytes();
    for key in &input.keys {
        bytes.extend(keys::bytes(key, application_cursor)?);
    }
    Ok(bytes)
}

/// `input` as the audit log shows it: the text (only its length, unless it was typed at a
/// shell prompt: input to a program may be a password), then the keys as `{Enter}`.
fn shown_input(input: &TerminalInput, text_shown: bool) -> String {
    let text = input.text.clone().unwrap_or_default();
    let mut shown = match (text_shown, text.chars().count()) {
        (true, _) | (false, 0) => text,
        (false, chars) => format!("({chars} chars)"),
    };
    for key in &input.keys {
        shown.push('{');
        shown.push_str(key);
        shown.push('}');
    }
    shown
}

/// The lines `input` completes at a shell prompt (the first begun by what was `typed`
/// before), and what is typed after its last Enter.
fn shell_lines(typed: &str, input: &TerminalInput) -> (Vec<String>, String) {
    let mut line = typed.to_string();
    let mut lines = Vec::new();
    for c in input.text.as_deref().unwrap_or_default().chars() {
        match c {
            '\n' | '\r' => lines.push(std::mem::take(&mut line)),
            '\x03' | '\x15' => line.clear(),
            '\x7f' | '\x08' => {
                line.pop();
            }
            c => line.push(c),
        }
    }
    for key in &input.keys {
        match key.trim().to_ascii_lowercase().as_str() {
            "enter" | "return" | "ctrl-m" | "ctrl-j" | "c-m" | "c-j" | "^m" | "^j" => {
                lines.push(std::mem::take(&mut line));
            }
            "ctrl-c" | "ctrl-u" | "c-c" | "c-u" | "^c" | "^u" | "ctrl+c" | "ctrl+u" => line.clear(),
            "backspace" => {
                line.pop();
            }
            "space" => line.push(' '),
            "tab" => line.push('\t'),
            _ => {}
        }
    }
    lines.retain(|line| !line.trim().is_empty());
    (lines, line)
}

/// Terminal sessions: programs that need a terminal, driven across calls.
impl Session {
    /// Opens a terminal running `open.command` (default: an interactive bash) once the
    /// policy allows it, and answers with its first screen (once the program waits for
    /// input, its output settles, or `terminal::OPEN_WAIT` passes). A refused command
    /// opens nothing: the answer's `refused` says why.
    ///
    /// # Errors
    /// `TerminalLimit`, `TerminalSize`, `Cwd`, `EmptyCommand` and the other request errors,
    /// `Terminal` or `Spawn` when it cannot be started.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use agent_bash_core::{Config, NoApprover, Session, TerminalInput, TerminalOpen};
    /// use agent_bash_core::{TerminalState, TerminalWait};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let config = Config { spill_parent: Some(dir.path().into()), ..Config::default() };
    /// let session = Session::new(dir.path(), config)?;
    /// let open = TerminalOpen { command: Some("python3 -q".into()), ..TerminalOpen::default() };
    /// let first = session.terminal_open(open, &NoApprover).await?;
    /// // On a busy machine the first answer may come before the prompt: wait for it.
    /// let prompt = TerminalWait { wait_secs: Some(30), wait_for: Some(">>>".into()) };
    /// let ready = session.terminal_view(first.id, prompt).await?;
    /// assert!(ready.screen.ends_with(">>>"), "{}", ready.screen);
    ///
    /// let answered = TerminalWait { wait_secs: Some(30), wait_for: Some("^42$".into()) };
    /// let text = Some("6 * 7\n".into());
    /// let input = TerminalInput { text, wait: answered, ..TerminalInput::default() };
    /// let answer = session.terminal_send(first.id, input, &NoApprover).await?;
    /// // The wait ends on the answer's line, maybe before the next prompt is drawn.
    /// assert!(answer.screen.lines().any(|line| line == "42"), "{}", answer.screen);
    ///
    /// let closed = session.terminal_close(first.id).await?;
    /// assert_eq!(closed.state, TerminalState::Exited);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn terminal_open(
        &self,
        open: TerminalOpen,
        approver: &impl Approver,
    ) -> Result<TerminalAnswer, Error> {
        // A terminal runs under the session's sandbox: its window opens first, and closes
        // at a later call once no terminal is open (which also looks at git).
        self.confined_work_starts(self.confines_writes((None, None)));
        self.terminals.open(self, open, approver).await
    }

    /// Types `input` into terminal `id` (its text as is, a newline as Enter, then its named
    /// keys) and answers once the wait is over: `wait_for` matched, the program waits for
    /// input or ended, the terminal was quiet for `terminal::SETTLE` (without `wait_for`),
    /// or `wait_secs` passed. At a shell prompt, the lines it completes go through the
    /// policy first; a refused line types nothing.
    ///
    /// # Errors
    /// `UnknownTerminal`, `Key`, `Pattern`, `Wait`, `Terminal` (the write failed).
    pub async fn terminal_send(
        &self,
        id: u64,
        input: TerminalInput,
        approver: &impl Approver,
    ) -> Result<TerminalAnswer, Error> {
        self.terminals.send(self, id, input, approver).await
    }

    /// Terminal `id`'s screen and new scrollback, after waiting as `wait` says (by default
    /// not at all), typing nothing.
    ///
    /// # Errors
    /// `UnknownTerminal`, `Pattern`, `Wait`.
    pub async fn terminal_view(
        &self,
        id: u64,
        wait: TerminalWait,
    ) -> Result<TerminalAnswer, Error> {
        self.terminals.view(self, id, wait).await
    }

    /// Ends terminal `id` (hang-up, then SIGTERM and SIGKILL for its whole process tree)
    /// and answers with its last screen.
    ///
    /// # Errors
    /// `UnknownTerminal`.
    pub async fn terminal_close(&self, id: u64) -> Result<TerminalAnswer, Error> {
        self.terminals.close(self, id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(text: &str, keys: &[&str]) -> TerminalInput {
        TerminalInput {
            text: Some(text.into()),
            keys: keys.iter().map(|key| key.to_string()).collect(),
            wait: TerminalWait::default(),
        }
    }

    #[test]
    fn lines_typed_at_a_prompt_are_what_enter_completes() {
        let check = |typed: &str, text: &str, keys: &[&str], lines: &[&str], rest: &str| {
            let (got, left) = shell_lines(typed, &input(text, keys));
            assert_eq!(
                (got, left.as_str()),
                (
                    lines.iter().map(|l| l.to_string()).collect::<Vec<_>>(),
                    rest
                ),
                "{typed:?} {text:?} {keys:?}"
            );
        };
        check("", "ls -l", &["Enter"], &["ls -l"], "");
        check("", "ls\ncd /tmp\n", &[], &["ls", "cd /tmp"], "");
        check("rm -rf ", "/", &["Enter"], &["rm -rf /"], "");
        check("", "echo hi", &[], &[], "echo hi");
        check("junk", "", &["Ctrl-C"], &[], "");
        check("", "lsx", &["Backspace", "Enter"], &["ls"], "");
        check("", "", &["Enter"], &[], "");
    }

    #[test]
    fn text_newlines_are_typed_as_enter_and_keys_follow() {
        let bytes = typed_bytes(&input("a\nb\r\n", &["Tab", "Ctrl-D"]), false).unwrap();
        assert_eq!(bytes, b"a\rb\r\t\x04");
        assert!(matches!(
            typed_bytes(&input("", &["Nope"]), false),
            Err(Error::Key { .. })
        ));
        assert_eq!(shown_input(&input("ls", &["Enter"]), true), "ls{Enter}");
        assert_eq!(
            shown_input(&input("hunter2", &["Enter"]), false),
            "(7 chars){Enter}"
        );
    }

    #[test]
    fn sizes_are_checked() {
        assert_eq!(
            size("rows", None, 24, ROWS).map(NonZeroU16::get).ok(),
            Some(24)
        );
        assert_eq!(
            size("rows", Some(50), 24, ROWS).map(NonZeroU16::get).ok(),
            Some(50)
        );
        let err = size("cols", Some(5), 80, COLS).unwrap_err();
        assert_eq!(err.to_string(), "cols must be between 20 and 300 (got 5)");
        assert!(size("rows", Some(1 << 40), 24, ROWS).is_err());
    }
}
