//! Execution targets: the session's tools served by agent-bash running on an ssh host, in a
//! container or in a pod, reached through the engine the user already runs.
//!
//! The far side is agent-bash itself (`mcp --serve-target`), started over the channel
//! (`channel`) from a static build copied there once (`payload`). Its process groups,
//! subreaper, sandbox, spill files and redaction are that machine's kernel facts, so they
//! hold there exactly as here. This side decides the policy before anything is sent, speaks
//! MCP to it as a client, and relays its progress reports (and the asks of lines typed at a
//! terminal's shell prompt, which only the far side can recognise) to our own client.
//!
//! When the channel ends (a dropped connection, a killed `ssh`, a stopped container), the far
//! side sees its stdin close and kills everything it started; this side notes what was lost,
//! and the next call connects again. Job and terminal ids keep counting up across
//! connections, so an id of a lost connection is never answered by a new one.

mod channel;
mod payload;
mod relay;
mod run;
mod stderr;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agent_bash_core::Target;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ContentBlock, ProgressToken, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, RoleServer, RunningService};
pub use run::{TargetRun, run_on_target};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::reply;
use channel::Start;
use payload::Payload;
use relay::Relay;

/// Longest wait for a target to start agent-bash (connection and start; a copy adds a
/// second a megabyte).
const START_DEADLINE: Duration = Duration::from_secs(120);

/// How long past a call's own longest time its answer may take before the connection is
/// taken for hung. The far side answers within the call's own time plus its kill grace: the margin is for
/// a loaded machine, and is what a hung connection costs a call.
pub(crate) const ANSWER_MARGIN: Duration = Duration::from_secs(10);

/// How long a far side that missed a deadline has to answer a ping before its connection
/// is taken for hung.
const PING_WAIT: Duration = Duration::from_secs(5);

/// The target of one server, and its current connection.
pub(crate) struct Remote {
    target: Target,
    ssh_command: Vec<String>,
    binary: Option<std::path::PathBuf>,
    /// The far side's settings, as a TOML file's text.
    settings: String,
    relay: Relay,
    link: tokio::sync::Mutex<Link>,
    /// The highest job or terminal id any answer named.
    highest_id: AtomicU64,
}

#[derive(Default)]
struct Link {
    connection: Option<Arc<Connection>>,
    /// The last connection that dropped, until a result has said so.
    lost: Option<Lost>,
    /// Ids below this belong to connections that are gone.
    lost_below: u64,
    /// Why the last connection that dropped did.
    lost_why: Option<String>,
}

/// A dropped connection, for the next result to report.
struct Lost {
    why: String,
}

struct Connection {
    service: RunningService<RoleClient, Relay>,
    /// The relay of this connection (its progress tokens are its own).
    relay: Relay,
    child: tokio::sync::Mutex<tokio::process::Child>,
    stderr: tokio::sync::Mutex<stderr::Tail>,
    first_id: u64,
}

impl Remote {
    /// The target of a server whose session has `config`; `settings` is the TOML the far
    /// side runs with.
    pub(crate) fn new(config: &agent_bash_core::Config, settings: String) -> Remote {
        // Results come back structured whatever our client gets: their ids are read there.
        let settings = if settings.is_empty() {
            "[mcp]\nstructured = true\n".to_string()
        } else {
            settings
        };
        Remote {
            target: config.target.clone(),
            ssh_command: config.ssh_command.clone(),
            binary: config.target_binary.clone(),
            settings,
            relay: Relay {
                target: config.target.to_string().into(),
                ..Relay::default()
            },
            link: tokio::sync::Mutex::new(Link {
                lost_below: 1,
                ..Link::default()
            }),
            highest_id: AtomicU64::new(0),
        }
    }

