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

mod checked;
mod input;
mod keys;
mod one;
mod pty;
mod screen;
mod start;
mod wait;

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::unix::AsyncFd;

use super::Session;
use crate::error::Error;
use crate::lock;
use crate::plan::StopTimes;
use crate::policy::Approver;
use crate::process::group::GroupGuard;
use crate::terminal_answer::{TerminalAnswer, TerminalNote, TerminalState, WaitEnd};
use checked::{Checked, check, record};
use input::{shell_lines, shown_input, typed_bytes};
use one::{Lifetime, Until, stop_trees, watch};
use pty::Live;
use screen::Screen;
use start::{Start, plan, scrollback, size};

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
