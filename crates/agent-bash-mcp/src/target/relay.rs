//! This side as the far side's MCP client: progress reports relayed under our client's
//! tokens, and the far side's approval questions passed to our user, only while a call that
//! may ask is in flight.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationCapability,
    FormElicitationCapability, Implementation, ProgressNotificationParam, ProgressToken,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleClient, RoleServer};
use rmcp::{ClientHandler, ErrorData};

/// This side as the far side's MCP client: relays its progress reports and asks to our own
/// client.
#[derive(Clone, Default)]
pub(super) struct Relay {
    pub(super) inner: Arc<Mutex<Routes>>,
    /// The connection this clone serves (its first id): progress tokens restart with each
    /// connection, so routes are kept per connection.
    pub(super) connection: u64,
    /// The target, named in the questions it asks.
    pub(super) target: Arc<str>,
}

#[derive(Default)]
pub(super) struct Routes {
    /// Our client, once a call has come from it.
    upstream: Option<Peer<RoleServer>>,
    /// A connection's progress token of a call → our client's.
    progress: HashMap<(u64, ProgressToken), ProgressToken>,
    /// Calls in flight during which the far side may ask the user.
    asking: usize,
}

/// A call during which the far side may ask the user; counted until dropped.
pub(super) struct Asking {
    inner: Arc<Mutex<Routes>>,
}

impl Drop for Asking {
    fn drop(&mut self) {
        if let Ok(mut routes) = self.inner.lock() {
            routes.asking = routes.asking.saturating_sub(1);
        }
    }
}

impl Relay {
    pub(super) fn answer_to(&self, upstream: Peer<RoleServer>) {
        if let Ok(mut routes) = self.inner.lock() {
            routes.upstream = Some(upstream);
        }
    }

    pub(super) fn for_connection(&self, connection: u64) -> Relay {
        Relay {
            connection,
            ..self.clone()
        }
    }

    pub(super) fn route(&self, far: ProgressToken, ours: ProgressToken) {
        if let Ok(mut routes) = self.inner.lock() {
            routes.progress.insert((self.connection, far), ours);
        }
    }

    pub(super) fn unroute(&self, far: &ProgressToken) {
        if let Ok(mut routes) = self.inner.lock() {
            routes.progress.remove(&(self.connection, far.clone()));
        }
    }

    pub(super) fn asking(&self) -> Asking {
        if let Ok(mut routes) = self.inner.lock() {
            routes.asking += 1;
        }
        Asking {
            inner: self.inner.clone(),
        }
    }

    /// Our client, when a call in flight lets the far side ask it.
    fn upstream_to_ask(&self) -> Option<Peer<RoleServer>> {
        let routes = self.inner.lock().ok()?;
        if routes.asking == 0 {
            return None;
        }
        routes.upstream.clone()
    }
}

impl ClientHandler for Relay {
    fn get_info(&self) -> ClientConfig {
        let elicitation = ElicitationCapability::new().with_form(FormElicitationCapability::new());
        let capabilities = ClientCapabilities::builder()
            .enable_elicitation_with(elicitation)
            .build();
        ClientConfig::new(
            capabilities,
            Implementation::new("agent-bash", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let routed = self.inner.lock().ok().and_then(|routes| {
            let key = (self.connection, params.progress_token.clone());
            let ours = routes.progress.get(&key)?.clone();
            Some((routes.upstream.clone()?, ours))
        });
        if let Some((upstream, ours)) = routed {
            let mut forwarded = ProgressNotificationParam::new(ours, params.progress);
            forwarded.total = params.total;
            forwarded.message = params.message;
            let _ = upstream.notify_progress(forwarded).await;
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(upstream) = self.upstream_to_ask() else {
            tracing::warn!("the target asked the user outside a terminal_send call: refused");
            return Err(ErrorData::internal_error("no question expected now", None));
        };
        if !upstream
            .supported_elicitation_modes()
            .contains(&rmcp::service::ElicitationMode::Form)
        {
            return Err(ErrorData::internal_error(
                "the client cannot be asked",
                None,
            ));
        }
        // Only the approval question agent-bash asks, a yes or no: a form with fields (a
        // password box from a process writing into the channel) is not passed on, and
        // nothing but the answer goes back.
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Err(ErrorData::invalid_params("only approval questions", None));
        };
        if !requested_schema.properties.is_empty() {
            return Err(ErrorData::invalid_params("only approval questions", None));
        }
        let asked = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!("On {}: {message}", self.target),
            requested_schema: rmcp::model::ElicitationSchema::new(Default::default()),
        };
        let answer = upstream
            .create_elicitation_with_timeout(asked, Some(crate::ask::ASK_TIMEOUT))
            .await
            .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
        Ok(ElicitResult::new(answer.action))
    }
}
