//! OpenTelemetry for the MCP server: a span per tool call and per background job, and the
//! server's metrics, sent over OTLP/HTTP to a collector (docs/telemetry.md).
//!
//! Off unless the settings say `telemetry.export = "otlp"` (and the binary was built with the
//! `otel` feature, which it is by default). Off, nothing is made: no exporter, no thread, no
//! task, and each hook in `server/` is one look at an empty `OnceLock`.
//!
//! What leaves the process: the tool's name, the policy's decision and rule, the sandbox mode,
//! the exit code or signal, counts of bytes and lines, durations, ids, and a hash of the
//! command. Never its output, its working directory, the model's description, what a terminal
//! shows or is sent, a pattern waited for, nor the command's text unless
//! `telemetry.command_text` says so (the user's own settings only: `settings/trust.rs`).
//!
//! A call never waits for the export: a span goes into the batch processor's bounded queue
//! (`OTEL_BSP_MAX_QUEUE_SIZE`, 2048), and is dropped when the queue is full; metrics are added
//! up in memory and read by their own thread. What was lost is counted and logged at exit.
//! The exporters' errors go to the log (stderr): stdout carries the protocol.
//!
//! Compromises, said plainly:
//! - A job's end is seen by reading its session's job list every `JOB_WATCH` (only while a
//!   job span is open): the span ends at the job's true end (its start plus its runtime), and
//!   is exported up to a second later.
//! - A terminal closed by its idle timeout or its age counts as open until a call about it sees
//!   it ended: the engine keeps no list of terminals a caller could read.
//! - A call served by a target (`--target`) carries its tool, arguments' ids and duration, not
//!   the far side's exit and counts, nor the decision taken here.
//! - Requests go out as plain HTTP/1.1 (this build has no TLS): an `https://` endpoint turns
//!   export off, with a warning. A collector on the same host (or a sidecar) takes it further.

use std::sync::Arc;

use agent_bash_core::{Approval, Approver, Error, JobOutput, Outcome, Session};
use agent_bash_core::{TerminalAnswer, Verdict};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RequestContext, RoleServer};

#[cfg(feature = "otel")]
use on as active;

#[cfg(not(feature = "otel"))]
use off as active;

pub use active::Telemetry;
pub(crate) use active::{CallSpan, Recorder};

/// The span of one `tools/call`, begun as the request arrives: `None` when nothing is
/// exported. Its parent is the W3C trace context in the request's `_meta` (`traceparent`,
/// `tracestate`), so the client's trace shows the call under its own tool call.
pub(crate) fn begin(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    session: &Arc<Session>,
) -> Option<CallSpan> {
    active::begin(request, context, session)
}

/// Where the hooks of the call `span` record (the call's `Server` carries it): nowhere
/// without a span.
pub(crate) fn recorder(span: Option<&CallSpan>) -> Recorder {
    span.map(CallSpan::recorder).unwrap_or_default()
}

/// Ends the call's span with its result, and counts the call. (A span dropped without an
/// end, with its call, ends as `dropped`.)
pub(crate) fn end(span: Option<CallSpan>, result: &CallToolResult) {
    if let Some(span) = span {
        active::end(span, result);
    }
}

/// Records a `bash` call's outcome: the decision, the exit, the counts per stream; and the
/// job it became, whose span starts with the call's end.
pub(crate) fn outcome(recorder: &Recorder, outcome: &Outcome) {
    active::outcome(recorder, outcome);
}

/// Records a read or a kill of a job (`bash_output`, `bash_kill`); gives `read` back.
pub(crate) fn job_read(
    recorder: &Recorder,
    read: Result<JobOutput, Error>,
) -> Result<JobOutput, Error> {
    active::job_read(recorder, &read);
    read
}

/// Records a terminal tool's answer (and whether the terminal is open); gives it back.
pub(crate) fn terminal(
    recorder: &Recorder,
    answer: Result<TerminalAnswer, Error>,
) -> Result<TerminalAnswer, Error> {
    active::terminal(recorder, &answer);
    answer
}

/// An `Approver` that records what it was asked and the answer (the outcome alone cannot
/// tell an approved `ask` from an `allow`).
pub(crate) struct Watched<'a, A> {
    pub(crate) approver: &'a A,
    pub(crate) recorder: &'a Recorder,
}

impl<A: Approver + Sync> Approver for Watched<'_, A> {
    async fn approve(&self, command: &str, verdict: &Verdict) -> Approval {
        let approval = self.approver.approve(command, verdict).await;
        active::asked(self.recorder, verdict, approval);
        approval
    }
}

/// Without the `otel` feature: the same hooks, doing nothing.
#[cfg(not(feature = "otel"))]
mod off;

/// With it: the spans and metrics, and their export.
#[cfg(feature = "otel")]
mod on;
