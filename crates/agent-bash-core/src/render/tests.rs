//! The model's text for job reads, job lists, progress reports and notes, checked whole.

use std::path::PathBuf;

use super::*;
use crate::collect::Progress;
use crate::jobs::{JobInfo, JobList, JobOrigin, JobOutput, JobStatus};

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
