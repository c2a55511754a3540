//! The rules that protect whole trees: recursive `rm` of the root, the home directory or a
//! system directory, `--no-preserve-root`, a deleting `find` from there, a recursive
//! `chmod`/`chown`/`chgrp` of them.

use super::{long_option_is, name, short_cluster_has, split_options};
use crate::forms;
use crate::paths::{Target, classify, classify_in};
use crate::words::Arg;
use crate::words::Found;

/// The operands of `rm` if it deletes recursively.
fn rm_recursive_operands(form: &[Arg]) -> Vec<&Arg> {
    if name(form) != "rm" {
        return Vec::new();
    }
    let (options, operands) = split_options(form);
    let recursive = options.iter().any(|option| {
        short_cluster_has(option, 'r')
            || short_cluster_has(option, 'R')
            || long_option_is(option, "--recursive", 3)
    });
    if recursive { operands } else { Vec::new() }
}

pub(super) fn rm_root(found: &Found, form: &[Arg]) -> bool {
    rm_recursive_operands(form)
        .into_iter()
        .any(|arg| matches!(classify_in(found, arg), Target::Root | Target::Home))
}

pub(super) fn rm_system_dir(found: &Found, form: &[Arg]) -> bool {
    rm_recursive_operands(form)
        .into_iter()
        .any(|arg| classify_in(found, arg) == Target::SystemDir)
}

/// Why the command is unknown if `rm` deletes recursively an operand that is `/` or `/*`
/// when its expansions are empty: `rm -rf "$dir/"`, `"$dir"/*`, `"$a/$b"` (an unset or
/// empty variable is an empty string to bash).
pub(crate) fn empty_expansion_deletes_root(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let operand = rm_recursive_operands(form)
            .into_iter()
            .find(|arg| !arg.literal && only_slashes_and_stars(&without_expansions(&arg.text)))?;
        Some(format!(
            "`rm` deletes `{}`, which is `/` or everything under it if its variables are \
             empty or unset; whether they are is only known when the shell runs it",
            operand.text
        ))
    })
}

fn only_slashes_and_stars(text: &str) -> bool {
    text.contains('/') && text.bytes().all(|byte| matches!(byte, b'/' | b'*'))
}

/// `text` with its `$name`, `${…}`, `$(…)` and backquoted parts left out.
fn without_expansions(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('$', Some('{' | '(')) => {
                let (open, close) = if chars.next() == Some('{') {
                    ('{', '}')
                } else {
                    ('(', ')')
                };
                let mut depth = 1;
                for inner in chars.by_ref() {
                    depth += usize::from(inner == open);
                    depth -= usize::from(inner == close);
                    if depth == 0 {
                        break;
                    }
                }
            }
            ('$', Some(next)) if next.is_ascii_alphanumeric() || "_@*#?!$-".contains(*next) => {
                let special = !(next.is_ascii_alphabetic() || *next == '_');
                if special {
                    chars.next();
                } else {
                    while chars
                        .next_if(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .is_some()
                    {}
                }
            }
            ('`', _) => {
                for inner in chars.by_ref() {
                    if inner == '`' {
                        break;
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

pub(super) fn no_preserve_root(_: &Found, form: &[Arg]) -> bool {
    let min_len = match &*name(form) {
        "rm" | "chmod" => 3,
        "chown" | "chgrp" => 6,
        _ => "--no-preserve-root".len(),
    };
    split_options(form)
        .0
        .iter()
        .any(|option| long_option_is(option, "--no-preserve-root", min_len))
}

pub(super) fn find_delete_root(_: &Found, form: &[Arg]) -> bool {
    find_delete(form).is_some_and(|found| found.from_root || (found.from_home && !found.narrowed))
}

/// A `find` that deletes what it finds (`-delete`, `-exec rm`): where it starts, and whether
/// a test narrows what it deletes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FindDelete {
    /// A start point is `/` (or `/*`, …).
    pub(crate) from_root: bool,
    /// A start point is the home directory.
    pub(crate) from_home: bool,
    /// A test picks files by name, path, age or size (`-name '*.pyc'`): not everything.
    pub(crate) narrowed: bool,
}

/// Tests of `find` that pick some files, not every file (`-type f` alone is every file).
const NARROWING_TESTS: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-newer",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-size",
    "-empty",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-perm",
    "-links",
    "-inum",
    "-samefile",
];

/// `form` as a deleting `find`, if it is one.
pub(crate) fn find_delete(form: &[Arg]) -> Option<FindDelete> {
    if name(form) != "find" {
        return None;
    }
    let mut index = 1;
    // Leading options: -H, -L, -P, -D debugopts, -O level.
    while let Some(arg) = form.get(index) {
        match arg.text.as_str() {
            "-H" | "-L" | "-P" | "--" => index += 1,
            "-D" => index += 2,
            text if text.starts_with("-O") => index += 1,
            _ => break,
        }
    }
    let starts: Vec<Target> = form[index.min(form.len())..]
        .iter()
        .take_while(|arg| {
            !(arg.text.starts_with('-') || matches!(arg.text.as_str(), "(" | ")" | "!" | ","))
        })
        .map(classify)
        .collect();
    // `-exec rm`, also through wrappers (`-exec sudo rm -rf {} +`).
    let deletes = form.iter().enumerate().any(|(at, arg)| {
        matches!(arg.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
            && form.get(at + 1..).is_some_and(|command| {
                forms::forms(command)
                    .iter()
                    .any(|start| name(&command[*start..]) == "rm")
            })
    }) || form.iter().any(|arg| arg.text == "-delete");
    let from_home = starts.contains(&Target::Home);
    // A name pattern that matches every name narrows nothing; in home, `.*` picks the
    // dot-files: the configuration and the credentials.
    let narrows = |pair: &[Arg]| {
        NARROWING_TESTS.contains(&pair[0].text.as_str())
            && !matches!(pair[1].text.as_str(), "*" | "*.*" | "?*" | "*/*")
            && !(from_home && pair[1].text == ".*")
    };
    let dot_files = from_home
        && form.windows(2).any(|pair| {
            matches!(pair[0].text.as_str(), "-name" | "-iname") && pair[1].text == ".*"
        });
    deletes.then(|| FindDelete {
        from_root: starts.contains(&Target::Root) || starts.contains(&Target::SystemDir),
        from_home,
        narrowed: !dot_files && form.windows(2).any(narrows),
    })
}

pub(super) fn chmod_root(found: &Found, form: &[Arg]) -> bool {
    if !matches!(&*name(form), "chmod" | "chown" | "chgrp") {
        return false;
    }
    let (options, operands) = split_options(form);
    let recursive = options
        .iter()
        .any(|option| short_cluster_has(option, 'R') || long_option_is(option, "--recursive", 5));
    recursive
        && operands.into_iter().any(|arg| {
            matches!(
                classify_in(found, arg),
                Target::Root | Target::SystemDir | Target::Home
            )
        })
}
