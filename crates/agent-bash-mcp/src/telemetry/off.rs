//! Without the `otel` feature: the same hooks as `on`, doing nothing, so `server/` calls
//! them the same way in every build.

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
