//! Background jobs through the library: started on request, handed over at a timeout, or
//! made of what a command left running; read, waited for, killed, and gone with the session.

use std::time::{Duration, Instant};

use agent_bash_core::{Config, Error, OnTimeout, Request, Session};
use agent_bash_core::{JobStatus, Note, render};

use crate::support::{alive_with, eventually, fx, marker, quoted_apart};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn session_with(config: Config) -> Session {
    Session::new(std::env::temp_dir(), config).expect("session")
}

fn session() -> Session {
    session_with(Config::default())
}

async fn run(session: &Session, request: Request) -> agent_bash_core::Outcome {
    session.run(request).await.unwrap()
}

/// Reads job `id` until it has ended; returns the last read.
async fn read_until_ended(session: &Session, id: u64) -> agent_bash_core::JobOutput {
    loop {
        let read = session.job_output(id, 30, None).await.unwrap();
        if read.job.status != JobStatus::Running {
            return read;
        }
    }
}

#[test]
fn a_background_job_returns_at_once_is_read_with_a_pattern_and_killed_with_its_tree() {
    let mark = marker("bg");
    runtime().block_on(async {
        let session = session();
        let begun = Instant::now();
        let command = format!(
            "echo booting; sleep 0.3; echo 'Listening on 8080'; {} sleep 600 {}",
            fx(),
            quoted_apart(&mark)
        );
        let started = run(&session, Request::new(command).background()).await;
        assert!(begun.elapsed() < Duration::from_secs(2), "returned at once");
        let id = started
            .job_id
            .unwrap_or_else(|| panic!("no job: {started:?}"));
        assert!(started.success(), "a started job is not a failure");
        assert_eq!(started.exit_code, None);
        let job = started.job.clone().expect("no job info");
        assert_eq!(job.status, JobStatus::Running);
        assert!(job.pid.is_some());
        let text = agent_bash_core::render::text(&started);
        assert!(
            text.contains(&format!("started as background job {id}")),
            "{text}"
        );

        let read = session
            .job_output(id, 30, Some("Listening on \\d+"))
            .await
            .unwrap();
        assert_eq!(read.pattern_matched, Some(true), "{read:?}");
        assert_eq!(read.stdout, "booting\nListening on 8080");
        assert_eq!(read.job.status, JobStatus::Running);
        assert!(
            eventually(Duration::from_secs(10), || !alive_with(&mark).is_empty()),
            "the job's last process never started"
        );

        // Nothing new since the last read.
        let again = session.job_output(id, 0, None).await.unwrap();
        assert_eq!(again.stdout, "");

        let killed = session.kill_job(id, None).await.unwrap();
        assert_eq!(killed.job.status, JobStatus::Killed, "{killed:?}");
        assert_eq!(killed.job.signal.as_deref(), Some("SIGTERM"));
        // The kill returns once the tree is gone: no waiting here.
        assert_eq!(
            alive_with(&mark),
            Vec::<i32>::new(),
            "survivors of the kill"
        );

        // Killing it again answers with its final status.
        let again = session.kill_job(id, None).await.unwrap();
        assert_eq!(again.job.status, JobStatus::Killed);
        assert!(
            again
                .notes
                .iter()
                .any(|n| render::note(n).contains("already ended"))
        );
    });
}

#[test]
fn a_tree_that_ignores_sigterm_is_killed_after_the_grace() {
    let mark = marker("bg-ignore-term");
    runtime().block_on(async {
        let session = session();
        let started = run(
            &session,
            Request::new(format!("{} ignore-term {}", fx(), quoted_apart(&mark))).background(),
        )
        .await;
        let id = started.job_id.unwrap_or_default();
        let read = session
            .job_output(id, 30, Some("ignoring SIGTERM"))
            .await
            .unwrap();
        assert_eq!(read.pattern_matched, Some(true));
        assert!(
            eventually(Duration::from_secs(10), || alive_with(&mark).len() == 2),
            "the child never started: {:?}",
            alive_with(&mark)
        );
        let killed = session.kill_job(id, Some("TERM")).await.unwrap();
        assert_eq!(killed.job.status, JobStatus::Killed);
        assert_eq!(killed.job.signal.as_deref(), Some("SIGKILL"), "{killed:?}");
        assert_eq!(alive_with(&mark), Vec::<i32>::new());
    });
}

