//! The pipeline of one call, step by step. Each step is a call into its own module; this
//! file only says in which order they run and what passes between them.

use std::sync::atomic::Ordering;

use crate::collect::{self, Captured, Detached, Hooks, Rest};
use crate::config::{OnTimeout, Unanswered};
use crate::error::Error;
use crate::jobs::{self, JobOrigin, Reservation};

use super::{Finished, Session};
use crate::audit;
use crate::outcome::{self, Note, Outcome};
use crate::output::{Capture, Stream};
use crate::plan::{self, Limits};
use crate::policy::{self, Approval, Approver, Decision, Verdict};
use crate::process::pump::Pump;
use crate::process::spawn;
use crate::request::{self, Call, Request};
use crate::sandbox::{self, Confinement, Sandboxing};

/// Runs one call: validate → check → plan → spawn → collect → assemble → record. (The
/// last step, render, is the caller's: `render::text` of the outcome.)
pub(crate) async fn run(
    session: &Session,
    request: Request,
    hooks: Hooks<'_>,
    approver: &impl Approver,
) -> Result<Finished, Error> {
    let call = validate(session, &request).await?;
    // 2. Check: the command's one parse; `ask` goes to the approver; a refusal runs nothing.
    let shell = session.shell.definitions();
    let mut verdict = policy::check(
        &session.policy,
        &call.command,
        session.config.caller_decides,
        &shell.definitions,
    );
    let mut bounded = None;
    if verdict.bounded_by_sandbox() && session.confines_writes(call.sandbox) {
        // Its harm is to the files it picks, and the sandbox confines which it can touch.
        verdict.decision = Decision::Allow;
        bounded = verdict.reason.clone();
    }
    let approval = match verdict.decision {
        Decision::Ask => approver.approve(&call.command, &verdict).await,
        Decision::Allow | Decision::Suggest | Decision::Deny => Approval::NotAsked,
    };
    // An `ask` nobody could answer runs under a stricter sandbox, where one holds fully.
    let mut instead = None;
    let unanswered = verdict.decision == Decision::Ask
        && approval == Approval::NotAsked
        && session.config.unanswered == Unanswered::Confine;
    if unanswered {
        match session.unanswered_sandbox(&call) {
            Ok(sandboxing) => instead = Some(sandboxing),
            Err(why) => session.notice(*why),
        }
    }
    let refused = match verdict.decision {
        Decision::Allow => false,
        Decision::Suggest => first_suggestion(session, &call, &verdict),
        Decision::Ask => approval != Approval::Approved && instead.is_none(),
        Decision::Deny => true,
    };
    if refused {
        let mut refusal = refuse(session, &call, &verdict, approval);
        refusal.outcome.notes.extend(session.take_sandbox_notice());
        refusal.outcome.notes.extend(session.jobs.take_notices());
        return Ok(refusal);
    }
    let result = execute(session, &call, hooks, instead.as_ref()).await;
    let moved = session.confined_work_may_end();
    // 7. Record: the audit log (a failure of the tool too), and the jobs that ended meanwhile.
    match result {
        Ok(mut finished) => {
            let approved = approved(approval);
            let notes = &mut finished.outcome.notes;
            notes.splice(
                0..0,
                how_it_ran(session, &verdict, instead.is_some(), bounded),
            );
            notes.extend(moved);
            record(session, &call, &mut finished.outcome, &verdict, approved);
            finished.outcome.notes.extend(session.take_sandbox_notice());
            finished.outcome.notes.extend(session.jobs.take_notices());
            Ok(finished)
        }
        Err(error) => {
            record_failure(session, &call, &verdict, approved(approval), &error);
            Err(error)
        }
    }
}

/// Step 1, validate: the request becomes a call (cwd resolved, timeout clamped), or an
/// error; the session's own files are checked and mended, and the user's shell captured
/// again if an rc file changed.
async fn validate(session: &Session, request: &Request) -> Result<Call, Error> {
    let call = request::validate(request, &session.root, &session.config)?;
    // The base of the session's files (and of the audit log) must be this user's alone.
    session
        .spill_dir
        .check_base()
        .map_err(|reason| Error::OutputDir { reason })?;
    session.mend_own_files()?;
    // The user's shell, captured again if an rc file changed.
    if let Some(problem) = session.shell.refresh().await {
        session.notice(Note::NoShellSnapshot { problem });
    }
    Ok(call)
}

