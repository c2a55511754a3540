//! The OTLP exporter's side: the span exporter behind the batch processor's queue, counting
//! what it sent and what failed, and the plain HTTP/1.1 client its requests go out on.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use http_body_util::{BodyExt as _, Full, Limited};
use hyper_util::rt::TokioIo;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

use super::SpanCounts;

/// A collector's answer longer than this is an error (it is read and dropped).
const ANSWER_MAX_BYTES: usize = 64 * 1024;

/// The span exporter, counting what it sent and what failed.
#[derive(Debug)]
pub(super) struct Counted<E> {
    pub(super) inner: E,
    pub(super) spans: Arc<SpanCounts>,
}

impl<E: SpanExporter> SpanExporter for Counted<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let count = batch.len() as u64;
        let sent = self.inner.export(batch).await;
        match &sent {
            Ok(()) => {
                self.spans.exported.fetch_add(count, Ordering::Relaxed);
            }
            Err(err) => {
                // Said once at warn (the collector may be down for a while); the total is
                // in the line at exit.
                if self.spans.failed.fetch_add(count, Ordering::Relaxed) == 0 {
                    tracing::warn!(%err, spans = count, "telemetry: spans not exported");
                } else {
                    tracing::debug!(%err, spans = count, "telemetry: spans not exported");
                }
            }
        }
        sent
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// OTLP's requests, made with hyper (HTTP/1.1, plain TCP) on the server's runtime: the
/// exporters' threads are not tokio's, so each request is a task there, awaited from the
/// thread. (The hyper client of `opentelemetry-http` needs a runtime on the calling thread
/// and brings HTTP/2; reqwest's would bring a second HTTP stack and its own runtime.)
#[derive(Debug)]
pub(super) struct Client {
    pub(super) runtime: tokio::runtime::Handle,
    pub(super) timeout: Duration,
}

type Answer = Result<Response<Bytes>, HttpError>;

impl HttpClient for Client {
    // The trait is declared with `async_trait`; this is its expansion.
    fn send_bytes<'life0, 'async_trait>(
        &'life0 self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Answer> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        let timeout = self.timeout;
        let sending = self
            .runtime
            .spawn(async move { tokio::time::timeout(timeout, send(request)).await });
        Box::pin(async move {
            match sending.await {
                Ok(Ok(answer)) => answer,
                Ok(Err(_)) => Err(format!("no answer from the collector in {timeout:?}").into()),
                Err(err) => Err(Box::new(err) as HttpError),
            }
        })
    }
}

/// One request on a connection of its own (an export every few seconds at most).
async fn send(request: Request<Bytes>) -> Answer {
    let (mut parts, body) = request.into_parts();
    if !parts
        .uri
        .scheme_str()
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http"))
    {
        return Err(format!("{}: only http:// is supported (no TLS)", parts.uri).into());
    }
    let authority = parts
        .uri
        .authority()
        .ok_or_else(|| format!("{}: no host", parts.uri))?
        .clone();
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let port = authority.port_u16().unwrap_or(80);
    let stream = tokio::net::TcpStream::connect((host, port)).await?;
    stream.set_nodelay(true)?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    let connection = tokio::spawn(connection);
    parts
        .headers
        .entry(http::header::HOST)
        .or_insert(http::HeaderValue::from_str(authority.as_str())?);
    // Origin form (`/v1/traces`), as an HTTP/1.1 client sends to a server.
    let path = parts.uri.path_and_query().map_or("/", |path| path.as_str());
    parts.uri = path.parse()?;
    let answer = sender
        .send_request(Request::from_parts(parts, Full::new(body)))
        .await?;
    let (parts, body) = answer.into_parts();
    let body = Limited::new(body, ANSWER_MAX_BYTES)
        .collect()
        .await?
        .to_bytes();
    drop(sender);
    connection.abort();
    Ok(Response::from_parts(parts, body))
}
