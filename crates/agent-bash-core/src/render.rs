//! Render stage: `Outcome` -> the text the model reads, or JSON. Pure; never prints.
//!
//! The text is compact: stdout as is; stderr under a `[stderr]` line only when it has
//! something; one status line; then `note:` and `hint:` lines. Its size is bounded: the
//! stream text is within the budget, and everything else adds at most
//! `TEXT_OVERHEAD_BYTES` plus the spill file paths (which appear in the cut markers and
//! binary notices).

use std::fmt::Write as _;

use crate::clip;
use crate::collect::Progress;
use crate::jobs::{JobInfo, JobList, JobOutput, JobStatus};
use crate::outcome::{Note, Outcome};
use crate::output::StreamStats;
use crate::policy::{Decision, MAX_SNIPPET_BYTES, Refusal, Verdict};
use crate::terminal_answer::{TerminalAnswer, TerminalNote, TerminalState, WaitEnd};

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
fn refused(refusal: &Refusal) -> String {
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
fn suggested(refusal: &Refusal, command: &str) -> String {
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

/// The model's view of a job read (`bash_output`, `bash_kill`): the new output, then one
/// status line with the sizes of the job's files.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use agent_bash_core::{Config, Request, Session, render};
///
/// let dir = tempfile::tempdir()?;
/// let config = Config { spill_parent: Some(dir.path().into()), ..Config::default() };
/// let session = Session::new(dir.path(), config)?;
/// let started = session.run(Request::new("echo built; sleep 30").background()).await?;
/// let id = started.job_id.ok_or("not a job")?;
///
/// let read = session.job_output(id, 10, None).await?;
/// let text = render::job_output(&read);
/// assert!(text.starts_with(&format!("built\n[job {id} is running · ")), "{text}");
/// # Ok(())
/// # }
/// ```
pub fn job_output(output: &JobOutput) -> String {
    let mut out = String::with_capacity(output.stdout.len() + output.stderr.len() + 256);
    if let Some(notice) = binary_notice("stdout", &output.stdout_stats) {
        let _ = writeln!(out, "{notice}");
    } else if !output.stdout.is_empty() {
        let _ = writeln!(out, "{}", output.stdout);
    }
    if let Some(notice) = binary_notice("stderr", &output.stderr_stats) {
        let _ = writeln!(out, "{notice}");
    } else if !output.stderr.is_empty() {
        let _ = writeln!(out, "[stderr]\n{}", output.stderr);
    }
    if out.is_empty() {
        out.push_str("(no new output)\n");
    }
    let job = &output.job;
    let status = match job.status {
        JobStatus::Running => format!(
            "job {} is running · {} s",
            job.job_id,
            job.runtime_ms / 1000
        ),
        _ => format!(
            "job {} {} after {} s",
            job.job_id,
            how_it_is(job),
            job.runtime_ms / 1000
        ),
    };
    // The files' paths are in the structured result, in the start's answer, and in the
    // marker of a cut read: not repeated on every read.
    let _ = writeln!(
        out,
        "[{status} · stdout {} B, stderr {} B so far]",
        job.stdout_bytes, job.stderr_bytes
    );
    if output.pattern_matched == Some(true)
        && let Some(pattern) = &output.pattern
    {
        let _ = writeln!(out, "note: a line matched {pattern:?}");
    }
    notes(&mut out, &output.notes);
    out.pop();
    out
}

/// The model's view of a session's jobs (`bash_jobs`).
pub fn job_list(list: &JobList) -> String {
    if list.jobs.is_empty() {
        return "(no background jobs)".into();
    }
    let mut out = String::new();
    for job in &list.jobs {
        let status = how_it_is(job);
        let _ = writeln!(
            out,
            "job {}{} · {status} · {} s · pid {} · stdout {} B, stderr {} B · `{}`",
            job.job_id,
            labelled(job.description.as_deref(), " (", ")"),
            job.runtime_ms / 1000,
            job.pid
                .map_or_else(|| "?".to_string(), |pid| pid.to_string()),
            job.stdout_bytes,
            job.stderr_bytes,
            clip(job.command.lines().next().unwrap_or_default(), 120)
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

/// One line saying how a job ended (`[job 3 exited 0 after 41 s: `npm test`]`).
pub fn job_notice(job: &JobInfo) -> String {
    format!(
        "[job {} {} after {} s: `{}`]",
        job.job_id,
        how_it_is(job),
        job.runtime_ms / 1000,
        first_line(&job.command, 80)
    )
}

/// `is running`, `exited 3`, `was killed by SIGTERM at its timeout`, …
fn how_it_is(job: &JobInfo) -> String {
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

/// A call's progress report (`running 12 s · 3 lines · stdout 1.2 KiB · stderr 0 B`), after
/// what the call is for when the caller said (`run the tests · running 12 s · …`).
pub fn progress(report: &Progress, description: Option<&str>) -> String {
    let lines = match report.lines {
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    };
    format!(
        "{}running {} s · {lines} · stdout {} · stderr {}",
        labelled(description, "", " · "),
        report.elapsed.as_secs(),
        size(report.stdout_bytes),
        size(report.stderr_bytes)
    )
}

/// A caller's description of a command, clipped to a label, between `before` and `after`;
/// nothing without one.
fn labelled(description: Option<&str>, before: &str, after: &str) -> String {
    match description.map(str::trim) {
        Some(text) if !text.is_empty() => format!("{before}{}{after}", first_line(text, 80)),
        _ => String::new(),
    }
}

/// A waiting job read's progress report (`waiting for job 3 · 12 s`).
pub fn waiting(job_id: u64, elapsed: std::time::Duration) -> String {
    format!("waiting for job {job_id} · {} s", elapsed.as_secs())
}

/// A byte count for people: `512 B`, `1.5 KiB`, `3.0 MiB`.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    #[allow(clippy::cast_precision_loss)]
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::jobs::JobOrigin;

    fn job(status: JobStatus, exit_code: Option<i32>, signal: Option<&str>) -> JobInfo {
        JobInfo {
            job_id: 3,
            command: "npm run dev\n# second line".into(),
            description: None,
            cwd: PathBuf::from("/p"),
            pid: Some(4242),
            origin: JobOrigin::Background,
            status,
            exit_code,
            signal: signal.map(Into::into),
            runtime_ms: 41_900,
            timed_out: false,
            stdout_bytes: 120,
            stderr_bytes: 7,
            stdout_path: PathBuf::from("/s/job-3-stdout.log"),
            stderr_path: PathBuf::from("/s/job-3-stderr.log"),
        }
    }

    fn read(job: JobInfo, stdout: &str, stderr: &str) -> JobOutput {
        JobOutput {
            job,
            stdout: stdout.into(),
            stderr: stderr.into(),
            stdout_stats: StreamStats::default(),
            stderr_stats: StreamStats::default(),
            pattern: None,
            pattern_matched: None,
            waited_ms: 0,
            notes: Vec::new(),
        }
    }

    #[test]
    fn a_read_shows_new_output_then_one_status_line() {
        let running = read(job(JobStatus::Running, None, None), "ready", "warn");
        assert_eq!(
            job_output(&running),
            "ready\n[stderr]\nwarn\n[job 3 is running · 41 s · stdout 120 B, stderr 7 B so far]"
        );
        let mut ended = read(job(JobStatus::Exited, Some(0), None), "", "");
        ended.notes.push(Note::PatternNotMatched {
            pattern: "x".into(),
            waited_secs: 0,
            job_ended: true,
        });
        assert_eq!(
            job_output(&ended),
            "(no new output)\n[job 3 exited 0 after 41 s · stdout 120 B, stderr 7 B so far]\nnote: no new line matched \"x\" before the job ended"
        );
        let mut timed_out = job(JobStatus::Killed, None, Some("SIGTERM"));
        timed_out.timed_out = true;
        assert_eq!(
            job_notice(&timed_out),
            "[job 3 was killed by SIGTERM at its timeout after 41 s: `npm run dev…`]"
        );
    }

    #[test]
    fn the_list_has_one_line_per_job() {
        let list = JobList {
            jobs: vec![
                job(JobStatus::Running, None, None),
                job(JobStatus::Ended, None, None),
            ],
        };
        assert_eq!(
            job_list(&list),
            "job 3 · is running · 41 s · pid 4242 · stdout 120 B, stderr 7 B · `npm run dev`\n\
             job 3 · ended (its processes all exited) · 41 s · pid 4242 · stdout 120 B, stderr 7 B · `npm run dev`"
        );
        assert_eq!(job_list(&JobList::default()), "(no background jobs)");
        let mut described = job(JobStatus::Running, None, None);
        described.description = Some("the dev server".into());
        let list = JobList {
            jobs: vec![described],
        };
        assert!(
            job_list(&list).starts_with("job 3 (the dev server) · is running · 41 s"),
            "{}",
            job_list(&list)
        );
    }

    #[test]
    fn progress_reports_count_lines_and_bytes() {
        let report = Progress {
            elapsed: std::time::Duration::from_millis(12_400),
            stdout_bytes: 1536,
            stderr_bytes: 3 * 1024 * 1024,
            lines: 1,
        };
        assert_eq!(
            progress(&report, None),
            "running 12 s · 1 line · stdout 1.5 KiB · stderr 3.0 MiB"
        );
        assert_eq!(
            progress(&report, Some("run the tests")),
            "run the tests · running 12 s · 1 line · stdout 1.5 KiB · stderr 3.0 MiB"
        );
        let report = Progress {
            lines: 7,
            stdout_bytes: 10,
            ..report
        };
        assert!(progress(&report, None).contains("7 lines · stdout 10 B"));
    }

    #[test]
    fn notes_are_worded_once_each() {
        let clamped = Note::TimeoutClamped {
            asked_secs: 99_999,
            ran_secs: 3600,
        };
        assert_eq!(
            note(&clamped),
            "timeout_secs 99999 is over the maximum; the call ran with 3600 s"
        );
        let none = Note::NotAJob {
            max_jobs: 0,
            leftovers: false,
        };
        assert!(note(&none).contains("keeps no background jobs"));
        let full = Note::NotAJob {
            max_jobs: 4,
            leftovers: true,
        };
        assert!(note(&full).starts_with("4 background jobs are running, the most allowed"));
        let waited = Note::PatternNotMatched {
            pattern: "ready".into(),
            waited_secs: 5,
            job_ended: false,
        };
        assert_eq!(note(&waited), "no new line matched \"ready\" in 5 s");
    }
}
