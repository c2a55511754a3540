//! The `bash` tool: its description, written for the model, and its arguments' schema.

use std::path::Path;
use std::sync::Arc;

use agent_bash_core::{Config, OnTimeout, Outcome};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::json;

use super::output_schema::output_schema;
use super::{BASH, object};

/// The `bash` tool, and the schema of its structured results.
pub(super) fn bash_tool(root: &Path, config: &Config) -> (Tool, fn() -> JsonObject) {
    let bash = Tool::new(
        BASH,
        bash_description(root, config),
        Arc::new(bash_input_schema(config)),
    )
    .with_title("Bash")
    .with_annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(true),
    );
    (bash, output_schema::<Outcome>)
}

/// The description of `bash`, written for the model: every word of it is paid for on every
/// request, so it says only what changes how a model should call the tool.
pub(crate) fn bash_description(root: &Path, config: &Config) -> String {
    let budget = config.budget;
    let jobs = config.max_jobs > 0;
    let at_timeout = if jobs && config.on_timeout == OnTimeout::Background {
        "a command still running then goes on as a background job"
    } else {
        "then the whole process tree is killed"
    };
    let mut text = format!(
        "Run a shell command with bash and return its output and exit status.\n\
         Each call is a new `bash -c` in {root} (`cd` and variables do not carry over \
         between calls; use `cwd` or `&&`). stdin is empty and prompts are disabled.\n\
         Timeout {default} s unless `timeout_secs` says otherwise (max {max} s); {at_timeout}.\n\
         Output shows stdout, then stderr, within {kib} KiB and {lines} lines; beyond that the \
         first {head}% and the last lines are kept and the full output is saved to a file whose \
         path is given (read it with grep, sed or tail).",
        root = root.display(),
        default = config.default_timeout.as_secs(),
        max = config.max_timeout.as_secs(),
        kib = budget.bytes / 1024,
        lines = budget.lines,
        head = budget.head_percent,
    );
    if jobs {
        text.push_str(
            "\nFor servers, watchers and long builds set `background: true`: the call returns at \
             once with a job id; `bash_output` reads the job's new output (`pattern` waits for \
             a line such as \"Listening\"), `bash_kill` stops it. Processes a command leaves \
             running become a job too. Jobs end with this session.",
        );
    }
    text
}

/// The JSON schema of `bash`'s arguments (what `args::bash` accepts).
pub(crate) fn bash_input_schema(config: &Config) -> JsonObject {
    let schema = json!({
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "description": "The shell code to run, as `bash -c COMMAND`."
            },
            "timeout_secs": {
                "type": "integer",
                "minimum": 1,
                "description": format!(
                    "Seconds the command may run (default {}, max {}); a background job started with it is stopped at that age.",
                    config.default_timeout.as_secs(),
                    config.max_timeout.as_secs()
                )
            },
            "cwd": {
                "type": "string",
                "description": "Directory to run in, relative to the root or absolute (default: the root)."
            },
            "background": {
                "type": "boolean",
                "description": "Start as a background job and return at once with its id (default false)."
            },
            "description": {
                "type": "string",
                "description": "What the command is for, in a few words."
            },
            "sandbox": {
                "type": "string",
                "enum": ["off", "workspace-write", "read-only"],
                "description": format!(
                    "Kernel sandbox for this call, at least as strict as the session's (`{}`).",
                    config.sandbox.mode.name()
                )
            },
            "network": {
                "type": "boolean",
                "description": "false: no network for this call."
            }
        },
        "required": ["command"],
        "additionalProperties": false
    });
    object(schema)
}
