//! Terminal sessions, with real programs: a Python REPL, an interactive bash, `less` on a
//! 100k-line file, `git rebase -i` driven through vi, password prompts, `top`, a 1 GB flood,
//! and closing a tree. Every wait is the tool's own (`wait_for`, the state), never a sleep.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_bash_core::{
    Config, NoApprover, Request, Session, TerminalAnswer, TerminalInput, TerminalNote,
    TerminalOpen, TerminalState, TerminalWait, WaitEnd,
};

use crate::support::{alive_with, marker, quoted_apart};

/// A session rooted in `dir`, its files and audit log in there too.
fn session_in(dir: &Path, change: impl FnOnce(&mut Config)) -> Session {
    let mut config = Config {
        spill_parent: Some(dir.join("out")),
        ..Config::default()
    };
    config.audit.path = Some(dir.join("audit.jsonl"));
    change(&mut config);
    Session::new(dir, config).expect("session")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

async fn open(session: &Session, command: Option<&str>) -> TerminalAnswer {
    let open = TerminalOpen {
        command: command.map(String::from),
        ..TerminalOpen::default()
    };
    session
        .terminal_open(open, &NoApprover)
        .await
        .expect("open")
}

/// Types `text` (and `keys`), waiting for `wait_for` if given.
async fn send(
    session: &Session,
    id: u64,
    text: &str,
    keys: &[&str],
    wait_for: Option<&str>,
) -> TerminalAnswer {
    let input = TerminalInput {
        text: (!text.is_empty()).then(|| text.to_string()),
        keys: keys.iter().map(|key| key.to_string()).collect(),
        wait: TerminalWait {
            wait_secs: Some(60),
            wait_for: wait_for.map(String::from),
        },
    };
    session
        .terminal_send(id, input, &NoApprover)
        .await
        .expect("send")
}

/// Waits up to 60 s for `pattern` on the screen or in new scrollback.
async fn view_until(session: &Session, id: u64, pattern: &str) -> TerminalAnswer {
    let wait = TerminalWait {
        wait_secs: Some(60),
        wait_for: Some(pattern.into()),
    };
    session.terminal_view(id, wait).await.expect("view")
}

#[test]
fn a_python_repl_keeps_its_state_across_sends_and_exits() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let session = session_in(dir.path(), |_| {});
        let first = open(&session, Some("python3 -q")).await;
        let id = first.id;
        // On a busy machine the answer may come before Python drew its prompt, or before
        // it waits at it (the state is read after the prompt is seen): look again until it
        // does, for 60 s at most.
        let mut first = first;
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !(first.state == TerminalState::WaitingForInput && first.screen.ends_with(">>>"))
            && std::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
            first = view_until(&session, id, ">>> ?$").await;
        }
        assert_eq!(first.state, TerminalState::WaitingForInput, "{first:?}");
        assert!(first.screen.ends_with(">>>"), "{}", first.screen);
        // A function over two lines, then an empty line to end it.
        let defined = send(
            &session,
            id,
            "def double(x):\n    return 2 * x\n\n",
            &[],
            None,
        )
        .await;
        assert_eq!(defined.state, TerminalState::WaitingForInput, "{defined:?}");
        let called = send(&session, id, "double(21)\n", &[], None).await;
        assert!(called.screen.contains("\n42\n>>>"), "{}", called.screen);
        let failed = send(&session, id, "double(None)\n", &[], None).await;
        assert!(failed.screen.contains("Traceback"), "{}", failed.screen);
        assert!(failed.screen.contains("TypeError"), "{}", failed.screen);
        assert_eq!(failed.state, TerminalState::WaitingForInput);
        let exited = send(&session, id, "exit()\n", &[], None).await;
        assert_eq!(exited.state, TerminalState::Exited, "{exited:?}");
        assert_eq!(exited.wait_end, WaitEnd::Exited);
        assert_eq!(exited.exit_code, Some(0));
        // An ended terminal types nothing, and says so.
        let late = send(&session, id, "1\n", &[], None).await;
        assert_eq!(late.notes.first(), Some(&TerminalNote::NotSent));
    });
}

