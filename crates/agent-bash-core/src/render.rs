//! Render stage: `Outcome` -> the text the model reads, or JSON. Pure; never prints.
//!
//! The text is compact: stdout as is; stderr under a `[stderr]` line only when it has
//! something; one status line; then `note:` and `hint:` lines. Its size is bounded: the
//! stream text is within the budget, and everything else adds at most
//! `TEXT_OVERHEAD_BYTES` plus the spill file paths (which appear in the cut markers and
//! binary notices).

use std::fmt::Write as _;

use crate::outcome::Outcome;
use crate::output::StreamStats;

/// The most bytes the text adds to the stream text, not counting spill file paths.
pub const TEXT_OVERHEAD_BYTES: usize = 4096;

/// How many left-running processes are listed by name.
const LISTED_PROCESSES: usize = 5;

/// The model's view of `outcome`.
pub fn text(outcome: &Outcome) -> String {
    let mut out = String::with_capacity(outcome.stdout.len() + outcome.stderr.len() + 256);
    let stdout_binary = binary_notice("stdout", &outcome.stdout_stats);
    let stderr_binary = binary_notice("stderr", &outcome.stderr_stats);
    if let Some(notice) = &stdout_binary {
        out.push_str(notice);
        out.push('\n');
    } else if !outcome.stdout.is_empty() {
        out.push_str(&outcome.stdout);
        out.push('\n');
    }
    if let Some(notice) = &stderr_binary {
        out.push_str(notice);
        out.push('\n');
    } else if !outcome.stderr.is_empty() {
        out.push_str("[stderr]\n");
        out.push_str(&outcome.stderr);
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str("(no output)\n");
    }
    out.push_str(&status_line(outcome));
    out.push('\n');
    for note in &outcome.notes {
        let _ = writeln!(out, "note: {}", clip(note, 300));
    }
    if !outcome.left_running.is_empty() {
        let listed: Vec<String> = outcome
            .left_running
            .iter()
            .take(LISTED_PROCESSES)
            .map(|process| format!("{} `{}`", process.pid, clip(&process.command, 120)))
            .collect();
        let more = outcome.left_running.len().saturating_sub(LISTED_PROCESSES);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "note: still running after the shell exited: {}{more}; their later output is not captured, and they are stopped when the session ends",
            listed.join(", ")
        );
    }
    if let Some(hint) = &outcome.exit_hint {
        let _ = writeln!(out, "hint: {hint}");
    }
    if outcome.timed_out {
        let _ = writeln!(
            out,
            "hint: the command did not finish in {} s; rerun with a larger timeout_secs, or make it faster",
            outcome.timeout_secs
        );
    }
    out.pop();
    out
}

/// The outcome as pretty JSON.
pub fn json(outcome: &Outcome) -> String {
    serde_json::to_string_pretty(outcome).unwrap_or_else(|err| format!("{{\"error\": \"{err}\"}}"))
}

fn status_line(outcome: &Outcome) -> String {
    let ms = outcome.duration_ms;
    let ended = match (&outcome.exit_code, &outcome.signal) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(signal)) => format!("killed by {signal}"),
        (None, None) => "exit status unknown".to_string(),
    };
    if outcome.timed_out {
        format!(
            "[timed out after {} s; process tree stopped; {ended} · {ms} ms]",
            outcome.timeout_secs
        )
    } else if outcome.cancelled {
        format!("[cancelled; process tree stopped; {ended} · {ms} ms]")
    } else {
        format!("[{ended} · {ms} ms]")
    }
}

fn binary_notice(name: &str, stats: &StreamStats) -> Option<String> {
    let kind = stats.binary.as_ref()?;
    let location = match (&stats.full_output_path, &stats.spill_error) {
        (Some(path), None) => format!("saved to {}", path.display()),
        (_, Some(error)) => format!("not saved: {}", clip(error, 200)),
        (None, None) => "not saved".to_string(),
    };
    Some(format!(
        "[{name}: binary output: {} bytes ({kind}); {location}]",
        stats.total_bytes
    ))
}

fn clip(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}
