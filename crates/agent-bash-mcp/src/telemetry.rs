//! OpenTelemetry for the MCP server: a span per tool call and per background job, and the
//! server's metrics, sent over OTLP/HTTP to a collector (docs/telemetry.md).
//!
//! Off unless the settings say `telemetry.export = "otlp"` (and the binary was built with the
//! `otel` feature, which it is by default). Off, nothing is made: no exporter, no thread, no
//! task, and each hook in `server.rs` is one look at an empty `OnceLock`.
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
mod off {
    use super::*;
    use agent_bash_core::Config;

    /// Nothing to export: this build has no OpenTelemetry.
    pub struct Telemetry(());

    /// Never made: `begin` has nothing to begin.
    pub(crate) enum CallSpan {}

    impl Telemetry {
        /// `None`: this build cannot export (said in the log when the settings ask for it).
        pub fn start(config: &Config, _runtime: &tokio::runtime::Handle) -> Option<Telemetry> {
            if config.telemetry.export.is_otlp() {
                tracing::warn!(
                    "telemetry.export is `otlp`, but this build has no OpenTelemetry (cargo \
                     feature `otel`): nothing is exported"
                );
            }
            None
        }

        /// Nothing to send.
        pub fn shutdown(self) {}
    }

    /// Records nothing.
    #[derive(Clone, Debug, Default)]
    pub(crate) struct Recorder(());

    impl CallSpan {
        pub(super) fn recorder(&self) -> Recorder {
            match *self {}
        }
    }

    pub(super) fn begin(
        _request: &CallToolRequestParams,
        _context: &RequestContext<RoleServer>,
        _session: &Arc<Session>,
    ) -> Option<CallSpan> {
        None
    }

    pub(super) fn end(span: CallSpan, _result: &CallToolResult) {
        match span {}
    }

    pub(super) fn outcome(_recorder: &Recorder, _outcome: &Outcome) {}
    pub(super) fn job_read(_recorder: &Recorder, _read: &Result<JobOutput, Error>) {}
    pub(super) fn terminal(_recorder: &Recorder, _answer: &Result<TerminalAnswer, Error>) {}
    pub(super) fn asked(_recorder: &Recorder, _verdict: &Verdict, _approval: Approval) {}
}

