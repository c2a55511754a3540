//! Program names and the words around them: the name a rule sees (`/usr/bin/rm` is `rm`),
//! shells, interpreters, downloaders and other families of programs known by name, and the
//! builtins that evaluate their arguments as names.

use crate::words::Arg;

/// The name a rule or built-in sees for a command word: its last path component
/// (`/usr/bin/rm` is `rm`).
pub(crate) fn basename(word: &str) -> &str {
    // A byte scan: the rules ask for names many times a command, and names are short.
    match word.bytes().rposition(|byte| byte == b'/') {
        Some(at) => &word[at + 1..],
        None => word,
    }
}

/// The lower-cased basename of `argv[0]` when it is a plain literal word.
pub(crate) fn program(argv: &[Arg]) -> Option<std::borrow::Cow<'_, str>> {
    program_name(argv)
}

/// [`program`] without a copy in the common case (a lower-case name that stands for
/// itself): the rules ask for it many times a command.
pub(crate) fn program_name(argv: &[Arg]) -> Option<std::borrow::Cow<'_, str>> {
    let first = argv.first()?;
    if !first.is_plain() {
        return None;
    }
    // One pass over the bytes: where the basename starts, and whether it has capitals.
    let bytes = first.text.as_bytes();
    let mut start = 0;
    let mut upper = false;
    for (at, byte) in bytes.iter().enumerate() {
        if *byte == b'/' {
            start = at + 1;
            upper = false;
        } else {
            upper |= byte.is_ascii_uppercase();
        }
    }
    let name = &first.text[start..];
    if !name.is_empty()
        && !upper
        && name != "exe"
        && !name.starts_with("ld")
        && !first.text.starts_with("--")
    {
        return Some(std::borrow::Cow::Borrowed(name));
    }
    program_slow(first).map(std::borrow::Cow::Owned)
}

fn program_slow(first: &Arg) -> Option<String> {
    // `coreutils --coreutils-prog=rm …` is `rm …`.
    if let Some(name) = first.text.strip_prefix("--coreutils-prog=") {
        return Some(name.to_ascii_lowercase());
    }
    let name = basename(&first.text).to_ascii_lowercase();
    // `/proc/self/exe` is the program that runs it: bash itself.
    if name == "exe"
        && let Some(rest) = first.text.strip_prefix("/proc/")
        && matches!(rest.split('/').next(), Some("self" | "thread-self"))
    {
        return Some("bash".to_owned());
    }
    // The dynamic loader runs the program named after its options.
    if is_loader(&name) {
        return Some("ld.so".to_owned());
    }
    Some(name)
}

/// True for the name of a dynamic loader (`ld-linux-x86-64.so.2`, `ld-musl-x86_64.so.1`).
fn is_loader(name: &str) -> bool {
    (name.starts_with("ld-linux") || name.starts_with("ld-musl") || name.starts_with("ld64.so"))
        && name.contains(".so")
        || name == "ld.so"
}

/// True for `NAME=value`.
pub(crate) fn is_assignment(text: &str) -> bool {
    match text.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
        }
        None => false,
    }
}

/// Shells whose `-c` script is parsed as bash (close enough for finding commands in it).
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "lksh", "pdksh", "ash", "yash", "posh", "rbash",
    "fish", "csh", "tcsh",
];

/// Interpreters of other languages, which run a program read from their input when given
/// none (`curl … | python3`).
pub(crate) fn is_language_interpreter(name: &str) -> bool {
    // A version may follow the name (`python3.12`).
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        base,
        "python"
            | "perl"
            | "ruby"
            | "node"
            | "php"
            | "pypy"
            | "nodejs"
            | "bun"
            | "deno"
            | "lua"
            | "luajit"
            | "tclsh"
            | "wish"
            | "julia"
            | "rscript"
            | "erl"
            | "elixir"
            | "groovy"
            | "guile"
            | "racket"
            | "jshell"
            | "scala"
            | "kotlin"
            | "osascript"
            | "pwsh"
    )
}

pub(crate) fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

/// Builtins that evaluate some arguments as variable names, whose array subscripts bash
/// expands (`read 'a[$(cmd)]'`), or as arithmetic (`let`): those arguments.
pub(crate) fn evaluated_names(form: &[Arg]) -> Vec<&Arg> {
    let Some(name) = program(form) else {
        return Vec::new();
    };
    let args = form.iter().skip(1);
    match name.as_ref() {
        "let" => args.collect(),
        "declare" | "typeset" | "local" | "export" | "readonly" | "read" | "unset" | "wait"
        | "mapfile" | "readarray" | "getopts" | "printf" | "test" | "[" => {
            args.filter(|arg| arg.text.contains('[')).collect()
        }
        _ => Vec::new(),
    }
}

/// Why the policy cannot know what later command names run, if `form` changes that:
/// `hash -p PATH NAME`, `enable -f FILE NAME`, `shopt -s expand_aliases`.
pub(crate) fn changes_what_names_run(form: &[Arg]) -> Option<String> {
    let name = program(form)?;
    let has = |flag: &str| {
        form.iter()
            .skip(1)
            .any(|arg| arg.text.starts_with('-') && arg.text.contains(flag))
    };
    let reason = match name.as_ref() {
        "hash" if has("p") => "`hash -p` makes a command name run another program",
        "enable" if has("f") => "`enable -f` loads a builtin from a file",
        "git"
            if form.iter().any(|arg| {
                let text = arg.text.to_ascii_lowercase();
                text.starts_with("--config-env") || text.starts_with("core.hookspath=")
            }) =>
        {
            "git runs hooks or commands named by configuration that cannot be seen here"
        }
        "shopt" if form.iter().any(|arg| arg.text == "expand_aliases") => {
            "with aliases on, a command name may be an alias for anything"
        }
        _ => return None,
    };
    Some(reason.to_owned())
}

/// True for programs whose input language has a command that runs the shell: database
/// shells (`.shell`, `.system`, `\!`, `system`) and debuggers (`shell`, `!`).
pub(crate) fn input_reaches_shell(name: &str) -> bool {
    matches!(
        name,
        "sqlite3" | "duckdb" | "psql" | "mysql" | "mariadb" | "gdb" | "lldb" | "ed" | "ex"
    )
}

/// True for a variable whose value a program reads as more arguments of its own
/// (`TF_CLI_ARGS`, `TF_CLI_ARGS_apply`).
pub(crate) fn adds_arguments(variable: &str) -> bool {
    variable == "TF_CLI_ARGS" || variable.starts_with("TF_CLI_ARGS_")
}

/// True for a variable that names the environment a framework acts on
/// (`RAILS_ENV=production rails db:drop`): judged as the `NAME=VALUE` word the framework
/// also accepts as an argument.
pub(crate) fn names_environment(variable: &str) -> bool {
    matches!(
        variable,
        "RAILS_ENV" | "RACK_ENV" | "DJANGO_SETTINGS_MODULE" | "MIX_ENV" | "APP_ENV" | "NODE_ENV"
    )
}

/// True for a program that makes a file system.
pub(crate) fn makes_file_system(name: &str) -> bool {
    name.starts_with("mkfs")
        || name.starts_with("newfs")
        || matches!(name, "mke2fs" | "mkdosfs" | "mkntfs")
}

/// True for commands that fetch data from the network to standard output.
pub(crate) fn is_downloader(name: &str) -> bool {
    matches!(
        name,
        "curl" | "wget" | "fetch" | "http" | "https" | "xh" | "aria2c" | "tftp"
    )
}
