//! MCP over Streamable HTTP (`agent-bash mcp --http ADDR`), for an agent that reaches its bash
//! tool over the network: a harness in one container and the tool in another, a pod per task.
//!
//! rmcp's Streamable HTTP service speaks the protocol (sessions for 2025-11-25 clients,
//! single exchanges for 2026-07-28 ones, `Host` and `Origin` checks, the body limit). In front
//! of it, this module:
//!
//! - requires a bearer token on every request to `/mcp` (401 without it), compared in
//!   constant time; the token decides the *owner* of the request;
//! - gives each owner its own engine session, whose job and terminal ids are a range of their
//!   own, so another token's id is refused by name and never reaches that session;
//! - limits the requests in flight (503 past it; a streamed answer counts until it ends);
//! - answers `GET /health` without a token, for orchestrators' probes.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agent_bash_core::Session;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::task::TaskTracker;

use crate::Server;

/// How the HTTP face is served.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// The address to listen on.
    pub addr: SocketAddr,
    /// The bearer tokens; the n-th token's requests are served by the n-th session.
    pub tokens: Vec<String>,
    /// Browser origins allowed to call (`scheme://host:port`); requests with any other
    /// `Origin` header are refused. Requests without one (every non-browser client) pass.
    pub allowed_origins: Vec<String>,
    /// Largest request body, in bytes.
    pub max_body: usize,
    /// Most requests in flight at once, all tokens together.
    pub max_requests: usize,
    /// A 2025-11-25 client's MCP session ends after this long without a request.
    pub idle: Duration,
}

/// A connection that does not send a request's whole header in this long is closed.
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// The owner of a request: the index of the token it carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Owner(pub(crate) usize);

/// Jobs and terminals of owner `n` have ids from `n * IDS_PER_OWNER + 1`.
pub const IDS_PER_OWNER: u64 = 1_000_000;

/// The owner whose range holds `id`.
pub(crate) fn owner_of(id: u64) -> usize {
    usize::try_from(id.saturating_sub(1) / IDS_PER_OWNER).unwrap_or(usize::MAX)
}

type Body = BoxBody<Bytes, Infallible>;

/// Serves `sessions` (one per token, in the order of `options.tokens`) over Streamable HTTP
/// until `stop` completes; then stops every command and kills what the sessions left
/// running.
///
/// # Errors
/// When the address cannot be bound.
pub async fn serve_http(
    sessions: Vec<Arc<Session>>,
    options: HttpOptions,
    stop: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let listener = TcpListener::bind(options.addr).await?;
    tracing::info!(addr = %listener.local_addr()?, "serving MCP over HTTP at /mcp");
    let server = Server::owned(sessions.clone());
    let shutdown = server.shutdown_token();
    let mut config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(options.max_body)
        .with_cancellation_token(shutdown.child_token())
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation();
    if !options.addr.ip().is_loopback() {
        // Clients name the host as they reach it (a pod's address, a service name); the
        // token, not the `Host` header, keeps others out.
        config = config.disable_allowed_hosts();
    }
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(options.idle);
    let factory = server.clone();
    let mcp = StreamableHttpService::new(move || Ok(factory.clone()), manager.into(), config);
    let front = Arc::new(Front {
        mcp,
        tokens: options.tokens.clone(),
        in_flight: Arc::new(Semaphore::new(options.max_requests)),
        max_requests: options.max_requests,
    });
    let connections = TaskTracker::new();
    tokio::pin!(stop);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of descriptors, most likely: the next accept may succeed.
                    tracing::warn!(%err, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let front = front.clone();
        let shutdown = shutdown.clone();
        connections.spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let front = front.clone();
                async move { Ok::<_, Infallible>(front.serve(request).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                served = &mut connection => {
                    if let Err(err) = served {
                        tracing::debug!(%err, "connection ended");
                    }
                }
                () = shutdown.cancelled() => {}
            }
        });
    }
    tracing::info!("stopping: signal");
    server.stop(&sessions).await;
    connections.close();
    let _ = tokio::time::timeout(Duration::from_secs(1), connections.wait()).await;
    Ok(())
}

/// What stands before rmcp's service: the health endpoint, the token and the limit.
struct Front {
    mcp: StreamableHttpService<Server, LocalSessionManager>,
    tokens: Vec<String>,
    in_flight: Arc<Semaphore>,
    max_requests: usize,
}

impl Front {
    async fn serve(&self, mut request: Request<Incoming>) -> Response<Body> {
        match request.uri().path() {
            "/health" => return plain(StatusCode::OK, "ok"),
            "/mcp" => {}
            path => {
                return plain(
                    StatusCode::NOT_FOUND,
                    &format!("no endpoint {path}: MCP is served at /mcp, health at /health"),
                );
            }
        }
        let Some(owner) = self.owner(&request) else {
            let mut refused = plain(
                StatusCode::UNAUTHORIZED,
                "a bearer token is required: send `Authorization: Bearer <token>` with one of \
                 the server's tokens",
            );
            refused.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            return refused;
        };
        let Ok(permit) = self.in_flight.clone().try_acquire_owned() else {
            return plain(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!(
                    "too many requests at once: at most {} are served together; retry when \
                     one has ended",
                    self.max_requests
                ),
            );
        };
        request.extensions_mut().insert(Owner(owner));
        let mut mcp = self.mcp.clone();
        let Ok(response) = tower_service::Service::call(&mut mcp, request).await;
        // A streamed answer (a long call's progress and result) holds its place until it ends.
        response.map(|body| {
            body.map_frame(move |frame| {
                let _held = &permit;
                frame
            })
            .boxed()
        })
    }

    /// The index of the token the request carries, if it carries one of ours.
    fn owner(&self, request: &Request<Incoming>) -> Option<usize> {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)?
            .as_bytes()
            .strip_prefix(b"Bearer ")?;
        // Every token is compared, each in time independent of where it differs.
        self.tokens
            .iter()
            .enumerate()
            .fold(None, |found, (index, token)| {
                let same = same_bytes(token.as_bytes(), given);
                found.or(same.then_some(index))
            })
    }
}

/// Whether `a` and `b` are equal, in time that depends on their lengths only.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let differ = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(differ) == 0
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{text}\n"))).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_by_every_byte_and_length() {
        assert!(same_bytes(b"secret-token-1", b"secret-token-1"));
        assert!(!same_bytes(b"secret-token-1", b"secret-token-2"));
        assert!(!same_bytes(b"secret-token-1", b"secret-token-"));
        assert!(!same_bytes(b"", b"x"));
    }

    #[test]
    fn ids_belong_to_the_owner_whose_range_holds_them() {
        assert_eq!(owner_of(1), 0);
        assert_eq!(owner_of(IDS_PER_OWNER), 0);
        assert_eq!(owner_of(IDS_PER_OWNER + 1), 1);
        assert_eq!(owner_of(0), 0);
    }
}
