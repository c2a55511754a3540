//! Calls that name the program apart from its arguments, by language: Perl's `exec {…}`
//! and `system qw(…)`, Python's `os.execvp`, Emacs Lisp's `shell-command`, Tcl's `exec`.

use super::literals::{
    balanced_argument, quoted_prefix, split_top_level, string_literal, string_literals, until_close,
};
use super::*;

/// `os.execvp("rm", ["make", "-rf", home])`: the program, then the list without its first
/// item (the name the program is told it has), home directories read as `~`.
pub(super) fn code_execs(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    // Perl's `exec {"/bin/rm"} "name", "-rf", $ENV{HOME}`: the program in braces.
    for call in ["exec {", "system {"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(call) {
            let start = from + at + call.len();
            from = start;
            let rest = &code[start..];
            let Some(close) = rest.find('}') else {
                continue;
            };
            let Some(program) = string_literal(rest[..close].trim()) else {
                continue;
            };
            let list = rest[close + 1..].split(';').next().unwrap_or("");
            found.push(exec_command(program, list));
        }
    }
    // Perl's `system qw(rm -rf), glob("~/.aws")`: the words of `qw`, then the list.
    for call in ["system qw(", "exec qw(", "system(qw(", "exec(qw("] {
        let mut from = 0;
        while let Some(at) = code[from..].find(call) {
            let start = from + at + call.len();
            from = start;
            let rest = &code[start..];
            let Some(close) = rest.find(')') else {
                continue;
            };
            let mut words: Vec<Arg> = rest[..close].split_whitespace().map(Arg::literal).collect();
            let list = rest[close + 1..].split(';').next().unwrap_or("");
            for item in split_top_level(list).into_iter().skip(1) {
                let item = item.trim().trim_end_matches(')');
                let item = item.strip_prefix("glob(").unwrap_or(item);
                // `glob("~/.aws")` expands the tilde: written bare, the shell does too.
                let unquoted = |text: &str| Arg {
                    text: text.to_owned(),
                    ..Arg::default()
                };
                words.push(match string_literal(item.trim_end_matches(')')) {
                    Some(word) if word.starts_with('~') && !word.contains([' ', '\'', ';']) => {
                        unquoted(&word)
                    }
                    Some(word) => Arg::literal(word),
                    None if HOMES.iter().any(|home| item.contains(home)) => unquoted("~"),
                    None => unquoted("$(value)"),
                });
            }
            found.push(quote_join(&words));
        }
    }
    for call in ["os.execvp(", "os.execv(", "os.execve(", "os.execvpe("] {
        let mut from = 0;
        while let Some(at) = code[from..].find(call) {
            let start = from + at + call.len();
            from = start;
            let rest = &code[start..];
            let program = balanced_argument(rest);
            let Some(program) = string_literal(program.trim()) else {
                continue;
            };
            let after = &rest[program.len().min(rest.len())..];
            let Some(open) = after.find('[') else {
                continue;
            };
            let list = until_close(&after[open + 1..]);
            found.push(exec_command(program, list));
        }
    }
    found
}

/// The command an exec call runs: `program`, then the items of `list` but the first (the
/// name the program is told it has), home directories read as `~`, other values unknown.
fn exec_command(program: String, list: &str) -> String {
    let mut words = vec![Arg::literal(program)];
    for item in split_top_level(list).into_iter().skip(1) {
        let item = item.trim();
        words.push(match string_literal(item) {
            Some(word) => Arg::literal(word),
            None if HOMES.iter().any(|home| item.contains(home)) => Arg::literal("~"),
            None => Arg {
                text: "$(value)".to_owned(),
                ..Arg::default()
            },
        });
    }
    quote_join(&words).replace("'~'", "~")
}

/// Emacs Lisp's shell calls: `(shell-command "TEXT")`, and `(call-process "sh" … "-c"
/// "TEXT")` with a shell as the program.
pub(super) fn lisp_shell_calls(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for call in [
        "(shell-command ",
        "(shell-command-to-string ",
        "(async-shell-command ",
    ] {
        for (at, _) in code.match_indices(call) {
            if let Some(text) = quoted_prefix(code[at + call.len()..].trim_start()) {
                found.push(text);
            }
        }
    }
    for (at, _) in code.match_indices("(call-process ") {
        let rest = &code[at..];
        let literals = string_literals(&rest[..rest.find(')').unwrap_or(rest.len())]);
        if literals
            .first()
            .is_some_and(|program| crate::commands::is_shell(crate::commands::basename(program)))
            && let Some(flag) = literals.iter().position(|literal| literal == "-c")
            && let Some(text) = literals.get(flag + 1)
        {
            found.push(text.clone());
        }
    }
    found
}

/// Tcl's `exec prog args…` (at a line's start or in brackets): the command it runs.
pub(super) fn tcl_execs(code: &str) -> Vec<String> {
    code.split(['\n', '[', ';'])
        .filter_map(|part| part.trim_start().strip_prefix("exec "))
        .map(|rest| rest.split([']', '\n']).next().unwrap_or("").to_owned())
        .collect()
}
