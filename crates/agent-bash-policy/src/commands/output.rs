//! What a command passes down a pipe: only paths under the working directory, or whole
//! lines of its input (for `xargs` fed by `find . | grep x`).

use super::program;
use crate::words::Arg;

/// True if `form` prints only paths under the working directory, one a line: `find` from
/// relative places (none: `.`) with no `..`, no variable and no action that prints other
/// text, or `git ls-files`.
pub(crate) fn lists_local_paths(form: Option<&[Arg]>) -> bool {
    let Some(form) = form else { return false };
    match program(form).as_deref() {
        Some("find") => {
            let mut args = form.iter().skip(1).peekable();
            // Options before the places: -H, -L, -P, -O3, -D debugopts.
            while let Some(arg) = args.peek() {
                match arg.text.as_str() {
                    "-H" | "-L" | "-P" => {}
                    "-D" => {
                        args.next();
                    }
                    text if text.starts_with("-O") => {}
                    _ => break,
                }
                args.next();
            }
            let local = |arg: &Arg| {
                arg.literal
                    && !arg.text.starts_with(['/', '~'])
                    && !arg.text.split('/').any(|part| part == "..")
            };
            let mut places = true;
            for arg in args {
                let text = arg.text.as_str();
                if places && !text.starts_with(['-', '(', '!']) {
                    if !local(arg) {
                        return false;
                    }
                    continue;
                }
                places = false;
                if text.starts_with("-printf") || text.starts_with("-fprint") || text == "-ls" {
                    return false;
                }
            }
            true
        }
        Some("git") => form.get(1).is_some_and(|arg| arg.text == "ls-files"),
        _ => false,
    }
}

/// True if `form` passes on whole lines of its input and adds none: `grep` (not `-o`,
/// which prints a part of a line), `sort`, `uniq`, `head`, `tail`.
pub(crate) fn keeps_whole_lines(form: Option<&[Arg]>) -> bool {
    let Some(form) = form else { return false };
    match program(form).as_deref() {
        Some("grep" | "egrep" | "fgrep") => !form.iter().skip(1).any(|arg| {
            let text = arg.text.as_str();
            text == "--only-matching"
                || (text.starts_with('-') && !text.starts_with("--") && text.contains('o'))
        }),
        Some("sort" | "uniq" | "head" | "tail") => true,
        _ => false,
    }
}
