//! The tool definitions: names, the descriptions the model reads, and the JSON schemas, in
//! MCP form and in the function-calling forms of the OpenAI and Anthropic APIs.

use std::path::Path;
use std::sync::Arc;

use agent_bash_core::{Config, JobList, JobOutput, OnTimeout, Outcome};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// The tools' names: part of the contract with every harness.
pub(crate) const BASH: &str = "bash";
pub(crate) const OUTPUT: &str = "bash_output";
pub(crate) const KILL: &str = "bash_kill";
pub(crate) const JOBS: &str = "bash_jobs";

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
            }
        },
        "required": ["command"],
        "additionalProperties": false
    });
    object(schema)
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

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// Every tool this server offers, in MCP form.
pub(crate) fn all(root: &Path, config: &Config) -> Vec<Tool> {
    let bash = Tool::new(
        BASH,
        bash_description(root, config),
        Arc::new(bash_input_schema(config)),
    )
    .with_title("Bash")
    .with_output_schema::<Outcome>()
    .with_annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(true),
    );
    let output = Tool::new(
        OUTPUT,
        "Read a background job's output since the previous read, with its status \
         (running, or how it ended). wait_secs waits for new output or the end; pattern \
         (a regex) waits for a matching line.",
        Arc::new(output_input_schema(config)),
    )
    .with_title("Bash job output")
    .with_output_schema::<JobOutput>()
    .with_annotations(ToolAnnotations::new().read_only(true).open_world(false));
    let kill = Tool::new(
        KILL,
        "Stop a background job: its whole process tree gets the signal (default TERM), then \
         KILL after a grace. Returns its last output and how it ended.",
        Arc::new(kill_input_schema()),
    )
    .with_title("Stop bash job")
    .with_output_schema::<JobOutput>()
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
    .with_output_schema::<JobList>()
    .with_annotations(ToolAnnotations::new().read_only(true).open_world(false));
    vec![bash, output, kill, jobs]
}

/// The shapes in which `agent-bash schema` prints the tool definitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `{"tools": [...]}` as an MCP server lists them (`tools/list`).
    Mcp,
    /// The `tools` array of the OpenAI Chat Completions API (`{"type": "function", ...}`).
    Openai,
    /// The `tools` array of the Anthropic Messages API (`input_schema`).
    Anthropic,
}

/// The tool definitions in `format`, for harnesses that call functions directly. `root` and
/// `config` are those of the session that will run the calls: the descriptions and schemas
/// state its limits.
///
/// ```
/// use std::path::Path;
/// use agent_bash_core::Config;
/// use agent_bash_mcp::{Format, definitions};
///
/// let tools = definitions(Format::Openai, Path::new("/srv/project"), &Config::default());
/// assert_eq!(tools.as_array().map(Vec::len), Some(4));
/// assert_eq!(tools[0]["type"], "function");
/// assert_eq!(tools[0]["function"]["name"], "bash");
///
/// let mcp = definitions(Format::Mcp, Path::new("/srv/project"), &Config::default());
/// assert_eq!(mcp["tools"][3]["name"], "bash_jobs");
/// ```
pub fn definitions(format: Format, root: &Path, config: &Config) -> Value {
    let tools = all(root, config);
    match format {
        Format::Mcp => json!({ "tools": tools }),
        Format::Openai => Value::Array(
            tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": tool.name,
                            "description": tool.description,
                            "parameters": tool.input_schema,
                        }
                    })
                })
                .collect(),
        ),
        Format::Anthropic => Value::Array(
            tools
                .iter()
                .map(|tool| {
                    json!({
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.input_schema,
                    })
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args;

    #[test]
    fn the_input_schema_lists_exactly_the_arguments_the_parser_takes() {
        let schema = bash_input_schema(&Config::default());
        let properties = schema["properties"].as_object().map(|p| {
            let mut names: Vec<&str> = p.keys().map(String::as_str).collect();
            names.sort_unstable();
            names
        });
        let mut accepted = args::BASH_ARGUMENTS.to_vec();
        accepted.sort_unstable();
        assert_eq!(properties, Some(accepted));
        assert_eq!(schema["required"], json!(["command"]));
    }

    #[test]
    fn the_output_schema_describes_every_field_of_the_outcome() {
        let tool = &all(Path::new("/srv/project"), &Config::default())[0];
        let schema = tool
            .output_schema
            .as_ref()
            .map(|s| Value::Object((**s).clone()));
        let schema = schema.unwrap_or_default();
        assert_eq!(schema["type"], "object");
        let outcome = serde_json::to_value(Outcome::default()).unwrap_or_default();
        let fields = outcome.as_object().map(|o| o.len()).unwrap_or_default();
        assert!(fields > 10, "{outcome}");
        for field in outcome.as_object().into_iter().flat_map(|o| o.keys()) {
            assert!(
                schema["properties"].get(field).is_some(),
                "{field} is missing from {schema}"
            );
        }
    }

    #[test]
    fn the_description_names_the_root_and_the_defaults() {
        let text = bash_description(Path::new("/srv/project"), &Config::default());
        for expected in [
            "/srv/project",
            "120 s",
            "3600 s",
            "50 KiB",
            "2000 lines",
            "25%",
        ] {
            assert!(text.contains(expected), "{expected} not in {text}");
        }
        assert!(text.len() < 1300, "{} bytes", text.len());
        assert!(text.contains("goes on as a background job"), "{text}");
        assert!(text.contains("`bash_output`"), "{text}");
        let kill = Config {
            on_timeout: OnTimeout::Kill,
            ..Config::default()
        };
        let text = bash_description(Path::new("/srv/project"), &kill);
        assert!(
            text.contains("then the whole process tree is killed"),
            "{text}"
        );
        assert!(text.contains("`bash_output`"), "jobs still exist: {text}");
        let no_jobs = Config {
            max_jobs: 0,
            ..Config::default()
        };
        let text = bash_description(Path::new("/srv/project"), &no_jobs);
        assert!(
            text.contains("then the whole process tree is killed"),
            "{text}"
        );
        assert!(!text.contains("background"), "{text}");
    }

    #[test]
    fn each_format_carries_the_same_schema() {
        let root = Path::new("/r");
        let config = Config::default();
        let mcp = definitions(Format::Mcp, root, &config);
        let openai = definitions(Format::Openai, root, &config);
        let anthropic = definitions(Format::Anthropic, root, &config);
        let input = &mcp["tools"][0]["inputSchema"];
        assert_eq!(mcp["tools"][0]["name"], "bash");
        assert!(mcp["tools"][0]["outputSchema"].is_object());
        assert_eq!(&openai[0]["function"]["parameters"], input);
        assert_eq!(openai[0]["type"], "function");
        assert_eq!(&anthropic[0]["input_schema"], input);
        assert_eq!(anthropic[0]["name"], "bash");
    }
}
