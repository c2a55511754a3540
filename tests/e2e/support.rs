//! Helpers shared by the end-to-end tests.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// No CLI call in these tests may take longer than this.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// The fixture program, built by cargo as an example next to the binary under test.
pub fn fx() -> String {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_agent-bash"));
    let fx = bin
        .parent()
        .map(|dir| dir.join("examples").join("fx"))
        .unwrap_or_default();
    assert!(
        fx.is_file(),
        "fixture not built at {}: run the tests with cargo test or nextest",
        fx.display()
    );
    fx.display().to_string()
}

/// A string unique to this test run, to find a test's processes in /proc.
pub fn marker(name: &str) -> String {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    format!(
        "abmark-{name}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// `marker` as a shell word that does not contain it literally: the shell's own command
/// line then does not match, only the process that receives the joined word does.
pub fn quoted_apart(marker: &str) -> String {
    let (head, tail) = marker.split_at(3);
    format!("'{head}''{tail}'")
}

/// The output of one CLI run.
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
}

/// Runs `agent-bash ARGS…` with the deadline.
pub fn agent_bash(args: &[&str]) -> Run {
    agent_bash_env(args, &[])
}

/// Runs `agent-bash ARGS…` with extra environment variables.
pub fn agent_bash_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    agent_bash_with(args, env, b"")
}

/// Runs `agent-bash ARGS…` with extra environment variables and `stdin` on its stdin.
pub fn agent_bash_with(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Run {
    let output = assert_cmd::Command::cargo_bin("agent-bash")
        .expect("binary")
        .args(args)
        // Each test process records its sessions' confinement windows apart (the record
        // is the user's, shared by every session): a project file a test writes is not
        // dated inside another test's window.
        .env("XDG_STATE_HOME", state_home())
        .envs(env.iter().copied())
        .write_stdin(stdin)
        .timeout(DEADLINE)
        .output()
        .expect("running agent-bash");
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code(),
    }
}

/// This test process's state directory, in cargo's scratch directory for tests.
pub fn state_home() -> String {
    format!(
        "{}/state-{}",
        env!("CARGO_TARGET_TMPDIR"),
        std::process::id()
    )
}

/// The model's text for `command`.
pub fn text(command: &str) -> String {
    agent_bash(&["run", "--", command]).stdout
}

/// The JSON result for `command`, run with extra CLI flags.
pub fn json_with(flags: &[&str], command: &str) -> Value {
    let mut args = vec!["run", "--json"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--", command]);
    let run = agent_bash(&args);
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|err| panic!("not JSON ({err}): {}\nstderr: {}", run.stdout, run.stderr))
}

/// The JSON result for `command`.
pub fn json(command: &str) -> Value {
    json_with(&[], command)
}

/// Pids of live processes whose command line contains `marker`.
pub fn alive_with(marker: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| *pid != std::process::id() as i32)
        .filter(|pid| {
            // A zombie has an empty command line, so only live processes match.
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains(marker)
        })
        .collect()
}

/// Waits until `condition` holds, up to `limit`; returns whether it did.
pub fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    condition()
}

/// A JSON field as u64.
pub fn n(value: &Value, path: &[&str]) -> u64 {
    let mut at = value;
    for key in path {
        at = &at[*key];
    }
    at.as_u64()
        .unwrap_or_else(|| panic!("{path:?} is not a number in {value}"))
}
