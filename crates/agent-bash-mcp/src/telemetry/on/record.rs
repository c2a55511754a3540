//! What the hooks record during a call: the decision, the exit and the counts of a `bash`
//! call's outcome, a job's read or kill, a terminal's answer, and what the approver was asked.

use agent_bash_core::{Approval, Error, JobOutput, Note, Outcome, StreamStats};
use agent_bash_core::{TerminalAnswer, TerminalState, Verdict, render};
use opentelemetry::KeyValue;

use super::names::*;
use super::{EXPORTING, Exporting, Record, Recorder, int, lock, wire_name};
use crate::tools;

/// Runs `write` on the call's record, if it has one.
fn recording(recorder: &Recorder, write: impl FnOnce(&mut Record, &Exporting)) {
    if let (Recorder(Some(record)), Some(exporting)) = (recorder, EXPORTING.get()) {
        write(&mut lock(record), exporting);
    }
}

pub(in crate::telemetry) fn asked(recorder: &Recorder, verdict: &Verdict, approval: Approval) {
    recording(recorder, |record, _| {
        record.asked = Some((verdict.rule.clone(), approval));
    });
}

pub(in crate::telemetry) fn outcome(recorder: &Recorder, outcome: &Outcome) {
    recording(recorder, |record, exporting| {
        let asked = record.asked.take();
        let approval = asked.as_ref().map(|(_, approval)| *approval);
        let (decision, rule) = decision_of(outcome, asked);
        let attributes = &mut record.attributes;
        attributes.push(KeyValue::new(DECISION, decision));
        if let Some(rule) = rule {
            attributes.push(KeyValue::new(RULE, rule));
        }
        if let Some(approval) = approval {
            attributes.push(KeyValue::new(APPROVAL, approval_name(approval)));
        }
        for note in &outcome.notes {
            match note {
                Note::RanConfined { .. } => {
                    attributes.push(KeyValue::new(ASK_RESOLVED, "confined"));
                }
                Note::BoundedBySandbox { .. } => {
                    attributes.push(KeyValue::new(ASK_RESOLVED, "bounded_by_sandbox"));
                }
                _ => {}
            }
        }
        if outcome.refused.is_none() {
            ran(attributes, &record.tool, exporting, outcome);
        }
        if let Some(job_id) = outcome.job_id {
            attributes.push(KeyValue::new(JOB_ID, int(job_id)));
        }
        record.outcome = Some(outcome_name(outcome, approval));
        record.decision = Some(decision);
        record.job.clone_from(&outcome.job);
    });
}

/// The policy's decision on a `bash` call, and its rule: the refusal's, the `ask` the
/// approver was asked about, or an `ask` the sandbox resolved (its notes say so).
fn decision_of(
    outcome: &Outcome,
    asked: Option<(Option<String>, Approval)>,
) -> (&'static str, Option<String>) {
    match (&outcome.refused, asked) {
        (Some(refusal), _) => (
            render::decision_name(refusal.decision),
            refusal.rule.clone(),
        ),
        (None, Some((rule, _))) => ("ask", rule),
        (None, None) => {
            let resolved = outcome.notes.iter().any(|note| {
                matches!(
                    note,
                    Note::RanConfined { .. } | Note::BoundedBySandbox { .. }
                )
            });
            (if resolved { "ask" } else { "allow" }, None)
        }
    }
}

/// The attributes of a command that ran: how it ended, how long it took, its streams'
/// counts (also counted in the bytes metric).
fn ran(attributes: &mut Vec<KeyValue>, tool: &str, exporting: &Exporting, outcome: &Outcome) {
    if let Some(code) = outcome.exit_code {
        attributes.push(KeyValue::new(EXIT_CODE, i64::from(code)));
    }
    if let Some(signal) = &outcome.signal {
        attributes.push(KeyValue::new(SIGNAL, signal.clone()));
    }
    attributes.extend([
        KeyValue::new(TIMED_OUT, outcome.timed_out),
        KeyValue::new(CANCELLED, outcome.cancelled),
        KeyValue::new(DURATION_MS, int(outcome.duration_ms)),
        KeyValue::new(TIMEOUT_SECS, int(outcome.timeout_secs)),
        KeyValue::new(LEFT_RUNNING, int(outcome.left_running.len() as u64)),
    ]);
    stream(attributes, &STDOUT, &outcome.stdout_stats, &outcome.stdout);
    stream(attributes, &STDERR, &outcome.stderr_stats, &outcome.stderr);
    exporting.count_bytes(tool, &STDOUT, &outcome.stdout_stats, &outcome.stdout);
    exporting.count_bytes(tool, &STDERR, &outcome.stderr_stats, &outcome.stderr);
}