/// Step 2 alone, for a command that runs on a target: `None` when it may be sent there
/// (allowed, or approved by the user), else its refusal, worded and recorded as a refusal
/// here is. Nothing runs. An `ask` nobody answers is refused: the stricter sandbox it would
/// run under instead is this machine's, not the target's.
pub(crate) async fn judge(
    session: &Session,
    request: &Request,
    approver: &impl Approver,
) -> Option<Outcome> {
    let shell = session.shell.definitions();
    let verdict = policy::check(&session.policy, &request.command, false, &shell.definitions);
    let approval = match verdict.decision {
        Decision::Ask => approver.approve(&request.command, &verdict).await,
        Decision::Allow | Decision::Suggest | Decision::Deny => Approval::NotAsked,
    };
    let refused = match verdict.decision {
        // The host's tools work on this machine's files, the command on the target's: a
        // suggestion would send the model to the wrong files.
        Decision::Allow | Decision::Suggest => false,
        Decision::Ask => approval != Approval::Approved,
        Decision::Deny => true,
    };
    if !refused {
        return None;
    }
    // The cwd is a path on the target: named as given, never looked up here.
    let call = Call {
        command: request.command.clone(),
        cwd: request.cwd.clone().unwrap_or_else(|| session.root.clone()),
        timeout: request.timeout_secs.map_or(
            session.config.default_timeout,
            std::time::Duration::from_secs,
        ),
        timeout_clamped_from: None,
        timeout_named: request.timeout_secs.is_some(),
        background: request.background,
        description: request.description.clone(),
        sandbox: (None, None),
    };
    Some(refuse(session, &call, &verdict, approval).outcome)
}

/// What a result says first of how a command the policy asked about ran without anyone
/// approving it: confined instead (`ran_confined`), or without asking, the harm being
/// bounded by the sandbox (`bounded`: why the policy asks).
fn how_it_ran(
    session: &Session,
    verdict: &Verdict,
    ran_confined: bool,
    bounded: Option<String>,
) -> Vec<Note> {
    let mut notes: Vec<Note> = bounded
        .map(|reason| Note::BoundedBySandbox { reason })
        .into_iter()
        .collect();
    if ran_confined {
        let reason = verdict
            .reason
            .clone()
            .unwrap_or_else(|| "the policy asks about it".into());
        let hint = format!("to run it unconfined, allow it in {}", session.user_file());
        notes.push(Note::RanConfined { reason, hint });
    }
    notes
}

/// Steps 3 to 6 of an allowed call; under `instead` rather than the session's sandbox when
/// given (an unanswered `ask`).
async fn execute(
    session: &Session,
    call: &Call,
    hooks: Hooks<'_>,
    instead: Option<&Sandboxing>,
) -> Result<Finished, Error> {
    // 3. Plan: program, arguments, environment, limits (the sandbox will transform it).
    let id = session.calls.fetch_add(1, Ordering::Relaxed) + 1;
    let mut environment = session.environment();
    environment.sandboxing = match instead {
        Some(sandboxing) => Some(sandboxing),
        None => session.sandboxing(call.sandbox)?,
    };
    let plan = plan::plan(call, id, &environment)?;
    let limits = plan.limits;
    let confinement = plan
        .confined
        .as_ref()
        .map(|confined| confined.confinement.clone());
    // A background start takes its job place first: refused rather than started.
    let reserved = reserve_background(session, call)?;
    // Confined work is dated before it starts (`sandbox::written`).
    session.confined_work_starts(
        confinement
            .as_ref()
            .is_some_and(Confinement::confines_writes),
    );
    // 4. Spawn.
    let pump = Pump::new(spawn::start(plan).await?, limits.stop, limits.io_drain);
    // 5. Collect, until the call is over (or the command is handed over to a job).
    let [stdout, stderr] =
        [Stream::Stdout, Stream::Stderr].map(|stream| capture(session, id, stream));
    let captured = if limits.background {
        collect::in_background(pump, stdout, stderr)
    } else {
        collect::collect(pump, &limits, hooks, stdout, stderr).await
    };
    // 6. Assemble the outcome; what still runs becomes a job.
    let mut finished = assemble(session, call, &limits, captured, reserved).await;
    if let Some(confinement) = confinement {
        explain_sandbox(session, call, &confinement, &mut finished.outcome);
    }
    Ok(finished)
}