#[test]
fn a_timeout_hands_the_command_over_and_its_file_holds_the_whole_output() {
    runtime().block_on(async {
        let session = session();
        let command = "for i in 1 2 3 4; do echo line $i; echo err $i >&2; sleep 0.4; done; exit 7";
        let outcome = run(&session, Request::new(command).timeout_secs(1)).await;
        assert!(outcome.timed_out);
        assert!(!outcome.success(), "a timeout is reported as one");
        assert_eq!(outcome.exit_code, None);
        let id = outcome
            .job_id
            .unwrap_or_else(|| panic!("not a job: {outcome:?}"));
        assert!(outcome.stdout.starts_with("line 1"), "{outcome:?}");
        let text = agent_bash_core::render::text(&outcome);
        assert!(
            text.contains(&format!(
                "still running after the 1 s timeout: now background job {id}"
            )),
            "{text}"
        );

        let end = read_until_ended(&session, id).await;
        assert_eq!(end.job.status, JobStatus::Exited, "{end:?}");
        assert_eq!(end.job.exit_code, Some(7));
        // One file per stream, from the command's first byte to its last.
        let stdout = std::fs::read_to_string(&end.job.stdout_path).unwrap_or_default();
        let stderr = std::fs::read_to_string(&end.job.stderr_path).unwrap_or_default();
        assert_eq!(stdout, "line 1\nline 2\nline 3\nline 4\n");
        assert_eq!(stderr, "err 1\nerr 2\nerr 3\nerr 4\n");
        assert_eq!(
            outcome.stdout_stats.full_output_path.as_ref(),
            Some(&end.job.stdout_path),
            "the call's result names the job's file"
        );
    });
}

#[test]
fn with_on_timeout_kill_a_timeout_stops_the_tree() {
    let mark = marker("kill-on-timeout");
    runtime().block_on(async {
        let session = session_with(Config {
            on_timeout: OnTimeout::Kill,
            ..Config::default()
        });
        let outcome = run(
            &session,
            Request::new(format!(
                "{} print-then-sleep 60 {}",
                fx(),
                quoted_apart(&mark)
            ))
            .timeout_secs(1),
        )
        .await;
        assert!(outcome.timed_out);
        assert_eq!(outcome.job_id, None);
        assert!(outcome.signal.is_some());
        assert_eq!(alive_with(&mark), Vec::<i32>::new());
        assert!(session.jobs().jobs.is_empty());
    });
}

#[test]
fn processes_left_running_become_a_job_whose_later_output_is_kept() {
    runtime().block_on(async {
        let session = session();
        let outcome = run(
            &session,
            Request::new("(sleep 2; echo late; exit 4) & echo early"),
        )
        .await;
        assert_eq!(outcome.exit_code, Some(0));
        assert!(outcome.success());
        assert_eq!(outcome.stdout, "early");
        assert!(!outcome.left_running.is_empty());
        let id = outcome
            .job_id
            .unwrap_or_else(|| panic!("not a job: {outcome:?}"));
        let text = agent_bash_core::render::text(&outcome);
        assert!(
            text.contains(&format!("their output goes on into background job {id}")),
            "{text}"
        );

        let read = session.job_output(id, 30, Some("late")).await.unwrap();
        assert_eq!(read.stdout, "late");
        let read = read_until_ended(&session, id).await;
        assert_eq!(read.job.status, JobStatus::Ended, "{read:?}");
        let file = std::fs::read_to_string(&read.job.stdout_path).unwrap_or_default();
        assert_eq!(file, "early\nlate\n");
    });
}

