//! Suggestions: the built-in sets of each host, `suggest` rules, and where a suggestion does
//! not apply (part of a pipeline or list, text that only looks like a command, a tool the
//! host lacks, a command the policy would not allow anyway).

use agent_bash_policy::{
    Decision, Policy, PolicyError, PolicySettings, RuleSpec, builtin_suggestions, hosts,
};

fn policy(settings: PolicySettings) -> Policy {
    Policy::new(&settings).unwrap_or_else(|err| panic!("{err}"))
}

fn host(name: &str) -> Policy {
    policy(PolicySettings {
        host: Some(name.to_owned()),
        ..PolicySettings::default()
    })
}

/// The tool `command` is sent to instead, under the set of `host`; `None` if it runs.
fn suggested(host_name: &str, command: &str) -> Option<String> {
    let verdict = host(host_name).check(command);
    assert_eq!(
        verdict.decision == Decision::Suggest,
        verdict.suggested_tool().is_some(),
        "{command}: {verdict:?}"
    );
    verdict.suggested_tool().map(str::to_owned)
}

/// `command` gets `tool` under `host_name`'s set, by the built-in suggestion `rule`.
fn check(host_name: &str, command: &str, rule: &str, tool: &str) {
    let verdict = host(host_name).check(command);
    assert_eq!(
        verdict.decision,
        Decision::Suggest,
        "{command}: {verdict:?}"
    );
    assert_eq!(verdict.rule.as_deref(), Some(rule), "{command}");
    assert_eq!(verdict.suggested_tool(), Some(tool), "{command}");
    let reason = verdict.reason.unwrap_or_default();
    assert!(reason.contains(&format!("`{tool}`")), "{command}: {reason}");
}

/// `command` runs under every host's set.
fn runs(command: &str) {
    for one in hosts() {
        assert_eq!(
            suggested(one.name, command),
            None,
            "{}: {command}",
            one.name
        );
    }
}

#[test]
fn reading_a_file_goes_to_the_read_tool() {
    for command in [
        "cat src/main.rs",
        "cat -n README.md",
        "cat a.txt b.txt",
        "'cat' x",
        "/bin/cat x",
        "head -n 20 x.log",
        "head -20 x.log",
        "tail -n +3 x.log",
        "tail --lines=5 x",
        "less notes.md",
        "cat x 2>/dev/null",
        "LC_ALL=C cat x",
    ] {
        check("claude-code", command, "suggest-read", "Read");
    }
    check("gemini-cli", "cat x", "suggest-read", "read_file");
    check("opencode", "cat x", "suggest-read", "read");
    for counter in [
        "cat",
        "cat -",
        "cat -A x",
        "cat /proc/cpuinfo",
        "cat /dev/stdin",
        "cat x > y",
        "cat x >> y",
        "cat < x",
        "cat $FILE",
        "cat *.rs",
        "tail -f x.log",
        "head -c 100 x",
        "sudo cat /etc/shadow",
        "timeout 5 cat x",
    ] {
        assert_eq!(suggested("claude-code", counter), None, "{counter}");
    }
    // Codex has no tool to read files.
    assert_eq!(suggested("codex", "cat x"), None);
}

#[test]
fn searching_contents_goes_to_the_search_tool() {
    for command in [
        "grep -r TODO .",
        "grep -rn 'fn main' src",
        "grep -R --include='*.rs' unwrap crates",
        "grep --recursive -i foo",
        "rg TODO",
        "rg -n 'fn main' src",
    ] {
        check("claude-code", command, "suggest-search", "Grep");
    }
    check("gemini-cli", "grep -r x .", "suggest-search", "grep_search");
    check("opencode", "rg x", "suggest-search", "grep");
    for counter in [
        "grep x file.txt",
        "grep -rv x .",
        "grep -A3r x .",
        "grep -r x /proc",
        "rg --files",
        "rg -r '$1' x",
        "rg --replace=y x",
        "rg --version",
        "grep -r \"$PATTERN\" .",
        "grep -r x . > matches.txt",
    ] {
        assert_eq!(suggested("claude-code", counter), None, "{counter}");
    }
    assert_eq!(suggested("codex", "grep -r x ."), None);
}

