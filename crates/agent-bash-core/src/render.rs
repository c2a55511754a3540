//! Render stage: `Outcome` -> the text the model reads, or JSON. Pure; never prints.
//!
//! The text is compact: stdout as is; stderr under a `[stderr]` line only when it has
//! something; one status line; then `note:` and `hint:` lines. Its size is bounded: the
//! stream text is within the budget, and everything else adds at most
//! `TEXT_OVERHEAD_BYTES` plus the spill file paths (which appear in the cut markers and
//! binary notices).

use std::fmt::Write as _;

use crate::jobs::{self, JobList, JobOutput, JobStatus};
use crate::outcome::Outcome;
use crate::output::StreamStats;

/// The most bytes the text adds to the stream text, not counting spill file paths.
pub const TEXT_OVERHEAD_BYTES: usize = 4096;

/// How many left-running processes are listed by name.
const LISTED_PROCESSES: usize = 5;

/// The model's view of `outcome`.
pub fn text(outcome: &Outcome) -> String {
    if let Some(refusal) = &outcome.refused {
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
    if let Some(id) = outcome.job_id {
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
pub fn verdict(verdict: &crate::policy::Verdict) -> String {
    let name = crate::policy::decision_name;
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
        match (&segment.rule, &segment.reason) {
            (Some(rule), _) => {
                let _ = write!(out, "  [rule {rule}]");
            }
            (None, Some(reason)) => {
                let _ = write!(out, "  [{}]", clip(reason, 200));
            }
            (None, None) => out.push_str("  [default]"),
        }
        if !segment.via.is_empty() {
            let _ = write!(out, "  (in {})", segment.via.join(" › "));
        }
        out.push('\n');
    }
    let _ = write!(out, "decision: {}", name(verdict.decision));
    if let Some(rule) = &verdict.rule {
        let _ = write!(out, " (rule {rule})");
    }
    if let Some(reason) = &verdict.reason {
        let _ = write!(out, ": {reason}");
    }
    out
}

/// A refused call: what decided, why, and what would allow it.
fn refused(refusal: &crate::policy::Refusal) -> String {
    let what = if refusal.decision == "deny" {
        "denied"
    } else {
        "not approved"
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
        let _ = writeln!(out, "hint: {}", clip(hint, 500));
    }
    out.pop();
    out
}

/// The model's view of a job read (`bash_output`, `bash_kill`).
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
            jobs::how_it_is(job),
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
    for note in &output.notes {
        let _ = writeln!(out, "note: {}", clip(note, 300));
    }
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
        let status = jobs::how_it_is(job);
        let _ = writeln!(
            out,
            "job {} · {status} · {} s · pid {} · stdout {} B, stderr {} B · `{}`",
            job.job_id,
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

fn clip(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::collect::DetachReason;
    use crate::jobs::JobInfo;

    fn job(status: JobStatus, exit_code: Option<i32>, signal: Option<&str>) -> JobInfo {
        JobInfo {
            job_id: 3,
            command: "npm run dev\n# second line".into(),
            cwd: PathBuf::from("/p"),
            pid: Some(4242),
            origin: DetachReason::Background,
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
        ended
            .notes
            .push("no new line matched \"x\" before the job ended".into());
        assert_eq!(
            job_output(&ended),
            "(no new output)\n[job 3 exited 0 after 41 s · stdout 120 B, stderr 7 B so far]\nnote: no new line matched \"x\" before the job ended"
        );
        let mut timed_out = job(JobStatus::Killed, None, Some("SIGTERM"));
        timed_out.timed_out = true;
        assert_eq!(
            jobs::notice(&timed_out),
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
    }
}