    /// Forwards one `tools/call` to the far side and answers with its result, or says why
    /// it could not: the target cannot be reached, the connection dropped, no answer came
    /// within `longest` (the call's own longest time; the connection is then closed).
    pub(crate) async fn call(
        &self,
        request: CallToolRequestParams,
        named_id: Option<u64>,
        longest: Duration,
        caller: &Caller<'_>,
    ) -> CallToolResult {
        if let Some(peer) = caller.peer {
            self.relay.answer_to(peer.clone());
        }
        // A connection being made gives way to the client and to the server's end (the
        // channel's program dies with the dropped future).
        let connected = tokio::select! {
            connected = self.connection() => connected,
            () = caller.cancelled.cancelled() => return reply::refusal("cancelled"),
            () = caller.shutdown.cancelled() => return reply::refusal("the server is stopping"),
        };
        let (connection, mut notes) = match connected {
            Ok(connected) => connected,
            Err(why) => return reply::refusal(&format!("cannot reach {}: {why}", self.target)),
        };
        if let Some(id) = named_id.filter(|id| *id < connection.first_id) {
            let link = self.link.lock().await;
            let why = link.lost_why.as_deref().unwrap_or("it ended");
            return reply::refusal(&format!(
                "{id} was lost with an earlier connection to {} ({why}): agent-bash there \
                 stopped everything it had started when its connection ended",
                self.target
            ));
        }
        // The far side may ask the user only during a call that types at a terminal's
        // prompt: a question at any other time is not one of ours (something on the target
        // writing into the channel) and is refused.
        let _asking = caller.may_ask.then(|| self.relay.asking());
        let answer = self.send(&connection, request, longest, caller).await;
        let mut result = match answer {
            Answer::Result(result) => result,
            Answer::Refused(message) => return reply::refusal(&message),
            Answer::Dropped(why) => {
                let why = self.drop_connection(&connection, why).await;
                return reply::refusal(&format!(
                    "the connection to {} dropped during the call ({why}). agent-bash there \
                     stops everything it started when its connection ends: the command, \
                     and the session's jobs and terminals there, are gone. The next call \
                     connects again.",
                    self.target
                ));
            }
        };
        if let Some(highest) = result.structured_content.as_ref().and_then(highest_id) {
            self.highest_id.fetch_max(highest, Ordering::Relaxed);
        }
        notes.push(format!("[on {}]", self.target));
        for block in result.content.iter_mut().take(1) {
            if let ContentBlock::Text(text) = block {
                for note in &notes {
                    text.text.push('\n');
                    text.text.push_str(note);
                }
            }
        }
        if let Some(Value::Object(fields)) = result.structured_content.as_mut()
            && let Some(Value::String(text)) = fields.get_mut(reply::TEXT_FIELD)
        {
            for note in &notes {
                text.push('\n');
                text.push_str(note);
            }
        }
        result
    }

    /// The live connection, made now if there is none; with a note when the one before
    /// it dropped since the last result said so.
    async fn connection(&self) -> Result<(Arc<Connection>, Vec<String>), String> {
        let mut link = self.link.lock().await;
        if let Some(connection) = link.connection.clone() {
            let exited = connection
                .child
                .lock()
                .await
                .try_wait()
                .ok()
                .flatten()
                .map(|status| status.to_string());
            if exited.is_none() && !connection.service.is_transport_closed() {
                return Ok((connection, take_lost(&mut link)));
            }
            let why = ended(&connection, exited).await;
            self.forget(&mut link, &connection, why);
        }
        let first_id = link
            .lost_below
            .max(self.highest_id.load(Ordering::Relaxed).saturating_add(1));
        let connection = Arc::new(self.connect(first_id).await?);
        link.connection = Some(connection.clone());
        Ok((connection, take_lost(&mut link)))
    }

    async fn connect(&self, first_id: u64) -> Result<Connection, String> {
        let payload = Payload::find(self.binary.as_deref())?;
        let start = Start {
            settings: self.settings.clone(),
            first_id,
        };
        let began = std::time::Instant::now();
        let channel = channel::open(
            &self.target,
            &self.ssh_command,
            &payload,
            &start,
            START_DEADLINE,
        )
        .await?;
        let channel::Channel {
            child,
            stdin,
            stdout,
            mut stderr,
        } = channel;
        let relay = self.relay.for_connection(first_id);
        let handshake = tokio::time::timeout(START_DEADLINE, relay.clone().serve((stdout, stdin)));
        let service = match handshake.await {
            Ok(Ok(service)) => service,
            Err(_) => {
                return Err(format!(
                    "agent-bash started there but did not answer within {} s",
                    START_DEADLINE.as_secs()
                ));
            }
            Ok(Err(err)) => {
                let said = stderr.text().await;
                return Err(format!(
                    "agent-bash started there but did not answer ({err}){}",
                    if said.is_empty() {
                        String::new()
                    } else {
                        format!("; it said: {said}")
                    }
                ));
            }
        };
        tracing::info!(target = %self.target, first_id, ms = began.elapsed().as_millis() as u64, "connected");
        Ok(Connection {
            service,
            relay,
            child: tokio::sync::Mutex::new(child),
            stderr: tokio::sync::Mutex::new(stderr),
            first_id,
        })
    }

