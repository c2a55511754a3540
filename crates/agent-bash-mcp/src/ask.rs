//! Asking the user about a command the policy wants approved, the way the client's protocol
//! revision allows:
//!
//! - 2025-11-25: the server sends an elicitation request and the call waits for the answer.
//! - 2026-07-28: the server may not send requests. The call answers `input_required`, with
//!   the question as an elicitation to fill in and an opaque `requestState`; the client asks
//!   the user and calls again with the same arguments, the answer and the state. Nothing runs
//!   on the first call, not even confined.
//!
//! The state is a random handle to a question kept here (never data the client could forge):
//! it is good once, for ten minutes, for the tool and arguments it was asked about, and, over
//! HTTP, for the token that was asked. A retried call that differs in anything, or that replays
//! a spent answer, is asked again.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use agent_bash_core::{Approval, Approver, CancellationToken, Verdict};
use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, JsonObject,
    ProtocolVersion,
};
use rmcp::service::{ElicitationMode, Peer, RequestContext, RoleServer};

/// Longest the server waits for the user to answer an approval question.
pub(crate) const ASK_TIMEOUT: Duration = Duration::from_secs(600);

/// How a call's `ask` reaches the user.
pub(crate) enum Asking {
    /// The client can be asked nothing: it declared no form elicitation.
    Nobody,
    /// An elicitation request, answered while the call waits (2025-11-25).
    Elicit(Peer<RoleServer>),
    /// The question goes back in the answer (2026-07-28).
    RoundTrip(RoundTrip),
}

/// One call's side of a multi round-trip ask.
#[derive(Default)]
pub(crate) struct RoundTrip {
    /// The user's answer, from the retried call, about the command it was asked about.
    answer: Mutex<Option<(String, Approval)>>,
    /// The command the call asked about and the question, when nobody had answered it yet.
    asked: Mutex<Option<(String, String)>>,
}

impl Asking {
    /// The command and question this call left for the client to ask, if any: its answer is
    /// then `input_required`, not the call's refusal.
    pub(crate) fn deferred(&self) -> Option<(String, String)> {
        match self {
            Asking::RoundTrip(trip) => lock(&trip.asked).take(),
            Asking::Nobody | Asking::Elicit(_) => None,
        }
    }
}

/// Asks the user through `asking`; the call's cancellation (the client's, or the server's
/// end) stops an elicitation in flight.
pub(crate) struct Asker<'a> {
    pub(crate) asking: &'a Asking,
    pub(crate) cancel: &'a CancellationToken,
}

impl Approver for Asker<'_> {
    async fn approve(&self, command: &str, verdict: &Verdict) -> Approval {
        match self.asking {
            Asking::Nobody => Approval::NotAsked,
            Asking::Elicit(peer) => tokio::select! {
                approval = elicit(peer, command, verdict) => approval,
                () = self.cancel.cancelled() => Approval::NotAsked,
            },
            Asking::RoundTrip(trip) => {
                let mut answer = lock(&trip.answer);
                if let Some((asked, approval)) = answer.take() {
                    if asked == command {
                        return approval;
                    }
                    *answer = Some((asked, approval));
                }
                lock(&trip.asked)
                    .get_or_insert_with(|| (command.to_owned(), question(command, verdict)));
                Approval::Deferred
            }
        }
    }
}

/// The question put to the user, in the same words for either mechanism.
fn question(command: &str, verdict: &Verdict) -> String {
    let why = verdict
        .reason
        .as_deref()
        .unwrap_or("the policy asks for approval");
    let rule = verdict
        .rule
        .as_deref()
        .map(|rule| format!(" (rule `{rule}`)"))
        .unwrap_or_default();
    format!("The agent wants to run:\n\n{command}\n\n{why}{rule}. Allow it?")
}

fn form(message: String) -> ElicitRequestParams {
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: ElicitationSchema::new(Default::default()),
    }
}