#[test]
fn a_job_that_ended_is_announced_once_in_the_next_result() {
    runtime().block_on(async {
        let session = session();
        let started = run(&session, Request::new("echo hi; exit 3").background()).await;
        let id = started.job_id.unwrap_or_default();
        assert!(
            eventually(Duration::from_secs(10), || session.jobs().jobs[0].status
                != JobStatus::Running),
            "the job never ended"
        );
        let next = run(&session, Request::new("true")).await;
        let expected = format!("[job {id} exited 3 after 0 s: `echo hi; exit 3`]");
        assert!(
            next.notes
                .iter()
                .any(|note| matches!(note, Note::JobEnded { job } if job.job_id == id)),
            "{:?}",
            next.notes
        );
        assert!(agent_bash_core::render::text(&next).contains(&expected));
        let after = run(&session, Request::new("true")).await;
        assert!(after.notes.is_empty(), "announced once: {:?}", after.notes);
        // Its output is still there to read.
        let read = session.job_output(id, 0, None).await.unwrap();
        assert_eq!((read.stdout.as_str(), read.job.exit_code), ("hi", Some(3)));
    });
}

#[test]
fn a_flooding_job_is_read_within_the_budget_with_exact_counts() {
    runtime().block_on(async {
        let session = session();
        let started = run(
            &session,
            Request::new(format!("{} flood 100000", fx())).background(),
        )
        .await;
        let id = started.job_id.unwrap_or_default();
        let mut read = session.job_output(id, 30, None).await.unwrap();
        let mut lines = 0;
        let mut bytes = 0;
        let mut last_shown = String::new();
        loop {
            let stats = &read.stdout_stats;
            if !read.stdout.is_empty() {
                last_shown.clone_from(&read.stdout);
            }
            assert!(
                read.stdout.len() <= 50 * 1024 + 300,
                "{} bytes",
                read.stdout.len()
            );
            lines += stats.total_lines;
            bytes += stats.total_bytes;
            if stats.omitted_lines > 0 {
                assert!(read.stdout.contains("lines ("), "{}", &read.stdout[..200]);
                assert_eq!(stats.full_output_path.as_ref(), Some(&read.job.stdout_path));
            }
            if read.job.status != JobStatus::Running {
                break;
            }
            read = session.job_output(id, 30, None).await.unwrap();
        }
        assert_eq!(read.job.exit_code, Some(0));
        assert_eq!(lines, 100_000, "every line counted once across the reads");
        assert_eq!(bytes, read.job.stdout_bytes);
        assert!(
            last_shown.ends_with("line 100000 of the flood"),
            "the last line is shown"
        );
    });
}

#[test]
fn the_job_limit_refuses_new_jobs_and_a_timeout_then_kills() {
    let mark = marker("limit");
    runtime().block_on(async {
        let session = session_with(Config {
            max_jobs: 2,
            ..Config::default()
        });
        for _ in 0..2 {
            let started = run(
                &session,
                Request::new(format!("{} sleep 600 {}", fx(), quoted_apart(&mark))).background(),
            )
            .await;
            assert!(started.job_id.is_some());
        }
        let refused = session
            .run(Request::new("echo third").background())
            .await
            .err()
            .map(|err| err.to_string())
            .unwrap_or_default();
        assert!(
            refused.contains("2 background jobs are running"),
            "{refused}"
        );
        let timed_out = run(
            &session,
            Request::new(format!(
                "{} print-then-sleep 600 {}",
                fx(),
                quoted_apart(&format!("{mark}x"))
            ))
            .timeout_secs(1),
        )
        .await;
        assert_eq!(timed_out.job_id, None);
        assert!(
            timed_out
                .notes
                .iter()
                .any(|n| render::note(n).contains("the most allowed")),
            "{:?}",
            timed_out.notes
        );
        assert!(alive_with(&format!("{mark}x")).is_empty());
        // A finished job frees its place.
        let _ = session.kill_job(1, Some("KILL")).await;
        let started = run(&session, Request::new("echo again").background()).await;
        assert_eq!(started.job_id, Some(3));
        drop(session);
    });
    assert!(eventually(Duration::from_secs(5), || alive_with(&mark).is_empty()));
}

