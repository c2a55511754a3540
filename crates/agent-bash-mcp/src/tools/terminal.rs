//! The four terminal tools (`terminal_open`, `terminal_send`, `terminal_view`,
//! `terminal_close`): their descriptions and argument schemas.

use std::sync::Arc;

use agent_bash_core::{Config, TerminalAnswer};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::output_schema::output_schema;
use super::{TERMINAL_CLOSE, TERMINAL_OPEN, TERMINAL_SEND, TERMINAL_VIEW, object};

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
pub(super) fn terminal_tools(config: &Config) -> [(Tool, fn() -> JsonObject); 4] {
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
