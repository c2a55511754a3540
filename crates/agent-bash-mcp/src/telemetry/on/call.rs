//! A call's span: begun as the request arrives (under the client's trace context), ended
//! when the call's `CallSpan` is dropped, which also counts the call.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use agent_bash_core::Session;
use agent_bash_core::sandbox::SandboxMode;
use opentelemetry::KeyValue;
use opentelemetry::propagation::{Extractor, TextMapPropagator as _};
use opentelemetry::trace::{Span as _, SpanKind, Status, Tracer as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::names::*;
use super::{CallSpan, EXPORTING, Record, Recorder, int, key, lock};
use crate::tools;

/// Hex digits of the command's SHA-256 kept in `agent_bash.command.hash`.
const HASH_HEX_DIGITS: usize = 16;

pub(in crate::telemetry) fn begin(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    session: &Arc<Session>,
) -> Option<CallSpan> {
    let exporting = EXPORTING.get()?;
    let tool = request.name.to_string();
    let parent = TraceContextPropagator::new().extract(&Meta(&context.meta.0.0));
    let config = session.config();
    let mut attributes = vec![
        KeyValue::new("mcp.method.name", "tools/call"),
        KeyValue::new("gen_ai.operation.name", "execute_tool"),
        KeyValue::new(TOOL, tool.clone()),
        KeyValue::new("jsonrpc.request.id", context.id.to_string()),
        KeyValue::new(TARGET, config.target.to_string()),
    ];
    let arguments = request.arguments.as_ref();
    let argument = |name: &str| arguments.and_then(|arguments| arguments.get(name));
    let mut command_hash = None;
    if let Some(command) = argument("command").and_then(Value::as_str) {
        let hash = hash(command);
        attributes.push(KeyValue::new(COMMAND_HASH, hash.clone()));
        if exporting.command_text {
            attributes.push(KeyValue::new(COMMAND, command.to_string()));
        }
        command_hash = Some(hash);
    }
    if tool == tools::BASH || tool == tools::TERMINAL_OPEN {
        // A call may ask for a stricter sandbox than the session's, never a looser one.
        let asked = argument("sandbox")
            .and_then(Value::as_str)
            .and_then(SandboxMode::from_name);
        let mode = asked.map_or(config.sandbox.mode, |asked| asked.max(config.sandbox.mode));
        let network =
            config.sandbox.network && argument("network").and_then(Value::as_bool) != Some(false);
        attributes.push(KeyValue::new(SANDBOX_MODE, mode.name()));
        attributes.push(KeyValue::new(SANDBOX_NETWORK, network));
    }
    if let Some(job_id) = argument("job_id").and_then(Value::as_u64) {
        attributes.push(KeyValue::new(JOB_ID, int(job_id)));
    }
    let terminal_id = argument("id").and_then(Value::as_u64);
    if let Some(id) = terminal_id {
        attributes.push(KeyValue::new(TERMINAL_ID, int(id)));
    }
    let span = exporting
        .tracer
        .span_builder(tool.clone())
        .with_kind(SpanKind::Server)
        .with_attributes(attributes)
        .start_with_context(&exporting.tracer, &parent);
    let record = Record {
        tool,
        session: key(session),
        terminal_id,
        command_hash,
        outcome: None,
        decision: None,
        asked: None,
        attributes: Vec::new(),
        job: None,
    };
    Some(CallSpan {
        span,
        began: Instant::now(),
        session: session.clone(),
        record: Arc::new(Mutex::new(record)),
        is_error: None,
    })
}

impl CallSpan {
    pub(in crate::telemetry) fn recorder(&self) -> Recorder {
        Recorder(Some(self.record.clone()))
    }
}

pub(in crate::telemetry) fn end(mut span: CallSpan, result: &CallToolResult) {
    span.is_error = Some(result.is_error == Some(true));
}

impl Drop for CallSpan {
    /// Ends the span, counts the call, and starts the span of the job it became.
    fn drop(&mut self) {
        let Some(exporting) = EXPORTING.get() else {
            return;
        };
        let record = lock(&self.record);
        let outcome = match (self.is_error, record.outcome) {
            (None, _) => "dropped",
            (Some(_), Some(outcome)) => outcome,
            (Some(true), None) => "error",
            (Some(false), None) => "ok",
        };
        for attribute in &record.attributes {
            self.span.set_attribute(attribute.clone());
        }
        self.span.set_attribute(KeyValue::new(OUTCOME, outcome));
        if let Some(is_error) = self.is_error {
            self.span.set_attribute(KeyValue::new(IS_ERROR, is_error));
        }
        // A failed command, a refusal, a timeout are data (their outcome says so); the
        // span is an error only when the tool itself failed.
        if self.is_error == Some(true) && record.outcome.is_none() {
            self.span
                .set_attribute(KeyValue::new("error.type", "tool_error"));
            self.span.set_status(Status::error("the tool failed"));
        }
        let mut labels = vec![
            KeyValue::new(TOOL, record.tool.clone()),
            KeyValue::new(OUTCOME, outcome),
        ];
        exporting
            .duration
            .record(self.began.elapsed().as_secs_f64(), &labels);
        if let Some(decision) = record.decision {
            labels.push(KeyValue::new(DECISION, decision));
        }
        exporting.calls.add(1, &labels);
        let parent = self.span.span_context().clone();
        self.span.end();
        exporting.ended(&parent);
        if let Some(job) = &record.job {
            exporting.open_job(parent, job, &self.session, record.command_hash.clone());
        }
    }
}

/// The first `HASH_HEX_DIGITS` hex digits of the command's SHA-256: the same command has
/// the same hash (a short or common command can be guessed from it).
fn hash(command: &str) -> String {
    let digest = Sha256::digest(command.as_bytes());
    let mut hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    hex.truncate(HASH_HEX_DIGITS);
    hex
}

/// The request's `_meta`, where the W3C trace context travels.
struct Meta<'a>(&'a rmcp::model::JsonObject);

impl Extractor for Meta<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}
