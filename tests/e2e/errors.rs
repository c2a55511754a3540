//! Bad input gets a clear error, exit status 125, and no spawned process.

use crate::support::{agent_bash, agent_bash_env};

#[track_caller]
fn check(args: &[&str], env: &[(&str, &str)], expected: &str) {
    let run = agent_bash_env(args, env);
    assert_eq!(
        run.code,
        Some(125),
        "stdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.stderr.contains(expected),
        "{:?} does not say {expected:?}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "nothing ran: {}", run.stdout);
}

#[test]
fn bad_cwd() {
    check(
        &["run", "--cwd", "/nonexistent/dir", "--", "echo ran"],
        &[],
        "cwd /nonexistent/dir: No such file or directory",
    );
    check(
        &["run", "--cwd", "/etc/hostname", "--", "echo ran"],
        &[],
        "cwd /etc/hostname: is not a directory",
    );
}

#[test]
fn bad_request() {
    check(&["run", "--", "   "], &[], "the command is empty");
    check(
        &["run", "--timeout", "0", "--", "echo ran"],
        &[],
        "timeout_secs must be at least 1",
    );
    check(
        &["run", "--budget-bytes", "100", "--", "echo ran"],
        &[],
        "config: budget bytes",
    );
}

#[test]
fn bash_not_found() {
    check(
        &["run", "--", "echo ran"],
        &[("PATH", "/nonexistent-bin")],
        "bash not found: no `bash` in PATH (/nonexistent-bin)",
    );
}

#[test]
fn bad_arguments_are_usage_errors() {
    let run = agent_bash(&["run", "--timeout", "soon", "--", "true"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("invalid value 'soon'"),
        "{}",
        run.stderr
    );
}

#[test]
fn mcp_server_with_a_bad_root() {
    check(
        &["mcp", "--root", "/nonexistent/root"],
        &[],
        "session root /nonexistent/root: No such file or directory",
    );
}
