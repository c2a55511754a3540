//! Exit status in plain words: signal names, and what common exit codes mean, so the model
//! is not misled (grep's 1 is "no match", not a failure). Pure.

/// The name of signal `number` (`SIGKILL`), or `SIG<number>` for one without a name here.
pub fn signal_name(number: i32) -> String {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    usize::try_from(number - 1)
        .ok()
        .and_then(|index| NAMES.get(index))
        .map_or_else(|| format!("SIG{number}"), |name| name.to_string())
}

/// A short explanation of an exit code, or `None` when there is nothing useful to add.
pub fn explain(exit_code: i32, command: &str) -> Option<String> {
    match exit_code {
        0 => None,
        1 => explain_one(last_command_name(command)?),
        2 if matches!(last_command_name(command)?, "grep" | "egrep" | "fgrep" | "rg") => {
            Some("grep exits 2 on an error (a missing file, a bad pattern), not on no match".into())
        }
        126 => Some("126: the command was found but could not be executed (permission denied, or not an executable)".into()),
        127 => Some("127: command not found (check the name, the PATH, or install it)".into()),
        129..=192 => {
            let signal = exit_code - 128;
            Some(format!("{exit_code} = 128 + {signal}: a process was killed by {}", signal_name(signal)))
        }
        _ => None,
    }
}

fn explain_one(name: &str) -> Option<String> {
    let meaning = match name {
        "grep" | "egrep" | "fgrep" | "rg" | "ag" | "git-grep" => "no line matched",
        "diff" | "cmp" => "the inputs differ",
        "test" | "[" | "[[" => "the condition is false",
        _ => return None,
    };
    Some(format!(
        "exit 1 from {name} means {meaning}; it is not an error"
    ))
}

/// The name of the command that decides the exit status: the first word of the last
/// simple command. A heuristic on the text (no quoting rules); `None` when unsure.
fn last_command_name(command: &str) -> Option<&str> {
    let last = command
        .trim_end()
        .trim_end_matches([';', '&'])
        .rsplit(['\n', ';', '|', '&', '('])
        .find(|part| !part.trim().is_empty())?;
    let mut words = last.split_ascii_whitespace().peekable();
    // Skip what does not change which command runs.
    while let Some(&word) = words.peek() {
        if word.contains('=') && !word.starts_with('=')
            || matches!(
                word,
                "!" | "time" | "command" | "exec" | "then" | "do" | "{"
            )
        {
            words.next();
        } else {
            break;
        }
    }
    let word = words.next()?;
    let name = word.rsplit('/').next().unwrap_or(word);
    if name == "git" && words.next() == Some("grep") {
        return Some("git-grep");
    }
    Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(code: i32, command: &str, expected: Option<&str>) {
        let got = explain(code, command);
        match (got.as_deref(), expected) {
            (Some(got), Some(expected)) => {
                assert!(got.contains(expected), "{got:?} lacks {expected:?}")
            }
            (got, expected) => assert_eq!(got, expected),
        }
    }

    #[test]
    fn explains() {
        check(1, "grep foo file.txt", Some("no line matched"));
        check(1, "cat x | /usr/bin/grep -q foo", Some("no line matched"));
        check(1, "cd src && rg needle", Some("no line matched"));
        check(1, "LC_ALL=C diff a b", Some("differ"));
        check(1, "[ -f missing ]", Some("condition is false"));
        check(1, "git grep foo", Some("no line matched"));
        check(1, "false", None);
        check(1, "grep foo x; false", None);
        check(2, "grep foo missing", Some("error"));
        check(126, "./script.sh", Some("could not be executed"));
        check(127, "nosuchcmd", Some("not found"));
        check(137, "x", Some("SIGKILL"));
        check(130, "x", Some("SIGINT"));
        check(0, "grep x", None);
        check(3, "x", None);
    }

    #[test]
    fn names_signals() {
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(11), "SIGSEGV");
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(40), "SIG40");
        assert_eq!(signal_name(0), "SIG0");
    }
}
