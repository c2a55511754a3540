//! What a terminal call answers: the screen and scrollback, what the program is doing, why
//! the wait ended, notes. Low in the crate, so that render words it without reaching into the
//! session's terminals.

use serde::{Deserialize, Serialize};

use crate::output::StreamStats;
use crate::policy::Refusal;

/// What the program in a terminal is doing.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminalState {
    /// Working (or sleeping on something other than the terminal).
    #[default]
    Running,
    /// Blocked reading the terminal, with no output for a quiet period: it waits for you.
    WaitingForInput,
    /// The program has ended (`exit_code` or `signal` say how).
    Exited,
}

/// Why a wait ended.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitEnd {
    /// Nothing was waited for.
    #[default]
    NoWait,
    /// `wait_for` matched.
    Matched,
    /// The program waits for input.
    WaitingForInput,
    /// The program ended.
    Exited,
    /// No output for `SETTLE`, though the program is not waiting for input.
    Quiet,
    /// The wait's time ran out.
    TimedOut,
}

/// Something an answer adds about the terminal.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TerminalNote {
    /// Nothing was typed: the program had already ended.
    NotSent,
    /// The terminal was closed because nobody used it for `secs` seconds.
    ClosedIdle {
        /// The idle timeout.
        secs: u64,
    },
    /// The terminal was closed at its maximum age.
    ClosedAge {
        /// The maximum age.
        secs: u64,
    },
    /// The audit log could not be written.
    AuditFailed {
        /// Why.
        error: String,
    },
}

/// One answer of a terminal tool: the screen, the scrollback since the previous answer,
/// and what the program is doing.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalAnswer {
    /// The terminal's id.
    pub id: u64,
    /// The command it was opened with (`bash` for the default shell).
    pub command: String,
    /// What the program is doing.
    pub state: TerminalState,
    /// The program's exit code, once it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it (`SIGKILL`), if one did.
    pub signal: Option<String>,
    /// The screen as a person would see it, without colours; trailing spaces and empty rows
    /// below the cursor left out; secrets redacted.
    pub screen: String,
    /// The terminal's size.
    pub rows: u16,
    /// The terminal's size.
    pub cols: u16,
    /// The cursor's row, from 0.
    pub cursor_row: u16,
    /// The cursor's column, from 0.
    pub cursor_col: u16,
    /// A full-screen program shows its alternate screen (less, vim, top).
    pub alternate_screen: bool,
    /// Lines that scrolled off the top since the previous answer, windowed like a stream.
    pub scrollback: String,
    /// The scrollback's counts, and its file when it was cut.
    pub scrollback_stats: StreamStats,
    /// How long the call waited, in milliseconds.
    pub waited_ms: u64,
    /// Why the wait ended.
    pub wait_end: WaitEnd,
    /// The `wait_for` regex, if one was given.
    pub wait_for: Option<String>,
    /// Set when typed lines were refused by the policy: nothing was typed.
    pub refused: Option<Refusal>,
    /// What else to know.
    pub notes: Vec<TerminalNote>,
}