#[test]
fn twenty_jobs_run_at_once_and_the_session_end_kills_them_all() {
    let mark = marker("twenty");
    runtime().block_on(async {
        let session = std::sync::Arc::new(session_with(Config {
            max_jobs: 20,
            ..Config::default()
        }));
        let mut starts = Vec::new();
        for n in 0..20 {
            let session = session.clone();
            let command = format!("echo job {n}; {} sleep 600 {}", fx(), quoted_apart(&mark));
            starts.push(tokio::spawn(async move {
                session.run(Request::new(command).background()).await
            }));
        }
        let mut ids = Vec::new();
        for start in starts {
            let outcome = start.await.unwrap().unwrap();
            ids.push(outcome.job_id.unwrap_or_default());
        }
        ids.sort_unstable();
        assert_eq!(
            ids,
            (1..=20).collect::<Vec<u64>>(),
            "distinct ids, even when started concurrently"
        );
        assert!(
            eventually(Duration::from_secs(20), || alive_with(&mark).len() == 20),
            "{} of 20 running",
            alive_with(&mark).len()
        );
        for id in 1..=20 {
            let read = session.job_output(id, 10, Some("^job ")).await.unwrap();
            assert_eq!(read.pattern_matched, Some(true), "job {id}");
        }
        let list = session.jobs();
        assert_eq!(list.jobs.len(), 20);
        assert!(list.jobs.iter().all(|job| job.status == JobStatus::Running));
        drop(session);
    });
    assert!(
        eventually(Duration::from_secs(5), || alive_with(&mark).is_empty()),
        "left running after the session ended: {:?}",
        alive_with(&mark)
    );
}

#[test]
fn bad_job_requests_are_clear_errors() {
    runtime().block_on(async {
        let session = session();
        let err = |result: Result<agent_bash_core::JobOutput, Error>| {
            result.err().map(|e| e.to_string()).unwrap_or_default()
        };
        assert_eq!(
            err(session.job_output(7, 0, None).await),
            "no job 7 in this session; it has none"
        );
        let started = run(&session, Request::new("sleep 30").background()).await;
        let id = started.job_id.unwrap_or_default();
        assert!(err(session.job_output(9, 0, None).await).contains("its jobs are 1"));
        assert!(err(session.job_output(id, 0, Some("(")).await).contains("is not a valid regex"));
        assert!(err(session.job_output(id, 601, None).await).contains("between 0 and 600"));
        assert!(err(session.kill_job(id, Some("BOGUS")).await).contains("unknown signal"));
        assert!(err(session.kill_job(42, None).await).contains("no job 42"));
        // None of that touched the job.
        assert_eq!(session.jobs().jobs[0].status, JobStatus::Running);
        let killed = session.kill_job(id, Some("sigint")).await.unwrap();
        assert_eq!(killed.job.signal.as_deref(), Some("SIGINT"));
    });
}

#[test]
fn a_job_in_a_session_without_jobs_is_refused() {
    runtime().block_on(async {
        let session = session_with(Config {
            max_jobs: 0,
            ..Config::default()
        });
        let err = session.run(Request::new("true").background()).await.err();
        assert!(
            err.map(|e| e.to_string())
                .unwrap_or_default()
                .contains("keeps no background jobs")
        );
        let outcome = run(&session, Request::new("sleep 5").timeout_secs(1)).await;
        assert_eq!(outcome.job_id, None);
        assert!(
            outcome
                .notes
                .iter()
                .any(|n| render::note(n).contains("keeps no background jobs"))
        );
    });
}