#[test]
fn finding_files_by_name_goes_to_the_glob_tool() {
    for command in [
        "find . -name '*.rs'",
        "find src tests -type f -name '*.py'",
        "find -iname readme.md",
        "find . -maxdepth 2 -path '*/src/*' -print",
        "find . \\( -name '*.c' -o -name '*.h' \\)",
    ] {
        check("claude-code", command, "suggest-glob", "Glob");
    }
    check("gemini-cli", "find . -name x", "suggest-glob", "glob");
    check("opencode", "find . -name x", "suggest-glob", "glob");
    for counter in [
        "find .",
        "find . -type d -name x",
        "find . -name '*.pyc' -delete",
        "find . -name x -exec cat {} ;",
        "find . -newer x -name y",
        "find . -name",
        "find . -name *.rs",
        "find /proc -name status",
    ] {
        assert_eq!(suggested("claude-code", counter), None, "{counter}");
    }
    assert_eq!(suggested("codex", "find . -name x"), None);
}

#[test]
fn editing_in_place_goes_to_the_edit_tool() {
    for command in [
        "sed -i s/a/b/ f",
        "sed -i.bak 's/a/b/g' f.txt",
        "sed -Ei 's/a+/b/' f",
        "sed --in-place -e 's/a/b/' -e 's/c/d/' f g",
        "sed -i -f script.sed f",
        "sed -ie 's/a/b/' f",
    ] {
        check("claude-code", command, "suggest-edit", "Edit");
    }
    check("codex", "sed -i s/a/b/ f", "suggest-edit", "apply_patch");
    check("gemini-cli", "sed -i s/a/b/ f", "suggest-edit", "replace");
    check("opencode", "sed -i s/a/b/ f", "suggest-edit", "edit");
    for counter in [
        "sed s/a/b/ f",
        "sed -n 1,10p f",
        "sed -i s/a/b/",
        "sed -i -e s/a/b/",
        "sed -i s/a/b/ *.txt",
        "sed -i \"s/a/$B/\" f",
        "find . -name x | xargs sed -i s/a/b/",
    ] {
        assert_eq!(suggested("claude-code", counter), None, "{counter}");
    }
}

#[test]
fn writing_a_file_goes_to_the_write_tool() {
    for command in [
        "echo hello > f.txt",
        "echo 'a b' >| f",
        "printf '%s\\n' a b > f",
        "cat > f.txt <<'EOF'\nline one\nline two\nEOF",
        "cat <<EOF > f.txt\nplain text\nEOF",
        "cat > f <<< 'one line'",
    ] {
        check("claude-code", command, "suggest-write", "Write");
    }
    check("codex", "echo x > f", "suggest-write", "apply_patch");
    check("gemini-cli", "echo x > f", "suggest-write", "write_file");
    check("opencode", "echo x > f", "suggest-write", "write");
    for counter in [
        "echo hello",
        "echo hello >> f.txt",
        "echo $HOME > f",
        "echo x > /dev/null",
        "echo x > /dev/stderr",
        "echo x > a > b",
        "cat a > b",
        "cat > f <<EOF\nhome is $HOME\nEOF",
        "cat > f <<EOF\nnow $(date)\nEOF",
        "tee f <<< x",
        "echo x > \"$OUT\"",
    ] {
        assert_eq!(suggested("claude-code", counter), None, "{counter}");
    }
}

#[test]
fn text_that_only_looks_like_a_command_is_not_one() {
    for command in [
        "echo \"cat x\"",
        "echo 'sed -i s/a/b/ f'",
        "git commit -m \"cat x\"",
        "printf 'grep -r x .\\n'",
    ] {
        runs(command);
    }
}

#[test]
fn only_a_whole_command_gets_a_suggestion() {
    // Part of a pipeline, a list, a substitution, a loop, a group, a launched script, or a
    // background job: the harness's tool would not do what the line does.
    for command in [
        "cat x | grep y",
        "grep -r x . | head",
        "cd src && cat main.rs",
        "cat x; echo done",
        "cat x || true",
        "echo $(cat x)",
        "diff <(cat a) b",
        "for f in a b; do cat $f; done",
        "while true; do cat x; done",
        "if test -f x; then cat x; fi",
        "(cat x)",
        "{ cat x; }",
        "bash -c 'cat x'",
        "cat x &",
        "time cat x",
        "! grep -r x .",
        "f() { cat x; }",
    ] {
        assert_eq!(suggested("claude-code", command), None, "{command}");
    }
}