/// `agent_bash.outcome` of a `bash` call: how it ended, or that it became a job; a refusal
/// the user is still to answer is `input_required`.
fn outcome_name(outcome: &Outcome, approval: Option<Approval>) -> &'static str {
    let started_as_job =
        outcome.job_id.is_some() && outcome.exit_code.is_none() && outcome.signal.is_none();
    if outcome.refused.is_some() {
        match approval {
            Some(Approval::Deferred) => "input_required",
            _ => "refused",
        }
    } else if outcome.cancelled {
        "cancelled"
    } else if outcome.timed_out {
        "timed_out"
    } else if started_as_job {
        "job"
    } else if outcome.signal.is_some() {
        "signal"
    } else if outcome.exit_code == Some(0) {
        "ok"
    } else {
        "exit_nonzero"
    }
}

pub(in crate::telemetry) fn job_read(recorder: &Recorder, read: &Result<JobOutput, Error>) {
    let Ok(read) = read else {
        return;
    };
    recording(recorder, |record, exporting| {
        let attributes = &mut record.attributes;
        attributes.push(KeyValue::new(JOB_STATUS, wire_name(&read.job.status)));
        if let Some(code) = read.job.exit_code {
            attributes.push(KeyValue::new(EXIT_CODE, i64::from(code)));
        }
        if let Some(matched) = read.pattern_matched {
            attributes.push(KeyValue::new(PATTERN_MATCHED, matched));
        }
        stream(attributes, &STDOUT, &read.stdout_stats, &read.stdout);
        stream(attributes, &STDERR, &read.stderr_stats, &read.stderr);
        exporting.count_bytes(&record.tool, &STDOUT, &read.stdout_stats, &read.stdout);
        exporting.count_bytes(&record.tool, &STDERR, &read.stderr_stats, &read.stderr);
    });
}

pub(in crate::telemetry) fn terminal(recorder: &Recorder, answer: &Result<TerminalAnswer, Error>) {
    recording(recorder, |record, exporting| {
        let answer = match answer {
            Ok(answer) => answer,
            Err(Error::UnknownTerminal { .. }) => {
                if let Some(id) = record.terminal_id
                    && lock(&exporting.terminals).remove(&(record.session, id))
                {
                    exporting.terminals_open.add(-1, &[]);
                }
                return;
            }
            Err(_) => return,
        };
        let open_key = (record.session, answer.id);
        let ended = answer.state == TerminalState::Exited || record.tool == tools::TERMINAL_CLOSE;
        if record.tool == tools::TERMINAL_OPEN && answer.refused.is_none() && !ended {
            if lock(&exporting.terminals).insert(open_key) {
                exporting.terminals_open.add(1, &[]);
            }
        } else if ended && lock(&exporting.terminals).remove(&open_key) {
            exporting.terminals_open.add(-1, &[]);
        }
        let attributes = &mut record.attributes;
        attributes.push(KeyValue::new(TERMINAL_ID, int(answer.id)));
        attributes.push(KeyValue::new(TERMINAL_STATE, wire_name(&answer.state)));
        if let Some(code) = answer.exit_code {
            attributes.push(KeyValue::new(EXIT_CODE, i64::from(code)));
        }
        if let Some(signal) = &answer.signal {
            attributes.push(KeyValue::new(SIGNAL, signal.clone()));
        }
        if let Some(refusal) = &answer.refused {
            let decision = render::decision_name(refusal.decision);
            attributes.push(KeyValue::new(DECISION, decision));
            record.decision = Some(decision);
            if let Some(rule) = &refusal.rule {
                attributes.push(KeyValue::new(RULE, rule.clone()));
            }
            record.outcome = Some("refused");
        }
        stream(
            attributes,
            &SCROLLBACK,
            &answer.scrollback_stats,
            &answer.scrollback,
        );
        exporting.count_bytes(
            &record.tool,
            &SCROLLBACK,
            &answer.scrollback_stats,
            &answer.scrollback,
        );
    });
}

/// A stream's counts as attributes: bytes and lines read, bytes and lines in the result,
/// and whether the whole stream went to a spill file.
fn stream(attributes: &mut Vec<KeyValue>, keys: &StreamKeys, stats: &StreamStats, shown: &str) {
    attributes.extend([
        KeyValue::new(keys.bytes, int(stats.total_bytes)),
        KeyValue::new(keys.lines, int(stats.total_lines)),
        KeyValue::new(keys.bytes_returned, int(shown.len() as u64)),
        KeyValue::new(
            keys.lines_returned,
            int(stats.total_lines.saturating_sub(stats.omitted_lines)),
        ),
        KeyValue::new(keys.spilled, stats.full_output_path.is_some()),
    ]);
}

fn approval_name(approval: Approval) -> &'static str {
    match approval {
        Approval::NotAsked => "not_asked",
        Approval::Approved => "approved",
        Approval::Declined => "declined",
        Approval::Deferred => "deferred",
    }
}