#[cfg(feature = "otel")]
mod on {
    use std::collections::{HashMap, HashSet};
    use std::pin::Pin;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Mutex, MutexGuard, OnceLock};
    use std::time::{Duration, Instant, SystemTime};

    use agent_bash_core::sandbox::SandboxMode;
    use agent_bash_core::{Config, JobInfo, JobStatus, StreamStats, TerminalState, render};
    use http_body_util::{BodyExt as _, Full, Limited};
    use hyper_util::rt::TokioIo;
    use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _, UpDownCounter};
    use opentelemetry::propagation::{Extractor, TextMapPropagator as _};
    use opentelemetry::trace::{Span as _, SpanContext, SpanKind, Status};
    use opentelemetry::trace::{TraceContextExt as _, Tracer as _, TracerProvider as _};
    use opentelemetry::{Context, InstrumentationScope, KeyValue};
    use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
    use opentelemetry_otlp::WithHttpConfig as _;
    use opentelemetry_sdk::Resource;
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
    use opentelemetry_sdk::propagation::TraceContextPropagator;
    use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracer, SdkTracerProvider};
    use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter};
    use serde_json::Value;
    use sha2::{Digest as _, Sha256};

    use super::*;
    use crate::tools;

    /// How often the job list of a session with open job spans is read.
    const JOB_WATCH: Duration = Duration::from_secs(1);
    /// The longest the server's exit waits for the last spans and metrics to be sent.
    const FLUSH_BOUND: Duration = Duration::from_secs(1);
    /// A collector's answer longer than this is an error (it is read and dropped).
    const ANSWER_MAX_BYTES: usize = 64 * 1024;
    /// `OTEL_EXPORTER_OTLP_TIMEOUT`'s default: the longest one request to the collector takes.
    const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
    /// Hex digits of the command's SHA-256 kept in `agent_bash.command.hash`.
    const HASH_HEX_DIGITS: usize = 16;

    // The attributes, named once (docs/telemetry.md lists them).
    const TOOL: &str = "gen_ai.tool.name";
    const OUTCOME: &str = "agent_bash.outcome";
    const DECISION: &str = "agent_bash.decision";
    const RULE: &str = "agent_bash.decision.rule";
    const APPROVAL: &str = "agent_bash.approval";
    const ASK_RESOLVED: &str = "agent_bash.ask.resolved";
    const COMMAND_HASH: &str = "agent_bash.command.hash";
    const COMMAND: &str = "agent_bash.command";
    const SANDBOX_MODE: &str = "agent_bash.sandbox.mode";
    const SANDBOX_NETWORK: &str = "agent_bash.sandbox.network";
    const TARGET: &str = "agent_bash.target";
    const EXIT_CODE: &str = "process.exit.code";
    const SIGNAL: &str = "agent_bash.signal";
    const TIMED_OUT: &str = "agent_bash.timed_out";
    const CANCELLED: &str = "agent_bash.cancelled";
    const DURATION_MS: &str = "agent_bash.duration_ms";
    const TIMEOUT_SECS: &str = "agent_bash.timeout_secs";
    const LEFT_RUNNING: &str = "agent_bash.left_running";
    const JOB_ID: &str = "agent_bash.job.id";
    const JOB_ORIGIN: &str = "agent_bash.job.origin";
    const JOB_STATUS: &str = "agent_bash.job.status";
    const JOB_RUNTIME_MS: &str = "agent_bash.job.runtime_ms";
    const TERMINAL_ID: &str = "agent_bash.terminal.id";
    const TERMINAL_STATE: &str = "agent_bash.terminal.state";
    const PATTERN_MATCHED: &str = "agent_bash.pattern_matched";
    const IS_ERROR: &str = "agent_bash.is_error";

    /// The attribute names of one stream's counts.
    struct StreamKeys {
        name: &'static str,
        bytes: &'static str,
        lines: &'static str,
        bytes_returned: &'static str,
        lines_returned: &'static str,
        spilled: &'static str,
    }

    const STDOUT: StreamKeys = StreamKeys {
        name: "stdout",
        bytes: "agent_bash.stdout.bytes",
        lines: "agent_bash.stdout.lines",
        bytes_returned: "agent_bash.stdout.bytes_returned",
        lines_returned: "agent_bash.stdout.lines_returned",
        spilled: "agent_bash.stdout.spilled",
    };
    const STDERR: StreamKeys = StreamKeys {
        name: "stderr",
        bytes: "agent_bash.stderr.bytes",
        lines: "agent_bash.stderr.lines",
        bytes_returned: "agent_bash.stderr.bytes_returned",
        lines_returned: "agent_bash.stderr.lines_returned",
        spilled: "agent_bash.stderr.spilled",
    };
    const SCROLLBACK: StreamKeys = StreamKeys {
        name: "scrollback",
        bytes: "agent_bash.scrollback.bytes",
        lines: "agent_bash.scrollback.lines",
        bytes_returned: "agent_bash.scrollback.bytes_returned",
        lines_returned: "agent_bash.scrollback.lines_returned",
        spilled: "agent_bash.scrollback.spilled",
    };

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

    /// The exporters, kept to flush them at exit.
    pub struct Telemetry {
        tracer_provider: SdkTracerProvider,
        meter_provider: SdkMeterProvider,
        spans: Arc<SpanCounts>,
    }

    impl Telemetry {
        /// Starts exporting when `config` says `telemetry.export = "otlp"`, to where the
        /// `OTEL_EXPORTER_OTLP_*` variables say; requests are made on `runtime`. `None` when
        /// off, or when export cannot start (said in the log).
        pub fn start(config: &Config, runtime: &tokio::runtime::Handle) -> Option<Telemetry> {
            if !config.telemetry.export.is_otlp() {
                return None;
            }
            if variable("OTEL_SDK_DISABLED").is_some_and(|value| value.eq_ignore_ascii_case("true"))
            {
                tracing::info!("telemetry: OTEL_SDK_DISABLED=true, nothing is exported");
                return None;
            }
            let grpc = ["", "TRACES_", "METRICS_"].iter().any(|signal| {
                variable(&format!("OTEL_EXPORTER_OTLP_{signal}PROTOCOL"))
                    .is_some_and(|protocol| protocol.eq_ignore_ascii_case("grpc"))
            });
            if grpc {
                tracing::warn!(
                    "telemetry: OTEL_EXPORTER_OTLP_PROTOCOL is grpc, which this build does not \
                     speak; nothing is exported: use http/protobuf (port 4318)"
                );
                return None;
            }
            let traces = endpoint("TRACES", "v1/traces");
            let metrics = endpoint("METRICS", "v1/metrics");
            for endpoint in [&traces, &metrics] {
                if !endpoint.to_ascii_lowercase().starts_with("http://") {
                    tracing::warn!(
                        %endpoint,
                        "telemetry: this build sends plain http:// only (no TLS); nothing is \
                         exported: point OTEL_EXPORTER_OTLP_ENDPOINT at a local collector"
                    );
                    return None;
                }
            }
            match start(config, runtime) {
                Ok(telemetry) => {
                    tracing::info!(%traces, %metrics, "telemetry: exporting over OTLP/HTTP");
                    Some(telemetry)
                }
                Err(err) => {
                    tracing::warn!("telemetry: cannot export: {err}");
                    None
                }
            }
        }

        /// Ends the spans of the jobs still open (the server has stopped them, so their ends
        /// are known), then sends what is left, waiting at most `FLUSH_BOUND`, and logs how
        /// many spans were ended, exported, failed and lost (dropped from a full queue, or not
        /// sent in time).
        pub fn shutdown(self) {
            if let Some(exporting) = EXPORTING.get() {
                exporting.watch_jobs(true);
                exporting.forget_terminals();
            }
            let (done, finished) = std::sync::mpsc::channel();
            let tracer_provider = self.tracer_provider;
            let meter_provider = self.meter_provider;
            let flushes: [Box<dyn FnOnce() -> OTelSdkResult + Send>; 2] = [
                Box::new(move || tracer_provider.shutdown_with_timeout(FLUSH_BOUND)),
                Box::new(move || meter_provider.shutdown_with_timeout(FLUSH_BOUND)),
            ];
            for flush in flushes {
                let done = done.clone();
                let spawned = std::thread::Builder::new()
                    .name("telemetry-flush".into())
                    .spawn(move || {
                        let _ = done.send(flush());
                    });
                if let Err(err) = spawned {
                    tracing::warn!(%err, "telemetry: cannot flush");
                }
            }
            drop(done);
            let deadline = Instant::now() + FLUSH_BOUND;
            while let Some(left) = deadline.checked_duration_since(Instant::now()) {
                match finished.recv_timeout(left) {
                    Ok(Ok(())) => {}
                    Ok(Err(err)) => tracing::warn!(%err, "telemetry: flush at exit"),
                    Err(_) => break,
                }
            }
            let ended = self.spans.ended.load(Ordering::Relaxed);
            let exported = self.spans.exported.load(Ordering::Relaxed);
            let failed = self.spans.failed.load(Ordering::Relaxed);
            let lost = ended.saturating_sub(exported + failed);
            if failed > 0 || lost > 0 {
                tracing::warn!(ended, exported, failed, lost, "telemetry: spans at exit");
            } else {
                tracing::info!(ended, exported, failed, lost, "telemetry: spans at exit");
            }
        }
    }

    /// The exporters, the providers and the instruments; the job watch on `runtime`.
    fn start(config: &Config, runtime: &tokio::runtime::Handle) -> Result<Telemetry, String> {
        let client = || Client {
            runtime: runtime.clone(),
            timeout: variable("OTEL_EXPORTER_OTLP_TIMEOUT")
                .and_then(|ms| ms.parse().ok())
                .map_or(REQUEST_TIMEOUT, Duration::from_millis),
        };
        let span_exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client())
            .build()
            .map_err(|err| err.to_string())?;
        let metric_exporter = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_http_client(client())
            .build()
            .map_err(|err| err.to_string())?;
        let spans = Arc::new(SpanCounts::default());
        let counted = Counted {
            inner: span_exporter,
            spans: spans.clone(),
        };
        // The batch processor's queue, delay and batch size follow the `OTEL_BSP_*` variables;
        // its thread sends, and a full queue drops.
        let tracer_provider = SdkTracerProvider::builder()
            .with_span_processor(BatchSpanProcessor::builder(counted).build())
            .with_resource(resource())
            .build();
        // Every `OTEL_METRIC_EXPORT_INTERVAL` (60 s), and at exit.
        let meter_provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metric_exporter).build())
            .with_resource(resource())
            .build();
        let scope = InstrumentationScope::builder("agent-bash")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        let tracer = tracer_provider.tracer_with_scope(scope.clone());
        let meter = meter_provider.meter_with_scope(scope);
        let exporting = Exporting {
            tracer,
            command_text: config.telemetry.command_text,
            calls: meter
                .u64_counter("agent_bash.calls")
                .with_description("Tool calls, by tool, outcome and the policy's decision")
                .with_unit("{call}")
                .build(),
            duration: meter
                .f64_histogram("agent_bash.call.duration")
                .with_description("How long tool calls took, by tool and outcome")
                .with_unit("s")
                .with_boundaries(vec![
                    0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
                    30.0, 60.0, 120.0, 300.0, 600.0,
                ])
                .build(),
            bytes: meter
                .u64_counter("agent_bash.output.bytes")
                .with_description(
                    "Bytes of output the server read (seen) and put in results (returned), by \
                     tool and stream",
                )
                .with_unit("By")
                .build(),
            jobs_running: meter
                .i64_up_down_counter("agent_bash.jobs.running")
                .with_description("Background jobs running")
                .with_unit("{job}")
                .build(),
            terminals_open: meter
                .i64_up_down_counter("agent_bash.terminals.open")
                .with_description("Terminal sessions open")
                .with_unit("{terminal}")
                .build(),
            jobs: Mutex::default(),
            terminals: Mutex::default(),
            spans: spans.clone(),
        };
        EXPORTING
            .set(exporting)
            .map_err(|_| "telemetry was started already".to_string())?;
        runtime.spawn(async {
            let mut tick = tokio::time::interval(JOB_WATCH);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                tick.tick().await;
                if let Some(exporting) = EXPORTING.get() {
                    exporting.watch_jobs(false);
                }
            }
        });
        Ok(Telemetry {
            tracer_provider,
            meter_provider,
            spans,
        })
    }

    /// `service.name` is `agent-bash` unless `OTEL_SERVICE_NAME` (or `OTEL_RESOURCE_ATTRIBUTES`)
    /// names another; those variables' other attributes are kept.
    fn resource() -> Resource {
        let named = variable("OTEL_SERVICE_NAME").is_some()
            || variable("OTEL_RESOURCE_ATTRIBUTES")
                .is_some_and(|value| value.contains("service.name="));
        let resource = Resource::builder()
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
        if named {
            resource.build()
        } else {
            resource.with_service_name("agent-bash").build()
        }
    }

    /// The endpoint of a signal, as the exporter works it out (for the log and the scheme
    /// check): `OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT` as is, else `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// and the signal's path, else the collector's default on this host.
    fn endpoint(signal: &str, path: &str) -> String {
        if let Some(endpoint) = variable(&format!("OTEL_EXPORTER_OTLP_{signal}_ENDPOINT")) {
            return endpoint;
        }
        let base = variable("OTEL_EXPORTER_OTLP_ENDPOINT")
            .unwrap_or_else(|| "http://localhost:4318".to_string());
        format!("{}/{path}", base.trim_end_matches('/'))
    }

    /// A variable's value, unless it is unset or empty.
    fn variable(name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|value| !value.is_empty())
    }

    pub(super) fn begin(
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
            let network = config.sandbox.network
                && argument("network").and_then(Value::as_bool) != Some(false);
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
        pub(super) fn recorder(&self) -> Recorder {
            Recorder(Some(self.record.clone()))
        }
    }

    pub(super) fn end(mut span: CallSpan, result: &CallToolResult) {
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

    impl Exporting {
        /// Counts a span ended here (one the sampler dropped is never exported).
        fn ended(&self, span: &SpanContext) {
            if span.is_sampled() {
                self.spans.ended.fetch_add(1, Ordering::Relaxed);
            }
        }

        /// Starts the span of a job, a child of the call that started it, at the command's
        /// start.
        fn open_job(
            &self,
            call: SpanContext,
            job: &JobInfo,
            session: &Arc<Session>,
            command_hash: Option<String>,
        ) {
            let started = SystemTime::now()
                .checked_sub(Duration::from_millis(job.runtime_ms))
                .unwrap_or_else(SystemTime::now);
            let mut attributes = vec![
                KeyValue::new(JOB_ID, int(job.job_id)),
                KeyValue::new(JOB_ORIGIN, wire_name(&job.origin)),
            ];
            if let Some(hash) = command_hash {
                attributes.push(KeyValue::new(COMMAND_HASH, hash));
            }
            if self.command_text {
                attributes.push(KeyValue::new(COMMAND, job.command.clone()));
            }
            let span = self
                .tracer
                .span_builder("bash job")
                .with_kind(SpanKind::Internal)
                .with_start_time(started)
                .with_attributes(attributes)
                .start_with_context(&self.tracer, &Context::new().with_remote_span_context(call));
            self.jobs_running.add(1, &[]);
            let open = OpenJob {
                span,
                session: session.clone(),
                started,
            };
            lock(&self.jobs).insert((key(session), job.job_id), open);
        }

        /// Ends the spans of the jobs that ended (all of them `at_exit`), from their sessions'
        /// job lists.
        fn watch_jobs(&self, at_exit: bool) {
            let mut jobs = lock(&self.jobs);
            if jobs.is_empty() {
                return;
            }
            let mut lists = HashMap::new();
            jobs.retain(|(session, job_id), open| {
                let list = lists.entry(*session).or_insert_with(|| open.session.jobs());
                let info = list.jobs.iter().find(|job| job.job_id == *job_id);
                if info.is_some_and(|job| job.status == JobStatus::Running) && !at_exit {
                    return true;
                }
                self.end_job(open, info);
                false
            });
        }

        /// Ends a job's span at the job's end, with how it ended; now, when the job is gone
        /// from the list (evicted) or still running at exit.
        fn end_job(&self, open: &mut OpenJob, info: Option<&JobInfo>) {
            let ended = match info {
                Some(job) => {
                    let mut attributes = vec![
                        KeyValue::new(JOB_STATUS, wire_name(&job.status)),
                        KeyValue::new(JOB_RUNTIME_MS, int(job.runtime_ms)),
                        KeyValue::new(TIMED_OUT, job.timed_out),
                        KeyValue::new(STDOUT.bytes, int(job.stdout_bytes)),
                        KeyValue::new(STDERR.bytes, int(job.stderr_bytes)),
                    ];
                    if let Some(code) = job.exit_code {
                        attributes.push(KeyValue::new(EXIT_CODE, i64::from(code)));
                    }
                    if let Some(signal) = &job.signal {
                        attributes.push(KeyValue::new(SIGNAL, signal.clone()));
                    }
                    open.span.set_attributes(attributes);
                    if job.status == JobStatus::Running {
                        SystemTime::now()
                    } else {
                        open.started + Duration::from_millis(job.runtime_ms)
                    }
                }
                None => {
                    open.span
                        .set_attribute(KeyValue::new(JOB_STATUS, "unknown"));
                    SystemTime::now()
                }
            };
            open.span.end_with_timestamp(ended);
            self.ended(open.span.span_context());
            self.jobs_running.add(-1, &[]);
        }

        /// At exit: the server closed every terminal.
        fn forget_terminals(&self) {
            let mut open = lock(&self.terminals);
            self.terminals_open.add(-int(open.len() as u64), &[]);
            open.clear();
        }

        /// Counts a stream's bytes, read and put in the result.
        fn count_bytes(&self, tool: &str, stream: &StreamKeys, stats: &StreamStats, shown: &str) {
            for (part, bytes) in [
                ("seen", stats.total_bytes),
                ("returned", shown.len() as u64),
            ] {
                if bytes > 0 {
                    let labels = [
                        KeyValue::new(TOOL, tool.to_string()),
                        KeyValue::new("agent_bash.stream", stream.name),
                        KeyValue::new("agent_bash.part", part),
                    ];
                    self.bytes.add(bytes, &labels);
                }
            }
        }
    }

    /// Runs `write` on the call's record, if it has one.
    fn recording(recorder: &Recorder, write: impl FnOnce(&mut Record, &Exporting)) {
        if let (Recorder(Some(record)), Some(exporting)) = (recorder, EXPORTING.get()) {
            write(&mut lock(record), exporting);
        }
    }

    pub(super) fn asked(recorder: &Recorder, verdict: &Verdict, approval: Approval) {
        recording(recorder, |record, _| {
            record.asked = Some((verdict.rule.clone(), approval));
        });
    }

    pub(super) fn outcome(recorder: &Recorder, outcome: &Outcome) {
        recording(recorder, |record, exporting| {
            let asked = record.asked.take();
            let approval = asked.as_ref().map(|(_, approval)| *approval);
            let (decision, rule) = match (&outcome.refused, asked) {
                (Some(refusal), _) => (
                    render::decision_name(refusal.decision),
                    refusal.rule.clone(),
                ),
                (None, Some((rule, _))) => ("ask", rule),
                (None, None) => {
                    let resolved = outcome.notes.iter().any(|note| {
                        matches!(
                            note,
                            agent_bash_core::Note::RanConfined { .. }
                                | agent_bash_core::Note::BoundedBySandbox { .. }
                        )
                    });
                    (if resolved { "ask" } else { "allow" }, None)
                }
            };
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
                    agent_bash_core::Note::RanConfined { .. } => {
                        attributes.push(KeyValue::new(ASK_RESOLVED, "confined"));
                    }
                    agent_bash_core::Note::BoundedBySandbox { .. } => {
                        attributes.push(KeyValue::new(ASK_RESOLVED, "bounded_by_sandbox"));
                    }
                    _ => {}
                }
            }
            if outcome.refused.is_none() {
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
                exporting.count_bytes(
                    &record.tool,
                    &STDOUT,
                    &outcome.stdout_stats,
                    &outcome.stdout,
                );
                exporting.count_bytes(
                    &record.tool,
                    &STDERR,
                    &outcome.stderr_stats,
                    &outcome.stderr,
                );
            }
            if let Some(job_id) = outcome.job_id {
                attributes.push(KeyValue::new(JOB_ID, int(job_id)));
            }
            let started_as_job =
                outcome.job_id.is_some() && outcome.exit_code.is_none() && outcome.signal.is_none();
            record.outcome = Some(if outcome.refused.is_some() {
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
            });
            record.decision = Some(decision);
            record.job.clone_from(&outcome.job);
        });
    }

    pub(super) fn job_read(recorder: &Recorder, read: &Result<JobOutput, Error>) {
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

    pub(super) fn terminal(recorder: &Recorder, answer: &Result<TerminalAnswer, Error>) {
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
            let ended =
                answer.state == TerminalState::Exited || record.tool == tools::TERMINAL_CLOSE;
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

    /// The first `HASH_HEX_DIGITS` hex digits of the command's SHA-256: the same command has
    /// the same hash (a short or common command can be guessed from it).
    fn hash(command: &str) -> String {
        let digest = Sha256::digest(command.as_bytes());
        let mut hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
        hex.truncate(HASH_HEX_DIGITS);
        hex
    }

    fn approval_name(approval: Approval) -> &'static str {
        match approval {
            Approval::NotAsked => "not_asked",
            Approval::Approved => "approved",
            Approval::Declined => "declined",
            Approval::Deferred => "deferred",
        }
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

    /// The span exporter, counting what it sent and what failed.
    #[derive(Debug)]
    struct Counted<E> {
        inner: E,
        spans: Arc<SpanCounts>,
    }

    impl<E: SpanExporter> SpanExporter for Counted<E> {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            let count = batch.len() as u64;
            let sent = self.inner.export(batch).await;
            match &sent {
                Ok(()) => {
                    self.spans.exported.fetch_add(count, Ordering::Relaxed);
                }
                Err(err) => {
                    // Said once at warn (the collector may be down for a while); the total is
                    // in the line at exit.
                    if self.spans.failed.fetch_add(count, Ordering::Relaxed) == 0 {
                        tracing::warn!(%err, spans = count, "telemetry: spans not exported");
                    } else {
                        tracing::debug!(%err, spans = count, "telemetry: spans not exported");
                    }
                }
            }
            sent
        }

        fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
            self.inner.shutdown_with_timeout(timeout)
        }

        fn force_flush(&self) -> OTelSdkResult {
            self.inner.force_flush()
        }

        fn set_resource(&mut self, resource: &Resource) {
            self.inner.set_resource(resource);
        }
    }

    /// OTLP's requests, made with hyper (HTTP/1.1, plain TCP) on the server's runtime: the
    /// exporters' threads are not tokio's, so each request is a task there, awaited from the
    /// thread. (The hyper client of `opentelemetry-http` needs a runtime on the calling thread
    /// and brings HTTP/2; reqwest's would bring a second HTTP stack and its own runtime.)
    #[derive(Debug)]
    struct Client {
        runtime: tokio::runtime::Handle,
        timeout: Duration,
    }

    type Answer = Result<Response<Bytes>, HttpError>;

    impl HttpClient for Client {
        // The trait is declared with `async_trait`; this is its expansion.
        fn send_bytes<'life0, 'async_trait>(
            &'life0 self,
            request: Request<Bytes>,
        ) -> Pin<Box<dyn Future<Output = Answer> + Send + 'async_trait>>
        where
            'life0: 'async_trait,
            Self: 'async_trait,
        {
            let timeout = self.timeout;
            let sending = self
                .runtime
                .spawn(async move { tokio::time::timeout(timeout, send(request)).await });
            Box::pin(async move {
                match sending.await {
                    Ok(Ok(answer)) => answer,
                    Ok(Err(_)) => {
                        Err(format!("no answer from the collector in {timeout:?}").into())
                    }
                    Err(err) => Err(Box::new(err) as HttpError),
                }
            })
        }
    }

    /// One request on a connection of its own (an export every few seconds at most).
    async fn send(request: Request<Bytes>) -> Answer {
        let (mut parts, body) = request.into_parts();
        if !parts
            .uri
            .scheme_str()
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http"))
        {
            return Err(format!("{}: only http:// is supported (no TLS)", parts.uri).into());
        }
        let authority = parts
            .uri
            .authority()
            .ok_or_else(|| format!("{}: no host", parts.uri))?
            .clone();
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let port = authority.port_u16().unwrap_or(80);
        let stream = tokio::net::TcpStream::connect((host, port)).await?;
        stream.set_nodelay(true)?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        let connection = tokio::spawn(connection);
        parts
            .headers
            .entry(http::header::HOST)
            .or_insert(http::HeaderValue::from_str(authority.as_str())?);
        // Origin form (`/v1/traces`), as an HTTP/1.1 client sends to a server.
        let path = parts.uri.path_and_query().map_or("/", |path| path.as_str());
        parts.uri = path.parse()?;
        let answer = sender
            .send_request(Request::from_parts(parts, Full::new(body)))
            .await?;
        let (parts, body) = answer.into_parts();
        let body = Limited::new(body, ANSWER_MAX_BYTES)
            .collect()
            .await?
            .to_bytes();
        drop(sender);
        connection.abort();
        Ok(Response::from_parts(parts, body))
    }
}
