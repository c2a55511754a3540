//! Programs whose arguments are their own command language, and the shell commands in it:
//! socat addresses, sed's `e` command, parallel's inputs, start-stop-daemon's program,
//! npm scripts, readline bindings, sqlite3 dot-commands.

use super::*;

/// Commands of programs whose arguments are their own command language: `socat`
/// addresses (`EXEC:cmd`, `SYSTEM:text`), `sqlite3` dot-commands (`.shell cmd`).
pub(super) fn own_language_texts(name: &str, form: &[Arg]) -> Vec<(String, String)> {
    let words = form.iter().skip(1);
    match name {
        "socat" => socat_texts(form),
        "sed" | "gsed" => sed_texts(form),
        "parallel" => parallel_texts(form),
        "start-stop-daemon" => daemon_texts(form),
        // `npm pkg set scripts.postinstall='…'`: shell text npm runs later.
        "npm" | "pnpm" => words
            .filter_map(|arg| {
                let value = arg.text.strip_prefix("scripts.")?.split_once('=')?.1;
                Some((value.to_owned(), format!("{name} pkg set scripts")))
            })
            .collect(),
        "bind" if form.iter().any(|arg| arg.text == "-x") => words
            .filter_map(|arg| {
                arg.text.split_once(':').map(|(_, command)| {
                    (
                        command.trim().trim_matches('"').to_owned(),
                        "bind -x".to_owned(),
                    )
                })
            })
            .collect(),
        "sqlite3" | "sqlite" | "duckdb" => dot_shell_texts(name, form),
        _ => Vec::new(),
    }
}

/// socat's `EXEC:cmd` and `SYSTEM:text` addresses.
fn socat_texts(form: &[Arg]) -> Vec<(String, String)> {
    form.iter()
        .skip(1)
        .filter_map(|arg| {
            let (kind, rest) = arg.text.split_once(':')?;
            let kind = kind.to_ascii_lowercase();
            if !matches!(kind.as_str(), "exec" | "system") {
                return None;
            }
            // Options of the address follow a comma: `EXEC:'bash -li',pty,stderr`.
            let command = rest.split(',').next().unwrap_or(rest);
            let command = command.trim_matches(['"', '\'']);
            Some((command.to_owned(), format!("socat {kind}:")))
        })
        .collect()
}

/// sed's `e COMMAND` and the replacement of an `s///e`.
fn sed_texts(form: &[Arg]) -> Vec<(String, String)> {
    form.iter()
        .skip(1)
        .filter(|arg| !arg.text.starts_with('-'))
        .flat_map(|arg| {
            arg.text
                .split([';', '\n'])
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter_map(|command| {
            let command = command
                .trim_start()
                .trim_start_matches(|c: char| c.is_ascii_digit() || c == '$');
            if let Some(replacement) = sed_executed_replacement(command) {
                return Some((replacement, "sed s///e".to_owned()));
            }
            let rest = command.strip_prefix('e')?;
            rest.starts_with(' ')
                .then(|| (rest.trim().to_owned(), "sed e".to_owned()))
        })
        .collect()
}

/// The commands parallel runs: its command with each input after `:::`, or each input.
fn parallel_texts(form: &[Arg]) -> Vec<(String, String)> {
    let all: Vec<&Arg> = form.iter().skip(1).collect();
    let Some(at) = all.iter().position(|arg| arg.text == ":::") else {
        return Vec::new();
    };
    // parallel's own options come first, then the command with its options.
    let first = all[..at]
        .iter()
        .position(|arg| !arg.text.starts_with('-'))
        .unwrap_or(at);
    let command: Vec<&str> = all[first..at].iter().map(|arg| arg.text.as_str()).collect();
    all[at + 1..]
        .iter()
        .filter(|arg| arg.text != ":::")
        .map(|arg| {
            let script = if command.is_empty() {
                arg.text.clone()
            } else {
                format!("{} {}", command.join(" "), arg.text)
            };
            (script, "parallel".to_owned())
        })
        .collect()
}

/// The program start-stop-daemon starts, with the words after `--`.
fn daemon_texts(form: &[Arg]) -> Vec<(String, String)> {
    let program = form
        .windows(2)
        .find(|pair| matches!(pair[0].text.as_str(), "--exec" | "-x" | "--startas" | "-a"))
        .map(|pair| &pair[1]);
    let rest = form
        .iter()
        .position(|arg| arg.text == "--")
        .map_or(&form[form.len()..], |at| &form[at + 1..]);
    program
        .map(|program| {
            let mut words = vec![program.clone()];
            words.extend(rest.iter().cloned());
            vec![(quote_join(&words), "start-stop-daemon".to_owned())]
        })
        .unwrap_or_default()
}

/// sqlite3's (and duckdb's) `.shell` and `.system` dot-commands.
fn dot_shell_texts(name: &str, form: &[Arg]) -> Vec<(String, String)> {
    form.iter()
        .skip(1)
        .flat_map(|arg| arg.text.lines().map(str::to_owned).collect::<Vec<_>>())
        .filter_map(|line| {
            let line = line.trim_start();
            let rest = line
                .strip_prefix(".shell")
                .or_else(|| line.strip_prefix(".system"))?;
            Some((rest.trim().to_owned(), format!("{name} .shell")))
        })
        .collect()
}

/// The replacement of a sed `s` command with the `e` flag, which sed runs as a command.
fn sed_executed_replacement(command: &str) -> Option<String> {
    let rest = command.strip_prefix('s')?;
    let delimiter = rest.chars().next()?;
    if delimiter.is_alphanumeric() || delimiter == '\\' {
        return None;
    }
    let parts: Vec<&str> = rest[delimiter.len_utf8()..].split(delimiter).collect();
    let [_, replacement, flags] = parts.as_slice() else {
        return None;
    };
    flags.contains('e').then(|| (*replacement).to_owned())
}
