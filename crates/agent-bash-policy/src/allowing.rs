//! What settings would allow a refused command: the additions a person can make to their
//! settings file, checked to work before they are offered.
//!
//! Pure: parses and matches, runs nothing.

use std::collections::BTreeSet;

use crate::walk;
use crate::words::{Arg, Found};
use crate::{Allowance, Decision, Policy, PolicySettings, RuleSpec, rules};

/// How many leading words of a command an offered allow rule names; the rest match any
/// words (`git push *`), so that the rule also covers the next call with other arguments.
const PATTERN_WORDS: usize = 2;

/// What would allow `command`: settings to add (built-in rules to switch off, `unknown =
/// "allow"`, allow rules for commands the default decision refuses), and configured `ask` or
/// `deny` rules to change (an added allow rule never outweighs one), checked to allow it
/// together. `None` when the command is allowed already, nothing found would allow it, or
/// the text does not parse as a whole (what else it runs is not known).
pub(crate) fn allowing(policy: &Policy, command: &str) -> Option<Allowance> {
    // A suggestion is not a refusal: the command runs when it is sent again.
    if matches!(
        policy.check(command).decision,
        Decision::Allow | Decision::Suggest
    ) {
        return None;
    }
    let mut disable = BTreeSet::new();
    let mut unknown = false;
    let mut patterns = BTreeSet::new();
    let mut to_change = BTreeSet::new();
    let found = walk::walk(command, &policy.env);
    // A text that could not be read in full: no settings are known to be safe to offer.
    if found.iter().any(|found| found.unparsed) {
        return None;
    }
    for found in found {
        let mut matched = false;
        for rule in policy.rules.iter().filter(|rule| rule.matches(&found)) {
            if rule.decision > Decision::Allow {
                to_change.insert(rule.name.clone());
            }
            matched = true;
        }
        for builtin in policy.builtins.iter().filter(|b| b.matches(&found)) {
            disable.insert(builtin.name.to_owned());
            matched = true;
        }
        if found.unknown.is_some() {
            unknown |= policy.unknown > Decision::Allow;
        } else if !matched && !found.launcher && policy.default > Decision::Allow {
            patterns.insert(pattern(&found)?);
        }
    }
    let additions = PolicySettings {
        unknown: unknown.then_some(Decision::Allow),
        disable: disable.into_iter().collect(),
        rules: patterns
            .into_iter()
            .map(|command| RuleSpec {
                name: None,
                decision: Decision::Allow,
                command: Some(command),
                regex: None,
                reason: None,
                tool: None,
                message: None,
                examples: Vec::new(),
                counter_examples: Vec::new(),
            })
            .collect(),
        ..PolicySettings::default()
    };
    let allowance = Allowance {
        additions,
        rules_to_change: to_change.into_iter().collect(),
    };
    let loosened = loosen(policy, &allowance)?;
    (loosened.check(command).decision == Decision::Allow).then_some(allowance)
}

/// `policy` with the additions applied as a later settings layer would apply them, and the
/// rules to change removed.
fn loosen(policy: &Policy, allowance: &Allowance) -> Option<Policy> {
    let additions = &allowance.additions;
    let mut loosened = policy.clone();
    loosened
        .rules
        .retain(|rule| !allowance.rules_to_change.contains(&rule.name));
    loosened
        .builtins
        .retain(|builtin| !additions.disable.iter().any(|name| name == builtin.name));
    if let Some(unknown) = additions.unknown {
        loosened.unknown = unknown;
    }
    for spec in &additions.rules {
        let index = loosened.rules.len() + 1;
        loosened.rules.push(rules::Rule::compile(index, spec).ok()?);
    }
    Some(loosened)
}

/// An allow pattern for the command: its first words, shell-quoted, then `*` for the rest.
/// A word the shell expands matches as its source text, so it is left to a `*`.
fn pattern(found: &Found) -> Option<String> {
    let argv: &[Arg] = &found.argv;
    let first = argv.first()?;
    if !first.is_plain() {
        return None;
    }
    let mut words: Vec<String> = argv
        .iter()
        .take(PATTERN_WORDS)
        .map(|arg| {
            if arg.is_plain() {
                shell_quote(&arg.text)
            } else {
                "*".to_owned()
            }
        })
        .collect();
    if argv.len() > PATTERN_WORDS {
        words.push("*".to_owned());
    }
    Some(words.join(" "))
}

/// `text` as one shell word: as it is when it needs no quoting, else single-quoted.
fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"-_./=:,+@%^".contains(&byte));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_quote_words_and_leave_expansions_to_a_star() {
        assert_eq!(shell_quote("git"), "git");
        assert_eq!(shell_quote("it's *"), r"'it'\''s *'");
        assert_eq!(shell_quote(""), "''");
        let policy = Policy {
            default: Decision::Ask,
            ..Policy::default()
        };
        let offered = |command: &str| {
            allowing(&policy, command)
                .map(|allowance| {
                    let rules = allowance.additions.rules.into_iter();
                    rules.filter_map(|rule| rule.command)
                })
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
        };
        assert_eq!(offered("git push origin main"), ["git push *"]);
        assert_eq!(offered("ls"), ["ls"]);
        assert_eq!(offered("echo \"$HOME\" x"), ["echo * *"]);
        assert_eq!(
            offered("printf '%s *' a | wc -l"),
            ["printf '%s *' *", "wc -l"]
        );
    }

    #[test]
    fn configured_rules_in_the_way_are_named_and_the_rest_is_added() {
        let settings: PolicySettings = PolicySettings {
            rules: vec![RuleSpec {
                name: Some("no-touch".to_owned()),
                decision: Decision::Ask,
                command: Some("touch *".to_owned()),
                regex: None,
                reason: None,
                tool: None,
                message: None,
                examples: Vec::new(),
                counter_examples: Vec::new(),
            }],
            ..PolicySettings::default()
        };
        let policy = Policy::new(&settings).expect("compiles");
        let allowance = allowing(&policy, "touch a; mkfs.ext4 /dev/sdz").expect("some way");
        assert_eq!(allowance.rules_to_change, ["no-touch"]);
        assert_eq!(allowance.additions.disable, ["mkfs"]);
        let allowance = allowing(&policy, "touch a").expect("some way");
        assert_eq!(allowance.additions, PolicySettings::default());
    }
}
