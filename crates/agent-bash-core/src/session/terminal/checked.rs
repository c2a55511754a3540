//! What the policy decides on a terminal's command or on the lines typed at its shell
//! prompt, and the audit log's record of each terminal action.

use std::path::Path;

use crate::audit;
use crate::policy::{self, Approval, Approver, Decision, Refusal};
use crate::session::Session;
use crate::terminal_answer::TerminalNote;

/// A policy decision on something a terminal runs.
pub(super) struct Checked {
    pub(super) decision: &'static str,
    pub(super) rule: Option<String>,
    pub(super) refusal: Option<Refusal>,
}

impl Checked {
    /// For what the policy does not look at (input to a program other than a shell).
    pub(super) fn unchecked() -> Checked {
        Checked {
            decision: "unchecked",
            rule: None,
            refusal: None,
        }
    }
}

/// The policy's decision on `command` (one parse; `ask` goes to `approver`), and the
/// refusal when it may not run.
pub(super) async fn check(
    session: &Session,
    command: &str,
    approver: &impl Approver,
    caller_decided: bool,
) -> Checked {
    let shell = session.shell.definitions();
    let mut verdict = policy::check(&session.policy, command, caller_decided, &shell.definitions);
    if verdict.decision == Decision::Suggest {
        // A terminal is where the shell itself is wanted: a suggestion is for `bash` calls.
        verdict.decision = Decision::Allow;
        verdict.rule = None;
        verdict.reason = None;
    }
    let approval = match verdict.decision {
        Decision::Ask => approver.approve(command, &verdict).await,
        Decision::Allow | Decision::Suggest | Decision::Deny => Approval::NotAsked,
    };
    let refused = match verdict.decision {
        Decision::Allow | Decision::Suggest => false,
        Decision::Ask => approval != Approval::Approved,
        Decision::Deny => true,
    };
    let refusal = refused.then(|| {
        policy::refusal(
            &verdict,
            approval,
            session.policy.allowing(command).as_ref(),
            &session.user_file(),
        )
    });
    Checked {
        decision: policy::decision_name(verdict.decision),
        rule: verdict.rule.clone(),
        refusal,
    }
}

/// Appends an action on terminal `id` to the audit log; a failure to is a note.
pub(super) fn record(
    session: &Session,
    id: u64,
    action: &'static str,
    command: &str,
    cwd: &Path,
    checked: &Checked,
    ran: bool,
) -> Option<TerminalNote> {
    let path = match session.audit_path() {
        Ok(Some(path)) => path,
        Ok(None) => return None,
        Err(error) => return Some(TerminalNote::AuditFailed { error }),
    };
    let entry = audit::Entry::terminal(
        id,
        action,
        command,
        cwd,
        checked.decision,
        checked.rule.as_deref(),
        ran,
    );
    audit::append(&path, &entry)
        .err()
        .map(|error| TerminalNote::AuditFailed { error })
}
