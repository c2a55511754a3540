//! Exit status in plain words: signal names, and what common exit codes mean, so the model
//! is not misled (grep's 1 is "no match", not a failure). Pure.

/// Every signal a result may name, with this platform's number for it.
const SIGNALS: &[(&str, i32)] = &[
    ("SIGHUP", libc::SIGHUP),
    ("SIGINT", libc::SIGINT),
    ("SIGQUIT", libc::SIGQUIT),
    ("SIGILL", libc::SIGILL),
    ("SIGTRAP", libc::SIGTRAP),
    ("SIGABRT", libc::SIGABRT),
    ("SIGBUS", libc::SIGBUS),
    ("SIGFPE", libc::SIGFPE),
    ("SIGKILL", libc::SIGKILL),
    ("SIGUSR1", libc::SIGUSR1),
    ("SIGSEGV", libc::SIGSEGV),
    ("SIGUSR2", libc::SIGUSR2),
    ("SIGPIPE", libc::SIGPIPE),
    ("SIGALRM", libc::SIGALRM),
    ("SIGTERM", libc::SIGTERM),
    ("SIGCHLD", libc::SIGCHLD),
    ("SIGCONT", libc::SIGCONT),
    ("SIGSTOP", libc::SIGSTOP),
    ("SIGTSTP", libc::SIGTSTP),
    ("SIGTTIN", libc::SIGTTIN),
    ("SIGTTOU", libc::SIGTTOU),
    ("SIGURG", libc::SIGURG),
    ("SIGXCPU", libc::SIGXCPU),
    ("SIGXFSZ", libc::SIGXFSZ),
    ("SIGVTALRM", libc::SIGVTALRM),
    ("SIGPROF", libc::SIGPROF),
    ("SIGWINCH", libc::SIGWINCH),
    ("SIGIO", libc::SIGIO),
    ("SIGPWR", libc::SIGPWR),
    ("SIGSYS", libc::SIGSYS),
];

/// The signals `bash_kill` may send.
const KILL_SIGNALS: &[&str] = &[
    "SIGTERM", "SIGINT", "SIGHUP", "SIGKILL", "SIGQUIT", "SIGUSR1", "SIGUSR2",
];

/// The name of signal `number` (`SIGKILL`), or `SIG<number>` for one without a name here.
pub(crate) fn signal_name(number: i32) -> String {
    SIGNALS
        .iter()
        .find(|(_, known)| *known == number)
        .map_or_else(|| format!("SIG{number}"), |(name, _)| (*name).to_string())
}

/// Parses a signal `bash_kill` may send, by name (`TERM`, `SIGTERM`, `term`) or number.
///
/// # Errors
/// `Error::Signal` for any other name or number.
pub(crate) fn parse_signal(name: &str) -> Result<rustix::process::Signal, crate::Error> {
    let upper = name.trim().to_ascii_uppercase();
    let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
    SIGNALS
        .iter()
        .filter(|(known, _)| KILL_SIGNALS.contains(known))
        .find(|(known, number)| known[3..] == *bare || bare.parse() == Ok(*number))
        .and_then(|(_, number)| rustix::process::Signal::from_named_raw(*number))
        .ok_or_else(|| crate::Error::Signal {
            name: name.to_string(),
        })
}

/// A short explanation of an exit code, or `None` when there is nothing useful to add.
pub(crate) fn explain(exit_code: i32, command: &str) -> Option<String> {
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

    #[test]
    fn parses_the_signals_bash_kill_sends() {
        use rustix::process::Signal;
        for (name, signal) in [
            ("TERM", Signal::TERM),
            ("sigint", Signal::INT),
            ("SIGKILL", Signal::KILL),
            (" usr1 ", Signal::USR1),
        ] {
            assert_eq!(parse_signal(name).ok(), Some(signal), "{name}");
        }
        let number = Signal::USR2.as_raw().to_string();
        assert_eq!(parse_signal(&number).ok(), Some(Signal::USR2));
        for bad in ["STOP", "SIGSEGV", "0", "99", "", "TERMX"] {
            assert!(parse_signal(bad).is_err(), "{bad}");
        }
    }
}