#[test]
fn concurrent_starts_never_exceed_the_job_limit() {
    let mark = marker("race");
    runtime().block_on(async {
        let session = std::sync::Arc::new(session_with(Config {
            max_jobs: 3,
            ..Config::default()
        }));
        let starts: Vec<_> = (0..12)
            .map(|_| {
                let session = session.clone();
                let command = format!("{} sleep 600 {}", fx(), quoted_apart(&mark));
                tokio::spawn(async move { session.run(Request::new(command).background()).await })
            })
            .collect();
        let (mut started, mut refused) = (0, 0);
        for start in starts {
            match start.await.unwrap() {
                Ok(outcome) if outcome.job_id.is_some() => started += 1,
                Err(Error::JobLimit { .. }) => refused += 1,
                other => panic!("unexpected: {other:?}"),
            }
        }
        assert_eq!((started, refused), (3, 9));
        assert_eq!(session.jobs().jobs.len(), 3);
        drop(session);
    });
    assert!(eventually(Duration::from_secs(5), || alive_with(&mark).is_empty()));
}

#[test]
fn a_background_job_started_with_a_timeout_is_stopped_at_it() {
    runtime().block_on(async {
        let session = session();
        let started = run(
            &session,
            Request::new("echo hi; sleep 600")
                .background()
                .timeout_secs(1),
        )
        .await;
        assert!(!started.timed_out, "starting is not timing out");
        let id = started.job_id.unwrap_or_default();
        let begun = Instant::now();
        let end = read_until_ended(&session, id).await;
        assert!(begun.elapsed() < Duration::from_secs(10));
        assert_eq!(end.job.status, JobStatus::Killed, "{end:?}");
        assert!(end.job.timed_out);
        assert_eq!(end.job.signal.as_deref(), Some("SIGTERM"));
        let notice = render::job_notice(&end.job);
        assert!(
            notice.contains("was killed by SIGTERM at its timeout after 1 s"),
            "{notice}"
        );
        // Without a timeout, a job runs on.
        let started = run(&session, Request::new("sleep 600").background()).await;
        let read = session
            .job_output(started.job_id.unwrap_or_default(), 2, None)
            .await
            .unwrap();
        assert_eq!(read.job.status, JobStatus::Running);
    });
}

#[test]
fn a_binary_job_keeps_its_raw_bytes_and_is_read_as_binary() {
    runtime().block_on(async {
        let session = session();
        let started = run(&session, Request::new(format!("{} png", fx())).background()).await;
        let end = read_until_ended(&session, started.job_id.unwrap_or_default()).await;
        // The bytes may come in any read: the file is what is checked here.
        let file = std::fs::read(&end.job.stdout_path).unwrap_or_default();
        assert_eq!(file.len(), 4112, "raw bytes, not sanitized text");
        assert!(file.starts_with(b"\x89PNG\r\n\x1a\n"));
        let again = session.job_output(end.job.job_id, 0, None).await.unwrap();
        assert_eq!(again.stdout, "", "nothing new after the end");
        // Read while it runs, the part with the magic bytes is named binary.
        let started = run(
            &session,
            Request::new(format!("{} png; sleep 0.2", fx())).background(),
        )
        .await;
        let id = started.job_id.unwrap_or_default();
        let mut binary = None;
        loop {
            let read = session.job_output(id, 30, None).await.unwrap();
            binary = binary.or(read.stdout_stats.binary);
            if read.job.status != JobStatus::Running {
                break;
            }
        }
        assert_eq!(binary, Some(agent_bash_core::BinaryKind::Png));
    });
}

