//! The job tools (`bash_output`, `bash_kill`, `bash_jobs`): reading, stopping and listing the
//! background jobs `bash` starts.

use std::sync::Arc;

use agent_bash_core::{Config, JobList, JobOutput};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::json;

use super::output_schema::output_schema;
use super::{JOBS, KILL, OUTPUT, object};

/// The three job tools, each with the schema of its structured results.
pub(super) fn job_tools(config: &Config) -> [(Tool, fn() -> JsonObject); 3] {
    let output = Tool::new(
        OUTPUT,
        "Read a background job's output since the previous read, with its status \
         (running, or how it ended). wait_secs waits for new output or the end; pattern \
         (a regex) waits for a matching line.",
        Arc::new(output_input_schema(config)),
    )
    .with_title("Bash job output")
    .with_annotations(ToolAnnotations::new().read_only(true).open_world(false));
    let kill = Tool::new(
        KILL,
        "Stop a background job: its whole process tree gets the signal (default TERM), then \
         KILL after a grace. Returns its last output and how it ended.",
        Arc::new(kill_input_schema()),
    )
    .with_title("Stop bash job")
    .with_annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(true)
            .open_world(false),
    );
    let jobs = Tool::new(
        JOBS,
        "List this session's background jobs: id, status, runtime, output size, command.",
        Arc::new(object(
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )),
    )
    .with_title("Bash jobs")
    .with_annotations(ToolAnnotations::new().read_only(true).open_world(false));
    [
        (output, output_schema::<JobOutput>),
        (kill, output_schema::<JobOutput>),
        (jobs, output_schema::<JobList>),
    ]
}

/// The JSON schema of `bash_output`'s arguments.
pub(crate) fn output_input_schema(config: &Config) -> JsonObject {
    object(json!({
        "type": "object",
        "properties": {
            "job_id": {"type": "integer", "minimum": 1, "description": "The job to read."},
            "wait_secs": {
                "type": "integer",
                "minimum": 0,
                "maximum": config.max_wait.as_secs(),
                "description": format!(
                    "Wait up to this long for new output or the job's end (default 0; {} with pattern).",
                    crate::args::PATTERN_WAIT_SECS
                )
            },
            "pattern": {
                "type": "string",
                "description": "A regex: wait until a new line matches it."
            }
        },
        "required": ["job_id"],
        "additionalProperties": false
    }))
}

/// The JSON schema of `bash_kill`'s arguments.
pub(crate) fn kill_input_schema() -> JsonObject {
    object(json!({
        "type": "object",
        "properties": {
            "job_id": {"type": "integer", "minimum": 1, "description": "The job to stop."},
            "signal": {
                "type": "string",
                "description": "Signal to send first (TERM, INT, HUP, KILL, QUIT, USR1, USR2; default TERM); KILL follows after the grace."
            }
        },
        "required": ["job_id"],
        "additionalProperties": false
    }))
}
