//! The table of programs that run a command or shell text they are given, and how each finds
//! it: the words after its own options (`uv run CMD…`), an option's value in each form the
//! program accepts (`npx -c TEXT`, `tar --to-command=TEXT`, `man -P TEXT`), or text in its
//! own command language that reaches a shell (`gdb -ex 'shell …'`, `sqlite3 '.shell …'`).
//!
//! One table, read wherever the walker meets a program: the commands it finds become forms
//! of the segment (rules match them as if written alone) and the texts become scripts walked
//! as their own segments. Text that is not literal is walked as written, so its command name
//! is unknown and the segment asks. Pure: looks at words, runs nothing.

use crate::commands::program;
use crate::words::Arg;

mod build_files;
mod code;
mod git;
mod languages;
mod packages;
mod table;

pub(crate) use build_files::{dockerfile_runs, make_recipes, stdin_dockerfile, stdin_makefile};
pub(crate) use code::code_commands;
pub(crate) use git::git_texts;
use languages::own_language_texts;
pub(crate) use packages::unseen_package;
use table::{NO, RUNNERS, Rest, Runner};

/// The entry for `form`, and where the words after its subcommand start.
fn runner(form: &[Arg]) -> Option<(&'static Runner, usize)> {
    static BY_NAME: std::sync::LazyLock<
        std::collections::HashMap<&'static str, Vec<&'static Runner>>,
    > = std::sync::LazyLock::new(|| {
        let mut by_name: std::collections::HashMap<&'static str, Vec<&'static Runner>> =
            std::collections::HashMap::new();
        for runner in RUNNERS {
            for name in runner.names {
                by_name.entry(name).or_default().push(runner);
            }
        }
        by_name
    });
    let name = crate::commands::program_name(form)?;
    BY_NAME.get(&*name)?.iter().copied().find_map(|runner| {
        let mut at = 1;
        for word in runner.sub {
            // Global options may come before the subcommand (`npm --prefix x exec`).
            while form.get(at).is_some_and(|arg| {
                arg.text.starts_with('-') && arg.text != *word && !word.starts_with('-')
            }) {
                at += 1;
            }
            if form.get(at)?.text != *word {
                return None;
            }
            at += 1;
        }
        Some((runner, at))
    })
}

/// Where the commands that `form` runs may start, as offsets into `form`: the first word
/// after its options, and each later word that may be the command if the word before it
/// was an option's value (`uv run --python 3.12 pytest`: `3.12` or `pytest`). Empty if
/// `form` is not a runner of commands.
pub(crate) fn command_starts(form: &[Arg]) -> Vec<usize> {
    let Some((runner, at)) = runner(form) else {
        return Vec::new();
    };
    let mut starts = Vec::new();
    let after: &[&str] = match runner.rest {
        Rest::Command => NO,
        Rest::CommandAfter(options) => options,
        Rest::Data | Rest::EachText => return starts,
    };
    let mut index = at;
    let mut armed = after.is_empty();
    let mut previous_option = false;
    let mut operands = 0;
    while index < form.len() {
        let text = form[index].text.as_str();
        if !armed {
            armed = after.contains(&text);
            index += 1;
            // The command is the word right after the option (`nix develop -c CMD…`).
            if armed && let Some(next) = form.get(index).filter(|next| next.is_plain()) {
                let _ = next;
                starts.push(index);
                break;
            }
            continue;
        }
        if text == "--" && !after.contains(&"--") {
            starts.push(index + 1);
            break;
        }
        if text.starts_with('-') && text.len() > 1 && form[index].literal {
            previous_option = !text.contains('=');
            index += 1;
            continue;
        }
        // A word bash changes (`browser-use[cli]`, `$TOOL`) is a package or an argument
        // here as often as a command: no form of its own.
        if form[index].is_plain() {
            starts.push(index);
        }
        // The first word may be an operand of the runner (`direnv exec DIR CMD`, `faketime
        // TIME CMD`, `docker exec CONTAINER CMD`): the next one may be the command too.
        operands += usize::from(!previous_option);
        if operands >= 2 {
            break;
        }
        previous_option = false;
        index += 1;
    }
    starts.retain(|start| *start < form.len());
    starts
}

