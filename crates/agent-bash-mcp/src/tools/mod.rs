//! The tool definitions: names, the descriptions the model reads, and the JSON schemas, in
//! MCP form and in the function-calling forms of the OpenAI and Anthropic APIs.

use std::path::Path;
use std::sync::Arc;

use agent_bash_core::{Config, JobList, JobOutput, OnTimeout, Outcome, TerminalAnswer};
use rmcp::handler::server::tool::schema_for_output;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use rmcp::schemars::JsonSchema;
use serde_json::{Value, json};

use crate::reply::{LEFT_OUT, TEXT_FIELD};

/// The tools' names: part of the contract with every harness.
pub(crate) const BASH: &str = "bash";
pub(crate) const OUTPUT: &str = "bash_output";
pub(crate) const KILL: &str = "bash_kill";
pub(crate) const JOBS: &str = "bash_jobs";
pub(crate) const TERMINAL_OPEN: &str = "terminal_open";
pub(crate) const TERMINAL_SEND: &str = "terminal_send";
pub(crate) const TERMINAL_VIEW: &str = "terminal_view";
pub(crate) const TERMINAL_CLOSE: &str = "terminal_close";

/// The description of `terminal_open`.
fn terminal_open_description(config: &Config) -> String {
    format!(
        "Open a terminal for a program that needs one and is driven across calls: a REPL \
         (python3, node, psql, gdb), `git rebase -i` or `git add -p`, an installer's questions, \
         less, top. Use `bash` for everything else. Default command: an interactive bash, \
         whose `cd` and variables persist. Returns an id and the first screen. Answers show \
         the screen as text, new scrollback, and the state: `running`, `waiting_for_input` \
         (the program is blocked reading the terminal: type something) or `exited`. At most \
         {max} terminals; one unused for {idle} s is closed.",
        max = config.terminal.max_sessions,
        idle = config.terminal.idle.as_secs(),
    )
}

/// The description of `terminal_send`.
fn terminal_send_description() -> String {
    format!(
        "Type into a terminal: `text` as is (a newline is Enter), then `keys` by name. Then \
         waits until `wait_for` (a regex) matches the screen or new scrollback, the program \
         waits for input or ends, output stops for 1 s, or `wait_secs` passes (default 10, \
         30 with wait_for). Lines typed at a shell prompt are checked by the policy. Key \
         names: {}.",
        agent_bash_core::KEY_NAMES.trim_start_matches("keys are ")
    )
}

/// The JSON schema of `terminal_open`'s arguments.
fn terminal_open_schema(config: &Config) -> JsonObject {
    object(json!({
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "Shell code to run in the terminal (`bash -c`); default: an interactive bash."},
            "cwd": {"type": "string", "description": "Directory to start in, relative to the root or absolute (default: the root)."},
            "rows": {"type": "integer", "minimum": 2, "maximum": 100, "description": "Rows (default 24)."},
            "cols": {"type": "integer", "minimum": 20, "maximum": 300, "description": "Columns (default 80)."},
            "timeout_secs": {
                "type": "integer",
                "minimum": 1,
                "maximum": config.terminal.max_age.as_secs(),
                "description": format!("Close the terminal at this age (default and max {} s).", config.terminal.max_age.as_secs())
            }
        },
        "additionalProperties": false
    }))
}

/// The `wait_secs` and `wait_for` properties of `terminal_send` and `terminal_view`.
fn terminal_wait_properties(config: &Config, default: &str) -> Value {
    json!({
        "wait_secs": {
            "type": "integer",
            "minimum": 0,
            "maximum": config.max_wait.as_secs(),
            "description": format!("Wait at most this long ({default}).")
        },
        "wait_for": {
            "type": "string",
            "description": "A regex: stop waiting when it matches a line of the screen or of new scrollback."
        }
    })
}

/// The JSON schema of `terminal_send`'s arguments.
fn terminal_send_schema(config: &Config) -> JsonObject {
    let mut properties = terminal_wait_properties(config, "default 10 s, 30 s with wait_for");
    properties["id"] = json!({"type": "integer", "minimum": 1, "description": "The terminal."});
    properties["text"] =
        json!({"type": "string", "description": "Text typed as is; a newline is the Enter key."});
    properties["keys"] = json!({
        "type": "array",
        "items": {"type": "string"},
        "description": "Keys pressed after the text, by name, such as [\"Enter\"] or [\"Ctrl-C\"]."
    });
    object(json!({
        "type": "object",
        "properties": properties,
        "required": ["id"],
        "additionalProperties": false
    }))
}

