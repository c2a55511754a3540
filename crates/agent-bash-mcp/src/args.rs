//! The `bash` tool's arguments: a JSON object from the model becomes an engine `Request`.
//!
//! Parsed by hand rather than through serde so that every mistake gets a message that says
//! what to fix (the model reads it), and so that a harmless slip (`"timeout_secs": "30"`)
//! still runs.

use agent_bash_core::Request;
use serde_json::{Map, Value};

/// The arguments `bash` accepts; anything else is refused (a typo must not go unnoticed).
pub const BASH_ARGUMENTS: [&str; 4] = ["command", "timeout_secs", "cwd", "description"];

/// A `bash` call as the model asked for it.
#[derive(Debug, PartialEq)]
pub struct BashCall {
    pub request: Request,
    /// What the model said the command is for (logged, not run).
    pub description: Option<String>,
}

/// Reads the arguments of a `bash` call.
///
/// # Errors
/// A message for the model naming the argument and what it should be.
pub fn bash(arguments: Option<&Map<String, Value>>) -> Result<BashCall, String> {
    let empty = Map::new();
    let arguments = arguments.unwrap_or(&empty);
    if let Some(unknown) = arguments
        .keys()
        .find(|key| !BASH_ARGUMENTS.contains(&key.as_str()))
    {
        return Err(format!(
            "unknown argument `{unknown}`; `bash` takes {}",
            BASH_ARGUMENTS.map(|name| format!("`{name}`")).join(", ")
        ));
    }
    let command = match arguments.get("command") {
        Some(Value::String(command)) => command.clone(),
        None | Some(Value::Null) => {
            return Err("missing argument `command`: give the shell code to run".into());
        }
        Some(other) => {
            return Err(format!(
                "`command` must be a string of shell code, not {}",
                kind(other)
            ));
        }
    };
    let cwd = optional_string(arguments, "cwd")?.map(Into::into);
    let description = optional_string(arguments, "description")?;
    let timeout_secs = match arguments.get("timeout_secs") {
        None | Some(Value::Null) => None,
        Some(value) => Some(timeout_secs(value)?),
    };
    Ok(BashCall {
        request: Request {
            command,
            cwd,
            timeout_secs,
        },
        description,
    })
}

fn optional_string(arguments: &Map<String, Value>, name: &str) -> Result<Option<String>, String> {
    match arguments.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(format!("`{name}` must be a string, not {}", kind(other))),
    }
}

/// A whole number of seconds, at least 1. A number in a string is accepted.
fn timeout_secs(value: &Value) -> Result<u64, String> {
    let number = match value {
        Value::Number(number) => number.as_f64(),
        Value::String(text) => text.trim().parse::<f64>().ok(),
        _ => None,
    };
    match number {
        Some(secs) if secs >= 1.0 && secs.fract() == 0.0 && secs <= u64::MAX as f64 => {
            // Exact: a whole number in range.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            Ok(secs as u64)
        }
        Some(secs) if secs > 0.0 && secs < 1.0 => Err(format!(
            "`timeout_secs` must be at least 1 (got {secs}); omit it for the default"
        )),
        Some(secs) if secs > 1.0 && secs.fract() != 0.0 => Err(format!(
            "`timeout_secs` must be a whole number of seconds (got {secs})"
        )),
        _ => Err(format!(
            "`timeout_secs` must be a whole number of seconds, at least 1 (got {value}); \
             omit it for the default"
        )),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(arguments: Value) -> Result<BashCall, String> {
        bash(arguments.as_object())
    }

    fn check_ok(arguments: Value, command: &str, timeout: Option<u64>, cwd: Option<&str>) {
        let call = parse(arguments).unwrap_or_else(|err| panic!("refused: {err}"));
        assert_eq!(call.request.command, command);
        assert_eq!(call.request.timeout_secs, timeout);
        assert_eq!(call.request.cwd, cwd.map(Into::into));
    }

    fn check_err(arguments: Value, expected: &str) {
        match parse(arguments.clone()) {
            Ok(call) => panic!("{arguments} was accepted as {call:?}"),
            Err(err) => assert!(err.contains(expected), "{arguments}: {err:?}"),
        }
    }

    #[test]
    fn accepts_the_documented_arguments() {
        check_ok(json!({"command": "ls"}), "ls", None, None);
        check_ok(
            json!({"command": "ls", "timeout_secs": 5, "cwd": "src", "description": "list"}),
            "ls",
            Some(5),
            Some("src"),
        );
        check_ok(
            json!({"command": "ls", "timeout_secs": "30"}),
            "ls",
            Some(30),
            None,
        );
        check_ok(
            json!({"command": "ls", "timeout_secs": 7.0}),
            "ls",
            Some(7),
            None,
        );
        check_ok(json!({"command": "ls", "cwd": null}), "ls", None, None);
        let call = parse(json!({"command": "x", "description": "why"}));
        assert_eq!(call.map(|c| c.description), Ok(Some("why".to_string())));
    }

    #[test]
    fn refuses_with_a_message_that_says_what_to_fix() {
        check_err(json!({}), "missing argument `command`");
        check_err(json!({"command": null}), "missing argument `command`");
        check_err(
            json!({"command": 5}),
            "`command` must be a string of shell code, not a number",
        );
        check_err(json!({"command": ["ls"]}), "not an array");
        check_err(
            json!({"command": "ls", "timeout_secs": 0}),
            "`timeout_secs`",
        );
        check_err(json!({"command": "ls", "timeout_secs": -5}), "at least 1");
        check_err(json!({"command": "ls", "timeout_secs": 0.5}), "at least 1");
        check_err(
            json!({"command": "ls", "timeout_secs": 2.5}),
            "whole number",
        );
        check_err(
            json!({"command": "ls", "timeout_secs": "soon"}),
            "`timeout_secs`",
        );
        check_err(
            json!({"command": "ls", "timeout_secs": true}),
            "`timeout_secs`",
        );
        check_err(json!({"command": "ls", "cwd": 3}), "`cwd` must be a string");
        check_err(
            json!({"command": "ls", "background": true}),
            "unknown argument `background`",
        );
    }
}