/// Shell texts `form` runs, each with a label: option values of the table's `text`
/// options, words of runners whose every word is a script, and language commands that
/// reach a shell (`vim -c '!cmd'`).
pub(crate) fn texts(form: &[Arg]) -> Vec<(String, String)> {
    let name = program(form).unwrap_or_default();
    let mut found = own_language_texts(&name, form);
    let Some((runner, at)) = runner(form) else {
        return found;
    };
    // `xterm -e 'rm -rf x'`: one word holding spaces where a command goes is shell text.
    for start in command_starts(form) {
        if start + 1 == form.len() && form[start].text.contains(' ') {
            found.push((form[start].text.clone(), name.to_string()));
        }
    }
    let mut index = at;
    while let Some(arg) = form.get(index) {
        index += 1;
        let text = arg.text.as_str();
        if let Some(value) = option_value(runner.text, text, form.get(index)) {
            if !text.contains('=') && runner.text.contains(&text) {
                index += 1;
            }
            // `--checkpoint-action=exec=CMD`.
            let value = value
                .strip_prefix("exec=")
                .map_or(value.clone(), str::to_owned);
            found.push((value, format!("{name} {}", option_name(text))));
            continue;
        }
        for (option, prefixes) in runner.language {
            let value = if *option == "+" {
                text.strip_prefix('+').map(str::to_owned)
            } else {
                option_value(&[option], text, form.get(index))
            };
            let Some(value) = value else { continue };
            if *option != "+" && !text.contains('=') && text == *option {
                index += 1;
            }
            if let Some(script) = shell_part(&value, prefixes) {
                found.push((script, format!("{name} {option}")));
            }
            // `call system('…')`, `lua os.execute('…')`, `python os.system('…')`.
            for script in code_commands("", &value)
                .into_iter()
                .filter(|script| !script.starts_with("$(code"))
            {
                found.push((script, format!("{name} {option}")));
            }
        }
        if runner.rest == Rest::EachText && !text.starts_with('-') {
            found.push((arg.text.clone(), name.to_string()));
        }
    }
    found
}

/// The value `word` (with `next`) gives one of `options`: `-c TEXT`, `--exec=TEXT`,
/// `-cTEXT`.
fn option_value(options: &[&str], word: &str, next: Option<&Arg>) -> Option<String> {
    for option in options {
        if word == *option {
            return Some(next?.text.clone());
        }
        if let Some(value) = word.strip_prefix(option) {
            if option.starts_with("--") {
                if let Some(value) = value.strip_prefix('=') {
                    return Some(value.to_owned());
                }
            } else if option.len() == 2 && !value.is_empty() {
                return Some(value.trim_start_matches('=').to_owned());
            }
        }
    }
    None
}

fn option_name(word: &str) -> &str {
    word.split_once('=').map_or(word, |(name, _)| name)
}

/// The shell command in a program's own command text, after one of `prefixes` (`!cmd`,
/// `shell cmd`, `call system('cmd')`).
fn shell_part(value: &str, prefixes: &[&str]) -> Option<String> {
    let trimmed = value.trim_start();
    for command in std::iter::once(trimmed).chain(trimmed.lines()) {
        let command = command.trim_start();
        for prefix in prefixes {
            if let Some(rest) = command.strip_prefix(prefix) {
                let rest = rest
                    .trim()
                    .trim_start_matches(['"', '\''])
                    .trim_end_matches([')', '"', '\'']);
                return Some(rest.to_owned());
            }
        }
    }
    None
}