#[test]
fn cd_persists_in_a_terminals_bash_unlike_in_bash_calls() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    runtime().block_on(async {
        let session = session_in(dir.path(), |_| {});
        let first = open(&session, None).await;
        assert_eq!(first.state, TerminalState::WaitingForInput, "{first:?}");
        assert_eq!(first.command, "bash");
        let id = first.id;
        send(&session, id, "cd sub\n", &[], None).await;
        let pwd = send(&session, id, "pwd; echo \"[$TERM]\"\n", &[], None).await;
        let sub = dir.path().join("sub").canonicalize().unwrap();
        assert!(
            pwd.screen.contains(&format!("\n{}\n", sub.display())),
            "{}",
            pwd.screen
        );
        assert!(pwd.screen.contains("[xterm-256color]"), "{}", pwd.screen);
        // A `bash` call starts in the root again.
        let call = session.run(Request::new("pwd")).await.unwrap();
        assert_eq!(Path::new(&call.stdout), dir.path().canonicalize().unwrap());
        session.terminal_close(id).await.unwrap();
    });
}

#[test]
fn less_pages_and_searches_a_100k_line_file_and_quits() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (1..=100_000).map(|n| format!("line {n}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), lines).unwrap();
    runtime().block_on(async {
        let session = session_in(dir.path(), |_| {});
        let first = open(&session, Some("less big.txt")).await;
        assert_eq!(first.state, TerminalState::WaitingForInput, "{first:?}");
        assert!(first.alternate_screen);
        assert!(
            first.screen.starts_with("line 1\nline 2\n"),
            "{}",
            first.screen
        );
        let id = first.id;
        // A page is 23 lines and a prompt: waiting for its last line waits for all of it.
        let paged = send(&session, id, "", &["PageDown"], Some("^line 46$")).await;
        assert!(paged.screen.starts_with("line 24\n"), "{}", paged.screen);
        let found = send(&session, id, "/^line 77777$\n", &[], Some("^line 77799$")).await;
        assert_eq!(found.wait_end, WaitEnd::Matched);
        assert!(found.screen.starts_with("line 77777\n"), "{}", found.screen);
        // Nothing a full-screen program draws is scrollback.
        assert_eq!(found.scrollback, "");
        let quit = send(&session, id, "q", &[], None).await;
        assert_eq!(quit.state, TerminalState::Exited, "{quit:?}");
        assert_eq!(quit.exit_code, Some(0));
    });
}

/// Runs `script` in `dir` through a `bash` call and returns its stdout.
async fn shell(session: &Session, script: &str) -> String {
    let outcome = session.run(Request::new(script)).await.unwrap();
    assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
    outcome.stdout
}

#[test]
fn git_rebase_interactive_is_driven_through_vi() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let session = session_in(dir.path(), |_| {});
        shell(
            &session,
            "git init -q repo && cd repo && git config user.email t@e.st && git config user.name T \
             && for n in one two three; do echo $n > $n.txt && git add $n.txt && git commit -qm $n; done",
        )
        .await;
        let open_rebase = TerminalOpen {
            command: Some("GIT_EDITOR='vi -u NONE' git rebase -i HEAD~2".into()),
            cwd: Some(PathBuf::from("repo")),
            ..TerminalOpen::default()
        };
        let first = session.terminal_open(open_rebase, &NoApprover).await.unwrap();
        let id = first.id;
        let todo = if first.screen.contains("pick") {
            first
        } else {
            view_until(&session, id, "^pick").await
        };
        assert_eq!(todo.state, TerminalState::WaitingForInput, "{todo:?}");
        assert!(todo.screen.starts_with("pick "), "{}", todo.screen);
        // Second line: `pick` becomes `squash`, then save and quit.
        let edited = send(&session, id, "jcwsquash", &["Esc"], Some("^squash")).await;
        assert!(edited.screen.contains("\nsquash "), "{}", edited.screen);
        // The squash opens the editor again, on the combined message.
        let message = send(&session, id, ":wq\n", &[], Some("combination of 2 commits")).await;
        assert_eq!(message.wait_end, WaitEnd::Matched, "{message:?}");
        let done = send(&session, id, ":wq\n", &[], None).await;
        assert_eq!(done.state, TerminalState::Exited, "{done:?}");
        assert_eq!(done.exit_code, Some(0), "{done:?}");
        // Two commits left; the squashed one carries both messages.
        let log = shell(&session, "cd repo && git log --format=%s | tr '\\n' ' '").await;
        assert_eq!(log, "two one ");
        let body = shell(&session, "cd repo && git log -1 --format=%b").await;
        assert_eq!(body.trim(), "three");
        let files = shell(&session, "cd repo && git ls-files | tr '\\n' ' '").await;
        assert_eq!(files, "one.txt three.txt two.txt ");
    });
}

