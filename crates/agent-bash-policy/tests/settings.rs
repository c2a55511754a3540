//! Loading policy settings: every kind of configuration error, `disable`, and the shapes the
//! settings loader and the MCP adapter rely on (TOML in, JSON out).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_bash_policy::{Decision, Policy, PolicyError, PolicySettings, builtin_rules};

fn load(toml_text: &str) -> Result<Policy, PolicyError> {
    let settings: PolicySettings = toml::from_str(toml_text).unwrap();
    Policy::new(&settings)
}

fn refused(toml_text: &str) -> (PolicyError, String) {
    let error = load(toml_text).expect_err("the settings should be refused");
    let message = error.to_string();
    (error, message)
}

#[test]
fn a_rule_without_command_or_regex_is_refused() {
    let (error, message) = refused("[[rules]]\nname = \"empty\"\ndecision = \"deny\"");
    assert!(
        matches!(error, PolicyError::MissingPattern { .. }),
        "{error:?}"
    );
    assert_eq!(
        message,
        "policy rule 1 (\"empty\"): needs `command` or `regex` (or both)"
    );
}

#[test]
fn empty_patterns_are_refused() {
    let (error, message) = refused("[[rules]]\ndecision = \"deny\"\ncommand = \"  \"");
    assert!(
        matches!(
            error,
            PolicyError::EmptyPattern {
                field: "command",
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        message.contains("rule 1") && message.contains("`command` is empty"),
        "{message}"
    );

    let (error, message) = refused("[[rules]]\ndecision = \"deny\"\nregex = \"\"");
    assert!(
        matches!(error, PolicyError::EmptyPattern { field: "regex", .. }),
        "{error:?}"
    );
    assert!(message.contains("`regex` is empty"), "{message}");
}

#[test]
fn a_pattern_with_shell_syntax_or_open_quote_is_refused() {
    let (error, message) = refused("[[rules]]\ndecision = \"deny\"\ncommand = \"ls | wc\"");
    assert!(matches!(error, PolicyError::BadCommand { .. }), "{error:?}");
    assert!(message.contains("`|` is shell syntax"), "{message}");

    let (error, message) = refused("[[rules]]\ndecision = \"deny\"\ncommand = \"echo 'open\"");
    assert!(matches!(error, PolicyError::BadCommand { .. }), "{error:?}");
    assert!(message.contains("not closed"), "{message}");

    let (_, message) = refused("[[rules]]\ndecision = \"deny\"\ncommand = \"*\"");
    assert!(message.contains("name at least the command"), "{message}");
}

#[test]
fn a_bad_regex_is_refused_with_the_rule_named() {
    let (error, message) = refused(
        "[[rules]]\ndecision = \"allow\"\ncommand = \"ls\"\n\n[[rules]]\nname = \"broken\"\ndecision = \"deny\"\nregex = \"(unclosed\"",
    );
    assert!(matches!(error, PolicyError::BadRegex { .. }), "{error:?}");
    assert!(
        message.starts_with("policy rule 2 (\"broken\"): `regex`: "),
        "{message}"
    );
}

#[test]
fn an_example_that_does_not_match_is_refused() {
    let (error, message) = refused(
        "[[rules]]\ndecision = \"deny\"\ncommand = \"git push --force *\"\nexamples = [\"git push --force x\", \"git push -f x\"]",
    );
    assert_eq!(
        error,
        PolicyError::ExampleNotMatched {
            rule: "policy rule 1 (command \"git push --force *\")".to_owned(),
            example: "git push -f x".to_owned(),
        }
    );
    assert_eq!(
        message,
        "policy rule 1 (command \"git push --force *\"): `examples`: \"git push -f x\" does not match the rule"
    );
}

#[test]
fn a_counter_example_that_matches_is_refused() {
    let (error, message) = refused(
        "[[rules]]\nname = \"publish\"\ndecision = \"deny\"\ncommand = \"npm publish *\"\ncounter_examples = [\"npm test\", \"sudo npm publish\"]",
    );
    assert!(
        matches!(&error, PolicyError::CounterExampleMatched { example, .. } if example == "sudo npm publish"),
        "{error:?}"
    );
    assert!(
        message.contains("`counter_examples`: \"sudo npm publish\" matches the rule"),
        "{message}"
    );
}

#[test]
fn examples_are_checked_through_nesting_and_regexes() {
    let policy = load(
        r#"
        [[rules]]
        decision = "deny"
        regex = '^terraform (apply|destroy)\b'
        examples = ["terraform apply -auto-approve", "cd infra && terraform destroy"]
        counter_examples = ["terraform plan", "echo terraform apply"]

        [[rules]]
        decision = "ask"
        command = "docker rm *"
        regex = ' -f\b'
        examples = ["bash -c 'docker rm -f web'"]
        counter_examples = ["docker rm web"]
        "#,
    );
    let policy = policy.unwrap();
    assert_eq!(policy.check("terraform apply").decision, Decision::Deny);
    assert_eq!(policy.check("docker rm -f web db").decision, Decision::Ask);
    assert_eq!(
        policy.check("kubectl delete pod x").decision,
        Decision::Allow
    );
}

#[test]
fn disable_switches_builtins_off_by_name() {
    let default = Policy::default();
    assert_eq!(default.check("reboot").rule.as_deref(), Some("shutdown"));
    let policy = load("disable = [\"shutdown\"]").unwrap();
    assert_eq!(policy.check("reboot").decision, Decision::Allow);
    assert_eq!(policy.check("rm -rf /").decision, Decision::Deny);

    let (error, message) = refused("disable = [\"shutdown\", \"rm-everything\"]");
    assert!(
        matches!(&error, PolicyError::UnknownBuiltin { name, .. } if name == "rm-everything"),
        "{error:?}"
    );
    assert!(
        message.starts_with("policy `disable`: \"rm-everything\" is not a built-in rule"),
        "{message}"
    );
    assert!(
        message.contains("rm-root"),
        "the message lists the known names: {message}"
    );
}

#[test]
fn builtin_rules_list_every_rule_by_a_stable_name() {
    let names: Vec<&str> = builtin_rules().iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        [
            "rm-root",
            "rm-system-dir",
            "no-preserve-root",
            "find-delete-root",
            "mkfs",
            "dd-block-device",
            "redirect-block-device",
            "wipe-block-device",
            "fork-bomb",
            "chmod-root",
            "download-to-shell",
            "shutdown",
            "project-history",
            "user-files",
            "disk-write",
            "firmware",
            "kernel",
            "privilege",
            "persistence",
            "system-packages",
            "remote-destroy",
            "reverse-shell",
            "secret-exfiltration",
            "kill-all",
        ]
    );
    for (name, description) in builtin_rules() {
        assert!(!description.is_empty(), "{name}");
        // Each one can be switched off on its own.
        let settings = PolicySettings {
            disable: vec![(*name).to_owned()],
            ..PolicySettings::default()
        };
        assert!(Policy::new(&settings).is_ok(), "{name}");
    }
}

#[test]
fn settings_refuse_unknown_fields_and_decisions() {
    assert!(toml::from_str::<PolicySettings>("defualt = \"ask\"").is_err());
    assert!(toml::from_str::<PolicySettings>("default = \"maybe\"").is_err());
    assert!(
        toml::from_str::<PolicySettings>(
            "[[rules]]\ndecision = \"deny\"\ncommand = \"x\"\nexample = [\"x\"]"
        )
        .is_err()
    );
    let settings: PolicySettings = toml::from_str("default = \"ask\"\nunknown = \"deny\"").unwrap();
    assert_eq!(settings.default, Some(Decision::Ask));
    assert_eq!(settings.unknown, Some(Decision::Deny));
    assert_eq!(PolicySettings::default(), toml::from_str("").unwrap());
}

#[test]
fn verdicts_serialize_with_lowercase_decisions() {
    let verdict = Policy::default().check("rm -rf /");
    let json = serde_json::to_value(&verdict).unwrap();
    let reason = verdict.reason.clone().unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "decision": "deny",
            "segments": [{"argv": ["rm", "-rf", "/"], "decision": "deny", "rule": "rm-root", "reason": reason}],
            "reason": reason,
            "rule": "rm-root",
        })
    );
    let json = serde_json::to_value(Policy::default().check("ls 2>&1")).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "decision": "allow",
            "segments": [{"argv": ["ls"], "decision": "allow", "rule": null, "redirects": ["2>&1"]}],
            "reason": null,
            "rule": null,
        })
    );
    assert!(Decision::Allow < Decision::Ask && Decision::Ask < Decision::Deny);
}

#[test]
fn the_deciding_segment_is_the_first_strongest_one() {
    let policy = load(
        r#"
        [[rules]]
        name = "first"
        decision = "ask"
        command = "git *"
        reason = "git asks"
        [[rules]]
        name = "second"
        decision = "ask"
        command = "npm *"
        "#,
    )
    .unwrap();
    let verdict = policy.check("ls && npm i && git status");
    assert_eq!(verdict.decision, Decision::Ask);
    assert_eq!(verdict.rule.as_deref(), Some("second"));
    assert_eq!(verdict.segments.len(), 3);
    let decisions: Vec<Decision> = verdict
        .segments
        .iter()
        .map(|segment| segment.decision)
        .collect();
    assert_eq!(decisions, [Decision::Allow, Decision::Ask, Decision::Ask]);
}
