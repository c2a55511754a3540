//! Policy stage: decides from the command's parsed structure whether it runs, needs the
//! user's approval, or is refused (the `agent-bash-policy` crate), and words a refusal for
//! the model: the reason, the rule, and the configuration change that would allow it.

pub use agent_bash_policy::{
    Decision, Policy, PolicyError, PolicySettings, RuleSpec, Segment, Verdict, builtin_rules,
};

use serde::{Deserialize, Serialize};

use crate::settings::PROJECT_FILE;

/// `allow`, `ask` or `deny`, as the settings and the JSON spell them.
pub fn decision_name(decision: Decision) -> &'static str {
    match decision {
        Decision::Allow => "allow",
        Decision::Ask => "ask",
        Decision::Deny => "deny",
    }
}

/// Whether the user was asked about a command that needs approval, and what they said.
/// Set by the adapter that asked (MCP elicitation, the CLI's terminal prompt); a library
/// caller that sets nothing gets `ask` commands refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Approval {
    #[default]
    NotAsked,
    Approved,
    Declined,
}

/// Why a call was refused; nothing was run.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// `deny`, or `ask` when approval was needed and not given.
    pub decision: String,
    /// The rule that decided (a built-in's name, or a configured rule's name); `None` when
    /// the `unknown` or `default` setting decided.
    pub rule: Option<String>,
    pub reason: String,
    /// The simple command that decided, as its words.
    pub segment: Vec<String>,
    /// What would allow it.
    pub hint: Option<String>,
}

/// Words the refusal of `verdict` (a `deny`, or an `ask` that was not approved).
pub fn refusal(verdict: &Verdict, approval: Approval) -> Refusal {
    let deciding = verdict
        .segments
        .iter()
        .find(|segment| segment.decision == verdict.decision);
    let segment = deciding
        .map(|segment| segment.argv.clone())
        .unwrap_or_default();
    let rule = verdict.rule.clone();
    let builtin = rule
        .as_deref()
        .is_some_and(|rule| builtin_rules().iter().any(|(name, _)| *name == rule));
    let mut reason = verdict
        .reason
        .clone()
        .unwrap_or_else(|| match verdict.decision {
            Decision::Deny => "the policy's default decision is deny".to_string(),
            _ => "the policy's default decision is ask".to_string(),
        });
    let hint = match (verdict.decision, &rule) {
        (Decision::Deny, Some(rule)) if builtin => Some(format!(
            "`{rule}` is a built-in rule; if this command is really wanted, a person can switch \
             the rule off with `disable = [\"{rule}\"]` under [policy] in {PROJECT_FILE}"
        )),
        (Decision::Deny, Some(rule)) => Some(format!(
            "the configured rule `{rule}` denies this; a person can change it in the \
             configuration (`agent-bash config` shows where each setting comes from)"
        )),
        (Decision::Deny, None) => Some(format!(
            "no rule allows this command and the default is deny; a person can add an allow \
             rule under [[policy.rules]] in {PROJECT_FILE}"
        )),
        (_, _) => {
            match approval {
                Approval::Declined => reason = format!("the user declined: {reason}"),
                _ => {
                    reason = format!(
                        "{reason}; it needs the user's approval, and there is no way to ask"
                    );
                }
            }
            Some(allow_hint(&segment, rule.as_deref(), builtin))
        }
    };
    Refusal {
        decision: decision_name(verdict.decision).to_string(),
        rule,
        reason,
        segment,
        hint,
    }
}

/// The configuration that would run an `ask` command without asking.
fn allow_hint(segment: &[String], rule: Option<&str>, builtin: bool) -> String {
    match rule {
        Some(rule) if !builtin => format!(
            "the configured rule `{rule}` asks for approval; to allow without asking, a \
             person can change it to decision = \"allow\""
        ),
        None if segment.is_empty() || !is_literal(&segment[0]) => format!(
            "the command could not be read as plain commands; run it in a plainer form \
             (a literal command name), or a person can set `unknown = \"allow\"` under \
             [policy] in {PROJECT_FILE}"
        ),
        _ => {
            let pattern = format!(
                "{} *",
                segment
                    .iter()
                    .take(2)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            format!(
                "to allow it without asking, a person can add to {PROJECT_FILE}: \
                 [[policy.rules]] decision = \"allow\" command = {}",
                toml_string(&pattern)
            )
        }
    }
}

fn is_literal(word: &str) -> bool {
    !word.contains(['$', '`', '*', '?', '['])
}

fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}
