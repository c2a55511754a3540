//! The names of the spans' and metrics' attributes, and of each stream's counts.

// The attributes, named once (docs/telemetry.md lists them).
pub(super) const TOOL: &str = "gen_ai.tool.name";
pub(super) const OUTCOME: &str = "agent_bash.outcome";
pub(super) const DECISION: &str = "agent_bash.decision";
pub(super) const RULE: &str = "agent_bash.decision.rule";
pub(super) const APPROVAL: &str = "agent_bash.approval";
pub(super) const ASK_RESOLVED: &str = "agent_bash.ask.resolved";
pub(super) const COMMAND_HASH: &str = "agent_bash.command.hash";
pub(super) const COMMAND: &str = "agent_bash.command";
pub(super) const SANDBOX_MODE: &str = "agent_bash.sandbox.mode";
pub(super) const SANDBOX_NETWORK: &str = "agent_bash.sandbox.network";
pub(super) const TARGET: &str = "agent_bash.target";
pub(super) const EXIT_CODE: &str = "process.exit.code";
pub(super) const SIGNAL: &str = "agent_bash.signal";
pub(super) const TIMED_OUT: &str = "agent_bash.timed_out";
pub(super) const CANCELLED: &str = "agent_bash.cancelled";
pub(super) const DURATION_MS: &str = "agent_bash.duration_ms";
pub(super) const TIMEOUT_SECS: &str = "agent_bash.timeout_secs";
pub(super) const LEFT_RUNNING: &str = "agent_bash.left_running";
pub(super) const JOB_ID: &str = "agent_bash.job.id";
pub(super) const JOB_ORIGIN: &str = "agent_bash.job.origin";
pub(super) const JOB_STATUS: &str = "agent_bash.job.status";
pub(super) const JOB_RUNTIME_MS: &str = "agent_bash.job.runtime_ms";
pub(super) const TERMINAL_ID: &str = "agent_bash.terminal.id";
pub(super) const TERMINAL_STATE: &str = "agent_bash.terminal.state";
pub(super) const PATTERN_MATCHED: &str = "agent_bash.pattern_matched";
pub(super) const IS_ERROR: &str = "agent_bash.is_error";

/// The attribute names of one stream's counts.
pub(super) struct StreamKeys {
    pub(super) name: &'static str,
    pub(super) bytes: &'static str,
    pub(super) lines: &'static str,
    pub(super) bytes_returned: &'static str,
    pub(super) lines_returned: &'static str,
    pub(super) spilled: &'static str,
}

pub(super) const STDOUT: StreamKeys = StreamKeys {
    name: "stdout",
    bytes: "agent_bash.stdout.bytes",
    lines: "agent_bash.stdout.lines",
    bytes_returned: "agent_bash.stdout.bytes_returned",
    lines_returned: "agent_bash.stdout.lines_returned",
    spilled: "agent_bash.stdout.spilled",
};
pub(super) const STDERR: StreamKeys = StreamKeys {
    name: "stderr",
    bytes: "agent_bash.stderr.bytes",
    lines: "agent_bash.stderr.lines",
    bytes_returned: "agent_bash.stderr.bytes_returned",
    lines_returned: "agent_bash.stderr.lines_returned",
    spilled: "agent_bash.stderr.spilled",
};
pub(super) const SCROLLBACK: StreamKeys = StreamKeys {
    name: "scrollback",
    bytes: "agent_bash.scrollback.bytes",
    lines: "agent_bash.scrollback.lines",
    bytes_returned: "agent_bash.scrollback.bytes_returned",
    lines_returned: "agent_bash.scrollback.lines_returned",
    spilled: "agent_bash.scrollback.spilled",
};