#[test]
fn killing_a_job_reaches_processes_in_a_group_of_their_own() {
    let mark = marker("job-setpgid");
    runtime().block_on(async {
        let session = session();
        let command = format!(
            // Not the last command, so that bash does not exec it (a session leader
            // cannot leave its group).
            "timeout 600 {} sleep 600 {}; echo done",
            fx(),
            quoted_apart(&mark)
        );
        let started = run(&session, Request::new(command).background()).await;
        let id = started.job_id.unwrap_or_default();
        assert!(
            eventually(Duration::from_secs(10), || !alive_with(&mark).is_empty()),
            "never started"
        );
        let killed = session.kill_job(id, None).await.unwrap();
        assert_ne!(killed.job.status, JobStatus::Running);
        assert_eq!(alive_with(&mark), Vec::<i32>::new(), "survived bash_kill");
    });
}

#[test]
fn two_reads_at_once_never_show_the_same_lines() {
    runtime().block_on(async {
        let session = session();
        let started = run(&session, Request::new("seq 1 40; sleep 600").background()).await;
        let id = started.job_id.unwrap_or_default();
        let first = session.job_output(id, 30, Some("^40$")).await.unwrap();
        assert_eq!(first.pattern_matched, Some(true));
        // The pattern read showed them all; two more reads at once find nothing new.
        let (a, b) = tokio::join!(
            session.job_output(id, 0, None),
            session.job_output(id, 0, None)
        );
        let lines = |read: &agent_bash_core::JobOutput| read.stdout_stats.total_lines;
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(first.stdout_stats.total_lines + lines(&a) + lines(&b), 40);
        let _ = session.kill_job(id, Some("KILL")).await;

        let started = run(&session, Request::new("seq 1 40; sleep 600").background()).await;
        let id = started.job_id.unwrap_or_default();
        let mut total = 0;
        while total < 40 {
            let (a, b) = tokio::join!(
                session.job_output(id, 5, None),
                session.job_output(id, 5, None)
            );
            total += lines(&a.unwrap());
            total += lines(&b.unwrap());
        }
        assert_eq!(
            total, 40,
            "concurrent reads split the output, never repeat it"
        );
    });
}

#[test]
fn a_pattern_matches_a_last_line_without_newline_once_the_job_ended() {
    runtime().block_on(async {
        let session = session();
        let started = run(
            &session,
            Request::new("sleep 0.3; printf 'server ready'").background(),
        )
        .await;
        let read = session
            .job_output(started.job_id.unwrap_or_default(), 30, Some("ready$"))
            .await
            .unwrap();
        assert_eq!(read.stdout, "server ready");
        assert_eq!(read.pattern_matched, Some(true), "{read:?}");
    });
}

#[test]
fn a_text_job_stays_text_whatever_a_read_starts_with() {
    runtime().block_on(async {
        let session = session();
        // A bell first (a control character in a short first read), then a line that
        // starts like a PDF in a later read.
        let started = run(
            &session,
            Request::new(
                "printf '\\a'; echo hello; sleep 0.3; echo '%PDF-1.4 is a version'; sleep 0.3",
            )
            .background(),
        )
        .await;
        let id = started.job_id.unwrap_or_default();
        let mut shown = String::new();
        loop {
            let read = session.job_output(id, 30, None).await.unwrap();
            assert_eq!(read.stdout_stats.binary, None, "{read:?}");
            shown.push_str(&read.stdout);
            shown.push('\n');
            if read.job.status != JobStatus::Running {
                let file = std::fs::read_to_string(&read.job.stdout_path).unwrap_or_default();
                assert_eq!(file, "hello\n%PDF-1.4 is a version\n", "sanitized, as text");
                break;
            }
        }
        assert!(
            shown.contains("hello") && shown.contains("%PDF-1.4 is a version"),
            "{shown}"
        );
    });
}

