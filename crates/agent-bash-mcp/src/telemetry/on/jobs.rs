//! What outlives a call: the spans of background jobs (ended when the job list says the job
//! ended), the terminals open, and the counts of bytes read and returned.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use agent_bash_core::{JobInfo, JobStatus, Session, StreamStats};
use opentelemetry::trace::{Span as _, SpanContext, SpanKind, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};

use super::names::*;
use super::{Exporting, OpenJob, int, key, lock, wire_name};

impl Exporting {
    /// Counts a span ended here (one the sampler dropped is never exported).
    pub(super) fn ended(&self, span: &SpanContext) {
        if span.is_sampled() {
            self.spans.ended.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Starts the span of a job, a child of the call that started it, at the command's
    /// start.
    pub(super) fn open_job(
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
    pub(super) fn watch_jobs(&self, at_exit: bool) {
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
    pub(super) fn forget_terminals(&self) {
        let mut open = lock(&self.terminals);
        self.terminals_open.add(-int(open.len() as u64), &[]);
        open.clear();
    }

    /// Counts a stream's bytes, read and put in the result.
    pub(super) fn count_bytes(
        &self,
        tool: &str,
        stream: &StreamKeys,
        stats: &StreamStats,
        shown: &str,
    ) {
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
