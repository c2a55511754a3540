//! The model's view of a terminal answer: scrollback, screen, one status line, notes and
//! hints.

use std::fmt::Write as _;

use super::refusal::refused;
use crate::clip;
use crate::terminal_answer::{TerminalAnswer, TerminalNote, TerminalState, WaitEnd};

/// The model's view of a terminal answer (`terminal_open`, `terminal_send`,
/// `terminal_view`, `terminal_close`): the new scrollback under `[scrollback]` when there is
/// some, the screen under `[screen ROWSxCOLS]`, one status line (what the program does, how
/// long the call waited, the cursor), then `note:` and `hint:` lines. A refusal says why
/// and that nothing was typed.
///
/// ```
/// use agent_bash_core::{TerminalAnswer, TerminalState, WaitEnd, render};
///
/// let answer = TerminalAnswer {
///     id: 1,
///     command: "python3".into(),
///     state: TerminalState::WaitingForInput,
///     screen: ">>> 6 * 7\n42\n>>>".into(),
///     rows: 24,
///     cols: 80,
///     cursor_row: 2,
///     cursor_col: 4,
///     waited_ms: 52,
///     wait_end: WaitEnd::WaitingForInput,
///     ..TerminalAnswer::default()
/// };
/// assert_eq!(
///     render::terminal(&answer),
///     "[screen 24x80]\n>>> 6 * 7\n42\n>>>\n\
///      [terminal 1: waiting for input · waited 52 ms · cursor row 2 col 4]"
/// );
/// ```
pub fn terminal(answer: &TerminalAnswer) -> String {
    let mut out = String::with_capacity(answer.scrollback.len() + answer.screen.len() + 256);
    if let Some(refusal) = &answer.refused {
        let typed = refused(refusal).replacen("nothing was run", "nothing was typed", 1);
        out.push_str(&typed);
        out.push('\n');
    }
    if !answer.scrollback.is_empty() {
        let lines = answer.scrollback_stats.total_lines;
        let _ = writeln!(out, "[scrollback: {lines} new {}]", plural(lines, "line"));
        let _ = writeln!(out, "{}", answer.scrollback);
    }
    if answer.id > 0 {
        let full = if answer.alternate_screen {
            ", full-screen program"
        } else {
            ""
        };
        let _ = writeln!(out, "[screen {}x{}{full}]", answer.rows, answer.cols);
        let _ = writeln!(out, "{}", answer.screen);
        let _ = writeln!(out, "[{}]", terminal_status(answer));
    }
    for one in &answer.notes {
        let _ = writeln!(out, "note: {}", clip(&terminal_note(one), 300));
    }
    if let Some(hint) = terminal_hint(answer) {
        let _ = writeln!(out, "hint: {hint}");
    }
    out.pop();
    out
}

/// `terminal 1: waiting for input · waited 52 ms · cursor row 2 col 4`.
fn terminal_status(answer: &TerminalAnswer) -> String {
    let state = match answer.state {
        TerminalState::Running => "running".to_string(),
        TerminalState::WaitingForInput => "waiting for input".to_string(),
        TerminalState::Exited => match (&answer.exit_code, &answer.signal) {
            (Some(code), _) => format!("exited {code}"),
            (None, Some(signal)) => format!("killed by {signal}"),
            (None, None) => "ended".to_string(),
        },
    };
    let mut status = format!("terminal {}: {state}", answer.id);
    if answer.wait_end != WaitEnd::NoWait {
        let _ = write!(status, " · waited {}", duration(answer.waited_ms));
    }
    if answer.state != TerminalState::Exited {
        let _ = write!(
            status,
            " · cursor row {} col {}",
            answer.cursor_row, answer.cursor_col
        );
    }
    status
}

/// What the model may want to do next, when it is not obvious.
fn terminal_hint(answer: &TerminalAnswer) -> Option<String> {
    let id = answer.id;
    match (answer.wait_end, &answer.wait_for) {
        (WaitEnd::TimedOut, Some(pattern)) => Some(format!(
            "wait_for {pattern:?} did not match in {}; terminal_view {{\"id\": {id}, \"wait_secs\": 30, \"wait_for\": …}} waits more",
            duration(answer.waited_ms)
        )),
        (WaitEnd::TimedOut | WaitEnd::Quiet, None) if answer.state == TerminalState::Running => {
            Some(format!(
                "the program is still working; terminal_view {{\"id\": {id}, \"wait_secs\": 30}} waits for more"
            ))
        }
        _ => None,
    }
}

/// One terminal note in words.
fn terminal_note(note: &TerminalNote) -> String {
    match note {
        TerminalNote::NotSent => "nothing was typed: the program has ended".into(),
        TerminalNote::ClosedIdle { secs } => {
            format!("the terminal was closed after {secs} s without use (terminal.idle_secs)")
        }
        TerminalNote::ClosedAge { secs } => format!(
            "the terminal was closed at its maximum age of {secs} s (timeout_secs, terminal.max_age_secs)"
        ),
        TerminalNote::AuditFailed { error } => format!("the audit log was not written: {error}"),
    }
}

/// `52 ms`, `1.5 s`.
fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// `word` or `words`.
fn plural(count: u64, word: &str) -> String {
    if count == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}
