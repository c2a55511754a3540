//! Policy stage: decides from the command's parsed structure whether it runs, needs the
//! user's approval, or is refused (the `agent-bash-policy` crate). A refusal is worded by
//! `refusal::refusal`: the reason, the rule, and the configuration change that would allow
//! it; a suggestion (the host has a tool for the command) by `refusal::suggestion`.

mod refusal;

pub use refusal::decision_name;
pub(crate) use refusal::{MAX_SNIPPET_BYTES, refusal, suggestion};

pub use agent_bash_policy::{
    Allowance, Decision, Host, Policy, PolicySettings, RuleSpec, Segment, Verdict, builtin_rules,
    builtin_suggestions, hosts,
};

use std::future::Future;

use crate::snapshot::Definitions;

use serde::{Deserialize, Serialize};

/// Whether the user was asked about a command that needs approval, and what they said.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Approval {
    /// Nobody was asked: the decision was not `ask`, or there was no one to ask
    /// (`NoApprover`). An `ask` command is then refused.
    #[default]
    NotAsked,
    /// The user allowed the command to run.
    Approved,
    /// The user refused the command; it is not run.
    Declined,
    /// The question goes back to the client in the call's answer (MCP 2026-07-28's
    /// `input_required` result), which asks the user and calls again with the answer:
    /// nothing runs now, not even confined.
    Deferred,
}

/// Why a call was refused; nothing was run. A suggestion is one too (`decision` `suggest`):
/// the host has a tool for the command, and sending it again runs it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// `deny`, or `ask` when approval was needed and not given, or `suggest`.
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub decision: Decision,
    /// The rule that decided (a built-in's name, or a configured rule's name); `None` when
    /// the `unknown` or `default` setting decided.
    pub rule: Option<String>,
    /// Why, in words for the model: the deciding rule's reason (or that the default decided),
    /// and for `ask`, that the user declined or could not be asked.
    pub reason: String,
    /// The simple command that decided, as its words.
    pub segment: Vec<String>,
    /// What would allow it.
    pub hint: Option<String>,
    /// For `suggest`: the host's tool to use instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// Asks the user whether a command the policy wants approved (`ask`) may run. The engine
/// calls it once, with the verdict of its one parse of the command; adapters implement it
/// (MCP through elicitation, the CLI on its terminal). `NoApprover` asks nobody: `ask`
/// commands are refused.
pub trait Approver {
    /// The user's answer about `command`, which the policy's `verdict` wants approved.
    fn approve(&self, command: &str, verdict: &Verdict) -> impl Future<Output = Approval> + Send;
}

/// Asks nobody: every `ask` is refused (with a hint saying what would allow it).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoApprover;

impl Approver for NoApprover {
    async fn approve(&self, _command: &str, _verdict: &Verdict) -> Approval {
        Approval::NotAsked
    }
}

/// The pipeline's one parse of a call's command. When the caller decided (this session is
/// another agent-bash's target, whose policy allowed the command, or its user approved it,
/// before sending it), the command is allowed without a second look.
pub(crate) fn check(
    policy: &Policy,
    command: &str,
    caller_decided: bool,
    shell: &Definitions,
) -> Verdict {
    if caller_decided {
        return Verdict {
            decision: Decision::Allow,
            segments: Vec::new(),
            reason: Some("decided by the agent-bash that sent it".into()),
            rule: None,
        };
    }
    #[cfg(test)]
    CHECKS.with(|checks| checks.set(checks.get() + 1));
    through_definitions(policy, policy.check(command), shell, &mut Vec::new())
}

/// An alias's text with the call's other words, as bash expands it: a text that ends in a
/// blank makes the next word an alias call too (`alias pre='sudo '`, then `pre wipe`).
fn alias_expansion(shell: &Definitions, alias: &str, rest: &[String]) -> String {
    let mut text = alias.to_owned();
    let mut rest = rest;
    while text.ends_with([' ', '\t'])
        && let Some((next, after)) = rest.split_first()
        && let Some(more) = shell.aliases.get(next)
        && text.len() < 4096
    {
        text.push_str(more);
        rest = after;
    }
    format!("{text} {}", rest.join(" "))
}

/// The verdict on a command whose words may call the shell snapshot's aliases and functions:
/// each such call is judged by its body as well (an alias by its text and the call's other
/// words, a function by its definition), and the stricter decision holds. An alias is not
/// expanded inside itself (`alias ls='ls --color'`), as in bash; nesting stops at four.
fn through_definitions(
    policy: &Policy,
    mut verdict: Verdict,
    shell: &Definitions,
    expanding: &mut Vec<String>,
) -> Verdict {
    if expanding.len() >= 4 || (shell.aliases.is_empty() && shell.functions.is_empty()) {
        return verdict;
    }
    let called: Vec<Vec<String>> = verdict.segments.iter().map(|s| s.argv.clone()).collect();
    for argv in called {
        let Some(name) = argv.first().filter(|name| !expanding.contains(name)) else {
            continue;
        };
        let (kind, body) = if let Some(alias) = shell.aliases.get(name) {
            ("an alias", alias_expansion(shell, alias, &argv[1..]))
        } else if let Some(function) = shell.functions.get(name) {
            ("a function", function.clone())
        } else {
            continue;
        };
        expanding.push(name.clone());
        let inner = through_definitions(policy, policy.check(&body), shell, expanding);
        expanding.pop();
        // A suggestion is about the command as typed (a harness's tool instead of it), not
        // about what a definition runs inside.
        if inner.decision > verdict.decision && inner.decision != Decision::Suggest {
            let why = inner.reason.as_deref().unwrap_or("its body decides");
            verdict.decision = inner.decision;
            verdict.reason = Some(format!(
                "`{name}` is {kind} of your shell (shell.snapshot) that runs `{}`: {why}",
                body.lines().map(str::trim).collect::<Vec<_>>().join(" ")
            ));
            verdict.rule = inner.rule;
        }
    }
    verdict
}

#[cfg(test)]
thread_local! {
    /// Commands this thread's sessions parsed (tests count parses per call with it).
    pub(crate) static CHECKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}
