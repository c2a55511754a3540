//! The CLI's contract with scripts: where `run` takes the command from (words, stdin, a
//! file), and the exit statuses it promises (`agent-bash run --help`, docs/model-view.md).

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::{
    DEADLINE, Run, agent_bash, agent_bash_env, agent_bash_with, alive_with, eventually, fx, marker,
};

/// A script of about 300 KB (over the 128 KiB one argument may hold, over the 64 KiB past
/// which the engine runs a script file): it counts its own lines, and tries to read stdin.
fn long_script() -> String {
    let mut script = String::from("echo start\nn=0\n");
    for line in 0..10_000 {
        script.push_str(&format!(
            "n=$((n + 1))  # line {line:05} of the long script\n"
        ));
    }
    script.push_str("echo \"counted $n\"\nread -r line; echo \"stdin read: $?\"\necho end\n");
    assert!(script.len() > 300_000, "{} bytes", script.len());
    script
}

#[track_caller]
fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|err| panic!("not JSON ({err}): {}\nstderr: {}", run.stdout, run.stderr))
}

#[test]
fn a_long_command_runs_from_stdin_and_from_a_file() {
    let script = long_script();
    // The command's own stdin is /dev/null, not the rest of the script: `read` fails.
    let expected = "start\ncounted 10000\nstdin read: 1\nend";
    let run = agent_bash_with(&["run", "--json", "-"], &[], script.as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let result = json_of(&run);
    assert_eq!(result["stdout"], expected);
    assert_eq!(
        result["command"],
        script.as_str(),
        "the command arrives whole"
    );

    let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
    let file = dir.path().join("long.sh");
    std::fs::write(&file, &script).unwrap_or_else(|err| panic!("{err}"));
    let file_arg = file.display().to_string();
    let run = agent_bash(&["run", "--file", &file_arg]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.starts_with(&format!("{expected}\n[exit 0 · ")),
        "{}",
        run.stdout
    );
    // `--file -` is stdin too.
    let run = agent_bash_with(&["run", "-f", "-"], &[], b"echo from stdin; exit 3");
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert!(run.stdout.starts_with("from stdin\n"), "{}", run.stdout);
}

#[test]
fn a_command_over_the_maximum_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
    let ran = dir.path().join("ran");
    let file = dir.path().join("huge.sh");
    let mut text = format!("touch {}\n", ran.display());
    text.push_str(&"#".repeat(1024 * 1024 + 1 - text.len()));
    std::fs::write(&file, &text).unwrap_or_else(|err| panic!("{err}"));
    let file_arg = file.display().to_string();
    let run = agent_bash(&["run", "--file", &file_arg]);
    assert_eq!(run.code, Some(125), "{}", run.stdout);
    assert!(
        run.stderr.contains(&format!(
            "the command in {file_arg} is over the maximum of 1048576 bytes (max_command_bytes)"
        )),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(!ran.exists(), "nothing ran");

    // The maximum is the configured one, on stdin too; --json says it as an object.
    let run = agent_bash_with(
        &["run", "--json", "-"],
        &[("AGENT_BASH_MAX_COMMAND_BYTES", "1000")],
        "echo x; ".repeat(200).as_bytes(),
    );
    assert_eq!(run.code, Some(125), "{}", run.stderr);
    let error = json_of(&run);
    assert_eq!(error["kind"], "command_too_long");
    assert!(
        error["error"]
            .as_str()
            .is_some_and(|e| e.contains("the command in stdin is over the maximum of 1000")),
        "{error}"
    );
}

#[test]
fn a_command_that_cannot_be_read_is_a_clear_error() {
    let run = agent_bash_with(&["run", "-"], &[], b"");
    assert_eq!(run.code, Some(125));
    assert!(
        run.stderr
            .contains("stdin is empty: `agent-bash run -` reads the command from stdin"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let run = agent_bash(&["run", "--json", "--file", "/nonexistent/script.sh"]);
    assert_eq!(run.code, Some(125));
    let error = json_of(&run);
    assert_eq!(error["kind"], "input");
    assert!(
        error["error"].as_str().is_some_and(
            |e| e.contains("cannot read the command from /nonexistent/script.sh: No such file")
        ),
        "{error}"
    );
    let run = agent_bash_with(&["run", "--json", "-"], &[], b"echo \xff\xfe");
    assert_eq!(run.code, Some(125));
    assert!(
        json_of(&run)["error"]
            .as_str()
            .is_some_and(|e| e.contains("not UTF-8 text (at byte 5)")),
        "{}",
        run.stdout
    );
}

#[test]
fn the_exit_status_is_the_commands_own_or_says_timeout_or_refusal() {
    assert_eq!(agent_bash(&["run", "--", "exit 7"]).code, Some(7));
    assert_eq!(agent_bash(&["run", "--", "true"]).code, Some(0));
    // Killed by SIGHUP (1): 128 + 1, as a shell says it.
    assert_eq!(agent_bash(&["run", "--", "kill -HUP $$"]).code, Some(129));

    let mark = marker("timeout-status");
    let command = format!("{} print-then-sleep 600 {mark}", fx());
    let run = agent_bash(&["run", "--timeout", "1", "--", &command]);
    assert_eq!(run.code, Some(124), "{}", run.stdout);
    assert!(
        run.stdout.contains("[timed out after 1 s"),
        "{}",
        run.stdout
    );
    assert_eq!(
        alive_with(&mark),
        Vec::<i32>::new(),
        "the call ended the tree"
    );

    let run = agent_bash(&["run", "--json", "--", "mkfs.agentbashtest /dev/sdzz"]);
    assert_eq!(run.code, Some(126), "{}", run.stderr);
    assert_eq!(json_of(&run)["refused"]["rule"], "mkfs");
}

#[test]
fn a_failure_of_the_tool_is_125_and_a_json_object_with_json() {
    let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "timeout_secs = \"soon\"\n").unwrap_or_else(|err| panic!("{err}"));
    let bad_arg = bad.display().to_string();
    for (args, env, kind) in [
        (
            vec!["run", "--json", "--cwd", "/nonexistent/dir", "--", "true"],
            vec![],
            "cwd",
        ),
        (
            vec!["run", "--json", "--config", &bad_arg, "--", "true"],
            vec![],
            "config_file",
        ),
        (
            vec!["run", "--json", "--", "true"],
            vec![("PATH", "/nonexistent-bin")],
            "bash_not_found",
        ),
        (vec!["run", "--json", "--", "  "], vec![], "empty_command"),
    ] {
        let run = agent_bash_env(&args, &env);
        assert_eq!(run.code, Some(125), "{args:?}: {}", run.stderr);
        let error = json_of(&run);
        assert_eq!(error["kind"], kind, "{args:?}: {error}");
        let message = error["error"].as_str().unwrap_or_default();
        assert!(
            !message.is_empty() && run.stderr.contains(message),
            "{args:?}: the same message on stderr: {}",
            run.stderr
        );
    }
}

#[test]
fn usage_errors_exit_2_even_with_json() {
    for args in [
        vec!["run"],
        vec!["run", "--json"],
        vec!["run", "--file", "x.sh", "--", "true"],
        vec!["run", "--json", "--timeout", "soon", "--", "true"],
        vec!["run", "--no-such-flag", "--", "true"],
    ] {
        let run = agent_bash(&args);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.starts_with("error: "),
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
    let help = agent_bash(&["run", "--help"]);
    assert_eq!(help.code, Some(0));
    for status in ["124", "125", "126", "130", "143", "/dev/null"] {
        assert!(help.stdout.contains(status), "{status}: {}", help.stdout);
    }
}

/// Starts `agent-bash run` on a command that prints `started` into a file and sleeps;
/// once the file says so, sends `signal` to agent-bash; returns its exit code, its stdout
/// and the marker of the sleeping process.
fn interrupted_by(signal: &str) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
    let out = dir.path().join("out");
    let mark = marker("interrupted");
    let command = format!("{} print-then-sleep 600 {mark} > {}", fx(), out.display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-bash"))
        .args(["run", "--", &command])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("spawn: {err}"));
    let started = eventually(DEADLINE, || {
        std::fs::read_to_string(&out).is_ok_and(|text| text.contains("started"))
    });
    assert!(started, "the command never started");
    let sent = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap_or_else(|err| panic!("kill: {err}"));
    assert!(sent.success());
    let (done, ended) = std::sync::mpsc::channel();
    let mut stdout = child.stdout.take();
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(stdout) = stdout.as_mut() {
            let _ = stdout.read_to_string(&mut text);
        }
        let _ = done.send((child.wait().map(|status| status.code()), text));
    });
    let (code, stdout) = ended
        .recv_timeout(DEADLINE + Duration::from_secs(5))
        .unwrap_or_else(|err| panic!("agent-bash did not exit: {err}"));
    let code = code.unwrap_or_else(|err| panic!("wait: {err}"));
    (code, stdout, mark)
}

#[test]
fn an_interrupt_stops_the_tree_and_exits_130_and_sigterm_143() {
    for (signal, status) in [("INT", 130), ("TERM", 143)] {
        let (code, stdout, mark) = interrupted_by(signal);
        assert_eq!(code, Some(status), "SIG{signal}: {stdout}");
        assert!(
            stdout.starts_with("(no output)\n[cancelled; process tree stopped; "),
            "SIG{signal}: {stdout}"
        );
        // The call returns once the tree is gone: no waiting here.
        assert_eq!(
            alive_with(&mark),
            Vec::<i32>::new(),
            "SIG{signal}: survivors"
        );
    }
}
