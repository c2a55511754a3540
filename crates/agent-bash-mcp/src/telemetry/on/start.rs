//! Starting and stopping: the settings and `OTEL_*` variables that decide whether and where
//! to export, the providers and instruments made at start, and the flush at exit.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_bash_core::Config;
use opentelemetry::metrics::{Meter, MeterProvider as _};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_otlp::WithHttpConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracer, SdkTracerProvider};

use super::export::{Client, Counted};
use super::{EXPORTING, Exporting, SpanCounts};

/// How often the job list of a session with open job spans is read.
const JOB_WATCH: Duration = Duration::from_secs(1);
/// The longest the server's exit waits for the last spans and metrics to be sent.
const FLUSH_BOUND: Duration = Duration::from_secs(1);
/// `OTEL_EXPORTER_OTLP_TIMEOUT`'s default: the longest one request to the collector takes.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

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
        if variable("OTEL_SDK_DISABLED").is_some_and(|value| value.eq_ignore_ascii_case("true")) {
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
    let exporting = Exporting::new(tracer, &meter, config.telemetry.command_text, spans.clone());
    EXPORTING
        .set(exporting)
        .map_err(|_| "telemetry was started already".to_string())?;
    runtime.spawn(watch_jobs());
    Ok(Telemetry {
        tracer_provider,
        meter_provider,
        spans,
    })
}

impl Exporting {
    /// The tracer and the server's instruments (docs/telemetry.md lists them), with nothing
    /// open yet.
    fn new(tracer: SdkTracer, meter: &Meter, command_text: bool, spans: Arc<SpanCounts>) -> Self {
        Exporting {
            tracer,
            command_text,
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
            spans,
        }
    }
}

/// Every `JOB_WATCH`, ends the spans of the jobs that ended; runs as long as the runtime.
async fn watch_jobs() {
    let mut tick = tokio::time::interval(JOB_WATCH);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tick.tick().await;
        if let Some(exporting) = EXPORTING.get() {
            exporting.watch_jobs(false);
        }
    }
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