/// Words joined into a script that gives them back as they are (each single-quoted).
pub(crate) fn quote_join(words: &[Arg]) -> String {
    words
        .iter()
        .map(|arg| {
            if arg.literal {
                format!("'{}'", arg.text.replace('\'', "'\\''"))
            } else {
                arg.text.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The commands `xargs` runs when the line shows its input: `outer` is the `xargs` command,
/// `inner` the command it runs, `input` what it reads (a here-string, a literal `echo` before
/// it, a file given as `-a <(printf …)`). Items are split at blanks (or at newlines with
/// `-I`, at NULs with `-0`); the home directory stays as the shell wrote it.
pub(crate) fn xargs_commands(outer: &[Arg], inner: &[Arg], input: Option<&str>) -> Option<String> {
    if program(outer).as_deref() != Some("xargs") || inner.is_empty() {
        return None;
    }
    let mut input = input.map(str::to_owned);
    let mut replace = None;
    let mut null = false;
    let mut words = outer.iter().skip(1).peekable();
    while let Some(arg) = words.next() {
        let text = arg.text.as_str();
        match text {
            "-0" | "--null" => null = true,
            "-I" => replace = words.next().map(|arg| arg.text.clone()),
            "-i" | "--replace" => replace = Some("{}".to_owned()),
            "-a" => {
                input = words
                    .next()
                    .and_then(|arg| match arg.printed.as_deref() {
                        Some(crate::words::Printed::Text(text)) => Some(text.clone()),
                        _ => None,
                    })
                    .or(input)
            }
            _ if text.starts_with("-I") && text.len() > 2 => replace = Some(text[2..].to_owned()),
            _ if text.starts_with("--replace=") => {
                replace = Some(text["--replace=".len()..].to_owned());
            }
            _ => {}
        }
    }
    let input = input?;
    let item = |text: &str| {
        let home =
            text.starts_with('~') || text.starts_with("$HOME") || text.starts_with("${HOME}");
        Arg {
            text: text.to_owned(),
            literal: !home,
            ..Arg::default()
        }
    };
    let items: Vec<&str> = if null {
        input.split('\0').collect()
    } else if replace.is_some() {
        input.lines().collect()
    } else {
        input.split_whitespace().collect()
    };
    let items: Vec<&str> = items
        .into_iter()
        .filter(|item| !item.trim().is_empty())
        .collect();
    let lines: Vec<String> = match replace {
        Some(marker) => items
            .iter()
            .map(|value| {
                let words: Vec<Arg> = inner
                    .iter()
                    .map(|arg| {
                        if arg.text.contains(&marker) {
                            item(&arg.text.replace(&marker, value.trim()))
                        } else {
                            arg.clone()
                        }
                    })
                    .collect();
                quote_join(&words)
            })
            .collect(),
        None => {
            let mut words = inner.to_vec();
            words.extend(items.iter().map(|value| item(value)));
            vec![quote_join(&words)]
        }
    };
    Some(lines.join("\n"))
}

/// True if `form` runs commands made from its input or its data: `awk` calling `system` or
/// a pipe with a value built at run time, `sed` with the `e` command or flag, `xargs`
/// handing its input to a shell script.
pub(crate) fn runs_its_input(form: &[Arg]) -> bool {
    let Some(name) = program(form) else {
        return false;
    };
    match name.as_ref() {
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => form.iter().skip(1).any(|arg| {
            let code = arg.text.as_str();
            (code.contains("system(")
                || code.contains("| getline")
                || code.contains("|&")
                || code.contains("print |")
                || code.contains("printf |"))
                && !code_commands("awk", code)
                    .iter()
                    .all(|command| !command.starts_with("$("))
                || code.contains("system($")
                || code.contains("print | $")
                || code.contains("| \"sh")
                || code.contains("|\"sh")
                || code.contains("| \"bash")
        }),
        "sed" | "gsed" => form.iter().skip(1).any(|arg| {
            let code = arg.text.as_str();
            !code.starts_with('-')
                && (code == "e"
                    || code.ends_with("/e")
                    || code.contains("/e;")
                    || code.starts_with("1e")
                    || code.contains(";e")
                    || code.ends_with("/ge")
                    || code.ends_with("/eg"))
        }),
        "xargs" => {
            form.iter()
                .skip(1)
                .any(|arg| crate::commands::is_shell(crate::commands::basename(&arg.text)))
                && form.iter().any(|arg| arg.text == "-c")
        }
        "parallel" => !form
            .iter()
            .any(|arg| arg.text == ":::" || arg.text == "::::"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Arg> {
        line.split(' ').map(Arg::literal).collect()
    }

    #[test]
    fn commands_are_found_after_options_and_subcommands() {
        assert_eq!(command_starts(&words("uv run pytest -x")), [2]);
        assert_eq!(
            command_starts(&words("uv run --python 3.12 rm -rf x")),
            [3, 4, 6]
        );
        assert_eq!(command_starts(&words("direnv exec / rm -rf x")), [2, 3]);
        assert_eq!(
            command_starts(&words("npm --prefix=x exec -- rm -rf y")),
            [4]
        );
        assert_eq!(command_starts(&words("nix develop .#x -c rm -rf y")), [4]);
        assert!(command_starts(&words("uv pip install x")).is_empty());
    }

    #[test]
    fn texts_are_found_in_every_form_of_an_option() {
        let texts = |line: &str| -> Vec<String> {
            texts(&words(line))
                .into_iter()
                .map(|(text, _)| text)
                .collect()
        };
        assert_eq!(texts("npx -c x"), ["x"]);
        assert_eq!(texts("tar --to-command=x -xf a.tar"), ["x"]);
        assert_eq!(texts("man -Px ls"), ["x"]);
        assert_eq!(texts("vim -c !x"), ["x"]);
        assert_eq!(texts("socat - EXEC:x,pty"), ["x"]);
        assert!(texts("tar -xzf a.tar").is_empty());
    }
}