/// What a sandboxed call's result says of its sandbox: what this kernel leaves unenforced,
/// and, when the command failed on something the sandbox refused, which and what allows it.
fn explain_sandbox(
    session: &Session,
    call: &Call,
    confinement: &Confinement,
    outcome: &mut Outcome,
) {
    // The default mode's gaps are said once, in the session's first result.
    if !confinement.gaps.is_empty() && session.config.sandbox.mode_chosen {
        outcome.notes.push(Note::SandboxGaps {
            mode: confinement.mode.name().to_string(),
            gaps: confinement.gaps.clone(),
        });
    }
    let failed = outcome.exit_code.is_some_and(|code| code != 0);
    if failed {
        outcome.sandbox_hint = sandbox::hint(
            confinement,
            &call.cwd,
            &outcome.stderr,
            std::path::Path::new(&session.user_file()),
        );
    }
}

/// True if a `suggest` verdict stops the call: the first time the session sees this
/// command. Sent again, it runs: the model read the suggestion and chose the shell (the
/// policy allowed the command apart from the suggestion, so nothing is loosened). A verdict
/// without a tool (a shell definition's body decided it) never stops one.
fn first_suggestion(session: &Session, call: &Call, verdict: &Verdict) -> bool {
    verdict.suggested_tool().is_some() && session.first_suggestion(&call.command)
}

/// A call the policy refused: nothing runs; the result says why and what would allow it
/// (or, for a suggestion, which tool to use and how to run it anyway).
fn refuse(session: &Session, call: &Call, verdict: &Verdict, approval: Approval) -> Finished {
    let refused = if verdict.decision == Decision::Suggest {
        policy::suggestion(verdict)
    } else {
        policy::refusal(
            verdict,
            approval,
            session.policy.allowing(&call.command).as_ref(),
            &session.user_file(),
        )
    };
    let mut outcome = Outcome {
        command: call.command.clone(),
        cwd: call.cwd.clone(),
        timeout_secs: call.timeout.as_secs(),
        refused: Some(refused),
        ..Outcome::default()
    };
    record(session, call, &mut outcome, verdict, approved(approval));
    Finished {
        outcome,
        raw_signal: None,
    }
}

/// What the audit log says of an approval: `None` when nobody was asked.
fn approved(approval: Approval) -> Option<bool> {
    match approval {
        Approval::NotAsked | Approval::Deferred => None,
        Approval::Approved => Some(true),
        Approval::Declined => Some(false),
    }
}

/// Appends the call to the audit log; a failure to is noted in the result.
fn record(
    session: &Session,
    call: &Call,
    outcome: &mut Outcome,
    verdict: &Verdict,
    approved: Option<bool>,
) {
    let path = match session.audit_path() {
        Ok(Some(path)) => path,
        Ok(None) => return,
        Err(error) => {
            outcome.notes.push(Note::AuditFailed { error });
            return;
        }
    };
    let decision = policy::decision_name(verdict.decision);
    let description = call.description.as_deref();
    let rule = verdict.rule.as_deref();
    let mut entry = audit::Entry::of(outcome, description, decision, rule, approved);
    // A suggestion's tool: `ran` says whether this was the first time (not run) or the
    // command sent again.
    entry.tool = verdict.suggested_tool();
    if let Err(error) = audit::append(&path, &entry) {
        outcome.notes.push(Note::AuditFailed { error });
    }
}

/// Appends a call the tool could not run to the audit log (nothing ran).
fn record_failure(
    session: &Session,
    call: &Call,
    verdict: &Verdict,
    approved: Option<bool>,
    error: &Error,
) {
    let outcome = Outcome {
        command: call.command.clone(),
        cwd: call.cwd.clone(),
        timeout_secs: call.timeout.as_secs(),
        ..Outcome::default()
    };
    if let Ok(Some(path)) = session.audit_path() {
        let decision = policy::decision_name(verdict.decision);
        let description = call.description.as_deref();
        let rule = verdict.rule.as_deref();
        let mut entry = audit::Entry::of(&outcome, description, decision, rule, approved);
        entry.ran = false;
        entry.error = Some(error.to_string());
        // The caller gets the error itself; a log that cannot be written adds nothing to it.
        let _ = audit::append(&path, &entry);
    }
}

/// The job place of a background start, taken before anything spawns.
fn reserve_background<'s>(
    session: &'s Session,
    call: &Call,
) -> Result<Option<Reservation<'s>>, Error> {
    if !call.background {
        return Ok(None);
    }
    match session.config.max_jobs {
        0 => Err(Error::NoJobs),
        max => session
            .jobs
            .reserve(max)
            .map(Some)
            .ok_or(Error::JobLimit { max }),
    }
}

/// The capture of one stream of call `id`: redacted, windowed, spilled.
fn capture(session: &Session, id: u64, stream: Stream) -> Capture {
    Capture::new(
        stream,
        session.config.budget,
        session.spill_dir.clone(),
        format!("{id:04}-{stream}"),
        session.config.spill_cap_bytes,
    )
    .redacting(&session.secrets)
}

