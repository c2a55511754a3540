//! The user's shell (`shell.snapshot = "rc"`): real rc files in a home of the test's own,
//! captured once and sourced before each command, and the rc files that would hurt a
//! session (one that hangs, prints, exits, or switches the pager back on).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{Run, agent_bash_env};

/// A home holding `rc` as its `.bashrc` and a `bin/mytool`, and a root beside it.
fn home_with(rc: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join("bin")).unwrap();
    std::fs::create_dir_all(dir.path().join("root")).unwrap();
    std::fs::write(home.join(".bashrc"), rc).unwrap();
    let tool = home.join("bin/mytool");
    std::fs::write(&tool, "#!/bin/sh\necho mytool ran\n").unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    dir
}

fn run_in(dir: &Path, snapshot: &str, command: &str) -> Run {
    let home = dir.join("home").display().to_string();
    let root = dir.join("root").display().to_string();
    agent_bash_env(
        &[
            "run",
            "--root",
            &root,
            "--shell-snapshot",
            snapshot,
            "--",
            command,
        ],
        &[("HOME", &home)],
    )
}

const RC: &str = r#"
echo "the rc prints this"
alias ll='echo listing with ll'
greet() { echo "hello from $1"; }
export PATH="$HOME/bin:$PATH"
export MY_PROJECT_VAR=42
export PAGER=less
shopt -s extglob
set -e
set -o nounset
"#;

#[test]
fn aliases_functions_path_and_variables_of_the_rc_reach_each_command() {
    let dir = home_with(RC);
    let command = "ll; greet you; mytool; echo \"var=$MY_PROJECT_VAR pager=$PAGER\"; \
                   false; echo \"after false ${UNSET_VAR:-unset}\"; shopt -q extglob && echo extglob on";
    let run = run_in(dir.path(), "rc", command);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout.split("\n[exit").next().unwrap(),
        "listing with ll\nhello from you\nmytool ran\nvar=42 pager=cat\nafter false unset\nextglob on",
        "the rc's definitions, its PATH and variable; the pager stays `cat`; `set -e` and \
         nounset do not carry over; nothing the rc printed"
    );
    // Off (the default): none of it.
    let run = run_in(
        dir.path(),
        "off",
        "type ll greet mytool 2>&1; echo $MY_PROJECT_VAR.",
    );
    assert!(run.stdout.contains("ll: not found"), "{}", run.stdout);
    assert!(run.stdout.contains("\n.\n"), "{}", run.stdout);
}

#[test]
fn scripts_a_command_runs_do_not_source_the_snapshot() {
    let dir = home_with(RC);
    let run = run_in(
        dir.path(),
        "rc",
        "echo \"[$BASH_ENV]\"; bash -c 'type greet >/dev/null 2>&1 && echo inherited || echo clean'",
    );
    assert!(run.stdout.starts_with("[]\nclean\n"), "{}", run.stdout);
}

#[test]
fn an_rc_that_hangs_or_exits_gives_a_note_and_the_command_still_runs() {
    for (rc, said) in [
        ("sleep 600\n", "did not finish within 5 s"),
        ("echo bye; exit 3\n", "ended before the snapshot was taken"),
    ] {
        let dir = home_with(rc);
        let began = Instant::now();
        let run = run_in(dir.path(), "rc", "echo still runs");
        assert!(began.elapsed() < Duration::from_secs(20));
        assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
        assert!(run.stdout.starts_with("still runs\n"), "{}", run.stdout);
        assert!(run.stdout.contains(said), "{rc}: {}", run.stdout);
        assert!(
            run.stdout.contains("commands run without it"),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn the_policy_judges_an_alias_or_function_by_its_body() {
    let dir = home_with(
        "alias wipe='rm -rf --no-preserve-root /'\n\
         nuke() { rm -rf --no-preserve-root /; }\n\
         alias ls='ls --color=never'\n\
         alias pre='sudo '\n",
    );
    // `pre wipe`: an alias ending in a blank makes the next word an alias call too.
    for command in ["wipe", "nuke", "echo ok && wipe", "pre wipe"] {
        let run = run_in(dir.path(), "rc", command);
        assert!(
            run.stdout
                .starts_with("[refused by policy: denied; nothing was run]"),
            "{command}: {}",
            run.stdout
        );
        assert!(
            run.stdout.contains("of your shell (shell.snapshot)"),
            "{}",
            run.stdout
        );
    }
    // An alias of itself is expanded once, and allowed.
    let run = run_in(dir.path(), "rc", "ls -d /");
    assert_eq!(run.code, Some(0), "{}", run.stdout);
    // `check` sees the snapshot too.
    let home = dir.path().join("home").display().to_string();
    let check = agent_bash_env(
        &["check", "--shell-snapshot", "rc", "wipe"],
        &[("HOME", &home)],
    );
    assert_eq!(check.code, Some(2), "{}", check.stdout);
}

#[test]
fn a_secret_the_rc_exports_is_redacted() {
    let dir = home_with("export DEPLOY_TOKEN=rc-secret-value-0123456789\n");
    let run = run_in(dir.path(), "rc", "echo \"token: $DEPLOY_TOKEN\"");
    assert!(
        run.stdout.starts_with("token: [redacted:DEPLOY_TOKEN]\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("rc-secret-value"), "{}", run.stdout);
}

#[test]
fn an_untrusted_project_cannot_turn_it_on() {
    let dir = home_with(RC);
    std::fs::write(
        dir.path().join("root/.agent-bash.toml"),
        "[shell]\nsnapshot = \"rc\"\n",
    )
    .unwrap();
    let home = dir.path().join("home").display().to_string();
    let root = dir.path().join("root").display().to_string();
    let run = agent_bash_env(
        &["run", "--root", &root, "--", "type greet 2>&1"],
        &[("HOME", &home)],
    );
    assert!(run.stdout.contains("greet: not found"), "{}", run.stdout);
    assert!(run.stderr.contains("shell.snapshot"), "{}", run.stderr);
}