/// The JSON schema of `terminal_view`'s arguments.
fn terminal_view_schema(config: &Config) -> JsonObject {
    let mut properties = terminal_wait_properties(config, "default 0; 30 s with wait_for");
    properties["id"] = json!({"type": "integer", "minimum": 1, "description": "The terminal."});
    object(json!({
        "type": "object",
        "properties": properties,
        "required": ["id"],
        "additionalProperties": false
    }))
}

/// The four terminal tools.
fn terminal_tools(config: &Config) -> [(Tool, fn() -> JsonObject); 4] {
    let open = Tool::new(
        TERMINAL_OPEN,
        terminal_open_description(config),
        Arc::new(terminal_open_schema(config)),
    )
    .with_title("Open terminal")
    .with_annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(true),
    );
    let send = Tool::new(
        TERMINAL_SEND,
        terminal_send_description(),
        Arc::new(terminal_send_schema(config)),
    )
    .with_title("Type into terminal")
    .with_annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(true),
    );
    let view = Tool::new(
        TERMINAL_VIEW,
        "Look at a terminal without typing: its screen, new scrollback and state; wait_secs \
         and wait_for wait as in terminal_send.",
        Arc::new(terminal_view_schema(config)),
    )
    .with_title("View terminal")
    .with_annotations(ToolAnnotations::new().read_only(true).open_world(false));
    let close = Tool::new(
        TERMINAL_CLOSE,
        "Close a terminal: hang-up, then TERM and KILL for its whole process tree. Returns the \
         last screen.",
        Arc::new(object(json!({
            "type": "object",
            "properties": {"id": {"type": "integer", "minimum": 1, "description": "The terminal."}},
            "required": ["id"],
            "additionalProperties": false
        }))),
    )
    .with_title("Close terminal")
    .with_annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(true)
            .open_world(false),
    );
    let schema: fn() -> JsonObject = output_schema::<TerminalAnswer>;
    [
        (open, schema),
        (send, schema),
        (view, schema),
        (close, schema),
    ]
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

/// Every tool this server offers, in MCP form. The output schemas are declared only when
/// results carry structure (`mcp.structured`): a client checks each result against a
/// declared schema and rejects one without `structuredContent`.
pub(crate) fn all(root: &Path, config: &Config) -> Vec<Tool> {
    let structured = config.mcp.structured;
    let with_output = |tool: Tool, schema: fn() -> JsonObject| {
        if structured {
            tool.with_raw_output_schema(Arc::new(schema()))
        } else {
            tool
        }
    };
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
    let mut tools = vec![
        with_output(bash, output_schema::<Outcome>),
        with_output(output, output_schema::<JobOutput>),
        with_output(kill, output_schema::<JobOutput>),
        with_output(jobs, output_schema::<JobList>),
    ];
    if config.terminal.max_sessions > 0 {
        tools.extend(
            terminal_tools(config)
                .into_iter()
                .map(|(tool, schema)| with_output(tool, schema)),
        );
    }
    tools
}

