//! How the policy's decisions are worded for the model: a decision's name, a refusal with
//! what would allow it (settings to add, rules to change), a suggestion and how to run it
//! anyway. Low in the crate, so that the settings, the pipeline and the terminals share it.

use std::fmt::Write as _;

use super::{Allowance, Approval, Decision, PolicySettings, Refusal, Verdict, builtin_rules};

/// `allow`, `suggest`, `ask` or `deny`, as the settings and the JSON spell them.
pub fn decision_name(decision: Decision) -> &'static str {
    match decision {
        Decision::Allow => "allow",
        Decision::Suggest => "suggest",
        Decision::Ask => "ask",
        Decision::Deny => "deny",
    }
}

/// What a suggestion's result tells the model about running the command anyway.
pub(crate) const RUN_ANYWAY: &str =
    "a suggestion, not a refusal: to run it in the shell anyway, send the same command again";

/// The result of a call the policy decided `suggest` on: the host's tool, the message, and
/// how to run it anyway (`RUN_ANYWAY`).
pub(crate) fn suggestion(verdict: &Verdict) -> Refusal {
    let segment = verdict
        .segments
        .iter()
        .find(|segment| segment.decision == Decision::Suggest)
        .map(|segment| segment.argv.clone())
        .unwrap_or_default();
    Refusal {
        decision: Decision::Suggest,
        rule: verdict.rule.clone(),
        reason: verdict.reason.clone().unwrap_or_default(),
        segment,
        hint: Some(RUN_ANYWAY.to_owned()),
        tool: verdict.suggested_tool().map(str::to_owned),
    }
}

/// Words the refusal of `verdict` (a `deny`, or an `ask` that was not approved).
/// `allowance` is what would allow the command (`Policy::allowing`): its settings are offered
/// for the person's own settings file `user_file`.
pub(crate) fn refusal(
    verdict: &Verdict,
    approval: Approval,
    allowance: Option<&Allowance>,
    user_file: &str,
) -> Refusal {
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
    let mut reason = verdict.reason.clone().unwrap_or_else(|| {
        let what = if verdict.decision == Decision::Deny {
            "deny"
        } else {
            "ask"
        };
        match &rule {
            Some(rule) => format!("the configured rule `{rule}` says {what}"),
            None => format!("the policy's default decision is {what}"),
        }
    });
    if verdict.decision != Decision::Deny {
        reason = match approval {
            Approval::Declined => format!("the user declined: {reason}"),
            Approval::Deferred => format!("{reason}; the client is asked for the user's approval"),
            Approval::NotAsked | Approval::Approved => {
                format!("{reason}; it needs the user's approval, and there is no way to ask")
            }
        };
    }
    let hint = allow_hint(rule.as_deref(), builtin, allowance, user_file);
    Refusal {
        decision: verdict.decision,
        rule,
        reason,
        segment,
        hint: Some(hint),
        tool: None,
    }
}

/// What a person can do to have the refused command run: settings to add, configured rules
/// to change; or, when nothing would, how the model can write it instead.
fn allow_hint(
    rule: Option<&str>,
    builtin: bool,
    allowance: Option<&Allowance>,
    user_file: &str,
) -> String {
    let plainer = "run it in a plainer form: literal command names, no script read from a pipe";
    let Some(allowance) = allowance else {
        return plainer.to_string();
    };
    let additions = &allowance.additions;
    let snippet = if *additions == PolicySettings::default() {
        None
    } else {
        match settings_snippet(additions) {
            Some(snippet) => Some(snippet),
            None => return plainer.to_string(),
        }
    };
    let mut hint = match rule {
        Some(rule) if builtin => {
            format!("`{rule}` is a built-in rule; if this command is really wanted, a person can")
        }
        Some(_) => "if this command is really wanted, a person can".to_string(),
        None if additions.unknown.is_some() => {
            "run it in a plainer form (literal command names), or a person can".to_string()
        }
        None => "to run it without asking, a person can".to_string(),
    };
    if let Some(snippet) = &snippet {
        let _ = write!(
            hint,
            " add to {user_file} (into its [policy] table if it has one):\n{snippet}"
        );
    }
    if !allowance.rules_to_change.is_empty() {
        let names: Vec<String> = allowance
            .rules_to_change
            .iter()
            .map(|name| format!("`{name}`"))
            .collect();
        let _ = write!(
            hint,
            "{} change or remove the configured rule{} {} (`agent-bash config` shows which \
             file sets it)",
            if snippet.is_some() { "\nand" } else { "" },
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        );
    }
    hint
}

/// Settings additions as the lines of a settings file, indented by two spaces; `None` if
/// they are too long to show whole (half a snippet would not load).
fn settings_snippet(additions: &PolicySettings) -> Option<String> {
    #[derive(serde::Serialize)]
    struct Layer<'a> {
        policy: &'a PolicySettings,
    }
    let text = toml::to_string(&Layer { policy: additions }).ok()?;
    let snippet: String = text
        .lines()
        .filter(|line| !line.is_empty())
        .map(|line| format!("  {line}\n"))
        .collect();
    (snippet.len() <= MAX_SNIPPET_BYTES).then(|| snippet.trim_end().to_string())
}

/// The longest settings snippet a hint shows.
pub(crate) const MAX_SNIPPET_BYTES: usize = 1_000;
