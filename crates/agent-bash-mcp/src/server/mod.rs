//! The MCP server: one engine `Session` behind rmcp's `ServerHandler`.
//!
//! Every `tools/call` runs as its own task (rmcp spawns one per request), so calls in flight
//! run concurrently. Each call's command stops when the client cancels the request, or when
//! the server shuts down; `serve` returns only once every call has finished and the
//! session's leftover processes are killed.
//!
//! This file holds the server and its handler; the calls it serves itself are in `local`,
//! those it hands to a target in `forward`.

mod forward;
mod local;

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use agent_bash_core::{CancellationToken, Session};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{QuitReason, RequestContext, RoleServer, ServerInitializeError};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::task::TaskTracker;

use crate::ask::Questions;
use crate::http::Owner;
use crate::reply::Shape;
use crate::target::Remote;
use crate::{reply, telemetry, tools};

/// The MCP face of one session. Cheap to clone; clones share the session.
#[derive(Clone)]
pub struct Server {
    session: Arc<Session>,
    tools: Arc<Vec<Tool>>,
    /// Text only, or with structure (`mcp.structured`).
    shape: Shape,
    /// Cancelled when the server shuts down: stops every call's command.
    shutdown: CancellationToken,
    calls: TaskTracker,
    /// The target the tools are served from, when it is not this machine.
    remote: Option<Arc<Remote>>,
    /// Questions to the user waiting for the client's retried call (MCP 2026-07-28).
    questions: Arc<Questions>,
    /// Over HTTP, the session of each token (`session` is the first): a request is served by
    /// its owner's.
    owners: Option<Arc<[Arc<Session>]>>,
    /// Where the call this clone serves records its telemetry (nowhere when off).
    telemetry: telemetry::Recorder,
}

impl Server {
    /// The server of `session`. Its tool definitions are made now, from the session's root
    /// and configuration (the limits their descriptions and schemas state).
    pub fn new(session: Arc<Session>) -> Server {
        let tools = tools::all(session.root(), session.config());
        let remote = (!session.config().target.is_local())
            .then(|| Arc::new(Remote::new(session.config(), String::new())));
        Server {
            shape: Shape::new(session.config().mcp.structured),
            session,
            tools: Arc::new(tools),
            shutdown: CancellationToken::new(),
            calls: TaskTracker::new(),
            remote,
            questions: Arc::default(),
            owners: None,
            telemetry: telemetry::Recorder::default(),
        }
    }

    /// The server of several owners (HTTP's tokens), each with its session, whose ids are
    /// its own range (`http::IDS_PER_OWNER`).
    pub(crate) fn owned(sessions: Vec<Arc<Session>>) -> Server {
        let mut server = Server::new(sessions[0].clone());
        server.owners = Some(sessions.into());
        server
    }

    pub(crate) fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Stops every call's command and each session's jobs and leftovers (HTTP's end).
    pub(crate) async fn stop(&self, sessions: &[Arc<Session>]) {
        self.shutdown.cancel();
        self.calls.close();
        let bound = self.session.stop_bound() + CALL_END_MARGIN;
        let mut stopping = tokio::task::JoinSet::new();
        for session in sessions {
            let session = session.clone();
            stopping.spawn(async move { session.stop_all().await });
        }
        let (calls_stopped, _) = tokio::join!(
            tokio::time::timeout(bound, self.calls.wait()),
            stopping.join_all()
        );
        if calls_stopped.is_err() {
            tracing::warn!("calls still running at exit; their process groups are killed");
        }
        for session in sessions {
            session.kill_all();
        }
    }

    /// This server as the owner of `context`'s request sees it: its session. `Err` for an
    /// HTTP request without an owner, which the front never lets through.
    fn for_owner(&self, owner: Option<Owner>) -> Result<Server, ErrorData> {
        let (Some(owners), Some(Owner(index))) = (&self.owners, owner) else {
            return match self.owners {
                Some(_) => Err(ErrorData::invalid_request(
                    "a request without a token",
                    None,
                )),
                None => Ok(self.clone()),
            };
        };
        let mut server = self.clone();
        server.session = owners
            .get(index)
            .cloned()
            .ok_or_else(|| ErrorData::invalid_request("a request of an unknown token", None))?;
        Ok(server)
    }

    /// The settings agent-bash on the session's target runs with: a settings file's text
    /// (`Settings::for_target`). Without them it runs with its defaults. Nothing to do for a
    /// session that runs its commands here.
    #[must_use]
    pub fn with_target_settings(mut self, settings: String) -> Server {
        if self.remote.is_some() {
            self.remote = Some(Arc::new(Remote::new(self.session.config(), settings)));
        }
        self
    }

    /// Serves MCP over `reader`/`writer` (stdin/stdout for a stdio server) until the
    /// client closes its end, `stop` completes (a signal), or the transport fails. Then
    /// stops every running command, kills what the session left running, and returns.
    ///
    /// # Errors
    /// When the client never completes the MCP handshake.
    pub async fn serve<R, W>(
        self,
        reader: R,
        writer: W,
        stop: impl Future<Output = ()>,
    ) -> Result<QuitReason, io::Error>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let shutdown = self.shutdown.clone();
        let calls = self.calls.clone();
        let session = self.session.clone();
        let remote = self.remote.clone();
        let stop_bound = session.stop_bound();
        // EOF on the client's stream stops the commands at once, rather than after rmcp's
        // wait for in-flight responses nobody will read.
        let reader = EofCancels {
            inner: reader,
            on_eof: shutdown.clone(),
        };
        let service_stop = CancellationToken::new();
        let serving = async {
            let running = match self
                .serve_with_ct((reader, writer), service_stop.clone())
                .await
            {
                Ok(running) => running,
                // A client may leave before it starts: after `server/discover` alone (MCP
                // 2026-07-28), or having sent nothing.
                Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(QuitReason::Closed),
                // A signal before the client started.
                Err(ServerInitializeError::Cancelled) => return Ok(QuitReason::Cancelled),
                Err(err) => return Err(io::Error::other(format!("MCP handshake failed: {err}"))),
            };
            running
                .waiting()
                .await
                .map_err(|err| io::Error::other(format!("the MCP service failed: {err}")))
        };
        tokio::pin!(serving, stop);
        let quit = tokio::select! {
            quit = &mut serving => quit,
            () = &mut stop => {
                tracing::info!("stopping: signal");
                shutdown.cancel();
                service_stop.cancel();
                serving.await
            }
        };
        shutdown.cancel();
        calls.close();
        // Calls stop their trees within the stop bound (the kill grace, SIGKILL's settling,
        // the drain), while background jobs get SIGTERM and the grace to end (a dev server
        // saving its state), then SIGKILL.
        let (calls_stopped, ()) = tokio::join!(
            tokio::time::timeout(stop_bound + CALL_END_MARGIN, calls.wait()),
            session.stop_all()
        );
        if calls_stopped.is_err() {
            tracing::warn!("calls still running at exit; their process groups are killed");
        }
        session.kill_all();
        if let Some(remote) = remote {
            remote.close().await;
        }
        tracing::info!(?quit, "stopped");
        quit
    }

