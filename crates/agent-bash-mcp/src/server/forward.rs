//! The calls a target serves (`--target`): their arguments are read and the policy decides
//! here, then the call goes to the far side.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ResultType};
use rmcp::service::{RequestContext, RoleServer};

use super::Server;
use crate::ask::{ASK_TIMEOUT, Asker, Asking};
use crate::reply::Shape;
use crate::target::{Caller, Remote};
use crate::{args, reply, tools};

impl Server {
    /// A call served by the session's target. Its arguments are read here first (a
    /// mistake is answered without a round trip), and the policy decides here on the
    /// commands of `bash` and `terminal_open` before anything is sent.
    pub(super) async fn forward(
        &self,
        remote: &Remote,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        asking: &Asking,
    ) -> CallToolResult {
        let (named_id, longest) = match self.checked(&request, asking).await {
            Ok(checked) => checked,
            Err(answer) => return answer,
        };
        let caller = Caller {
            peer: Some(&context.peer),
            progress: context.meta.get_progress_token(),
            cancelled: &context.ct,
            shutdown: &self.shutdown,
            may_ask: request.name == tools::TERMINAL_SEND,
        };
        let mut result = remote.call(request, named_id, longest, &caller).await;
        if self.shape == Shape::Text {
            result.structured_content = None;
        }
        // The far side answered this side's 2025-11-25 client, which drops `resultType`; a
        // 2026-07-28 client here needs it (rmcp strips it again for a 2025-11-25 one).
        result.result_type = Some(ResultType::COMPLETE);
        result
    }

    /// The id a call to forward names, and the longest it may take by its own arguments,
    /// read here. `Err` is the answer to give without a round trip: a mistake in the
    /// arguments, an unknown tool, or the policy's refusal of the command of `bash` or
    /// `terminal_open`.
    async fn checked(
        &self,
        request: &CallToolRequestParams,
        asking: &Asking,
    ) -> Result<(Option<u64>, Duration), CallToolResult> {
        let arguments = request.arguments.as_ref();
        let config = self.session.config();
        let cancel = self.shutdown.child_token();
        let asker = Asker {
            asking,
            cancel: &cancel,
        };
        let secs = Duration::from_secs;
        // The id the call names, and the longest it may take by its own arguments.
        let checked: Result<(Option<u64>, Duration), String> = match request.name.as_ref() {
            tools::BASH => match args::bash(arguments) {
                Ok(call) => {
                    if let Some(refused) = self.session.judge(&call.request, &asker).await {
                        return Err(reply::outcome(&refused, self.shape).await);
                    }
                    let timeout = call
                        .request
                        .timeout_secs
                        .map_or(config.default_timeout, secs)
                        .min(config.max_timeout);
                    Ok((None, timeout + config.kill_grace + config.io_drain))
                }
                Err(message) => Err(message),
            },
            tools::OUTPUT => args::output(arguments)
                .map(|call| (Some(call.job_id), secs(call.wait_secs).min(config.max_wait))),
            tools::KILL => args::kill(arguments).map(|call| (Some(call.job_id), config.kill_grace)),
            tools::JOBS => args::jobs(arguments).map(|()| (None, Duration::ZERO)),
            tools::TERMINAL_OPEN => match args::terminal_open(arguments) {
                Ok(open) => {
                    let command = open.command.unwrap_or_default();
                    let mut request = agent_bash_core::Request::new(command);
                    request.cwd = open.cwd;
                    // Without a command it is an interactive bash, whose lines are checked
                    // as they are typed (on the target: only it knows the prompt).
                    if !request.command.is_empty()
                        && let Some(refused) = self.session.judge(&request, &asker).await
                    {
                        return Err(reply::outcome(&refused, self.shape).await);
                    }
                    Ok((None, config.max_wait))
                }
                Err(message) => Err(message),
            },
            // A line typed at a prompt there may wait for the user's answer first.
            tools::TERMINAL_SEND => args::terminal_send(arguments)
                .map(|(id, _)| (Some(id), config.max_wait + ASK_TIMEOUT)),
            tools::TERMINAL_VIEW => {
                args::terminal_view(arguments).map(|(id, _)| (Some(id), config.max_wait))
            }
            tools::TERMINAL_CLOSE => {
                args::terminal_close(arguments).map(|id| (Some(id), config.kill_grace))
            }
            name => return Err(self.unknown_tool(name)),
        };
        checked.map_err(|message| reply::refusal(&message))
    }
}
