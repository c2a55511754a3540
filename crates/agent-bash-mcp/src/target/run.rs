//! One command on a target, for `agent-bash run --target`: the same connection, policy and
//! answer as a server's `bash` call, without a client.

use agent_bash_core::{Approver, CancellationToken, Outcome, Request, Session};
use rmcp::model::{CallToolRequestParams, ContentBlock};
use serde_json::{Map, Value};

use super::{Caller, Remote};

/// What one command on a target came to.
#[derive(Debug)]
pub enum TargetRun {
    /// The policy refused it here; nothing was sent.
    Refused(Box<Outcome>),
    /// It ran there (or the target refused the call: `failed`).
    Answered {
        /// The model's text, with the line saying where it ran.
        text: String,
        /// The result's fields, led by the text (`agent-bash run --json` prints them).
        structured: Option<Value>,
        /// The command's exit status, when it exited.
        exit_code: Option<i32>,
        /// It was stopped at its timeout.
        timed_out: bool,
        /// The call failed (the target could not be reached, the connection dropped, a
        /// bad argument): `text` says why.
        failed: bool,
    },
}

/// Runs `request` on the target of `session` (its `target` setting), agent-bash there
/// running with `settings` (`Settings::for_target`); the policy decides here first, asking
/// `approver`. The connection is closed before this returns: what the command left running
/// there is stopped with it.
pub async fn run_on_target(
    session: &Session,
    settings: String,
    request: Request,
    approver: &impl Approver,
    cancel: &CancellationToken,
) -> TargetRun {
    if let Some(refused) = session.judge(&request, approver).await {
        return TargetRun::Refused(Box::new(refused));
    }
    let config = session.config();
    let longest = request
        .timeout_secs
        .map_or(config.default_timeout, std::time::Duration::from_secs)
        .min(config.max_timeout)
        + config.kill_grace
        + config.io_drain;
    let mut arguments = Map::new();
    arguments.insert("command".into(), Value::String(request.command));
    if let Some(cwd) = request.cwd {
        arguments.insert("cwd".into(), Value::String(cwd.display().to_string()));
    }
    if let Some(secs) = request.timeout_secs {
        arguments.insert("timeout_secs".into(), Value::from(secs));
    }
    let remote = Remote::new(config, settings);
    let never = CancellationToken::new();
    let caller = Caller {
        peer: None,
        progress: None,
        cancelled: cancel,
        shutdown: &never,
        may_ask: false,
    };
    let call = CallToolRequestParams::new(crate::tools::BASH).with_arguments(arguments);
    let result = remote.call(call, None, longest, &caller).await;
    remote.close().await;
    let text = result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(|text| text.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let field = |name: &str| result.structured_content.as_ref()?.get(name).cloned();
    TargetRun::Answered {
        text,
        structured: result.structured_content.clone(),
        exit_code: field("exit_code")
            .and_then(|code| code.as_i64())
            .and_then(|code| i32::try_from(code).ok()),
        timed_out: field("timed_out").and_then(|t| t.as_bool()) == Some(true),
        failed: result.is_error == Some(true) && result.structured_content.is_none(),
    }
}