#[test]
fn no_suggestion_without_the_tool() {
    // No host declared: nothing is suggested, whatever the command.
    assert_eq!(
        Policy::default().check("cat x").decision,
        Decision::Allow,
        "no host"
    );
    let none = host("none");
    assert_eq!(none.check("sed -i s/a/b/ f").decision, Decision::Allow);
    // A rule for a tool the host does not have is off.
    let rule = suggest_rule("cargo build *", "Build", None);
    let without = policy(PolicySettings {
        host: Some("claude-code".into()),
        rules: vec![rule.clone()],
        ..PolicySettings::default()
    });
    assert_eq!(
        without.check("cargo build --release").decision,
        Decision::Allow
    );
    let with = policy(PolicySettings {
        host_tools: vec!["Build".into()],
        rules: vec![rule],
        ..PolicySettings::default()
    });
    let verdict = with.check("cargo build --release");
    assert_eq!(verdict.decision, Decision::Suggest);
    assert_eq!(verdict.suggested_tool(), Some("Build"));
    assert_eq!(
        verdict.reason.as_deref(),
        Some("the host has the `Build` tool for this")
    );
    // host_tools alone turns on no built-in suggestion.
    assert_eq!(with.check("cat x").decision, Decision::Allow);
}

#[test]
fn a_built_in_suggestion_can_be_switched_off() {
    let settings = PolicySettings {
        host: Some("claude-code".into()),
        disable: vec!["suggest-read".into()],
        ..PolicySettings::default()
    };
    let policy = policy(settings);
    assert_eq!(policy.check("cat x").decision, Decision::Allow);
    assert_eq!(
        policy.check("grep -r x .").suggested_tool(),
        Some("Grep"),
        "the others stay on"
    );
}

#[test]
fn a_suggestion_never_loosens_the_policy() {
    // A deny or ask rule, a built-in, and the default decision stay what they are.
    let settings = PolicySettings {
        host: Some("claude-code".into()),
        default: Some(Decision::Ask),
        rules: vec![RuleSpec {
            name: Some("no-secrets".into()),
            decision: Decision::Deny,
            command: Some("cat .env".into()),
            regex: None,
            reason: Some("secrets".into()),
            tool: None,
            message: None,
            examples: Vec::new(),
            counter_examples: Vec::new(),
        }],
        ..PolicySettings::default()
    };
    let strict = policy(settings);
    assert_eq!(strict.check("cat .env").decision, Decision::Deny);
    assert_eq!(strict.check("cat x").decision, Decision::Ask);
    let claude = host("claude-code");
    assert_eq!(claude.check("echo x > /dev/sda").decision, Decision::Deny);
    assert_eq!(
        claude
            .check("sed -i s/a/b/ ~/.ssh/authorized_keys")
            .decision,
        Decision::Deny
    );
}

fn suggest_rule(command: &str, tool: &str, message: Option<&str>) -> RuleSpec {
    RuleSpec {
        name: None,
        decision: Decision::Suggest,
        command: Some(command.into()),
        regex: None,
        reason: None,
        tool: Some(tool.into()),
        message: message.map(str::to_owned),
        examples: Vec::new(),
        counter_examples: Vec::new(),
    }
}

#[test]
fn suggest_rules_come_first_and_match_the_command_as_written() {
    let mut rule = suggest_rule("cat *", "Read", Some("read files with Read"));
    rule.name = Some("my-read".into());
    // Examples are read as a suggestion reads a command: whole, as written.
    rule.examples = vec!["cat x".into()];
    rule.counter_examples = vec!["cat x | wc -l".into(), "sudo cat x".into()];
    let policy = policy(PolicySettings {
        host: Some("claude-code".into()),
        rules: vec![rule],
        ..PolicySettings::default()
    });
    let verdict = policy.check("cat x");
    assert_eq!(verdict.rule.as_deref(), Some("my-read"));
    assert_eq!(verdict.reason.as_deref(), Some("read files with Read"));
    assert_eq!(policy.check("sudo cat x").decision, Decision::Allow);
    // A regex sees the redirections too.
    let mut tee = suggest_rule("tee *", "Write", None);
    tee.command = None;
    tee.regex = Some("^tee [^ ]+ <<".into());
    let policy = super_policy(tee);
    assert_eq!(
        policy.check("tee f <<'EOF'\nx\nEOF").suggested_tool(),
        Some("Write")
    );
    assert_eq!(policy.check("tee f").decision, Decision::Allow);
}

