//! What the policy knows about particular commands: wrappers that run another command
//! (`sudo`, `env`, `timeout`, `xargs`, …), launchers that run a script given as text
//! (`bash -c`, `eval`, `ssh host …`), interpreters that read a program from their input, and
//! downloaders.
//!
//! Every function here looks at words only. Pure: runs nothing.

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

/// How a wrapper's own options look, so that the wrapped command can be found.
struct Wrapper {
    names: &'static [&'static str],
    /// Short options that take an argument (`-u root`, `-uroot`).
    short_with_value: &'static str,
    /// Short options whose argument, if any, is attached (`xargs -i{}`).
    short_with_attached_value: &'static str,
    /// Long options that take an argument when it is not given with `=`.
    long_with_value: &'static [&'static str],
    /// Short options that mean the wrapper runs no command (`command -v`, `sudo -l`).
    short_no_command: &'static str,
    /// Long options that mean the wrapper runs no command.
    long_no_command: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `chroot DIR`).
    operands: usize,
    /// `NAME=value` words may come before the command (`env`, `sudo`).
    assignments: bool,
    /// `-N` (a number) is an option (`nice -10`).
    numeric_options: bool,
}

const NONE: &[&str] = &[];

const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        names: &["env"],
        short_with_value: "uCS",
        short_with_attached_value: "",
        long_with_value: &["unset", "chdir", "split-string"],
        short_no_command: "",
        long_no_command: &["help", "version", "list-signal-handling"],
        operands: 0,
        assignments: true,
        numeric_options: false,
    },
    Wrapper {
        names: &["sudo"],
        short_with_value: "ugCDhprtTUR",
        short_with_attached_value: "",
        long_with_value: &[
            "user",
            "group",
            "close-from",
            "chdir",
            "host",
            "prompt",
            "role",
            "type",
            "command-timeout",
            "other-user",
            "chroot",
        ],
        short_no_command: "elvVK",
        long_no_command: &[
            "edit",
            "list",
            "validate",
            "version",
            "help",
            "remove-timestamp",
        ],
        operands: 0,
        assignments: true,
        numeric_options: false,
    },
    Wrapper {
        names: &["doas"],
        short_with_value: "uC",
        short_with_attached_value: "",
        long_with_value: NONE,
        short_no_command: "",
        long_no_command: NONE,
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["pkexec"],
        short_with_value: "",
        short_with_attached_value: "",
        long_with_value: &["user"],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["nice"],
        short_with_value: "n",
        short_with_attached_value: "",
        long_with_value: &["adjustment"],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: true,
    },
    Wrapper {
        names: &["nohup", "builtin", "unbuffer", "busybox"],
        short_with_value: "",
        short_with_attached_value: "",
        long_with_value: NONE,
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["timeout"],
        short_with_value: "ks",
        short_with_attached_value: "",
        long_with_value: &["kill-after", "signal"],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 1,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["time"],
        short_with_value: "fo",
        short_with_attached_value: "",
        long_with_value: &["format", "output"],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["command"],
        short_with_value: "",
        short_with_attached_value: "",
        long_with_value: NONE,
        short_no_command: "vV",
        long_no_command: NONE,
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["exec"],
        short_with_value: "a",
        short_with_attached_value: "",
        long_with_value: NONE,
        short_no_command: "",
        long_no_command: NONE,
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["xargs"],
        short_with_value: "adEILnPs",
        short_with_attached_value: "eil",
        // `--eof`, `--replace` and `--max-lines` take a value only after `=`.
        long_with_value: &[
            "arg-file",
            "delimiter",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
        short_no_command: "",
        long_no_command: &["help", "version", "show-limits"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["stdbuf"],
        short_with_value: "ioe",
        short_with_attached_value: "",
        long_with_value: &["input", "output", "error"],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["setsid"],
        short_with_value: "",
        short_with_attached_value: "",
        long_with_value: NONE,
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["ionice"],
        short_with_value: "cn",
        short_with_attached_value: "",
        long_with_value: &["class", "classdata"],
        short_no_command: "pPu",
        long_no_command: &["pid", "pgid", "uid", "help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["chroot"],
        short_with_value: "",
        short_with_attached_value: "",
        long_with_value: &["userspec", "groups"],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 1,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["taskset"],
        short_with_value: "",
        short_with_attached_value: "",
        long_with_value: NONE,
        short_no_command: "p",
        long_no_command: &["pid", "help", "version"],
        operands: 1,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["flock"],
        short_with_value: "wE",
        short_with_attached_value: "",
        long_with_value: &["timeout", "wait", "conflict-exit-code"],
        short_no_command: "c",
        long_no_command: &["help", "version", "command"],
        operands: 1,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["unshare"],
        short_with_value: "SGRw",
        short_with_attached_value: "",
        long_with_value: &[
            "setuid",
            "setgid",
            "root",
            "wd",
            "map-user",
            "map-group",
            "map-users",
            "map-groups",
            "propagation",
            "setgroups",
        ],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["nsenter"],
        short_with_value: "tSG",
        short_with_attached_value: "rwmuipnUCT",
        long_with_value: &["target", "setuid", "setgid"],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["strace"],
        short_with_value: "abeEIoOpPsSuUX",
        short_with_attached_value: "",
        long_with_value: &[
            "output",
            "attach",
            "string-limit",
            "user",
            "env",
            "trace",
            "signal",
            "columns",
            "detach-on",
            "interruptible",
            "overhead",
            "trace-path",
            "summary-sort-by",
            "summary-columns",
            "const-print-style",
            "status",
            "quiet",
            "decode-fds",
        ],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["ltrace"],
        short_with_value: "aAeEnopsuxlFDw",
        short_with_attached_value: "",
        long_with_value: &["output", "library", "indent", "align", "config"],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["systemd-run"],
        short_with_value: "upEMHs",
        short_with_attached_value: "",
        long_with_value: &[
            "unit",
            "property",
            "description",
            "slice",
            "uid",
            "gid",
            "nice",
            "working-directory",
            "setenv",
            "machine",
            "host",
            "on-active",
            "on-boot",
            "on-startup",
            "on-unit-active",
            "on-unit-inactive",
            "on-calendar",
            "timer-property",
            "path-property",
            "socket-property",
            "service-type",
            "shell",
        ],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["runuser"],
        short_with_value: "ugGswc",
        short_with_attached_value: "",
        long_with_value: &[
            "user",
            "group",
            "supp-group",
            "shell",
            "whitelist-environment",
            "command",
            "session-command",
        ],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &[
            "toybox",
            "catchsegv",
            "valgrind",
            "firejail",
            "setpriv",
            "dbus-run-session",
            "fakechroot",
        ],
        short_with_value: "",
        short_with_attached_value: "",
        long_with_value: NONE,
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["fakeroot"],
        short_with_value: "lsib",
        short_with_attached_value: "",
        long_with_value: &["lib", "faked"],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["chrt"],
        short_with_value: "TPD",
        short_with_attached_value: "",
        long_with_value: &["sched-runtime", "sched-period", "sched-deadline"],
        short_no_command: "p",
        long_no_command: &["pid", "help", "version", "max"],
        operands: 1,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["prlimit"],
        short_with_value: "",
        short_with_attached_value: "",
        long_with_value: NONE,
        short_no_command: "p",
        long_no_command: &["pid", "help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["numactl"],
        short_with_value: "imNCpP",
        short_with_attached_value: "",
        long_with_value: &[
            "interleave",
            "membind",
            "cpunodebind",
            "physcpubind",
            "preferred",
        ],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["xvfb-run"],
        short_with_value: "nsfepw",
        short_with_attached_value: "",
        long_with_value: &[
            "server-num",
            "server-args",
            "auth-file",
            "error-file",
            "xauth-protocol",
            "wait",
        ],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["torsocks"],
        short_with_value: "upaP",
        short_with_attached_value: "",
        long_with_value: &["user", "pass", "address", "port"],
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["proxychains", "proxychains4"],
        short_with_value: "f",
        short_with_attached_value: "",
        long_with_value: NONE,
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["ld.so"],
        short_with_value: "",
        short_with_attached_value: "",
        long_with_value: &[
            "library-path",
            "preload",
            "argv0",
            "audit",
            "glibc-hwcaps-prepend",
            "glibc-hwcaps-mask",
        ],
        short_no_command: "",
        long_no_command: &[
            "list",
            "verify",
            "help",
            "version",
            "list-tunables",
            "list-diagnostics",
        ],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["cgexec"],
        short_with_value: "g",
        short_with_attached_value: "",
        long_with_value: NONE,
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
    Wrapper {
        names: &["caffeinate"],
        short_with_value: "tw",
        short_with_attached_value: "",
        long_with_value: NONE,
        short_no_command: "",
        long_no_command: &["help", "version"],
        operands: 0,
        assignments: false,
        numeric_options: false,
    },
];

impl Wrapper {
    /// How many words `--long` (with or without `=value`) takes, itself included; `None`
    /// when it means the wrapper runs no command. GNU tools take any unambiguous
    /// abbreviation (`env --sp` is `--split-string`).
    fn long_option_words(&self, long: &str) -> Option<usize> {
        let (long_name, has_value) = match long.split_once('=') {
            Some((long_name, _)) => (long_name, true),
            None => (long, false),
        };
        let abbreviates = |long: &&str| !long_name.is_empty() && long.starts_with(long_name);
        if self.long_no_command.iter().any(abbreviates) {
            return None;
        }
        let takes_next = !has_value && self.long_with_value.iter().any(abbreviates);
        Some(1 + usize::from(takes_next))
    }

    /// How many words a cluster of short options (`-abc`, given as `abc`) takes, itself
    /// included; `None` when one of them means the wrapper runs no command.
    fn short_option_words(&self, letters: &str) -> Option<usize> {
        if self.numeric_options && letters.bytes().all(|byte| byte.is_ascii_digit()) {
            return Some(1);
        }
        for (offset, letter) in letters.char_indices() {
            if self.short_no_command.contains(letter) {
                return None;
            }
            if self.short_with_value.contains(letter) {
                // The value is the rest of the word, or the next word.
                return Some(1 + usize::from(offset + letter.len_utf8() == letters.len()));
            }
            if self.short_with_attached_value.contains(letter) {
                break;
            }
        }
        Some(1)
    }
}

/// Where the command that the wrapper `argv[0]` runs starts in `argv`, if it runs one.
pub(crate) fn wrapped_command(argv: &[Arg]) -> Option<usize> {
    let name = program(argv)?;
    // `ip [opts] netns exec NAME CMD…`
    if name == "coreutils" {
        return argv
            .get(1)
            .is_some_and(|arg| arg.text.starts_with("--coreutils-prog="))
            .then_some(1);
    }
    if name == "ip" {
        let at = argv
            .windows(2)
            .position(|pair| pair[0].text == "netns" && pair[1].text == "exec")?;
        return (argv.len() > at + 3).then_some(at + 3);
    }
    let spec = WRAPPERS
        .iter()
        .find(|spec| spec.names.contains(&name.as_ref()))?;
    let mut operands_left = spec.operands;
    let mut options_done = false;
    let mut index = 1;
    while index < argv.len() {
        let arg = &argv[index];
        let text = arg.text.as_str();
        if !arg.literal {
            // `env X="$v" cmd` sets X whatever `$v` holds; `env X=$v cmd` may not (a space
            // in `$v` splits the word, and the rest becomes the command).
            if spec.assignments && !arg.splits && is_assignment(text) {
                index += 1;
                continue;
            }
            // `sudo $opts rm`: the shell decides what this is; call it the command, whose
            // name is then not literal (and so unknown).
            return Some(index);
        }
        if !options_done && text == "--" {
            options_done = true;
            index += 1;
            continue;
        }
        if !options_done && text == "-" && name == "env" {
            index += 1;
            continue;
        }
        if !options_done && let Some(long) = text.strip_prefix("--") {
            index += spec.long_option_words(long)?;
            continue;
        }
        if !options_done && text.len() > 1 && text.starts_with('-') {
            index += spec.short_option_words(&text[1..])?;
            continue;
        }
        if spec.assignments && is_assignment(text) {
            index += 1;
            continue;
        }
        if operands_left > 0 {
            operands_left -= 1;
            index += 1;
            continue;
        }
        return Some(index);
    }
    None
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
fn shell_mode(form: &[Arg]) -> bool {
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

fn shell_program_source(form: &[Arg]) -> ProgramSource<'_> {
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

/// A script given as text to a command that runs it: the text and a short label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Launch {
    pub script: String,
    pub label: String,
    /// The launcher only hands the script to a local shell (`bash -c`, `eval`), so it needs
    /// no decision of its own: its script's commands decide.
    pub transparent: bool,
    /// `$0`, `$1`, … inside the script, when the launcher sets them (`sh -c TEXT ARG0 ARG1`).
    pub positional: Option<Vec<Arg>>,
}

/// The script `form` runs as text, if it is a launcher: `bash -c TEXT`, `eval WORDS…`,
/// `su -c TEXT`, `env -S TEXT`, `watch WORDS…`, `ssh HOST WORDS…`.
pub(crate) fn launch(form: &[Arg]) -> Option<Launch> {
    let name = program(form)?;
    match name.as_ref() {
        // `eval "$(ssh-agent -s)"`: the setup code a known tool prints for the shell.
        "eval" if form.len() == 2 && prints_shell_setup(&form[1].text) => {
            transparent(":".to_owned(), "eval")
        }
        "eval" if form.len() > 1 => transparent(joined(&form[1..]), "eval"),
        _ if is_shell(&name) => shell_launch(&name, form),
        "trap" => trap_launch(form),
        "flock" | "script" => command_option_launch(&name, form),
        "sg" => sg_launch(form),
        // `sudo -s CMD…` hands the words to the shell's `-c`.
        "sudo" | "doas" if shell_mode(form) => {
            let start = wrapped_command(form)?;
            transparent(joined(&form[start..]), &format!("{name} -s"))
        }
        "su" | "runuser" => su_launch(&name, form),
        "env" => env_split_string(form).and_then(|(first, rest)| {
            let rest = form.get(rest..).map(joined).unwrap_or_default();
            transparent(format!("{first} {rest}"), "env -S")
        }),
        "watch" => watch_launch(form),
        // `mvn exec:exec -Dexec.executable=sh -Dexec.args="-c '…'"`: that program, run.
        "mvn" | "mvnw" => {
            let value = |key: &str| {
                form.iter()
                    .find_map(|arg| arg.text.strip_prefix(key).map(str::to_owned))
            };
            let program = value("-Dexec.executable=")?;
            let args = value("-Dexec.args=").unwrap_or_default();
            Some(Launch {
                script: format!("{program} {args}"),
                label: "mvn exec".to_owned(),
                transparent: false,
                positional: None,
            })
        }
        // `ansible HOSTS -m shell -a TEXT`: the text runs on every host of the inventory.
        "ansible"
            if form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-m" | "--module-name")
                    && matches!(
                        pair[1].text.as_str(),
                        "shell"
                            | "command"
                            | "raw"
                            | "ansible.builtin.shell"
                            | "ansible.builtin.command"
                    )
            }) =>
        {
            form.windows(2)
                .find(|pair| matches!(pair[0].text.as_str(), "-a" | "--args"))
                .map(|pair| Launch {
                    script: pair[1].text.clone(),
                    label: "ansible".to_owned(),
                    transparent: false,
                    positional: None,
                })
        }
        "ssh" => ssh_launch(form),
        _ => None,
    }
}

/// True if `text` is the output of a tool that prints setup code for the shell it is
/// evaluated in (`$(ssh-agent -s)`, `$(direnv hook bash)`, `$(pyenv init -)`): what
/// such tools print is their own, not data from elsewhere.
fn prints_shell_setup(text: &str) -> bool {
    let Some(inner) = text
        .strip_prefix("$(")
        .and_then(|rest| rest.strip_suffix(')'))
    else {
        return false;
    };
    if inner.contains(['$', '`', '|', ';', '&', '<', '>']) {
        return false;
    }
    let mut words = inner.split_whitespace();
    let program = words.next().unwrap_or("");
    let rest: Vec<&str> = words.collect();
    match program {
        "ssh-agent" | "gpg-agent" | "keychain" => true,
        "direnv" | "zoxide" | "starship" | "pyenv" | "rbenv" | "nodenv" | "goenv" | "jenv"
        | "fnm" | "mise" | "rtx" | "atuin" | "thefuck" | "opam" | "luarocks" | "dircolors"
        | "conda" | "mamba" | "micromamba" | "brew" | "fzf" | "rustup" | "gh" | "kubectl" => {
            rest.iter().any(|word| {
                matches!(
                    *word,
                    "init"
                        | "hook"
                        | "env"
                        | "activate"
                        | "shellenv"
                        | "export"
                        | "path"
                        | "completion"
                        | "completions"
                        | "shell.bash"
                        | "--bash"
                        | "-b"
                        | "-s"
                )
            }) || program == "dircolors"
        }
        _ => false,
    }
}

/// The words joined by single spaces, as a shell receiving them as one script would see them.
fn joined(words: &[Arg]) -> String {
    words
        .iter()
        .map(|arg| arg.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A local launch of `script`, whose commands decide for it.
fn transparent(script: String, label: &str) -> Option<Launch> {
    Some(Launch {
        script,
        label: label.to_owned(),
        transparent: true,
        positional: None,
    })
}

/// `sh -c TEXT ARG0 ARG1…`: the words after the script are `$0`, `$1`, ….
fn shell_launch(name: &str, form: &[Arg]) -> Option<Launch> {
    let ProgramSource::Inline(arg) = shell_program_source(form) else {
        return None;
    };
    let after = form
        .iter()
        .position(|other| std::ptr::eq(other, arg))
        .map_or(form.len(), |at| at + 1);
    Some(Launch {
        script: arg.text.clone(),
        label: format!("{name} -c"),
        transparent: true,
        positional: Some(form[after..].to_vec()),
    })
}

/// `trap [--] 'cmd' SIGNAL…` runs the text later, as if by eval.
fn trap_launch(form: &[Arg]) -> Option<Launch> {
    let rest = match form.get(1).map(|arg| arg.text.as_str()) {
        Some("--") => &form[2..],
        _ => &form[1..],
    };
    match rest.first().map(|arg| arg.text.as_str()) {
        Some("-" | "-p" | "-l" | "-P") | None => None,
        Some(_) if rest.len() < 2 => None,
        Some(script) => transparent(script.to_owned(), "trap"),
    }
}

/// `flock FILE -c TEXT`, `script -c TEXT`: TEXT runs with `sh -c`.
fn command_option_launch(name: &str, form: &[Arg]) -> Option<Launch> {
    let at = form.iter().position(|arg| {
        arg.text == "-c"
            || arg.text == "--command"
            || (arg.text.starts_with('-') && !arg.text.starts_with("--") && arg.text.ends_with('c'))
    })?;
    transparent(form.get(at + 1)?.text.clone(), &format!("{name} -c"))
}

/// `sg GROUP [-c] TEXT` runs TEXT with `sh -c`.
fn sg_launch(form: &[Arg]) -> Option<Launch> {
    let rest: Vec<Arg> = form
        .iter()
        .skip(2)
        .filter(|arg| arg.text != "-c")
        .cloned()
        .collect();
    if rest.is_empty() {
        return None;
    }
    transparent(joined(&rest), "sg")
}

/// `su`/`runuser` `-c TEXT`, `-cTEXT`, `-lc TEXT`, `--command=TEXT` (and abbreviations).
fn su_launch(name: &str, form: &[Arg]) -> Option<Launch> {
    let label = format!("{name} -c");
    let mut words = form.iter().skip(1);
    while let Some(arg) = words.next() {
        let text = arg.text.as_str();
        if text == "--" {
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (option, value) = match long.split_once('=') {
                Some((option, value)) => (option, Some(value)),
                None => (long, None),
            };
            if option.len() >= 2
                && ("command".starts_with(option) || "session-command".starts_with(option))
            {
                let script = match value {
                    Some(value) => value.to_owned(),
                    None => words.next()?.text.clone(),
                };
                return transparent(script, &label);
            }
            continue;
        }
        if let Some(letters) = text.strip_prefix('-')
            && let Some(at) = letters.find('c')
        {
            let rest = &letters[at + 1..];
            let script = if rest.is_empty() {
                words.next()?.text.clone()
            } else {
                rest.to_owned()
            };
            return transparent(script, &label);
        }
    }
    None
}

/// `watch [options] WORDS…` runs the words with `sh -c`, again and again.
fn watch_launch(form: &[Arg]) -> Option<Launch> {
    let mut index = 1;
    while let Some(arg) = form.get(index) {
        match arg.text.as_str() {
            "-n" | "--interval" | "-q" | "--equexit" => index += 2,
            text if text.starts_with('-') => index += 1,
            _ => break,
        }
    }
    let rest = form.get(index..).filter(|rest| !rest.is_empty())?;
    transparent(joined(rest), "watch")
}

/// `ssh [options] HOST WORDS…` runs the words on another machine: not transparent.
fn ssh_launch(form: &[Arg]) -> Option<Launch> {
    let mut index = 1;
    while let Some(arg) = form.get(index) {
        let text = arg.text.as_str();
        if text == "--" {
            index += 1;
            break;
        }
        let Some(letters) = text.strip_prefix('-') else {
            break;
        };
        index += 1;
        let takes_value = letters
            .chars()
            .last()
            .is_some_and(|last| "BbcDEeFIiJLlmOoPpQRSWw".contains(last));
        if takes_value {
            index += 1;
        }
    }
    // The host, then the remote command.
    let rest = form.get(index + 1..).filter(|rest| !rest.is_empty())?;
    Some(Launch {
        script: joined(rest),
        label: "ssh".to_owned(),
        transparent: false,
        positional: None,
    })
}

/// Environment variables whose value a program runs as a shell command
/// (`GIT_SSH_COMMAND='…' git fetch`).
pub(crate) const COMMAND_VARIABLES: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_EXTERNAL_DIFF",
    "GIT_PROXY_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "LESSOPEN",
    "LESSCLOSE",
    "BROWSER",
];

/// True if a program runs the value of variable `name` as a shell command: the table above,
/// `PROMPT_COMMAND`, and git's `GIT_CONFIG_VALUE_N` (whose key may be any command key).
pub(crate) fn runs_variable(name: &str) -> bool {
    COMMAND_VARIABLES.contains(&name)
        || name == "PROMPT_COMMAND"
        || name
            .strip_prefix("GIT_CONFIG_VALUE_")
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

/// The values of command keys in `GIT_CONFIG_PARAMETERS` (`'core.pager'='less -R'`).
pub(crate) fn git_config_parameters(text: &str) -> Vec<String> {
    let parts: Vec<&str> = text.split('\'').collect();
    let mut scripts = Vec::new();
    // 'key'='value' 'key'='value': keys at 1, 5, …; values at 3, 7, ….
    for pair in parts.chunks(4) {
        if let [_, key, _, value, ..] = pair {
            let key = key.to_ascii_lowercase();
            if GIT_COMMAND_KEYS
                .iter()
                .any(|pattern| crate::glob::matches(pattern, &key))
            {
                scripts.push(value.strip_prefix('!').unwrap_or(value).to_owned());
            }
        }
    }
    scripts
}

/// `git -c` keys whose value git runs with the shell (lower-cased; `*` is any part).
pub(crate) const GIT_COMMAND_KEYS: &[&str] = &[
    "core.sshcommand",
    "core.fsmonitor",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.gitproxy",
    "sequence.editor",
    "diff.external",
    "gpg.program",
    "gpg.*.program",
    "credential.helper",
    "credential.*.helper",
    "alias.*",
    "pager.*",
    "diff.*.textconv",
    "diff.*.command",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "merge.*.driver",
    "uploadpack.packobjectshook",
    "mergetool.*.cmd",
    "difftool.*.cmd",
    "sendemail.*cmd",
    "sendemail.smtpserver",
    "remote.*.receivepack",
    "remote.*.uploadpack",
];

/// Scripts an option value of `form` holds, which the program runs with a local shell:
/// `ssh -o ProxyCommand=…`, `rsync -e …`, `git -c core.sshCommand=…`, `alias x='…'`, and
/// `env NAME='…'` for a variable in [`COMMAND_VARIABLES`].
pub(crate) fn option_scripts(form: &[Arg]) -> Vec<Launch> {
    let Some(name) = program(form) else {
        return Vec::new();
    };
    let launch = |script: &str, label: &str| Launch {
        script: script.to_owned(),
        label: label.to_owned(),
        transparent: true,
        positional: None,
    };
    let mut scripts = Vec::new();
    let values = option_values(form, &name);
    for (key, value) in values {
        let key = key.to_ascii_lowercase();
        let runs = match name.as_ref() {
            "ssh" | "scp" | "sftp" => matches!(
                key.as_str(),
                "proxycommand" | "localcommand" | "knownhostscommand"
            ),
            "rsync" => true,
            "git" => GIT_COMMAND_KEYS
                .iter()
                .any(|pattern| crate::glob::matches(pattern, &key)),
            "alias" => true,
            _ if key.eq_ignore_ascii_case("GIT_CONFIG_PARAMETERS") => {
                for script in git_config_parameters(value) {
                    scripts.push(launch(&script, &format!("{name} GIT_CONFIG_PARAMETERS")));
                }
                false
            }
            _ => runs_variable(&key.to_ascii_uppercase()),
        };
        if runs {
            scripts.push(launch(
                &git_value_script(&key, value),
                &format!("{name} {key}"),
            ));
        }
    }
    scripts
}

/// The script a configuration value runs: `!cmd` runs `cmd` with the shell; an alias without
/// `!` runs git with its words (`alias.ship='push --force origin HEAD:main'`).
pub(crate) fn git_value_script(key: &str, value: &str) -> String {
    match value.strip_prefix('!') {
        Some(script) => script.to_owned(),
        None if key.starts_with("alias.") => format!("git {value}"),
        None => value.to_owned(),
    }
}

/// The `(key, value)` option pairs of `form` that may name a command: `-o K=V`/`-oK V` for
/// ssh, `-e V`/`--rsh=V` for rsync, `-c K=V` for git, `NAME=V` words for `alias`, `env`,
/// `sudo`. Only literal words count (others are unknown elsewhere or plain data), but for
/// git's `-c`, whose key is written out: a value made at run time (`alias.t="!$T"`) is
/// walked as written, so what it runs is unknown.
fn option_values<'a>(form: &'a [Arg], name: &str) -> Vec<(&'a str, &'a str)> {
    let mut pairs = Vec::new();
    let mut index = 1;
    while let Some(arg) = form.get(index) {
        index += 1;
        if !arg.literal {
            continue;
        }
        let text = arg.text.as_str();
        let next = form
            .get(index)
            .filter(|next| next.literal || (name == "git" && text == "-c"))
            .map(|next| next.text.as_str());
        let pair = |setting: &'a str| {
            setting
                .split_once('=')
                .or_else(|| setting.split_once([' ', '\t']))
        };
        match name {
            "ssh" | "scp" | "sftp" => {
                if text == "-o" {
                    pairs.extend(next.and_then(pair));
                    index += 1;
                } else if let Some(setting) = text.strip_prefix("-o") {
                    pairs.extend(pair(setting));
                }
            }
            "rsync" => {
                if text == "-e" || text == "--rsh" {
                    pairs.extend(next.map(|value| ("-e", value)));
                    index += 1;
                } else if let Some(value) = text
                    .strip_prefix("--rsh=")
                    .or_else(|| text.strip_prefix("-e").filter(|value| !value.is_empty()))
                {
                    pairs.push(("-e", value));
                }
            }
            "git" => {
                if text == "-c" {
                    pairs.extend(next.and_then(|value| value.split_once('=')));
                    index += 1;
                } else if !text.starts_with('-') {
                    break; // the subcommand: its own options are not configuration
                }
            }
            "alias" | "env" | "sudo" | "export" | "declare" | "typeset" | "readonly" | "local"
                if is_assignment(text) =>
            {
                pairs.extend(text.split_once('='))
            }
            _ => {}
        }
    }
    pairs
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

/// The text of `env -S TEXT` (also `-iS'TEXT'`, `--split-string=TEXT`, `--sp TEXT`) and where
/// the words after it start.
fn env_split_string(form: &[Arg]) -> Option<(String, usize)> {
    let mut skip_value = false;
    for (position, arg) in form.iter().enumerate().skip(1) {
        let text = arg.text.as_str();
        if skip_value {
            skip_value = false;
            continue;
        }
        if text == "--" || !text.starts_with('-') {
            return None;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            if name.len() >= 2 && "split-string".starts_with(name) {
                return match value {
                    Some(value) => Some((value.to_owned(), position + 1)),
                    None => Some((form.get(position + 1)?.text.clone(), position + 2)),
                };
            }
            continue;
        }
        // A cluster of short options: `-S` takes the rest of the word, or the next word;
        // `-u` and `-C` take theirs the same way, ending the cluster.
        for (offset, letter) in text.char_indices().skip(1) {
            let rest = &text[offset + 1..];
            match letter {
                'S' if rest.is_empty() => {
                    return Some((form.get(position + 1)?.text.clone(), position + 2));
                }
                'S' => return Some((rest.to_owned(), position + 1)),
                'u' | 'C' => {
                    skip_value = rest.is_empty();
                    break;
                }
                _ => {}
            }
        }
    }
    None
}

/// True for commands that fetch data from the network to standard output.
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

pub(crate) fn is_downloader(name: &str) -> bool {
    matches!(
        name,
        "curl" | "wget" | "fetch" | "http" | "https" | "xh" | "aria2c" | "tftp"
    )
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<Arg> {
        line.split_whitespace().map(Arg::literal).collect()
    }

    #[test]
    fn launchers_give_their_script() {
        let script = |line: &str| launch(&argv(line)).map(|launch| launch.script);
        assert_eq!(script("bash -c ls"), Some("ls".to_owned()));
        assert_eq!(script("bash -euo pipefail -c ls"), Some("ls".to_owned()));
        assert_eq!(script("sh -lc ls"), Some("ls".to_owned()));
        assert_eq!(script("bash script.sh"), None);
        assert_eq!(script("eval rm -rf /"), Some("rm -rf /".to_owned()));
        assert_eq!(
            script("ssh -p 22 host rm -rf /"),
            Some("rm -rf /".to_owned())
        );
        assert_eq!(script("ssh host"), None);
        assert_eq!(script("su root -c ls"), Some("ls".to_owned()));
        assert_eq!(script("env -S ls -la"), Some("ls -la".to_owned()));
        assert_eq!(script("env --sp ls"), Some("ls ".to_owned()));
        assert_eq!(script("env -iSls"), Some("ls ".to_owned()));
        assert_eq!(script("env -u X -Sls"), Some("ls ".to_owned()));
        assert_eq!(script("su -cls"), Some("ls".to_owned()));
        assert_eq!(script("su -lc ls"), Some("ls".to_owned()));
        assert_eq!(script("sudo -s ls -la"), Some("ls -la".to_owned()));
        assert_eq!(script("trap -- ls EXIT"), Some("ls".to_owned()));
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
