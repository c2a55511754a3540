//! The tools' arguments: a JSON object from the model becomes an engine request.
//!
//! Parsed by hand rather than through serde so that every mistake gets a message that says
//! what to fix (the model reads it), and so that a harmless slip (`"timeout_secs": "30"`)
//! still runs.

use agent_bash_core::sandbox::SandboxMode;
use agent_bash_core::{Request, TerminalInput, TerminalOpen, TerminalWait};
use serde_json::{Map, Value};

/// The arguments `bash` accepts; anything else is refused (a typo must not go unnoticed).
pub(crate) const BASH_ARGUMENTS: [&str; 7] = [
    "command",
    "timeout_secs",
    "cwd",
    "background",
    "description",
    "sandbox",
    "network",
];
/// The arguments of `bash_output`.
pub(crate) const OUTPUT_ARGUMENTS: [&str; 3] = ["job_id", "wait_secs", "pattern"];
/// The arguments of `bash_kill`.
pub(crate) const KILL_ARGUMENTS: [&str; 2] = ["job_id", "signal"];

/// A `bash` call as the model asked for it. What the model said the command is for
/// (`description`) travels in the request: to the audit log, the job list and the progress
/// reports.
#[derive(Debug, PartialEq)]
pub(crate) struct BashCall {
    pub request: Request,
}

/// A `bash_output` call.
#[derive(Debug, PartialEq)]
pub(crate) struct OutputCall {
    pub job_id: u64,
    pub wait_secs: u64,
    pub pattern: Option<String>,
}

/// A `bash_kill` call.
#[derive(Debug, PartialEq)]
pub(crate) struct KillCall {
    pub job_id: u64,
    pub signal: Option<String>,
}

/// A pattern without `wait_secs` waits this long for its line.
pub(crate) const PATTERN_WAIT_SECS: u64 = 30;

/// Reads the arguments of a `bash` call.
///
/// # Errors
/// A message for the model naming the argument and what it should be.
pub(crate) fn bash(arguments: Option<&Map<String, Value>>) -> Result<BashCall, String> {
    let args = Args::new("bash", arguments, &BASH_ARGUMENTS)?;
    let command = match args.get("command") {
        Some(Value::String(command)) => command.clone(),
        None => {
            return Err("missing argument `command`: give the shell code to run".into());
        }
        Some(other) => {
            return Err(format!(
                "`command` must be a string of shell code, not {}",
                kind(other)
            ));
        }
    };
    Ok(BashCall {
        request: Request {
            command,
            cwd: args.string("cwd")?.map(Into::into),
            timeout_secs: args.whole("timeout_secs", 1)?,
            background: args.boolean("background")?.unwrap_or(false),
            description: args.string("description")?,
            sandbox: args.sandbox_mode()?,
            network: args.boolean("network")?,
        },
    })
}

/// Reads the arguments of a `bash_output` call.
///
/// # Errors
/// A message for the model naming the argument and what it should be.
pub(crate) fn output(arguments: Option<&Map<String, Value>>) -> Result<OutputCall, String> {
    let args = Args::new("bash_output", arguments, &OUTPUT_ARGUMENTS)?;
    let pattern = args.string("pattern")?;
    let default_wait = if pattern.is_some() {
        PATTERN_WAIT_SECS
    } else {
        0
    };
    Ok(OutputCall {
        job_id: args.job_id()?,
        wait_secs: args.whole("wait_secs", 0)?.unwrap_or(default_wait),
        pattern,
    })
}

/// Reads the arguments of a `bash_kill` call.
///
/// # Errors
/// A message for the model naming the argument and what it should be.
pub(crate) fn kill(arguments: Option<&Map<String, Value>>) -> Result<KillCall, String> {
    let args = Args::new("bash_kill", arguments, &KILL_ARGUMENTS)?;
    Ok(KillCall {
        job_id: args.job_id()?,
        signal: args.string("signal")?,
    })
}

/// Checks that `bash_jobs` got no arguments.
///
/// # Errors
/// A message naming the unexpected argument.
pub(crate) fn jobs(arguments: Option<&Map<String, Value>>) -> Result<(), String> {
    Args::new("bash_jobs", arguments, &[]).map(|_| ())
}

/// The arguments of `terminal_open`.
pub(crate) const TERMINAL_OPEN_ARGUMENTS: [&str; 5] =
    ["command", "cwd", "rows", "cols", "timeout_secs"];
/// The arguments of `terminal_send`.
pub(crate) const TERMINAL_SEND_ARGUMENTS: [&str; 5] =
    ["id", "text", "keys", "wait_secs", "wait_for"];
