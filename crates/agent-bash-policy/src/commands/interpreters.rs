//! Interpreters (shells, `source`, `python`, `node`, …): where each takes its program from,
//! an argument, a file or its standard input.

use super::{is_language_interpreter, is_shell, launch, program, wrapped_command};
use crate::words::Arg;

/// Where an interpreter (a shell, `python`, `source`, …) takes its program from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProgramSource<'a> {
    /// From an argument given as text (`bash -c TEXT`, `python -c TEXT`).
    Inline(&'a Arg),
    /// From a file (`bash script.sh`, `source <(…)`).
    File(&'a Arg),
    /// From standard input (`bash`, `bash -s`, `python -`).
    Stdin,
}

/// Where the interpreter `form[0]` reads its program from; `None` if it is not an
/// interpreter.
pub(crate) fn program_source(form: &[Arg]) -> Option<ProgramSource<'_>> {
    match program_source_as_written(form)? {
        ProgramSource::File(arg) if is_stdin_path(&arg.text) => Some(ProgramSource::Stdin),
        other => Some(other),
    }
}

/// True for a path that is the reader's own standard input.
fn is_stdin_path(path: &str) -> bool {
    matches!(
        path,
        "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0"
    )
}

/// True if `form` runs a shell that reads its script from standard input: a shell or
/// `source`/`.` reading it (`bash`, `bash -s`, `bash /dev/stdin`, `source /dev/stdin`), `sudo
/// -s`/`-i` or `doas -s` with no command, or `su` with no `-c`.
pub(crate) fn shell_reads_stdin(form: &[Arg]) -> bool {
    let Some(name) = program(form) else {
        return false;
    };
    match name.as_ref() {
        "sudo" | "doas" => shell_mode(form) && wrapped_command(form).is_none(),
        "su" => launch(form).is_none() && !form.iter().any(|arg| is_help(&arg.text)),
        _ => {
            (is_shell(&name) || name == "source" || name == ".")
                && program_source(form) == Some(ProgramSource::Stdin)
        }
    }
}

fn is_help(text: &str) -> bool {
    matches!(text, "-h" | "--help" | "-V" | "--version")
}

/// True if `sudo`/`doas` is asked for a shell (`-s`, `-i`, `--shell`, `--login`).
pub(super) fn shell_mode(form: &[Arg]) -> bool {
    let end = wrapped_command(form).unwrap_or(form.len());
    form[1..end].iter().any(|arg| {
        let text = arg.text.as_str();
        matches!(text, "--shell" | "--login")
            || (text.starts_with('-') && !text.starts_with("--") && text[1..].contains(['s', 'i']))
    })
}

fn program_source_as_written(form: &[Arg]) -> Option<ProgramSource<'_>> {
    let name = program(form)?;
    if name == "source" || name == "." {
        return form.get(1).map(ProgramSource::File);
    }
    if is_shell(&name) {
        return Some(shell_program_source(form));
    }
    if is_language_interpreter(&name) {
        return Some(language_program_source(&name, form));
    }
    None
}

pub(super) fn shell_program_source(form: &[Arg]) -> ProgramSource<'_> {
    let mut inline = false;
    let mut index = 1;
    while index < form.len() {
        let text = form[index].text.as_str();
        if text == "--" || text == "-" {
            index += 1;
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            index += 1;
            if matches!(long, "rcfile" | "init-file") {
                index += 1;
            }
            continue;
        }
        if (text.starts_with('-') || text.starts_with('+')) && text.len() > 1 {
            index += 1;
            for letter in text[1..].chars() {
                match letter {
                    'c' => inline = true,
                    // `-o pipefail`, `-O extglob` take the next word.
                    'o' | 'O' => index += 1,
                    _ => {}
                }
            }
            continue;
        }
        break;
    }
    match form.get(index) {
        Some(arg) if inline => ProgramSource::Inline(arg),
        // `bash -c` with no text runs nothing; `bash -s args` reads stdin.
        _ if inline => ProgramSource::Stdin,
        Some(arg) if !has_short_flag(form, 's') => ProgramSource::File(arg),
        _ => ProgramSource::Stdin,
    }
}

fn has_short_flag(form: &[Arg], letter: char) -> bool {
    form.iter()
        .skip(1)
        .take_while(|arg| arg.text != "--")
        .any(|arg| {
            arg.text.starts_with('-')
                && !arg.text.starts_with("--")
                && arg.text[1..].contains(letter)
        })
}

fn language_program_source<'a>(name: &str, form: &'a [Arg]) -> ProgramSource<'a> {
    let inline_flags: &[&str] = match name {
        _ if name.starts_with("python") || name.starts_with("pypy") => &["-c", "-m"],
        _ if name.starts_with("perl") || name.starts_with("ruby") => &["-e", "-E"],
        _ if name.starts_with("php") => &["-r"],
        _ => &["-e", "-p", "--eval", "--print", "-eval", "-c"],
    };
    let mut index = 1;
    // `deno run FILE`, `deno eval CODE`, `bun run FILE`: a subcommand comes first.
    let mut eval_subcommand = false;
    if matches!(name, "deno" | "bun")
        && let Some(position) = form
            .iter()
            .skip(1)
            .position(|arg| !arg.text.starts_with('-'))
    {
        let subcommand = form[position + 1].text.as_str();
        if matches!(subcommand, "run" | "eval" | "x") {
            eval_subcommand = subcommand == "eval";
            index = position + 2;
        }
    }
    while index < form.len() {
        let arg = &form[index];
        let text = arg.text.as_str();
        if eval_subcommand && !text.starts_with('-') {
            return ProgramSource::Inline(arg);
        }
        if inline_flags.contains(&text) {
            return form
                .get(index + 1)
                .map_or(ProgramSource::Stdin, ProgramSource::Inline);
        }
        if inline_flags
            .iter()
            .any(|flag| text.starts_with(flag) && text.len() > flag.len())
        {
            // `python -cCODE`, `perl -eCODE`.
            return ProgramSource::Inline(arg);
        }
        if text == "-" {
            return ProgramSource::Stdin;
        }
        if text == "--" {
            return form
                .get(index + 1)
                .map_or(ProgramSource::Stdin, ProgramSource::File);
        }
        if text.starts_with('-') {
            index += 1;
            continue;
        }
        return ProgramSource::File(arg);
    }
    ProgramSource::Stdin
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<Arg> {
        line.split_whitespace().map(Arg::literal).collect()
    }

    #[test]
    fn interpreters_know_where_their_program_comes_from() {
        let source = |line: &str| {
            let words = argv(line);
            program_source(&words).map(|source| match source {
                ProgramSource::Inline(_) => "inline",
                ProgramSource::File(_) => "file",
                ProgramSource::Stdin => "stdin",
            })
        };
        assert_eq!(source("bash"), Some("stdin"));
        assert_eq!(source("bash -s -- x"), Some("stdin"));
        assert_eq!(source("sh x.sh"), Some("file"));
        assert_eq!(source("python3"), Some("stdin"));
        assert_eq!(source("python3 -m json.tool"), Some("inline"));
        assert_eq!(source("python3 -c x"), Some("inline"));
        assert_eq!(source("python3 -u -"), Some("stdin"));
        assert_eq!(source("jq ."), None);
        assert_eq!(source("perl -e x"), Some("inline"));
    }
}
