//! Inputs built to hurt: deep nesting, long inputs, and what fuzzing found. `check` must
//! return a verdict for each (on a test thread's 2 MiB stack, in a debug build), never panic,
//! hang or overflow the stack.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_bash_policy::{Decision, Policy};

fn check(command: &str) -> Decision {
    Policy::default().check(command).decision
}

#[test]
fn deep_nesting_is_checked_or_reported_unknown() {
    let depth = 3_000;
    let nested = [
        format!("{}rm -rf /;{}", "{ ".repeat(depth), "} ".repeat(depth)),
        format!("{}rm -rf /{}", "( ".repeat(depth), " )".repeat(depth)),
        format!(
            "{}rm -rf /{}",
            "if true; then ".repeat(depth),
            "; fi".repeat(depth)
        ),
        format!("echo {}x{}", "${x:-".repeat(depth), "}".repeat(depth)),
        format!("echo {}x{}", "\"$(echo ".repeat(depth), ")\"".repeat(depth)),
        format!("[[ {}-n $(rm -rf /) ]]", "! ".repeat(depth)),
        format!("{}rm -rf /", "eval ".repeat(depth)),
        format!("{}rm -rf /{}", "echo $(".repeat(40), ")".repeat(40)),
    ];
    for command in &nested {
        // Deny when the command is found, ask when it is too deep to check: never allow.
        let decision = check(command);
        assert_ne!(decision, Decision::Allow, "{}", &command[..60]);
    }
    // The `{ …; }` nesting is deep but plain: it is parsed, and the rm found.
    assert_eq!(check(&nested[0]), Decision::Deny);
    // Scripts within scripts are followed 16 levels deep, then reported unknown.
    let evals = |levels: usize| format!("{}rm -rf /", "eval ".repeat(levels));
    assert_eq!(check(&evals(16)), Decision::Deny);
    assert_eq!(check(&evals(17)), Decision::Ask);
    let substitutions =
        |levels: usize| format!("{}rm -rf /{}", "echo $(".repeat(levels), ")".repeat(levels));
    assert_eq!(check(&substitutions(8)), Decision::Deny);
    assert_eq!(check(&substitutions(17)), Decision::Ask);
}

#[test]
fn long_inputs_are_checked() {
    let line = "cargo test --workspace 2>&1 | tail -20 && git status --short\n";
    let script = line.repeat(1024 * 1024 / line.len());
    assert_eq!(check(&script), Decision::Allow);
    assert_eq!(check(&format!("{script}rm -rf ~\n")), Decision::Deny);
    let words = format!("echo {}", "word ".repeat(200_000));
    assert_eq!(check(&words), Decision::Allow);
}

#[test]
fn hostile_bytes_get_a_verdict() {
    for command in [
        "\0",
        "\u{fffd}\u{fffd}",
        "\\",
        "'",
        "$(",
        "`",
        "${",
        "<<",
        "cat <<",
        "((",
        "[[",
        ";;",
        "&&",
        "|",
        ")",
        "}",
        "fi",
        "esac",
        "<(",
        "$((((((((((((((((((((((((((((",
        "{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{",
        "case case case case case case case case case case",
    ] {
        let verdict = Policy::default().check(command);
        let strongest = verdict
            .segments
            .iter()
            .map(|segment| segment.decision)
            .max();
        assert_eq!(
            verdict.decision,
            strongest.unwrap_or(Decision::Allow),
            "{command:?}"
        );
    }
}

#[test]
fn work_does_not_multiply() {
    // Each brace alternative holds the same substitution: it is walked once, not 64 times per
    // level (64 × 64 segments otherwise).
    let braces = "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}";
    let mut command = "rm -rf /".to_owned();
    for _ in 0..2 {
        command = format!("echo {braces}$({command})");
    }
    let verdict = Policy::default().check(&command);
    assert_eq!(verdict.decision, Decision::Deny);
    assert!(
        verdict.segments.len() < 10,
        "{} segments",
        verdict.segments.len()
    );

    // Past 10 000 scripts parsed again, the rest are unknown.
    let many = "echo $(true) ".repeat(10_001);
    let verdict = Policy::default().check(&many);
    assert_eq!(verdict.decision, Decision::Ask);
    assert_eq!(check(&"echo $(true) ".repeat(100)), Decision::Allow);
}
