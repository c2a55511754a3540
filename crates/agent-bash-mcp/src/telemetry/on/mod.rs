//! OpenTelemetry on: what the hooks record into (the tracer, the instruments, the job spans
//! and terminals open), shared by the files beside it: settings and start, a call's span, its
//! outcome's attributes, the job spans and metrics, and the OTLP exporter.

mod call;
mod export;
mod jobs;
mod names;
mod record;
mod start;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Instant, SystemTime};

use agent_bash_core::{Approval, JobInfo, Session};
use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, UpDownCounter};
use opentelemetry_sdk::trace::{SdkTracer, Span};
use serde_json::Value;

pub(super) use call::{begin, end};
pub(super) use record::{asked, job_read, outcome, terminal};
pub use start::Telemetry;

/// What the hooks record into, once `Telemetry::start` made it.
static EXPORTING: OnceLock<Exporting> = OnceLock::new();

/// The tracer, the instruments, and what is open.
struct Exporting {
    tracer: SdkTracer,
    command_text: bool,
    calls: Counter<u64>,
    duration: Histogram<f64>,
    bytes: Counter<u64>,
    jobs_running: UpDownCounter<i64>,
    terminals_open: UpDownCounter<i64>,
    /// Job spans not ended yet, by session and job id.
    jobs: Mutex<HashMap<(usize, u64), OpenJob>>,
    /// Terminals opened through this server and not seen ended, by session and id.
    terminals: Mutex<HashSet<(usize, u64)>>,
    spans: Arc<SpanCounts>,
}

/// A job whose span is open: it ends when the job list says the job ended.
struct OpenJob {
    span: Span,
    session: Arc<Session>,
    started: SystemTime,
}

/// Spans ended here and what became of them, for the log at exit.
#[derive(Debug, Default)]
struct SpanCounts {
    ended: AtomicU64,
    exported: AtomicU64,
    failed: AtomicU64,
}

/// What a call's hooks learnt, for its span and its metrics.
#[derive(Debug)]
struct Record {
    tool: String,
    session: usize,
    terminal_id: Option<u64>,
    command_hash: Option<String>,
    /// `agent_bash.outcome`, when a hook knows better than the result's `isError`.
    outcome: Option<&'static str>,
    decision: Option<&'static str>,
    /// The rule of the `ask` the approver was asked about, and the answer.
    asked: Option<(Option<String>, Approval)>,
    attributes: Vec<KeyValue>,
    /// The job the call became.
    job: Option<JobInfo>,
}

/// Where a call's hooks record: the `Server` serving the call carries it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Recorder(Option<Arc<Mutex<Record>>>);

/// The open span of one call (`begin`); it ends when dropped.
pub(crate) struct CallSpan {
    span: Span,
    began: Instant,
    session: Arc<Session>,
    record: Arc<Mutex<Record>>,
    /// Whether the result is an error, once the call returned; `None` while it runs (and
    /// when it was dropped unanswered).
    is_error: Option<bool>,
}

/// A value's name as results write it (`running`, `background`, `waiting_for_input`).
fn wire_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(name)) => name,
        _ => String::new(),
    }
}

/// OTLP attributes are signed.
fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// A session, told apart from the others of an HTTP server by its address.
fn key(session: &Arc<Session>) -> usize {
    Arc::as_ptr(session).addr()
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