#[test]
fn password_prompts_are_seen_waiting_for_input() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let session = session_in(dir.path(), |_| {});
        // bash's `read -s`, at the terminal's own prompt.
        let bash = open(&session, None).await;
        let prompt = send(&session, bash.id, "read -s -p 'Password: ' pw\n", &[], None).await;
        assert_eq!(prompt.state, TerminalState::WaitingForInput, "{prompt:?}");
        assert!(prompt.screen.ends_with("Password:"), "{}", prompt.screen);
        let read = send(&session, bash.id, "hunter22\n", &[], None).await;
        assert!(!read.screen.contains("hunter22"), "echoed: {}", read.screen);
        let length = send(&session, bash.id, "echo \"got ${#pw}\"\n", &[], None).await;
        assert!(length.screen.contains("\ngot 8\n"), "{}", length.screen);
        // What is typed into a program (here `read`) is logged by its length only.
        let log = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
        assert!(!log.contains("hunter22"), "{log}");
        assert!(log.contains("\"command\":\"(9 chars)\""), "{log}");
        // Python's getpass (reads /dev/tty with echo off), and input().
        let script = "import getpass; p = getpass.getpass('Secret: '); \
                      n = input('Name? '); print(len(p), n)";
        let python = open(&session, Some(&format!("python3 -c \"{script}\""))).await;
        assert_eq!(python.state, TerminalState::WaitingForInput, "{python:?}");
        assert!(python.screen.ends_with("Secret:"), "{}", python.screen);
        let asked = send(&session, python.id, "s3cret\n", &[], None).await;
        assert_eq!(asked.state, TerminalState::WaitingForInput, "{asked:?}");
        assert!(asked.screen.ends_with("Name?"), "{}", asked.screen);
        let done = send(&session, python.id, "Ada\n", &[], None).await;
        assert_eq!(done.state, TerminalState::Exited, "{done:?}");
        assert!(done.screen.contains("6 Ada"), "{}", done.screen);
        // A program that sleeps is running, not waiting: the wait ends on quiet.
        let sleeping = send(&session, bash.id, "sleep 30\n", &[], None).await;
        assert_eq!(sleeping.state, TerminalState::Running, "{sleeping:?}");
        assert_eq!(sleeping.wait_end, WaitEnd::Quiet);
        let interrupted = send(&session, bash.id, "", &["Ctrl-C"], None).await;
        assert_eq!(interrupted.state, TerminalState::WaitingForInput);
    });
}

#[test]
fn top_redraws_are_one_screen_and_top_b_is_scrollback() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let session = session_in(dir.path(), |_| {});
        // Interactive top redraws in place every 0.1 s: after a second, still one screen.
        let top = open(&session, Some("top -d 0.1")).await;
        assert!(top.screen.contains("load average"), "{}", top.screen);
        let wait = TerminalWait {
            wait_secs: Some(1),
            wait_for: Some("^never matches$".into()),
        };
        let later = session.terminal_view(top.id, wait).await.unwrap();
        assert_eq!(later.wait_end, WaitEnd::TimedOut);
        assert_eq!(
            later.screen.matches("load average").count(),
            1,
            "{}",
            later.screen
        );
        assert_eq!(
            later.scrollback_stats.total_lines, 0,
            "{}",
            later.scrollback
        );
        let quit = send(&session, top.id, "q", &[], None).await;
        assert_eq!(quit.state, TerminalState::Exited, "{quit:?}");
        // top -b prints frame after frame: those scroll off into the scrollback.
        let batch = open(
            &session,
            Some("top -b -d 0.1 -n 5 -w 80; echo all-frames-done"),
        )
        .await;
        let done = view_until(&session, batch.id, "^all-frames-done").await;
        let scrollback = format!("{}{}", batch.scrollback, done.scrollback);
        assert!(
            scrollback.matches("load average").count() >= 4,
            "{scrollback}"
        );
    });
}

