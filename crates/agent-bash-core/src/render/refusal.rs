//! The policy's side of the model's text: a verdict line by line (`agent-bash check`), a
//! refused call, and a call not run because the host has a tool for it.

use std::fmt::Write as _;

use crate::clip;
use crate::policy::{Decision, MAX_SNIPPET_BYTES, Refusal, Verdict, decision_name};

/// The policy's decision on a command, one line per simple command found, then the
/// overall decision (`agent-bash check`).
pub fn verdict(verdict: &Verdict) -> String {
    let name = decision_name;
    let mut out = String::new();
    for segment in &verdict.segments {
        let _ = write!(
            out,
            "{:<5}  {}",
            name(segment.decision),
            segment.argv.join(" ")
        );
        if !segment.redirects.is_empty() {
            let _ = write!(out, " {}", segment.redirects.join(" "));
        }
        match (&segment.rule, &segment.reason, &segment.tool) {
            (Some(rule), _, Some(tool)) => {
                let _ = write!(out, "  [rule {rule}: use the `{tool}` tool]");
            }
            (Some(rule), _, None) => {
                let _ = write!(out, "  [rule {rule}]");
            }
            (None, Some(reason), _) => {
                let _ = write!(out, "  [{}]", clip(reason, 200));
            }
            (None, None, _) => out.push_str("  [default]"),
        }
        if !segment.via.is_empty() {
            let _ = write!(out, "  (in {})", segment.via.join(" › "));
        }
        out.push('\n');
    }
    let _ = write!(out, "decision: {}", name(verdict.decision));
    match (&verdict.rule, verdict.suggested_tool()) {
        (Some(rule), Some(tool)) => {
            let _ = write!(out, " (rule {rule}, tool {tool})");
        }
        (Some(rule), None) => {
            let _ = write!(out, " (rule {rule})");
        }
        (None, _) => {}
    }
    if let Some(reason) = &verdict.reason {
        let _ = write!(out, ": {reason}");
    }
    out
}

/// A refused call: what decided, why, and what would allow it.
pub(super) fn refused(refusal: &Refusal) -> String {
    let what = match refusal.decision {
        Decision::Deny => "denied",
        Decision::Ask | Decision::Allow => "not approved",
        // Not a refusal, and worded apart (`text` sends it there with the whole command).
        Decision::Suggest => return suggested(refusal, &refusal.segment.join(" ")),
    };
    let mut out = format!("[refused by policy: {what}; nothing was run]\n");
    let _ = write!(out, "reason: {}", clip(&refusal.reason, 500));
    if let Some(rule) = &refusal.rule {
        let _ = write!(out, " (rule `{rule}`)");
    }
    out.push('\n');
    if !refusal.segment.is_empty() {
        let words = refusal.segment.join(" ");
        let _ = writeln!(out, "command: {}", clip(&words, 300));
    }
    if let Some(hint) = &refusal.hint {
        let _ = writeln!(out, "hint: {}", clip(hint, 500 + MAX_SNIPPET_BYTES));
    }
    out.pop();
    out
}

/// A call not run because the host has a tool for it: which tool, the command as sent,
/// why, and how to run it anyway. Worded unlike a refusal: nothing forbids the command.
///
/// ```
/// use agent_bash_core::{Decision, Outcome, Refusal, render};
///
/// let outcome = Outcome {
///     command: "cat src/main.rs".into(),
///     refused: Some(Refusal {
///         decision: Decision::Suggest,
///         rule: Some("suggest-read".into()),
///         reason: "read files with `Read` rather than the shell".into(),
///         segment: vec!["cat".into(), "src/main.rs".into()],
///         hint: Some("to run it in the shell anyway, send the same command again".into()),
///         tool: Some("Read".into()),
///     }),
///     ..Outcome::default()
/// };
/// assert_eq!(
///     render::text(&outcome),
///     "[not run: use the `Read` tool for this]\n\
///      command: cat src/main.rs\n\
///      why: read files with `Read` rather than the shell (suggestion `suggest-read`)\n\
///      hint: to run it in the shell anyway, send the same command again"
/// );
/// ```
pub(super) fn suggested(refusal: &Refusal, command: &str) -> String {
    let tool = refusal.tool.as_deref().unwrap_or("host's");
    let mut out = format!("[not run: use the `{tool}` tool for this]\n");
    let _ = writeln!(out, "command: {}", clip(command, 300));
    let _ = write!(out, "why: {}", clip(&refusal.reason, 500));
    if let Some(rule) = &refusal.rule {
        let _ = write!(out, " (suggestion `{rule}`)");
    }
    out.push('\n');
    if let Some(hint) = &refusal.hint {
        let _ = writeln!(out, "hint: {}", clip(hint, 500));
    }
    out.pop();
    out
}
