//! The model's view of background jobs: a read of new output, the list, the line saying
//! how one ended, and the progress reports of calls and waiting reads.

use std::fmt::Write as _;

use super::{binary_notice, first_line, notes};
use crate::clip;
use crate::collect::Progress;
use crate::jobs::{JobInfo, JobList, JobOutput, JobStatus};

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
