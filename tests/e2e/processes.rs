//! Process behaviour: nothing hangs, nothing is left behind, nothing waits on input.

use std::time::Duration;

use crate::support::{
    agent_bash, agent_bash_env, alive_with, eventually, fx, json, json_with, marker, n,
    quoted_apart, text,
};

#[test]
fn grandchild_holding_the_pipes_does_not_hang_the_call() {
    let mark = marker("grandchild");
    let result = json(&format!("{} grandchild 30 {mark}", fx()));
    assert_eq!(result["stdout"], "parent exits now");
    assert_eq!(result["exit_code"], 0);
    // The grandchild sleeps 30 s holding stdout; the call ends after the bounded drain.
    assert!(
        n(&result, &["duration_ms"]) < 30_000,
        "returned before the grandchild let go"
    );
    let left = result["left_running"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        left.iter()
            .any(|p| p["command"].as_str().unwrap_or_default().contains(&mark)),
        "the result names the process left running: {left:?}"
    );
    // The CLI's session ended when it exited, and took the grandchild with it.
    assert!(
        eventually(Duration::from_secs(5), || alive_with(&mark).is_empty()),
        "leaked: {:?}",
        alive_with(&mark)
    );
}

#[test]
fn background_process_with_redirected_output_is_reported_and_stopped() {
    let mark = marker("daemon");
    let out = text(&format!("{} daemon 30 {mark}", fx()));
    assert!(
        out.contains("note: still running after the shell exited: ") && out.contains(&mark),
        "{out}"
    );
    assert!(
        eventually(Duration::from_secs(5), || alive_with(&mark).is_empty()),
        "leaked: {:?}",
        alive_with(&mark)
    );
}

#[test]
fn timeout_kills_the_whole_tree_even_when_it_ignores_sigterm() {
    let mark = marker("ignore-term");
    let result = json_with(&["--timeout", "1"], &format!("{} ignore-term {mark}", fx()));
    assert_eq!(result["timed_out"], true);
    assert_eq!(
        result["stdout"], "ignoring SIGTERM",
        "output before the timeout is kept"
    );
    assert!(result["signal"].is_string(), "killed by a signal: {result}");
    // collect::wait returns only once the group is gone: check at once, no waiting.
    assert_eq!(
        alive_with(&mark),
        Vec::<i32>::new(),
        "survivors of the timeout"
    );
}

