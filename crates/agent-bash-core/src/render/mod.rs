//! Render stage: `Outcome` -> the text the model reads, or JSON. Pure; never prints.
//!
//! The text is compact: stdout as is; stderr under a `[stderr]` line only when it has
//! something; one status line; then `note:` and `hint:` lines. Its size is bounded: the
//! stream text is within the budget, and everything else adds at most
//! `TEXT_OVERHEAD_BYTES` plus the spill file paths (which appear in the cut markers and
//! binary notices).

use std::fmt::Write as _;

mod job;
mod refusal;
mod terminal;
#[cfg(test)]
mod tests;

use crate::clip;
use crate::outcome::{Note, Outcome};
use crate::output::StreamStats;
use crate::policy::Decision;
use refusal::{refused, suggested};

pub use job::{job_list, job_notice, job_output, progress, waiting};
pub use refusal::verdict;
pub use terminal::terminal;

/// The most bytes the text adds to the stream text, not counting spill file paths.
pub const TEXT_OVERHEAD_BYTES: usize = 4096;

pub use crate::policy::decision_name;

/// How many left-running processes are listed by name.
const LISTED_PROCESSES: usize = 5;

/// The model's view of `outcome`: stdout, stderr under `[stderr]`, a status line, then
/// `note:` and `hint:` lines.
///
/// ```
/// use agent_bash_core::{Outcome, render};
///
/// let outcome = Outcome {
///     stdout: "hello".into(),
///     stderr: "warning: old".into(),
///     exit_code: Some(0),
///     duration_ms: 12,
///     ..Outcome::default()
/// };
/// assert_eq!(render::text(&outcome), "hello\n[stderr]\nwarning: old\n[exit 0 · 12 ms]");
/// ```
pub fn text(outcome: &Outcome) -> String {
    if let Some(refusal) = &outcome.refused {
        if refusal.decision == Decision::Suggest {
            return suggested(refusal, &outcome.command);
        }
        return refused(refusal);
    }
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
    notes(&mut out, &outcome.notes);
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
        let fate = match outcome.job_id {
            Some(id) => format!("their output goes on into background job {id}"),
            None => {
                "their later output is not captured, and they are stopped when the session ends"
                    .into()
            }
        };
        let _ = writeln!(
            out,
            "note: still running after the shell exited: {}{more}; {fate}",
            listed.join(", ")
        );
    }
    if let Some(hint) = &outcome.exit_hint {
        let _ = writeln!(out, "hint: {hint}");
    }
    if let Some(hint) = &outcome.sandbox_hint {
        let _ = writeln!(out, "hint: {hint}");
    } else if let Some(id) = outcome.job_id {
        let _ = writeln!(
            out,
            "hint: bash_output {{\"job_id\": {id}}} reads its new output (add wait_secs to wait for more, pattern to wait for a line); bash_kill {{\"job_id\": {id}}} stops it"
        );
    } else if outcome.timed_out {
        let _ = writeln!(
            out,
            "hint: the command did not finish in {} s; rerun with a larger timeout_secs, or make it faster",
            outcome.timeout_secs
        );
    }
    out.pop();
    out
}

/// `note: …` lines, one per note.
fn notes(out: &mut String, notes: &[Note]) {
    for one in notes {
        let _ = writeln!(out, "note: {}", clip(&note(one), 300));
    }
}