/// The arguments of `terminal_view`.
pub(crate) const TERMINAL_VIEW_ARGUMENTS: [&str; 3] = ["id", "wait_secs", "wait_for"];
/// The arguments of `terminal_close`.
pub(crate) const TERMINAL_CLOSE_ARGUMENTS: [&str; 1] = ["id"];

/// Reads the arguments of a `terminal_open` call.
///
/// # Errors
/// A message for the model naming the argument and what it should be.
pub(crate) fn terminal_open(
    arguments: Option<&Map<String, Value>>,
) -> Result<TerminalOpen, String> {
    let args = Args::new("terminal_open", arguments, &TERMINAL_OPEN_ARGUMENTS)?;
    Ok(TerminalOpen {
        command: args.string("command")?,
        cwd: args.string("cwd")?.map(Into::into),
        rows: args.whole("rows", 1)?,
        cols: args.whole("cols", 1)?,
        timeout_secs: args.whole("timeout_secs", 1)?,
    })
}

/// Reads the arguments of a `terminal_send` call: the terminal and what to type.
///
/// # Errors
/// A message for the model naming the argument and what it should be.
pub(crate) fn terminal_send(
    arguments: Option<&Map<String, Value>>,
) -> Result<(u64, TerminalInput), String> {
    let args = Args::new("terminal_send", arguments, &TERMINAL_SEND_ARGUMENTS)?;
    let keys = match args.get("keys") {
        None => Vec::new(),
        Some(Value::String(keys)) => keys
            .split([' ', ','])
            .filter(|k| !k.is_empty())
            .map(String::from)
            .collect(),
        Some(Value::Array(keys)) => keys
            .iter()
            .map(|key| match key {
                Value::String(key) => Ok(key.clone()),
                other => Err(format!(
                    "`keys` must hold key names (strings), not {}",
                    kind(other)
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(format!(
                "`keys` must be a list of key names such as [\"Enter\"], not {}",
                kind(other)
            ));
        }
    };
    let text = args.string("text")?;
    if text.as_deref().is_none_or(str::is_empty) && keys.is_empty() {
        return Err(
            "give `text` to type or `keys` to press (terminal_view looks without typing)".into(),
        );
    }
    Ok((
        args.terminal_id()?,
        TerminalInput {
            text,
            keys,
            wait: args.terminal_wait()?,
        },
    ))
}

/// Reads the arguments of a `terminal_view` call.
///
/// # Errors
/// A message for the model naming the argument and what it should be.
pub(crate) fn terminal_view(
    arguments: Option<&Map<String, Value>>,
) -> Result<(u64, TerminalWait), String> {
    let args = Args::new("terminal_view", arguments, &TERMINAL_VIEW_ARGUMENTS)?;
    Ok((args.terminal_id()?, args.terminal_wait()?))
}

/// Reads the arguments of a `terminal_close` call.
///
/// # Errors
/// A message for the model naming the argument and what it should be.
pub(crate) fn terminal_close(arguments: Option<&Map<String, Value>>) -> Result<u64, String> {
    Args::new("terminal_close", arguments, &TERMINAL_CLOSE_ARGUMENTS)?.terminal_id()
}

/// One call's arguments, checked against the names its tool takes.
struct Args<'a> {
    map: Option<&'a Map<String, Value>>,
}

impl<'a> Args<'a> {
    fn new(
        tool: &str,
        map: Option<&'a Map<String, Value>>,
        known: &[&str],
    ) -> Result<Args<'a>, String> {
        if let Some(unknown) = map
            .into_iter()
            .flat_map(Map::keys)
            .find(|key| !known.contains(&key.as_str()))
        {
            let takes = if known.is_empty() {
                "no arguments".to_string()
            } else {
                known
                    .iter()
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(format!(
                "unknown argument `{unknown}`; `{tool}` takes {takes}"
            ));
        }
        Ok(Args { map })
    }

    /// The value of `name`; `null` counts as absent.
    fn get(&self, name: &str) -> Option<&'a Value> {
        self.map?.get(name).filter(|value| !value.is_null())
    }

    fn string(&self, name: &str) -> Result<Option<String>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(format!("`{name}` must be a string, not {}", kind(other))),
        }
    }

    fn sandbox_mode(&self) -> Result<Option<SandboxMode>, String> {
        let Some(name) = self.string("sandbox")? else {
            return Ok(None);
        };
        SandboxMode::from_name(&name).map(Some).ok_or_else(|| {
            format!("`sandbox` must be `off`, `workspace-write` or `read-only`, not `{name}`")
        })
    }

    fn boolean(&self, name: &str) -> Result<Option<bool>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(value)) => Ok(Some(*value)),
            Some(Value::String(text)) if text == "true" => Ok(Some(true)),
            Some(Value::String(text)) if text == "false" => Ok(Some(false)),
            Some(other) => Err(format!("`{name}` must be true or false, not {other}")),
        }
    }

    /// A whole number, at least `min`. A number in a string is accepted.
    fn whole(&self, name: &str, min: u64) -> Result<Option<u64>, String> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        let number = match value {
            Value::Number(number) => number.as_f64(),
            Value::String(text) => text.trim().parse::<f64>().ok(),
            _ => None,
        };
        #[allow(clippy::cast_precision_loss)]
        let min_f = min as f64;
        match number {
            Some(n) if n >= min_f && n.fract() == 0.0 && n <= u64::MAX as f64 => {
                // Exact: a whole number in range.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Ok(Some(n as u64))
            }
            Some(n) if n < min_f => Err(format!("`{name}` must be at least {min} (got {n})")),
            Some(n) if n.fract() != 0.0 => {
                Err(format!("`{name}` must be a whole number (got {n})"))
            }
            _ => Err(format!(
                "`{name}` must be a whole number, at least {min} (got {value})"
            )),
        }
    }

    fn terminal_id(&self) -> Result<u64, String> {
        self.whole("id", 1)?.ok_or_else(|| {
            "missing argument `id`: the number terminal_open gave the terminal".into()
        })
    }

    fn terminal_wait(&self) -> Result<TerminalWait, String> {
        Ok(TerminalWait {
            wait_secs: self.whole("wait_secs", 0)?,
            wait_for: self.string("wait_for")?,
        })
    }

    fn job_id(&self) -> Result<u64, String> {
        self.whole("job_id", 1)?.ok_or_else(|| {
            "missing argument `job_id`: the number bash gave when the job started (bash_jobs lists them)".into()
        })
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
        let call = parse(arguments).expect("refused");
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
        assert_eq!(
            call.map(|c| c.request.description),
            Ok(Some("why".to_string()))
        );
        let call = parse(json!({"command": "x", "background": true}));
        assert_eq!(call.map(|c| c.request.background), Ok(true));
    }

    #[test]
    fn job_tools_take_a_job_id_and_bounded_options() {
        let output = |v: Value| super::output(v.as_object());
        assert_eq!(
            output(json!({"job_id": 3})),
            Ok(OutputCall {
                job_id: 3,
                wait_secs: 0,
                pattern: None
            })
        );
        assert_eq!(
            output(json!({"job_id": "3", "pattern": "Listening"})),
            Ok(OutputCall {
                job_id: 3,
                wait_secs: PATTERN_WAIT_SECS,
                pattern: Some("Listening".into())
            })
        );
        assert_eq!(
            output(json!({"job_id": 3, "wait_secs": 5})).map(|c| c.wait_secs),
            Ok(5)
        );
        for (arguments, expected) in [
            (json!({}), "missing argument `job_id`"),
            (json!({"job_id": 0}), "`job_id` must be at least 1"),
            (
                json!({"job_id": "three"}),
                "`job_id` must be a whole number",
            ),
            (
                json!({"job_id": 1, "wait_secs": -1}),
                "`wait_secs` must be at least 0",
            ),
            (
                json!({"job_id": 1, "pattern": 5}),
                "`pattern` must be a string",
            ),
            (json!({"job_id": 1, "lines": 5}), "unknown argument `lines`"),
        ] {
            let err = output(arguments.clone()).err().unwrap_or_default();
            assert!(err.contains(expected), "{arguments}: {err:?}");
        }
        let kill = super::kill(json!({"job_id": 2, "signal": "INT"}).as_object());
        assert_eq!(
            kill,
            Ok(KillCall {
                job_id: 2,
                signal: Some("INT".into())
            })
        );
        let jobs = super::jobs(json!({"all": true}).as_object());
        assert!(
            jobs.err()
                .unwrap_or_default()
                .contains("`bash_jobs` takes no arguments")
        );
        assert_eq!(super::jobs(None), Ok(()));
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
            json!({"command": "ls", "in_background": true}),
            "unknown argument `in_background`",
        );
        check_err(
            json!({"command": "ls", "background": "yes"}),
            "`background` must be true or false",
        );
    }
}