/// The peak resident memory of this process, in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_one_gigabyte_flood_keeps_memory_bounded_and_spills_the_scrollback() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let session = session_in(dir.path(), |config| config.spill_cap_bytes = 2 << 30);
        let before = peak_rss_kib();
        // 10 million lines of 100 bytes: 1 GB, then a last line to wait for.
        let command = "yes 'line of the flood 0123456789012345678901234567890123456789012345678901234567890123456789' \
                       | head -n 10000000; echo flood-done";
        let first = open(&session, Some(command)).await;
        let wait = TerminalWait {
            wait_secs: Some(600),
            wait_for: Some("^flood-done".into()),
        };
        let done = session.terminal_view(first.id, wait).await.unwrap();
        assert_eq!(done.wait_end, WaitEnd::Matched, "{done:?}");
        let after = peak_rss_kib();
        let grown = after.saturating_sub(before);
        assert!(grown < 100 * 1024, "peak RSS grew by {grown} KiB ({before} → {after})");
        // The answers' scrollback: windowed, with the whole of it in their spill files.
        let mut total = 0;
        for answer in [&first, &done] {
            let stats = &answer.scrollback_stats;
            total += stats.total_lines;
            if let Some(path) = &stats.full_output_path {
                let size = std::fs::metadata(path).unwrap().len();
                assert_eq!(size, stats.total_bytes, "{}", path.display());
            }
            assert!(answer.scrollback.len() <= 60 * 1024);
        }
        // Every line but the last few on the screen scrolled off.
        assert!(total > 10_000_000 - 30, "{total} lines of scrollback");
        let spilled = done.scrollback_stats.full_output_path.clone().expect("a spill file");
        let mut tail = std::fs::read(&spilled).unwrap();
        tail.drain(..tail.len() - 200);
        let tail = String::from_utf8_lossy(&tail);
        assert!(tail.ends_with("0123456789\n") || tail.contains("flood"), "{tail}");
        assert!(done.scrollback.contains("lines ("), "{}", done.scrollback);
    });
}

#[test]
fn closing_kills_the_whole_tree() {
    let dir = tempfile::tempdir().unwrap();
    let mark = marker("terminal-close");
    runtime().block_on(async {
        let session = session_in(dir.path(), |_| {});
        let first = open(&session, None).await;
        let id = first.id;
        // A background job of the shell (a group of its own), a nohup'd one, and a
        // foreground one the shell waits for.
        let sleeper = format!(
            "{} sleep 1000 {}",
            crate::support::fx(),
            quoted_apart(&mark)
        );
        let started = send(
            &session,
            id,
            &format!("({sleeper}) & nohup bash -c '{sleeper}' >/dev/null 2>&1 &\n"),
            &[],
            None,
        )
        .await;
        assert_eq!(started.state, TerminalState::WaitingForInput, "{started:?}");
        let running = send(&session, id, &format!("bash -c '{sleeper}'\n"), &[], None).await;
        assert_eq!(running.state, TerminalState::Running, "{running:?}");
        let pids = alive_with(&mark);
        assert!(pids.len() >= 3, "{pids:?}");
        let closed = session.terminal_close(id).await.unwrap();
        assert_eq!(closed.state, TerminalState::Exited, "{closed:?}");
        let left: Vec<i32> = pids
            .iter()
            .copied()
            .filter(|pid| Path::new(&format!("/proc/{pid}")).exists())
            .filter(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                !stat.contains(") Z")
            })
            .collect();
        assert!(left.is_empty(), "still alive: {left:?}");
        let again = session.terminal_view(id, TerminalWait::default()).await;
        assert!(again.is_err(), "{again:?}");
    });
}