    /// Sends the call and waits for its answer, giving way to the client's cancellation,
    /// the server's end and the deadline.
    async fn send(
        &self,
        connection: &Connection,
        request: CallToolRequestParams,
        longest: Duration,
        caller: &Caller<'_>,
    ) -> Answer {
        let peer = connection.service.peer();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(request));
        let handle = match peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(err) => return Answer::Dropped(err.to_string()),
        };
        let id = handle.id.clone();
        let token = handle.progress_token.clone();
        if let Some(upstream) = caller.progress.clone() {
            connection.relay.route(token.clone(), upstream);
        }
        let response = handle.await_response();
        let cancel = |reason: &str| {
            let param = CancelledNotificationParam::new(Some(id.clone()), Some(reason.into()));
            async move {
                // A stuck channel must not hold the cancelled call.
                let sent = peer.notify_cancelled(param);
                let _ = tokio::time::timeout(Duration::from_secs(2), sent).await;
            }
        };
        let answer = tokio::select! {
            response = response => match response {
                Ok(ServerResult::CallToolResult(result)) => Answer::Result(result),
                Ok(other) => Answer::Refused(format!("the target answered with something else than a result: {other:?}")),
                Err(err) => Answer::Dropped(err.to_string()),
            },
            () = caller.cancelled.cancelled() => {
                cancel("cancelled by the client").await;
                Answer::Refused("cancelled".into())
            }
            () = caller.shutdown.cancelled() => {
                cancel("the server is stopping").await;
                Answer::Refused("the server is stopping".into())
            }
            () = tokio::time::sleep(longest + ANSWER_MARGIN) => {
                // Late is not dead: the call may have waited its turn at a terminal. The
                // call is cancelled there; the connection is closed only if the far side
                // does not answer a ping either.
                cancel("no answer in time").await;
                let waited = (longest + ANSWER_MARGIN).as_secs();
                let ping = peer.send_request(ClientRequest::PingRequest(Default::default()));
                match tokio::time::timeout(PING_WAIT, ping).await {
                    Ok(Ok(_)) => Answer::Refused(format!(
                        "no answer within {waited} s; the call was cancelled on the target, \
                         which still answers"
                    )),
                    _ => Answer::Dropped(format!("no answer within {waited} s, nor to a ping")),
                }
            }
        };
        connection.relay.unroute(&token);
        answer
    }

    /// Closes `connection` (its program is killed) if it is still the current one, and
    /// remembers why for the calls after; returns the reason with what the program said.
    async fn drop_connection(&self, connection: &Arc<Connection>, why: String) -> String {
        let mut link = self.link.lock().await;
        let _ = connection.child.lock().await.start_kill();
        let why = ended(connection, Some(why)).await;
        self.forget(&mut link, connection, why.clone());
        // This result says it: the next one need not.
        link.lost = None;
        why
    }

    fn forget(&self, link: &mut Link, connection: &Arc<Connection>, why: String) {
        if link
            .connection
            .as_ref()
            .is_some_and(|current| Arc::ptr_eq(current, connection))
        {
            tracing::warn!(target = %self.target, %why, "the connection ended");
            link.connection = None;
            link.lost_below = self.highest_id.load(Ordering::Relaxed).saturating_add(1);
            link.lost_why = Some(why.clone());
            link.lost = Some(Lost { why });
        }
    }

    /// Closes the connection: the far side sees its stdin end and stops everything.
    pub(crate) async fn close(&self) {
        let connection = self.link.lock().await.connection.take();
        if let Some(connection) = connection {
            let mut child = connection.child.lock().await;
            // Closing our end of the channel is what stops the far side; the program
            // (ssh, docker) then ends by itself.
            connection.service.cancellation_token().cancel();
            if tokio::time::timeout(Duration::from_secs(5), child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
        }
    }
}

/// Who a forwarded call is for.
pub(crate) struct Caller<'a> {
    /// Our client, to relay progress and asks to; `None` from the CLI.
    pub(crate) peer: Option<&'a Peer<RoleServer>>,
    /// The client's progress token for the call, if it asked for progress.
    pub(crate) progress: Option<ProgressToken>,
    /// The client cancelled the call.
    pub(crate) cancelled: &'a CancellationToken,
    /// The server is stopping.
    pub(crate) shutdown: &'a CancellationToken,
    /// The far side may ask the user during this call (`terminal_send`: a line typed at a
    /// shell prompt is checked there).
    pub(crate) may_ask: bool,
}

/// What a forwarded call came to.
enum Answer {
    Result(CallToolResult),
    /// Not a failure of the connection (cancelled, an odd answer): the message.
    Refused(String),
    /// The connection failed: why.
    Dropped(String),
}

/// Why a connection ended, with the last words of its program.
async fn ended(connection: &Connection, why: Option<String>) -> String {
    let said = connection.stderr.lock().await.text().await;
    let why = why.unwrap_or_else(|| "the connection closed".into());
    if said.is_empty() {
        why
    } else {
        format!("{why}; it said: {said}")
    }
}

/// The note for the first result after a connection dropped between calls.
fn take_lost(link: &mut Link) -> Vec<String> {
    link.lost
        .take()
        .map(|lost| {
            format!(
                "note: the connection to the target dropped since the last call ({}), and a \
                 new one was made; the jobs and terminals of the old one are gone",
                lost.why
            )
        })
        .into_iter()
        .collect()
}

/// The highest job or terminal id in a structured result (`job_id`, or a terminal's or a
/// listed job's `id`).
fn highest_id(value: &Value) -> Option<u64> {
    match value {
        Value::Object(fields) => fields
            .iter()
            .filter_map(|(name, value)| match (name.as_str(), value) {
                ("job_id" | "id", Value::Number(number)) => number.as_u64(),
                (_, Value::Object(_) | Value::Array(_)) => highest_id(value),
                _ => None,
            })
            .max(),
        Value::Array(items) => items.iter().filter_map(highest_id).max(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_highest_id_is_found_wherever_a_result_names_one() {
        assert_eq!(highest_id(&json!({"text": "x", "job_id": 7})), Some(7));
        assert_eq!(
            highest_id(&json!({"jobs": [{"id": 3}, {"id": 12}], "running": 2})),
            Some(12)
        );
        assert_eq!(highest_id(&json!({"text": "x", "exit_code": 0})), None);
    }
}