#[test]
fn a_job_past_the_spill_cap_says_so_and_killed_sessions_end_their_jobs() {
    runtime().block_on(async {
        let session = session_with(Config {
            spill_cap_bytes: 10_000,
            ..Config::default()
        });
        let started = run(
            &session,
            Request::new(format!("{} flood 5000", fx())).background(),
        )
        .await;
        let end = read_until_ended(&session, started.job_id.unwrap_or_default()).await;
        assert!(
            end.notes
                .iter()
                .any(|n| render::note(n).contains("spill cap of 10000 bytes")),
            "{:?}",
            end.notes
        );
        let started = run(&session, Request::new("sleep 600").background()).await;
        session.kill_all();
        let listed = session.jobs();
        let job = listed
            .jobs
            .iter()
            .find(|job| Some(job.job_id) == started.job_id)
            .unwrap_or_else(|| panic!("{listed:?}"));
        assert_eq!(job.status, JobStatus::Killed);
    });
}

#[test]
fn a_description_is_shown_in_the_job_list_and_kept_in_the_audit_log() {
    let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
    let log = dir.path().join("audit.jsonl");
    let mut config = Config::default();
    config.audit.path = Some(log.clone());
    let mark = marker("described");
    runtime().block_on(async {
        let session = session_with(config);
        let command = format!("{} sleep 600 {}", fx(), quoted_apart(&mark));
        let request = Request::new(command)
            .background()
            .description("  keep the marker alive\n");
        let started = run(&session, request).await;
        let id = started
            .job_id
            .unwrap_or_else(|| panic!("no job: {started:?}"));
        let job = started.job.unwrap_or_else(|| panic!("no job info"));
        assert_eq!(job.description.as_deref(), Some("keep the marker alive"));
        let listed = render::job_list(&session.jobs());
        assert!(
            listed.starts_with(&format!("job {id} (keep the marker alive) · is running · ")),
            "{listed}"
        );
        run(&session, Request::new("true")).await;
        session
            .kill_job(id, None)
            .await
            .unwrap_or_else(|err| panic!("{err}"));
    });
    let text = std::fs::read_to_string(&log).unwrap_or_else(|err| panic!("{err}"));
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["description"], "keep the marker alive");
    assert!(
        lines[1].get("description").is_none(),
        "no description, no field: {}",
        lines[1]
    );
    assert_eq!(alive_with(&mark), Vec::<i32>::new());
}

#[test]
fn finished_jobs_beyond_the_kept_number_are_evicted_and_say_so() {
    runtime().block_on(async {
        let config = Config {
            keep_finished_jobs: 2,
            ..Config::default()
        };
        let session = session_with(config);
        // Four jobs that end and are read to their end.
        for n in 1..=4 {
            let started = run(&session, Request::new(format!("echo {n}")).background()).await;
            let id = started.job_id.expect("a job");
            assert_eq!(id, n);
            read_until_ended(&session, id).await;
        }
        // A running job, and one that ends with nobody told: both are kept.
        let running = run(&session, Request::new("sleep 600").background()).await;
        let running = running.job_id.expect("a job");
        let unseen = run(&session, Request::new("echo unseen").background()).await;
        let unseen = unseen.job_id.expect("a job");
        assert!(
            eventually(Duration::from_secs(10), || {
                session
                    .jobs()
                    .jobs
                    .iter()
                    .any(|job| job.job_id == unseen && job.status != JobStatus::Running)
            }),
            "the last job never ended"
        );
        let kept: Vec<u64> = session.jobs().jobs.iter().map(|job| job.job_id).collect();
        assert_eq!(
            kept,
            [4, running, unseen],
            "the last 2 finished, and the running one"
        );
        let evicted = session.job_output(1, 0, None).await.unwrap_err();
        assert_eq!(evicted.kind(), "evicted_job");
        assert!(
            evicted
                .to_string()
                .starts_with("job 1 ended and is no longer kept: the session keeps the last 2"),
            "{evicted}"
        );
        // An id never handed out is still unknown, and the kept ones read as before.
        assert_eq!(
            session.job_output(99, 0, None).await.unwrap_err().kind(),
            "unknown_job"
        );
        let read = session.job_output(unseen, 0, None).await.unwrap();
        assert_eq!(read.stdout, "unseen");
        session.kill_job(running, None).await.unwrap();
    });
}