/// The output schema of a tool whose structured result is `T`'s fields led by the model's
/// text (`reply::Shape::Structured`): flat, each top-level field with its JSON type and its
/// doc, and no `$defs`, `$ref` or `$schema`, because clients check every result against it.
/// The official Python client (mcp 2.3.0) checks the schema against its metaschema once and
/// then each result; older ones (mcp 1.x) call `jsonschema.validate`, which does both on every
/// call. Measured with jsonschema 4.26 on `echo hi`'s result (benches/schema_cost.py):
///
/// | schema | bytes | `jsonschema.validate` (mcp 1.x, each call) | per call (mcp 2.3.0) |
/// |---|---|---|---|
/// | before: schemars' draft 2020-12, `$defs` and `$ref`s | 10484 | 48.2 ms | 0.57 ms |
/// | the same as draft-07 | 10569 | 10.1 ms | 0.55 ms |
/// | this one (flat, 2020-12 by default) | 805 | 6.7 ms | 0.10 ms |
/// | this one with `$schema` draft-07 | 857 | 1.7 ms | 0.10 ms |
///
/// Draft-07 would spare mcp 1.x clients 5 ms more, but 2020-12 is the dialect the MCP
/// specification makes the default and every client must support; a `$schema` naming another
/// is optional for clients to accept.
fn output_schema<T: JsonSchema + 'static>() -> JsonObject {
    let full = schema_for_output::<T>();
    let defs = full.get("$defs").and_then(Value::as_object);
    let mut properties = JsonObject::new();
    properties.insert(
        TEXT_FIELD.into(),
        json!({"type": "string", "description": "What the model reads: the output and status in words."}),
    );
    let fields = full.get("properties").and_then(Value::as_object);
    for (name, field) in fields.into_iter().flatten() {
        if LEFT_OUT.contains(&name.as_str()) {
            continue;
        }
        let mut flat = JsonObject::new();
        if let Some(types) = json_types(field, defs) {
            flat.insert("type".into(), types);
        }
        properties.insert(name.clone(), Value::Object(flat));
    }
    let required = full.get("required").and_then(Value::as_array);
    let required: Vec<&str> = std::iter::once(TEXT_FIELD)
        .chain(required.into_iter().flatten().filter_map(Value::as_str))
        .filter(|name| !LEFT_OUT.contains(name))
        .collect();
    object(json!({
        "type": "object",
        "properties": properties,
        "required": required,
    }))
}

/// The JSON types a value of `schema` may have, as `type` writes them (`"object"`,
/// `["integer", "null"]`), through `$ref`s into `defs`, `anyOf` and `oneOf`; `None` when
/// some branch does not say.
fn json_types(schema: &Value, defs: Option<&JsonObject>) -> Option<Value> {
    let mut types = Vec::new();
    collect_types(schema, defs, &mut types, 0)?;
    match types.as_slice() {
        [one] => Some(Value::from(*one)),
        _ => Some(Value::from(types)),
    }
}

fn collect_types<'s>(
    schema: &'s Value,
    defs: Option<&'s JsonObject>,
    types: &mut Vec<&'s str>,
    depth: usize,
) -> Option<()> {
    let mut add = |name: &'s str| {
        if !types.contains(&name) {
            types.push(name);
        }
    };
    match schema.get("type") {
        Some(Value::String(name)) => add(name),
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).for_each(add),
        _ => {
            // A definition that refers to itself would loop; none is this deep.
            if depth > 8 {
                return None;
            }
            if let Some(name) = schema.get("$ref").and_then(Value::as_str) {
                let name = name.strip_prefix("#/$defs/")?;
                return collect_types(defs?.get(name)?, defs, types, depth + 1);
            }
            let branches = schema.get("anyOf").or_else(|| schema.get("oneOf"));
            for branch in branches?.as_array()? {
                collect_types(branch, defs, types, depth + 1)?;
            }
        }
    }
    Some(())
}

/// The shapes in which `agent-bash schema` prints the tool definitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `{"tools": [...]}` as an MCP server lists them (`tools/list`).
    Mcp,
    /// The `tools` array of the OpenAI Chat Completions API (`{"type": "function", ...}`).
    Openai,
    /// The `tools` array of the OpenAI Responses API: function tools with the name, the
    /// description and `parameters` at the top level, and `strict: false` (strict mode asks
    /// for every property to be required, and most of ours are optional).
    OpenaiResponses,
    /// The `tools` array of the Anthropic Messages API (`input_schema`).
    Anthropic,
    /// The `tools` array of the Gemini API: one tool of `functionDeclarations`, whose
    /// `parameters` are in Gemini's `Schema` (a subset of OpenAPI 3.0: upper-case types, no
    /// `additionalProperties`); a tool without arguments has no `parameters`.
    Gemini,
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
/// assert_eq!(tools.as_array().map(Vec::len), Some(8));
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
        Format::OpenaiResponses => Value::Array(
            tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.input_schema,
                        "strict": false,
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
        Format::Gemini => {
            let declarations: Vec<Value> = tools
                .iter()
                .map(|tool| {
                    let mut declaration = json!({
                        "name": tool.name,
                        "description": tool.description,
                    });
                    let input = Value::Object((*tool.input_schema).clone());
                    let has_arguments = input["properties"]
                        .as_object()
                        .is_some_and(|properties| !properties.is_empty());
                    if has_arguments {
                        declaration["parameters"] = gemini_schema(&input);
                    }
                    declaration
                })
                .collect();
            json!([{ "functionDeclarations": declarations }])
        }
    }
}