#[test]
fn the_policy_checks_the_opening_command_and_lines_typed_at_a_shell_prompt() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let session = session_in(dir.path(), |config| {
            config.policy.rules.push(agent_bash_core::RuleSpec {
                name: Some("no-curl".into()),
                decision: agent_bash_core::Decision::Deny,
                command: Some("curl *".into()),
                regex: None,
                reason: Some("no network here".into()),
                tool: None,
                message: None,
                examples: Vec::new(),
                counter_examples: Vec::new(),
            });
        });
        let refused = open(&session, Some("curl https://example.com")).await;
        assert!(refused.refused.is_some(), "{refused:?}");
        assert_eq!(refused.id, 0);
        let bash = open(&session, None).await;
        let id = bash.id;
        // Typed in two sends: the line is checked whole at its Enter.
        send(&session, id, "curl https://", &[], None).await;
        let typed = send(&session, id, "example.com", &["Enter"], None).await;
        let refusal = typed.refused.clone().expect("refused");
        assert_eq!(refusal.rule.as_deref(), Some("no-curl"));
        assert!(!typed.screen.contains("example.com"), "{}", typed.screen);
        // What was typed stays on the shell's line (and in the policy's view of it) until
        // it is erased.
        let again = send(&session, id, "", &["Enter"], None).await;
        assert!(again.refused.is_some(), "{again:?}");
        send(&session, id, "", &["Ctrl-U"], None).await;
        let text = agent_bash_core::render::terminal(&typed);
        assert!(text.contains("nothing was typed"), "{text}");
        // Input to a program that is not a shell is not a command.
        let python = send(&session, id, "python3 -q\n", &[], None).await;
        assert!(python.screen.ends_with(">>>"), "{}", python.screen);
        let string = send(&session, id, "'curl *'\n", &[], None).await;
        assert!(string.refused.is_none(), "{string:?}");
        session.terminal_close(id).await.unwrap();
        let log = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
        let actions: Vec<serde_json::Value> = log
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let of = |action: &str| actions.iter().filter(|a| a["action"] == action).count();
        assert_eq!((of("open"), of("close")), (2, 1), "{log}");
        assert!(of("send") >= 4, "{log}");
        assert!(
            actions
                .iter()
                .any(|a| a["action"] == "send" && a["decision"] == "deny" && a["ran"] == false),
            "{log}"
        );
    });
}

#[test]
fn limits_idle_timeout_and_bad_input_are_answered() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let session = session_in(dir.path(), |config| {
            config.terminal.max_sessions = 1;
            config.terminal.idle = Duration::from_secs(2);
        });
        let first = open(&session, Some("sleep 1000")).await;
        let second = session
            .terminal_open(TerminalOpen::default(), &NoApprover)
            .await;
        assert!(
            matches!(
                second,
                Err(agent_bash_core::Error::TerminalLimit { max: 1 })
            ),
            "{second:?}"
        );
        let bad_key = TerminalInput {
            keys: vec!["Hyper".into()],
            ..TerminalInput::default()
        };
        let err = session.terminal_send(first.id, bad_key, &NoApprover).await;
        assert!(
            matches!(err, Err(agent_bash_core::Error::Key { .. })),
            "{err:?}"
        );
        let bad_regex = TerminalWait {
            wait_for: Some("(".into()),
            ..TerminalWait::default()
        };
        let err = session.terminal_view(first.id, bad_regex).await;
        assert!(
            matches!(err, Err(agent_bash_core::Error::Pattern { .. })),
            "{err:?}"
        );
        let unknown = session.terminal_view(99, TerminalWait::default()).await;
        assert!(matches!(
            unknown,
            Err(agent_bash_core::Error::UnknownTerminal { id: 99, .. })
        ));
        // Nobody uses it: closed after a second of idleness.
        let wait = TerminalWait {
            wait_secs: Some(30),
            wait_for: Some("^never$".into()),
        };
        let idle = session.terminal_view(first.id, wait).await.unwrap();
        assert_eq!(idle.state, TerminalState::Exited, "{idle:?}");
        assert!(
            idle.notes.contains(&TerminalNote::ClosedIdle { secs: 2 }),
            "{idle:?}"
        );
        // An ended terminal makes room for a new one.
        let third = open(&session, Some("cat")).await;
        assert_eq!(third.id, 2);
    });
}
