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

mod code;
mod git;
mod table;

pub(crate) use code::code_commands;
pub(crate) use git::git_texts;
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

/// Commands of programs whose arguments are their own command language: `socat`
/// addresses (`EXEC:cmd`, `SYSTEM:text`), `sqlite3` dot-commands (`.shell cmd`).
fn own_language_texts(name: &str, form: &[Arg]) -> Vec<(String, String)> {
    let words = form.iter().skip(1);
    match name {
        "socat" => words
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
            .collect(),
        "sed" | "gsed" => words
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
            .collect(),
        "parallel" => {
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
        "start-stop-daemon" => {
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
        "sqlite3" | "sqlite" | "duckdb" => words
            .flat_map(|arg| arg.text.lines().map(str::to_owned).collect::<Vec<_>>())
            .filter_map(|line| {
                let line = line.trim_start();
                let rest = line
                    .strip_prefix(".shell")
                    .or_else(|| line.strip_prefix(".system"))?;
                Some((rest.trim().to_owned(), format!("{name} .shell")))
            })
            .collect(),
        _ => Vec::new(),
    }
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

/// True if `form` builds an image from a Dockerfile read on standard input (`docker build
/// -f - .`, `docker build -`, `podman build -f-`).
pub(crate) fn stdin_dockerfile(form: &[Arg]) -> bool {
    matches!(
        program(form).as_deref(),
        Some("docker" | "podman" | "buildah" | "nerdctl")
    ) && form
        .iter()
        .any(|arg| matches!(arg.text.as_str(), "build" | "buildx" | "bud"))
        && form
            .iter()
            .enumerate()
            .any(|(at, arg)| match arg.text.as_str() {
                "-f" | "--file" => form.get(at + 1).is_some_and(|next| next.text == "-"),
                "-f-" | "--file=-" | "-" => true,
                _ => false,
            })
}

/// The shell text of a Dockerfile's `RUN` steps (their `--mount`/`--network` options
/// left out, continuation lines joined): what the build runs.
pub(crate) fn dockerfile_runs(dockerfile: &str) -> String {
    let joined = dockerfile.replace("\\\n", " ");
    joined
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let rest = line
                .strip_prefix("RUN ")
                .or_else(|| line.strip_prefix("run "))?;
            let mut rest = rest.trim_start();
            while rest.starts_with("--") {
                rest = rest
                    .split_once(' ')
                    .map_or("", |(_, tail)| tail)
                    .trim_start();
            }
            Some(rest.to_owned())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// True if `form` is `make` reading its makefile from standard input (`make -f -`).
pub(crate) fn stdin_makefile(form: &[Arg]) -> bool {
    matches!(program(form).as_deref(), Some("make" | "gmake"))
        && form.iter().enumerate().any(|(at, arg)| {
            let value = match arg.text.as_str() {
                "-f" | "--file" | "--makefile" => form.get(at + 1).map(|next| next.text.as_str()),
                text => text
                    .strip_prefix("--file=")
                    .or_else(|| text.strip_prefix("--makefile="))
                    .or_else(|| text.strip_prefix("-f").filter(|rest| !rest.is_empty())),
            };
            matches!(value, Some("-" | "/dev/stdin"))
        })
}

/// The shell text of a makefile's recipes: tab-led lines and what follows `;` on a rule
/// line, without the `@`/`-`/`+` prefixes, make's `$(VAR)` read as the shell's `$VAR`,
/// `$(shell …)` as `$(…)` and `$$` as `$`.
pub(crate) fn make_recipes(makefile: &str) -> String {
    let mut recipes = Vec::new();
    for line in makefile.lines() {
        let recipe = if let Some(recipe) = line.strip_prefix('\t') {
            recipe
        } else if let Some((rule, recipe)) = line.split_once(';')
            && rule.contains(':')
            && !rule.contains('=')
        {
            recipe
        } else {
            continue;
        };
        let recipe = recipe.trim_start().trim_start_matches(['@', '-', '+']);
        recipes.push(make_variables(recipe));
    }
    recipes.join("\n")
}

/// make's references read as the shell's: `$(HOME)` and `${HOME}` as `$HOME`, `$(shell X)` as
/// `$(X)`, `$$` as `$`.
fn make_variables(recipe: &str) -> String {
    let mut out = String::with_capacity(recipe.len());
    let mut rest = recipe;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
            continue;
        }
        let close = match after.chars().next() {
            Some('(') => after.find(')'),
            Some('{') => after.find('}'),
            _ => None,
        };
        match close {
            Some(close) => {
                let inside = &after[1..close];
                match inside.strip_prefix("shell ") {
                    Some(command) => out.push_str(&format!("$({command})")),
                    None => out.push_str(&format!("${{{inside}}}")),
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
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

/// A reason to ask when a package runner fetches what it runs from a repository rather
/// than a registry (`uvx --from git+https://…`, `npx github:user/repo`).
pub(crate) fn unseen_package(found: &crate::words::Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let name = program(form)?;
        // A package or image named at run time (`npx --yes "$PKG"`, `docker run "$IMAGE"`).
        let runs_named = match name.as_ref() {
            "npx" | "uvx" | "bunx" | "pnpx" | "pipx" => true,
            "docker" | "podman" | "nerdctl" => form.get(1).is_some_and(|sub| sub.text == "run"),
            _ => false,
        };
        // The first word that is neither an option nor an option's value.
        let mut named = None;
        if !runs_named {
            return unseen_archive(form, &name);
        }
        let mut words = form.iter().skip(1).filter(|arg| arg.text != "run");
        while let Some(arg) = words.next() {
            let text = arg.text.as_str();
            if !text.starts_with('-') {
                named = Some(arg);
                break;
            }
            let takes_value = matches!(
                text,
                "-v" | "--volume"
                    | "-w"
                    | "--workdir"
                    | "-e"
                    | "--env"
                    | "--name"
                    | "-p"
                    | "--publish"
                    | "--network"
                    | "--entrypoint"
                    | "-u"
                    | "--user"
                    | "--mount"
                    | "--env-file"
                    | "-l"
                    | "--label"
                    | "--platform"
                    | "-p2"
                    | "--from"
                    | "--package"
                    | "--python"
                    | "--with"
                    | "-h"
                    | "--hostname"
                    | "--cpus"
                    | "-m"
                    | "--memory"
            );
            if takes_value {
                words.next();
            }
        }
        if let Some(named) = named
            && !named.literal
        {
            return Some(format!(
                "runs `{}`, a package or image named only at run time",
                named.text
            ));
        }
        unseen_archive(form, &name)
    })
}

/// Why a package from a URL or a repository rather than a registry is unknown.
fn unseen_archive(form: &[Arg], name: &str) -> Option<String> {
    {
        // pip builds an archive from a URL by running its setup code; the registry's own
        // file host is the registry.
        if matches!(name, "pip" | "pip3") && form.iter().any(|arg| arg.text == "install") {
            let archive = form.iter().skip(1).find(|arg| {
                let text = arg.text.as_str();
                (text.starts_with("http://") || text.starts_with("https://"))
                    && !text.contains("files.pythonhosted.org")
                    && [".tgz", ".tar.gz", ".whl", ".zip", ".tar.bz2"]
                        .iter()
                        .any(|end| text.ends_with(end))
            })?;
            return Some(format!(
                "installs `{}`, a package from a URL rather than a registry, running its build code",
                archive.text
            ));
        }
        if !matches!(
            name,
            "uvx" | "npx" | "pipx" | "bunx" | "pnpx" | "uv" | "pnpm" | "yarn"
        ) {
            return None;
        }
        let source = form.iter().skip(1).find(|arg| {
            let text = arg.text.trim_start_matches("--from=");
            let archive = [".tgz", ".tar.gz", ".whl", ".zip", ".tar.bz2"]
                .iter()
                .any(|end| text.ends_with(end));
            (text.starts_with("http://") || text.starts_with("https://")) && archive
                || text.starts_with("git+")
                || text.starts_with("github:")
                || text.starts_with("gitlab:")
                || (text.starts_with("https://") && text.contains(".git"))
        })?;
        Some(format!(
            "runs code fetched from `{}`, a repository rather than a registry",
            source.text
        ))
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