#[test]
fn timeout_result_says_so_in_text() {
    let mark = marker("sleeper");
    let run = agent_bash(&[
        "run",
        "--timeout",
        "1",
        "--",
        &format!("{} print-then-sleep 30 {mark}", fx()),
    ]);
    assert!(
        run.stdout
            .starts_with("started\n[timed out after 1 s; process tree stopped; "),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("hint: "), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "note: this session keeps no background jobs, so the command was stopped at its timeout"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(run.code, Some(124), "the CLI exits as GNU timeout does");
    assert!(alive_with(&mark).is_empty());
}

#[test]
fn stdin_is_empty_so_readers_return_at_once() {
    assert_eq!(
        json(&format!("{} stdin", fx()))["stdout"],
        "stdin: Ok(0) after 0 bytes"
    );
    assert_eq!(json("read x; echo \"read=$?\"")["stdout"], "read=1");
    let result = json("python3 -c 'input()'");
    assert_eq!(result["exit_code"], 1);
    assert!(
        result["stderr"]
            .as_str()
            .unwrap_or_default()
            .contains("EOFError"),
        "{result}"
    );
}

#[test]
fn runs_in_its_own_session_without_a_terminal() {
    let result =
        json("read -r _ _ _ _ _ sid _ < /proc/$$/stat; [ \"$sid\" = \"$$\" ] && echo leader; tty");
    assert_eq!(result["stdout"], "leader\nnot a tty");
}

#[test]
fn environment_is_non_interactive() {
    let result = json(
        "echo $PAGER $GIT_PAGER $MANPAGER $EDITOR $GIT_TERMINAL_PROMPT $TERM $NO_COLOR $PYTHONUNBUFFERED $AGENT_BASH $DEBIAN_FRONTEND",
    );
    assert_eq!(
        result["stdout"],
        "cat cat cat true 0 dumb 1 1 1 noninteractive"
    );
}

#[test]
fn git_log_with_many_commits_does_not_wait_on_a_pager() {
    let repo = tempfile::tempdir().expect("tempdir");
    let dir = repo.path().display().to_string();
    let setup = json_with(
        &["--cwd", &dir, "--timeout", "50"],
        "git init -q . && for i in $(seq 300); do git -c user.name=t -c user.email=t@t commit -q --allow-empty -m \"commit $i\"; done && echo made",
    );
    assert_eq!(setup["stdout"], "made", "{setup}");
    let result = json_with(&["--cwd", &dir], "git log --oneline");
    assert_eq!(result["exit_code"], 0);
    assert_eq!(n(&result, &["stdout_stats", "total_lines"]), 300);
}

#[test]
fn signals_are_named() {
    let result = json("kill -KILL $$");
    assert_eq!(result["signal"], "SIGKILL");
    assert_eq!(result["exit_code"], serde_json::Value::Null);
    let result = json(&format!("{} segv; echo after $?", fx()));
    assert_eq!(result["stdout"], "after 139");
    let result = json(&format!("{} segv", fx()));
    let by_signal = result["signal"] == "SIGSEGV";
    let by_status = result["exit_code"] == 139
        && result["exit_hint"]
            .as_str()
            .unwrap_or_default()
            .contains("SIGSEGV");
    assert!(by_signal || by_status, "{result}");
}

#[test]
fn common_exit_codes_are_explained() {
    let out = text("echo hello | grep nomatch");
    assert!(
        out.contains("hint: exit 1 from grep means no line matched"),
        "{out}"
    );
    let out = text("no-such-command-xyz");
    assert!(out.contains("hint: 127: command not found"), "{out}");
    let out = text("exit 1");
    assert!(!out.contains("hint:"), "{out}");
}

#[test]
fn commands_longer_than_one_argument_run() {
    // Linux refuses a single argv string over 128 KiB, so the CLI gets this 300 KiB
    // command as many words (joined with spaces); the engine must still run it whole.
    let filler: Vec<String> = (0..300).map(|_| "x".repeat(1023)).collect();
    let mut args = vec!["run", "--json", "--", "echo", "start;", ":"];
    args.extend(filler.iter().map(String::as_str));
    args.extend(["; echo", "end", "$((6*7))"]);
    let run = agent_bash(&args);
    let result: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_default();
    assert_eq!(result["stdout"], "start\nend 42", "{}", run.stderr);
    assert_eq!(result["exit_code"], 0);
}

#[test]
fn processes_that_moved_to_their_own_group_are_still_found_and_stopped() {
    // GNU `timeout` (like `set -m`) puts its command in a process group of its own: the
    // command's group can be empty while they run on in its session.
    let mark = marker("setpgid");
    let sleeper = format!("{} sleep 600 {}", fx(), quoted_apart(&mark));
    let result = json(&format!("timeout 600 {sleeper} & echo started"));
    assert_eq!(result["stdout"], "started");
    let listed = result["left_running"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        listed
            .iter()
            .any(|p| p["command"].as_str().unwrap_or_default().contains(&mark)),
        "not listed: {result}"
    );
    assert_eq!(alive_with(&mark), Vec::<i32>::new(), "outlived the CLI");

    let mark = marker("setpgid-timeout");
    let sleeper = format!("{} sleep 600 {}", fx(), quoted_apart(&mark));
    let result = json_with(&["--timeout", "1"], &format!("timeout 600 {sleeper}"));
    assert_eq!(result["timed_out"], true);
    // The call returns once the tree is gone: no waiting here.
    assert_eq!(alive_with(&mark), Vec::<i32>::new(), "survived the timeout");
}

/// Debian's bash sources ~/.bashrc for `bash -c` when it thinks sshd started it (SSH_CLIENT)
/// at the top level (SHLVL 0): a server run over ssh, as a target's far side is, must not
/// make every command read the user's rc file.
#[test]
fn a_server_started_by_sshd_does_not_make_commands_read_the_rc_file() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".bashrc"), "echo RC-WAS-READ\n").unwrap();
    let home = home.path().to_str().unwrap();
    let env = [
        ("HOME", home),
        ("SSH_CLIENT", "127.0.0.1 50000 22"),
        ("SHLVL", "0"),
    ];
    // The fixture is sound: such a bash does read it.
    let direct = std::process::Command::new("bash")
        .args(["-c", "echo ran"])
        .envs(env)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&direct.stdout),
        "RC-WAS-READ\nran\n"
    );
    let run = agent_bash_env(&["run", "--", "echo ran; echo level=$SHLVL"], &env);
    assert!(run.stdout.starts_with("ran\nlevel=2\n"), "{}", run.stdout);
}