fn super_policy(rule: RuleSpec) -> Policy {
    policy(PolicySettings {
        host: Some("claude-code".into()),
        rules: vec![rule],
        ..PolicySettings::default()
    })
}

#[test]
fn bad_suggestion_settings_are_refused() {
    let error = |settings: PolicySettings| Policy::new(&settings).unwrap_err();
    let mut no_tool = suggest_rule("cat *", "Read", None);
    no_tool.tool = None;
    assert!(matches!(
        error(PolicySettings {
            rules: vec![no_tool],
            ..PolicySettings::default()
        }),
        PolicyError::BadSuggestion { .. }
    ));
    let mut with_reason = suggest_rule("cat *", "Read", None);
    with_reason.reason = Some("why".into());
    assert!(matches!(
        error(PolicySettings {
            rules: vec![with_reason],
            ..PolicySettings::default()
        }),
        PolicyError::BadSuggestion { .. }
    ));
    let mut deny_with_tool = suggest_rule("cat *", "Read", None);
    deny_with_tool.decision = Decision::Deny;
    assert!(matches!(
        error(PolicySettings {
            rules: vec![deny_with_tool],
            ..PolicySettings::default()
        }),
        PolicyError::BadSuggestion { .. }
    ));
    let mut missed = suggest_rule("cat *", "Read", None);
    missed.examples = vec!["cat x | wc -l".into()];
    assert!(matches!(
        error(PolicySettings {
            rules: vec![missed],
            ..PolicySettings::default()
        }),
        PolicyError::ExampleNotMatched { .. }
    ));
    assert_eq!(
        error(PolicySettings {
            default: Some(Decision::Suggest),
            ..PolicySettings::default()
        }),
        PolicyError::SuggestNotAFallback { field: "default" }
    );
    let unknown = error(PolicySettings {
        host: Some("claude".into()),
        ..PolicySettings::default()
    });
    assert!(
        unknown
            .to_string()
            .contains("claude-code, codex, gemini-cli, opencode"),
        "{unknown}"
    );
    let disabled = error(PolicySettings {
        disable: vec!["suggest-reed".into()],
        ..PolicySettings::default()
    });
    assert!(disabled.to_string().contains("suggest-read"), "{disabled}");
}

#[test]
fn settings_read_suggest_rules_and_hosts_from_toml() {
    let settings: PolicySettings = toml::from_str(
        "host = \"opencode\"\nhost_tools = [\"lint\"]\n\
         [[rules]]\ndecision = \"suggest\"\ncommand = \"eslint *\"\ntool = \"lint\"\n\
         message = \"lint with the lint tool\"\nexamples = [\"eslint src\"]",
    )
    .unwrap();
    let policy = policy(settings.clone());
    assert_eq!(policy.check("eslint src").suggested_tool(), Some("lint"));
    assert_eq!(policy.check("cat x").suggested_tool(), Some("read"));
    let json = serde_json::to_value(policy.check("eslint .")).unwrap();
    assert_eq!(json["decision"], "suggest");
    assert_eq!(json["segments"][0]["tool"], "lint");
    // Written back, the table reads the same.
    let text = toml::to_string(&settings).unwrap();
    assert_eq!(toml::from_str::<PolicySettings>(&text).unwrap(), settings);
}

#[test]
fn every_set_names_only_built_in_suggestions_each_once() {
    let names: Vec<&str> = builtin_suggestions()
        .iter()
        .map(|(name, _)| *name)
        .collect();
    assert_eq!(
        names,
        [
            "suggest-read",
            "suggest-search",
            "suggest-glob",
            "suggest-edit",
            "suggest-write"
        ]
    );
    for one in hosts() {
        for (index, (suggestion, tool)) in one.tools.iter().enumerate() {
            assert!(names.contains(suggestion), "{}: {suggestion}", one.name);
            assert!(!tool.is_empty());
            assert!(
                !one.tools[..index]
                    .iter()
                    .any(|(other, _)| other == suggestion),
                "{}: {suggestion} twice",
                one.name
            );
        }
    }
}