/// One note in words (the text after `note: ` in `text` and `job_output`).
///
/// ```
/// use agent_bash_core::{Note, render};
///
/// let clamped = Note::TimeoutClamped { asked_secs: 7200, ran_secs: 3600 };
/// assert_eq!(
///     render::note(&clamped),
///     "timeout_secs 7200 is over the maximum; the call ran with 3600 s"
/// );
/// ```
pub fn note(note: &Note) -> String {
    match note {
        Note::TimeoutClamped {
            asked_secs,
            ran_secs,
        } => {
            format!("timeout_secs {asked_secs} is over the maximum; the call ran with {ran_secs} s")
        }
        Note::StatusLost => "the shell's exit status could not be collected".into(),
        Note::SpillFailed { stream, error } => {
            format!("the full {stream} could not be saved: {error}")
        }
        Note::SpillCapped { stream } => {
            format!("the saved {stream} stops at the spill cap; the rest was counted, not kept")
        }
        Note::NotAJob {
            max_jobs,
            leftovers,
        } => not_a_job(*max_jobs, *leftovers),
        Note::JobFilesFailed { error } => {
            format!("the command could not go on as a background job ({error}), so it was killed")
        }
        Note::AuditFailed { error } => format!("the audit log could not be written: {error}"),
        Note::JobEnded { job } => job_notice(job),
        Note::MoreJobsEnded { count } => format!("{count} more jobs ended; bash_jobs lists them"),
        Note::PatternNotMatched {
            pattern,
            waited_secs,
            job_ended,
        } => {
            let why = if *job_ended {
                "before the job ended".to_string()
            } else {
                format!("in {waited_secs} s")
            };
            format!("no new line matched {pattern:?} {why}")
        }
        Note::AlreadyEnded => "the job had already ended".into(),
        Note::JobFileProblem { stream, problem } => format!("the job's {stream} file: {problem}"),
        Note::JobFileIncomplete { stream, error } => {
            format!("the job's {stream} file is incomplete: {error}")
        }
        Note::JobReadFailed { error } => format!("the job's output could not be read: {error}"),
        Note::NoShellSnapshot { problem } => {
            format!("shell snapshot (shell.snapshot = \"rc\"): {problem}; commands run without it")
        }
        Note::SandboxOff { reason } => format!(
            "sandbox off for this session: {reason}; commands run unconfined (`agent-bash sandbox probe` explains)"
        ),
        Note::RanConfined { reason, hint } => format!(
            "ran confined (no network, .git read-only): this client cannot ask the user; {hint}; asked because {reason}"
        ),
        Note::BoundedBySandbox { reason } => format!(
            "ran without asking, as the sandbox confines which files it can change; asked because {reason}"
        ),
        Note::MovedAside { what } => what.clone(),
        Note::SandboxGaps { mode, gaps } => {
            format!(
                "sandbox `{mode}`: this kernel does not enforce: {}",
                gaps.join("; ")
            )
        }
    }
}

/// Why a command (or the processes it left running) did not become a job.
fn not_a_job(max_jobs: usize, leftovers: bool) -> String {
    let fate = if leftovers {
        "these processes are not a job"
    } else {
        "the command was stopped at its timeout instead of going on as a job"
    };
    match max_jobs {
        0 => format!("this session keeps no background jobs, so {fate}"),
        max => format!("{max} background jobs are running, the most allowed, so {fate}"),
    }
}

/// The outcome as pretty JSON.
pub fn json(outcome: &Outcome) -> String {
    serde_json::to_string_pretty(outcome).unwrap_or_else(|err| format!("{{\"error\": \"{err}\"}}"))
}

fn status_line(outcome: &Outcome) -> String {
    let ms = outcome.duration_ms;
    if let Some(job) = &outcome.job
        && outcome.exit_code.is_none()
        && outcome.signal.is_none()
    {
        let pid = job
            .pid
            .map_or_else(String::new, |pid| format!(" (pid {pid})"));
        let files = format!(
            "output: {} and {}",
            job.stdout_path.display(),
            job.stderr_path.display()
        );
        return if outcome.timed_out {
            format!(
                "[still running after the {} s timeout: now background job {}{pid}; {files} · {ms} ms]",
                outcome.timeout_secs, job.job_id
            )
        } else {
            format!("[started as background job {}{pid}; {files}]", job.job_id)
        };
    }
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

/// The first line of `text`, cut to `max_chars`, with `…` when anything was left out.
fn first_line(text: &str, max_chars: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    let shown = clip(line, max_chars);
    if shown.len() < text.len() {
        format!("{shown}…")
    } else {
        shown.to_string()
    }
}