/// The outcome of a captured call. A command handed over becomes a job when a place is
/// free (another call may have taken the last one since the plan); otherwise it is taken
/// back (stopped, or its leftovers kept under the session's guard).
async fn assemble(
    session: &Session,
    call: &Call,
    limits: &Limits,
    mut captured: Captured,
    reserved: Option<Reservation<'_>>,
) -> Finished {
    let max_jobs = session.config.max_jobs;
    let mut notes = Vec::new();
    let reservation = match &captured.rest {
        Rest::Detached(detached) => {
            let leftovers = detached.origin == JobOrigin::Leftover;
            let place = reserved.or_else(|| session.jobs.reserve(max_jobs));
            if place.is_none() {
                notes.push(Note::NotAJob {
                    max_jobs,
                    leftovers,
                });
                collect::take_back(&mut captured).await;
            }
            place
        }
        Rest::Gone | Rest::Leftovers(_) => {
            // A timeout that would have become a job, had a place been free.
            if captured.timed_out && session.config.on_timeout == OnTimeout::Background {
                notes.push(Note::NotAJob {
                    max_jobs,
                    leftovers: false,
                });
            } else if !captured.left_running.is_empty()
                && max_jobs > 0
                && !captured.timed_out
                && !captured.cancelled
            {
                // Left running by a shell that exited on its own, with no place free (a
                // stop's survivors are not job material: they are reported as such).
                notes.push(Note::NotAJob {
                    max_jobs,
                    leftovers: true,
                });
            }
            None
        }
    };
    let mut finished = match (
        std::mem::replace(&mut captured.rest, Rest::Gone),
        reservation,
    ) {
        (Rest::Detached(detached), Some(reservation)) => {
            into_job(session, call, limits, captured, *detached, reservation)
        }
        (rest, _) => {
            if let Rest::Leftovers(guard) = rest {
                session.keep_leftovers(guard);
            }
            let (outcome, raw_signal) =
                outcome::assemble(call, captured, &session.config.budget, false);
            Finished {
                outcome,
                raw_signal,
            }
        }
    };
    finished.outcome.notes.extend(notes);
    finished
}

