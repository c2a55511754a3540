//! What `Policy::new` checks and compiles from a `PolicySettings`: the names `disable` may
//! use, the fallback decisions, the host set, and the user rules split into rules and
//! suggestions.

use crate::{Decision, PolicyError, PolicySettings, builtin, hosts, rules, suggest};

/// A `disable` list must name built-in rules or suggestions.
pub(super) fn check_disabled(disable: &[String]) -> Result<(), PolicyError> {
    let builtin_names = builtin::BUILTINS.iter().map(|builtin| builtin.name);
    let suggestion_names = suggest::BUILTIN_SUGGESTIONS.iter().map(|one| one.name);
    let known: Vec<&str> = builtin_names.chain(suggestion_names).collect();
    match disable.iter().find(|name| !known.contains(&name.as_str())) {
        Some(name) => Err(PolicyError::UnknownBuiltin {
            name: name.clone(),
            known: known.join(", "),
        }),
        None => Ok(()),
    }
}

/// `default` and `unknown` may not be `suggest`: only a rule suggests.
pub(super) fn check_fallbacks(settings: &PolicySettings) -> Result<(), PolicyError> {
    for (field, decision) in [("default", settings.default), ("unknown", settings.unknown)] {
        if decision == Some(Decision::Suggest) {
            return Err(PolicyError::SuggestNotAFallback { field });
        }
    }
    Ok(())
}

/// The built-in host set `host` names, if any (`none` names none).
pub(super) fn host(
    settings: &PolicySettings,
) -> Result<Option<&'static suggest::Host>, PolicyError> {
    Ok(match settings.host.as_deref() {
        None | Some(suggest::NO_HOST) => None,
        Some(name) => Some(suggest::host(name).ok_or_else(|| {
            PolicyError::UnknownHost {
                name: name.to_owned(),
                known: hosts()
                    .iter()
                    .map(|host| host.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        })?),
    })
}

/// The user rules compiled: the `suggest` rules whose tool the host has, as suggestions,
/// and every other rule.
pub(super) fn compile_rules(
    settings: &PolicySettings,
    host: Option<&suggest::Host>,
) -> Result<(Vec<rules::Rule>, Vec<suggest::Suggestion>), PolicyError> {
    let tools = suggest::host_tools(host, &settings.host_tools);
    let mut rules = Vec::new();
    let mut suggestions = Vec::new();
    for (index, spec) in settings.rules.iter().enumerate() {
        let rule = rules::Rule::compile(index + 1, spec)?;
        match spec.tool.as_deref() {
            // A suggestion for a tool the host lacks would send the model nowhere.
            Some(tool) if spec.decision == Decision::Suggest => {
                if tools.iter().any(|known| known == tool) {
                    let message = spec.message.as_deref();
                    suggestions.push(suggest::Suggestion::of_rule(rule, tool, message));
                }
            }
            _ => rules.push(rule),
        }
    }
    Ok((rules, suggestions))
}