/// The fields of Gemini's `Schema` object (its API reference); a JSON Schema keyword outside
/// them, such as `additionalProperties` or `$schema`, is refused there, so it is left out.
const GEMINI_SCHEMA_FIELDS: [&str; 20] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "pattern",
    "anyOf",
    "default",
];

/// A JSON Schema in Gemini's `Schema` shape: types in upper case (`["integer", "null"]`
/// becomes `INTEGER` with `nullable`), nested schemas converted alike, other keywords dropped.
fn gemini_schema(schema: &Value) -> Value {
    let Some(fields) = schema.as_object() else {
        return schema.clone();
    };
    let mut converted = serde_json::Map::new();
    for (key, value) in fields {
        if !GEMINI_SCHEMA_FIELDS.contains(&key.as_str()) {
            continue;
        }
        let value = match key.as_str() {
            "type" => {
                let names: Vec<&str> = match value {
                    Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
                    other => other.as_str().into_iter().collect(),
                };
                if names.contains(&"null") {
                    converted.insert("nullable".into(), Value::Bool(true));
                }
                let Some(name) = names.into_iter().find(|name| *name != "null") else {
                    continue;
                };
                Value::String(name.to_ascii_uppercase())
            }
            "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, property)| (name.clone(), gemini_schema(property)))
                    .collect(),
            ),
            "items" => gemini_schema(value),
            "anyOf" => Value::Array(
                value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(gemini_schema)
                    .collect(),
            ),
            _ => value.clone(),
        };
        converted.insert(key.clone(), value);
    }
    Value::Object(converted)
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

    fn structured() -> Config {
        let mut config = Config::default();
        config.mcp.structured = true;
        config
    }

    /// The output schema of each tool, by name.
    fn output_schemas(config: &Config) -> Vec<(String, Option<Value>)> {
        all(Path::new("/srv/project"), config)
            .into_iter()
            .map(|tool| {
                let schema = tool.output_schema.map(|s| Value::Object((*s).clone()));
                (tool.name.to_string(), schema)
            })
            .collect()
    }

    #[test]
    fn output_schemas_are_declared_only_for_structured_results() {
        for (name, schema) in output_schemas(&Config::default()) {
            assert_eq!(schema, None, "{name}");
        }
        for (name, schema) in output_schemas(&structured()) {
            assert!(schema.is_some(), "{name}");
        }
    }

    /// A result of each tool, in the order of `all`, as JSON.
    fn examples() -> Vec<Value> {
        let info = agent_bash_core::JobInfo {
            job_id: 1,
            command: "sleep 9".into(),
            description: Some("wait a while".into()),
            cwd: "/srv/project".into(),
            pid: Some(7),
            origin: agent_bash_core::JobOrigin::Background,
            status: agent_bash_core::JobStatus::Running,
            exit_code: None,
            signal: None,
            runtime_ms: 5,
            timed_out: false,
            stdout_bytes: 0,
            stderr_bytes: 0,
            stdout_path: "/o".into(),
            stderr_path: "/e".into(),
        };
        let job = JobOutput {
            job: info.clone(),
            stdout: String::new(),
            stderr: String::new(),
            stdout_stats: Default::default(),
            stderr_stats: Default::default(),
            pattern: None,
            pattern_matched: None,
            waited_ms: 0,
            notes: Vec::new(),
        };
        [
            serde_json::to_value(Outcome::default()),
            serde_json::to_value(&job),
            serde_json::to_value(&job),
            serde_json::to_value(JobList { jobs: vec![info] }),
        ]
        .into_iter()
        .map(|example| example.unwrap_or_else(|err| panic!("{err}")))
        .collect()
    }

    #[test]
    fn each_output_schema_is_flat_and_describes_every_field_with_its_type() {
        let examples = examples();
        for ((name, schema), example) in output_schemas(&structured()).into_iter().zip(examples) {
            let schema = schema.unwrap_or_default();
            let text = serde_json::to_string(&schema).unwrap_or_default();
            for nested in ["$defs", "$ref", "$schema", "anyOf", "oneOf"] {
                assert!(!text.contains(nested), "{name}: {nested} in {text}");
            }
            assert_eq!(schema["type"], "object");
            assert_eq!(schema["required"][0], TEXT_FIELD, "{name}");
            assert_eq!(schema["properties"][TEXT_FIELD]["type"], "string");
            let properties = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            let fields = example.as_object().cloned().unwrap_or_default();
            assert!(!fields.is_empty(), "{name}");
            for (field, value) in &fields {
                if LEFT_OUT.contains(&field.as_str()) {
                    assert!(properties.get(field).is_none(), "{name}: {field}");
                    continue;
                }
                let types = &properties
                    .get(field)
                    .unwrap_or_else(|| panic!("{name}: {field} is missing from {text}"))["type"];
                let kind = match value {
                    Value::Null => "null",
                    Value::Bool(_) => "boolean",
                    Value::Number(_) => "integer",
                    Value::String(_) => "string",
                    Value::Array(_) => "array",
                    Value::Object(_) => "object",
                };
                let allowed = types == kind
                    || types
                        .as_array()
                        .is_some_and(|t| t.contains(&Value::from(kind)));
                assert!(allowed, "{name}: {field} = {value} is not {types}");
            }
            // Every field but `text` and an optional refusal is one the result has.
            for field in properties.keys() {
                assert!(
                    fields.contains_key(field) || [TEXT_FIELD, "refused"].contains(&field.as_str()),
                    "{name}: {field}"
                );
            }
        }
        let bash = &output_schemas(&structured())[0].1;
        let bash = bash.clone().unwrap_or_default();
        assert_eq!(bash["properties"]["job"]["type"], json!(["object", "null"]));
        assert_eq!(
            bash["properties"]["exit_code"]["type"],
            json!(["integer", "null"])
        );
        assert_eq!(bash["properties"]["notes"]["type"], "array");
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
        assert!(mcp["tools"][0].get("outputSchema").is_none());
        let structured = definitions(Format::Mcp, root, &structured());
        assert!(structured["tools"][0]["outputSchema"].is_object());
        assert_eq!(&openai[0]["function"]["parameters"], input);
        assert_eq!(openai[0]["type"], "function");
        assert_eq!(&anthropic[0]["input_schema"], input);
        assert_eq!(anthropic[0]["name"], "bash");
    }

    fn keys(value: &Value) -> Vec<&str> {
        let mut keys: Vec<&str> = value
            .as_object()
            .map(|object| object.keys().map(String::as_str).collect())
            .unwrap_or_default();
        keys.sort_unstable();
        keys
    }

    /// The Responses API's function tool (its reference, "Function"): `type: "function"`,
    /// `name`, `description`, `parameters` and `strict` at the top level, nothing nested
    /// under `function` as in Chat Completions.
    #[test]
    fn responses_tools_have_the_documented_function_shape() {
        let root = Path::new("/r");
        let mcp = definitions(Format::Mcp, root, &Config::default());
        let responses = definitions(Format::OpenaiResponses, root, &Config::default());
        let tools = responses.as_array().cloned().unwrap_or_default();
        assert_eq!(tools.len(), 8);
        for (tool, listed) in tools
            .iter()
            .zip(mcp["tools"].as_array().into_iter().flatten())
        {
            assert_eq!(
                keys(tool),
                ["description", "name", "parameters", "strict", "type"]
            );
            assert_eq!(tool["type"], "function");
            assert_eq!(tool["name"], listed["name"]);
            assert_eq!(tool["description"], listed["description"]);
            assert_eq!(tool["parameters"], listed["inputSchema"]);
            // Strict mode would need every property required and none is optional here.
            assert_eq!(tool["strict"], false);
        }
    }

    /// A Gemini `Schema`: only its documented fields, upper-case types from its `Type` enum,
    /// `required` naming properties that exist, property names as the reference allows them.
    fn assert_gemini_schema(schema: &Value, at: &str) {
        for key in keys(schema) {
            assert!(
                GEMINI_SCHEMA_FIELDS.contains(&key),
                "{at}: {key} is not a Schema field"
            );
        }
        let types = [
            "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL",
        ];
        let kind = schema["type"].as_str().unwrap_or_default();
        assert!(types.contains(&kind), "{at}: type {kind:?}");
        let properties = schema["properties"].as_object();
        for (name, property) in properties.into_iter().flatten() {
            let first = name.chars().next().unwrap_or('0');
            assert!(first.is_ascii_alphabetic() || first == '_', "{at}.{name}");
            assert!(
                name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            );
            assert_gemini_schema(property, &format!("{at}.{name}"));
        }
        for required in schema["required"].as_array().into_iter().flatten() {
            let name = required.as_str().unwrap_or_default();
            assert!(
                properties.is_some_and(|p| p.contains_key(name)),
                "{at}: {name}"
            );
        }
    }

    /// Gemini's `tools` field (its reference, "Tool" and "FunctionDeclaration"): one tool with
    /// `functionDeclarations`, each a `name` (letters, digits, `_.-:`, at most 64), a
    /// `description` and `parameters` in Gemini's `Schema`, left out for a tool without
    /// arguments. The conversion keeps what each argument is: its type, its description, its
    /// bounds and whether it is required.
    #[test]
    fn gemini_declarations_have_the_documented_shape_and_the_same_arguments() {
        let root = Path::new("/r");
        let mcp = definitions(Format::Mcp, root, &Config::default());
        let gemini = definitions(Format::Gemini, root, &Config::default());
        assert_eq!(gemini.as_array().map(Vec::len), Some(1));
        assert_eq!(keys(&gemini[0]), ["functionDeclarations"]);
        let declarations = gemini[0]["functionDeclarations"].as_array().cloned();
        let declarations = declarations.unwrap_or_default();
        assert_eq!(declarations.len(), 8);
        for (declaration, listed) in declarations
            .iter()
            .zip(mcp["tools"].as_array().into_iter().flatten())
        {
            let name = declaration["name"].as_str().unwrap_or_default();
            assert_eq!(name, listed["name"]);
            assert!(!name.is_empty() && name.len() <= 64);
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.-:".contains(c))
            );
            assert_eq!(declaration["description"], listed["description"]);
            let input = &listed["inputSchema"];
            let Some(parameters) = declaration.get("parameters") else {
                assert_eq!(input["properties"], json!({}), "{name} has arguments");
                assert_eq!(keys(declaration), ["description", "name"]);
                continue;
            };
            assert_eq!(keys(declaration), ["description", "name", "parameters"]);
            assert_gemini_schema(parameters, name);
            assert_eq!(parameters["type"], "OBJECT");
            assert_eq!(parameters["required"], input["required"]);
            assert_eq!(keys(&parameters["properties"]), keys(&input["properties"]));
            for (argument, property) in input["properties"].as_object().into_iter().flatten() {
                let converted = &parameters["properties"][argument];
                let kind = property["type"].as_str().map(str::to_ascii_uppercase);
                assert_eq!(
                    converted["type"].as_str(),
                    kind.as_deref(),
                    "{name}.{argument}"
                );
                for field in ["description", "minimum", "maximum"] {
                    assert_eq!(
                        converted.get(field),
                        property.get(field),
                        "{name}.{argument}"
                    );
                }
            }
        }
    }

    #[test]
    fn gemini_types_take_null_as_nullable_and_drop_unknown_keywords() {
        let schema = json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "code": {"type": ["integer", "null"], "minimum": 0},
                "lines": {"type": "array", "items": {"type": "string"}},
            },
        });
        assert_eq!(
            gemini_schema(&schema),
            json!({
                "type": "OBJECT",
                "properties": {
                    "code": {"type": "INTEGER", "nullable": true, "minimum": 0},
                    "lines": {"type": "ARRAY", "items": {"type": "STRING"}},
                },
            })
        );
    }
}