/// The command goes on as a job: its captures go on writing into the job's files, and the
/// call shows a frozen copy of what they held.
fn into_job(
    session: &Session,
    call: &Call,
    limits: &Limits,
    mut captured: Captured,
    detached: Detached,
    reservation: Reservation<'_>,
) -> Finished {
    let job_id = reservation.id();
    let (stdout_view, stdout_file) = captured.stdout.hand_over(&format!("job-{job_id}-stdout"));
    let (stderr_view, stderr_file) = captured.stderr.hand_over(&format!("job-{job_id}-stderr"));
    let stdout = std::mem::replace(&mut captured.stdout, stdout_view);
    let stderr = std::mem::replace(&mut captured.stderr, stderr_view);
    let shell_running = !detached.pump.exited();
    let (mut outcome, raw_signal) =
        outcome::assemble(call, captured, &session.config.budget, shell_running);
    match (stdout_file, stderr_file) {
        (Ok(stdout_path), Ok(stderr_path)) => {
            let info = session.jobs.start(
                reservation,
                jobs::Start {
                    command: &call.command,
                    description: call.description.as_deref(),
                    cwd: &call.cwd,
                    detached,
                    stdout,
                    stdout_path,
                    stderr,
                    stderr_path,
                    timeout: limits.job_timeout,
                },
            );
            outcome.job_id = Some(job_id);
            outcome.job = Some(info);
        }
        (Err(error), _) | (_, Err(error)) => {
            // Without its files a job would run unseen: stop it instead (dropping the
            // pump's guard kills the tree).
            drop(detached);
            outcome.notes.push(Note::JobFilesFailed { error });
        }
    }
    Finished {
        outcome,
        raw_signal,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::config::Config;
    use crate::policy::{CHECKS, NoApprover};

    /// Approves everything, and counts how often it was asked.
    #[derive(Default)]
    struct Counting {
        asked: std::sync::atomic::AtomicU32,
    }

    impl Approver for Counting {
        async fn approve(&self, _command: &str, verdict: &Verdict) -> Approval {
            assert_eq!(verdict.decision, Decision::Ask);
            self.asked.fetch_add(1, Ordering::Relaxed);
            Approval::Approved
        }
    }

    fn checks() -> u64 {
        CHECKS.with(Cell::get)
    }

    #[test]
    fn a_call_parses_its_command_once_and_asks_once() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let config = Config {
            spill_parent: Some(dir.path().join("out")),
            ..Config::default()
        };
        let session = Session::new(dir.path(), config).expect("a session");
        // The current-thread runtime keeps the whole call on this thread, whose parses
        // `CHECKS` counts.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let cancel = tokio_util::sync::CancellationToken::new();
        let counting = Counting::default();
        // A command word from a variable cannot be read: the policy asks.
        let ask = Request::new("X=echo; $X approved");
        let before = checks();
        let finished = runtime
            .block_on(session.run_with(ask.clone(), &cancel, None, &counting))
            .expect("it runs");
        assert_eq!(checks() - before, 1, "one parse per call");
        assert_eq!(counting.asked.load(Ordering::Relaxed), 1);
        assert_eq!(finished.outcome.stdout, "approved");

        // Nobody to ask: refused, still after one parse, and nothing ran.
        let before = checks();
        let refused = runtime
            .block_on(session.run_with(ask, &cancel, None, &NoApprover))
            .expect("a refusal is an outcome");
        assert_eq!(checks() - before, 1);
        let refusal = refused.outcome.refused.expect("refused");
        assert_eq!(refusal.decision, Decision::Ask);
        assert!(refused.outcome.stdout.is_empty());

        // A plain command is allowed without asking.
        let before = checks();
        let plain = runtime
            .block_on(session.run_with(Request::new("echo plain"), &cancel, None, &counting))
            .expect("it runs");
        assert_eq!(
            (checks() - before, plain.outcome.stdout.as_str()),
            (1, "plain")
        );
        assert_eq!(counting.asked.load(Ordering::Relaxed), 1, "not asked again");
    }

    #[test]
    fn a_call_the_tool_cannot_run_is_still_audited() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let log = dir.path().join("audit.jsonl");
        let mut config = Config {
            max_jobs: 0,
            ..Config::default()
        };
        config.audit.path = Some(log.clone());
        let session = Session::new(dir.path(), config).expect("a session");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let started = runtime.block_on(session.run(Request::new("sleep 1").background()));
        assert!(matches!(started, Err(Error::NoJobs)), "{started:?}");
        let text = std::fs::read_to_string(&log).expect("the log");
        let line: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON line");
        assert_eq!(line["command"], "sleep 1");
        assert_eq!(line["ran"], false);
        assert!(
            line["error"]
                .as_str()
                .is_some_and(|error| error.contains("keeps no background jobs")),
            "{line}"
        );
    }

    #[test]
    fn a_suggestion_stops_a_command_once_and_the_audit_log_says_so() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let log = dir.path().join("audit.jsonl");
        let mut config = Config {
            spill_parent: Some(dir.path().join("out")),
            ..Config::default()
        };
        config.audit.path = Some(log.clone());
        config.policy.host = Some("claude-code".into());
        let file = dir.path().join("f");
        std::fs::write(&file, "a\n").expect("the file");
        let session = Session::new(dir.path(), config).expect("a session");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let edit = Request::new("sed -i s/a/b/ f");
        let first = runtime
            .block_on(session.run(edit.clone()))
            .expect("an outcome");
        let refusal = first.refused.as_ref().expect("not run");
        assert_eq!(refusal.decision, Decision::Suggest);
        assert_eq!(refusal.tool.as_deref(), Some("Edit"));
        let text = crate::render::text(&first);
        assert!(
            text.starts_with("[not run: use the `Edit` tool for this]\ncommand: sed -i s/a/b/ f"),
            "{text}"
        );
        assert_eq!(std::fs::read_to_string(&file).expect("f"), "a\n", "not run");
        // Sent again, the same command runs; another one is still stopped.
        let again = runtime.block_on(session.run(edit)).expect("it runs");
        assert_eq!(again.exit_code, Some(0), "{again:?}");
        assert_eq!(std::fs::read_to_string(&file).expect("f"), "b\n");
        let other = runtime
            .block_on(session.run(Request::new("sed -i s/b/c/ f")))
            .expect("an outcome");
        assert!(other.refused.is_some());
        let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
            .expect("the log")
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON line"))
            .collect();
        let seen: Vec<(&str, &str, bool)> = lines
            .iter()
            .map(|line| {
                let field = |name: &str| line[name].as_str().unwrap_or_default();
                (field("decision"), field("tool"), line["ran"] == true)
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("suggest", "Edit", false),
                ("suggest", "Edit", true),
                ("suggest", "Edit", false)
            ]
        );
        assert_eq!(lines[0]["rule"], "suggest-edit");
    }
}