    /// The refusal of a call to a tool this server does not have, naming those it has.
    fn unknown_tool(&self, name: &str) -> CallToolResult {
        let known: Vec<&str> = self.tools.iter().map(|tool| tool.name.as_ref()).collect();
        reply::refusal(&format!(
            "no tool named `{name}`; this server has {}",
            known.join(", ")
        ))
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("agent-bash", env!("CARGO_PKG_VERSION")).with_title("agent-bash"),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The tools are made once, from this server's root and settings: fresh for as long as
        // it runs, and for this user only (their descriptions name the root and limits).
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone())
            .with_ttl_ms(TOOLS_FRESH_MS)
            .with_cache_scope(CacheScope::Private))
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let owner = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Owner>())
            .copied();
        let mut server = self.for_owner(owner)?;
        if let Some(Owner(index)) = owner
            && let Some(refused) = not_owned(&request, index)
        {
            return Ok(refused.into());
        }
        let owner = owner.map(|Owner(index)| index);
        let asking = self.questions.asking(&mut request, &context, owner);
        let asked = CallToolRequestParams::new(request.name.clone());
        let asked = match request.arguments.clone() {
            Some(arguments) => asked.with_arguments(arguments),
            None => asked,
        };
        let span = telemetry::begin(&request, &context, &server.session);
        server.telemetry = telemetry::recorder(span.as_ref());
        let result = self
            .calls
            .track_future(server.call(request, context, &asking))
            .await;
        telemetry::end(span, &result);
        if let Some((command, question)) = asking.deferred() {
            let input = self.questions.ask(&asked, command, question, owner);
            return Ok(CallToolResponse::InputRequired(input));
        }
        Ok(result.into())
    }
}

/// The refusal of a call that names a job or terminal of another owner (HTTP's tokens).
fn not_owned(request: &CallToolRequestParams, owner: usize) -> Option<CallToolResult> {
    let arguments = request.arguments.as_ref()?;
    let id = arguments
        .get("job_id")
        .or_else(|| arguments.get("id"))?
        .as_u64()?;
    let what = if arguments.contains_key("job_id") {
        "job"
    } else {
        "terminal"
    };
    (crate::http::owner_of(id) != owner).then(|| {
        reply::refusal(&format!(
            "{what} {id} belongs to another token of this server: a token reaches only the \
             jobs and terminals it started"
        ))
    })
}

/// How long a client may keep the tool list (MCP 2026-07-28 cache hint): an hour.
const TOOLS_FRESH_MS: u64 = 3_600_000;

/// How long past the stop bound the server waits for its calls to return at its end (their
/// results still have to be assembled and written).
const CALL_END_MARGIN: Duration = Duration::from_secs(1);

/// A reader that cancels `on_eof` when its input ends.
struct EofCancels<R> {
    inner: R,
    on_eof: CancellationToken,
}

impl<R: AsyncRead + Unpin> AsyncRead for EofCancels<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if buf.filled().len() == before && buf.remaining() > 0 => {
                tracing::info!("stopping: the client closed its end");
                self.on_eof.cancel();
            }
            Poll::Ready(Err(err)) => {
                tracing::info!(%err, "stopping: cannot read from the client");
                self.on_eof.cancel();
            }
            _ => {}
        }
        polled
    }
}
