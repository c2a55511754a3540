//! What a command prints, when the line shows it: literal `echo`/`printf` text, a filter of
//! spelled-out input, a program that prints without end. Read as the next command's input.

use crate::commands;
use crate::words::{Arg, Found, Printed};

use super::name_of;

/// What the commands of a process substitution print: literal `echo`/`printf` text, the
/// output of one named tool (`kubectl completion bash`), or unseen (a decoder, a filter, a
/// project script, a value).
pub(super) fn printed(found: &[Found]) -> Printed {
    if let [only] = found {
        let form = only.argv.as_slice();
        if matches!(&*name_of(form), "echo" | "printf")
            && let Some(text) = crate::printed::printed_known(form)
        {
            return Printed::Text(text);
        }
        if let Some(name) = commands::program(form)
            && form.first().is_some_and(|first| !first.text.contains('/'))
            && !relays_data(&name)
        {
            return Printed::Tool;
        }
    }
    let shown: Vec<String> = found
        .iter()
        .map(|found| {
            found
                .argv
                .iter()
                .map(|arg| arg.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    Printed::Unseen(format!(
        "runs what `{}` prints as a script, which cannot be seen here",
        shown.join(" | ")
    ))
}

/// True for programs whose output is their input transformed (decoders, filters, `cat`),
/// so what they print as a script is data from elsewhere.
fn relays_data(name: &str) -> bool {
    matches!(
        name,
        "base64"
            | "base32"
            | "basenc"
            | "xxd"
            | "od"
            | "openssl"
            | "gpg"
            | "gunzip"
            | "zcat"
            | "gzip"
            | "bzcat"
            | "bzip2"
            | "xz"
            | "xzcat"
            | "unxz"
            | "zstd"
            | "zstdcat"
            | "uudecode"
            | "rev"
            | "tr"
            | "cat"
            | "tac"
            | "echo"
            | "printf"
            | "sed"
            | "awk"
            | "cut"
            | "head"
            | "tail"
            | "python"
            | "python3"
            | "perl"
            | "ruby"
            | "node"
            | "yq"
            | "jq"
    )
}

/// True if `found` prints lines without end: `yes`, `seq inf`, `cat /dev/zero`.
pub(super) fn prints_without_end(found: &Found) -> bool {
    found.each_form().last().is_some_and(|form| {
        let words: Vec<&str> = form.iter().map(|arg| arg.text.as_str()).collect();
        match words.as_slice() {
            ["yes", ..] => true,
            // Tens of gigabytes of zeros: one endless line to whatever buffers lines.
            ["head", "-c", size, "/dev/zero" | "/dev/urandom"] => {
                size.trim_end_matches(['G', 'g', 'T', 't'])
                    .parse::<u64>()
                    .is_ok_and(|number| number >= 10)
                    && size.ends_with(['G', 'g', 'T', 't'])
            }
            ["seq", .., last] => matches!(*last, "inf" | "infinity"),
            ["cat" | "tr", ..] => words.contains(&"/dev/zero"),
            _ => false,
        }
    })
}

/// What `found` prints, when the line shows it: a literal `echo`/`printf`, a text filter
/// given spelled-out input (`rev <<< mr`, `echo … | base64 -d`), the template of `git
/// for-each-ref --format`.
pub(super) fn output_of(found: &Found) -> Option<String> {
    let form = found.each_form().last()?;
    match &*name_of(form) {
        "echo" | "printf" => crate::printed::printed_known(form),
        // `ps -e -o pid=` prints every process id: fed to `kill`, it is `kill -1`.
        "ps" if form.iter().any(|arg| {
            matches!(
                arg.text.as_str(),
                "-e" | "-A" | "ax" | "aux" | "-ax" | "-eo" | "-Ao"
            )
        }) && form.iter().any(|arg| arg.text.starts_with("pid")) =>
        {
            Some("-1\n".to_owned())
        }
        // Each line is the format with a ref's fields: the format shows what kind of line
        // it is (`delete %(refname)`). `git tag -l` and `git branch` list every ref too.
        "git" => for_each_ref_format(form).or_else(|| {
            let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
            matches!(
                words.as_slice(),
                ["tag"]
                    | ["tag", "-l" | "--list"]
                    | ["branch"]
                    | ["branch", "-r" | "-a" | "--list"]
            )
            .then(|| "%(refname)\n".to_owned())
        }),
        _ => {
            let input = found
                .redirects
                .iter()
                .rev()
                .find_map(|redirect| redirect.body.as_deref())?;
            // Every ref, filtered: still every ref (`grep -v HEAD`), or every ref turned
            // into a deletion (`sed 's#^ *origin/#:#'`).
            if input.contains("%(refname") {
                return match &*name_of(form) {
                    "grep" | "egrep" | "cut" | "awk" | "tr" => Some(input.to_owned()),
                    "sed"
                        if form.iter().any(|arg| {
                            let script = arg.text.as_str();
                            script.starts_with('s')
                                && script.len() > 2
                                && script[2..].contains(&format!(":{}", &script[1..2]))
                        }) =>
                    {
                        Some(":%(refname)\n".to_owned())
                    }
                    _ => None,
                };
            }
            crate::printed::filtered(form, input)
        }
    }
}

/// The `--format` of `git for-each-ref`, as the template of every line it prints.
fn for_each_ref_format(form: &[Arg]) -> Option<String> {
    if !form.iter().any(|arg| arg.text == "for-each-ref") {
        return None;
    }
    form.iter().enumerate().find_map(|(at, arg)| {
        let value = match arg.text.strip_prefix("--format=") {
            Some(value) => value,
            None if arg.text == "--format" => &form.get(at + 1)?.text,
            None => return None,
        };
        Some(format!("{value}\n"))
    })
}