/// Asks through an elicitation request. A failure to ask leaves the command not approved.
async fn elicit(peer: &Peer<RoleServer>, command: &str, verdict: &Verdict) -> Approval {
    let asked = peer
        .create_elicitation_with_timeout(form(question(command, verdict)), Some(ASK_TIMEOUT))
        .await;
    match asked {
        Ok(answer) => approval(&answer.action),
        Err(err) => {
            tracing::warn!(%err, "could not ask the user to approve a command");
            Approval::NotAsked
        }
    }
}

fn approval(action: &ElicitationAction) -> Approval {
    match action {
        ElicitationAction::Accept => Approval::Approved,
        _ => Approval::Declined,
    }
}

/// The key of the one input request of an `input_required` answer.
const APPROVE: &str = "approve";

/// At most this many questions wait for their retried call; a new one evicts the oldest.
const PENDING_MAX: usize = 256;

/// The questions that wait for a retried call (2026-07-28), by the state handed out.
#[derive(Default)]
pub(crate) struct Questions {
    pending: Mutex<HashMap<String, Pending>>,
}

/// What a question was asked about.
struct Pending {
    tool: String,
    arguments: Option<JsonObject>,
    /// The command the user is asked about: the answer approves this text only.
    command: String,
    /// Over HTTP, the token that was asked; `None` on stdio.
    owner: Option<usize>,
    asked_at: Instant,
}

impl Questions {
    /// How `request` may ask the user, by the client's revision and capabilities. A retried
    /// call's answer is taken here (each answer is good once) and kept only when it belongs
    /// to this request: the same tool, arguments and owner, and not expired.
    pub(crate) fn asking(
        &self,
        request: &mut CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        owner: Option<usize>,
    ) -> Asking {
        let state = request.request_state.take();
        let responses = request.input_responses.take();
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        if !modern {
            let form = context
                .peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form);
            return if form {
                Asking::Elicit(context.peer.clone())
            } else {
                Asking::Nobody
            };
        }
        let elicits = context
            .client_capabilities()
            .and_then(|capabilities| capabilities.elicitation)
            .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none());
        if !elicits {
            return Asking::Nobody;
        }
        let trip = RoundTrip::default();
        if let Some(state) = state {
            let pending = lock(&self.pending).remove(&state);
            let answer = responses
                .as_ref()
                .and_then(|responses| responses.get(APPROVE))
                .and_then(|response| serde_json::from_value::<ElicitResult>(response.clone()).ok());
            match (pending, answer) {
                (Some(pending), Some(answer)) if pending.fits(request, owner) => {
                    *lock(&trip.answer) = Some((pending.command, approval(&answer.action)));
                }
                _ => tracing::info!("an answer that fits no open question: asking again"),
            }
        }
        Asking::RoundTrip(trip)
    }

    /// The `input_required` answer asking `question` about `command` for `request`.
    pub(crate) fn ask(
        &self,
        request: &CallToolRequestParams,
        command: String,
        question: String,
        owner: Option<usize>,
    ) -> InputRequiredResult {
        let state = uuid::Uuid::new_v4().simple().to_string();
        let mut pending = lock(&self.pending);
        pending.retain(|_, question| question.asked_at.elapsed() < ASK_TIMEOUT);
        if pending.len() >= PENDING_MAX
            && let Some(oldest) = pending
                .iter()
                .min_by_key(|(_, question)| question.asked_at)
                .map(|(state, _)| state.clone())
        {
            pending.remove(&oldest);
        }
        pending.insert(
            state.clone(),
            Pending {
                tool: request.name.to_string(),
                arguments: request.arguments.clone(),
                command,
                owner,
                asked_at: Instant::now(),
            },
        );
        let mut requests = InputRequests::new();
        requests.insert(
            APPROVE.into(),
            InputRequest::Elicitation(ElicitRequest::new(form(question))),
        );
        InputRequiredResult::new(Some(requests), Some(state))
    }
}

impl Pending {
    fn fits(&self, request: &CallToolRequestParams, owner: Option<usize>) -> bool {
        self.tool == request.name
            && self.arguments == request.arguments
            && self.owner == owner
            && self.asked_at.elapsed() < ASK_TIMEOUT
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
