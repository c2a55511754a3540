//! Suggestions: `suggest` rules and the built-in sets of coding harnesses. A harness that
//! runs agent-bash often has tools of its own for what agents reach for the shell to do
//! (reading a file with `cat`, searching with `grep -r`, editing with `sed -i`); a
//! suggestion stops such a command once and names the tool instead.
//!
//! A suggestion is never a protection: it applies only to a command the policy would
//! otherwise allow, so it never lets through anything a rule, a built-in or the fallback
//! decisions would ask about or deny, and a caller may run the command anyway (the core
//! runs it when the same command is sent again in the session).
//!
//! Only a whole command gets one: the command line is one simple command, run as written
//! (no pipeline, list, loop, group, subshell, substitution, `&`, or script run through a
//! launcher). In `cat x | grep y` the `cat` reads the output of nothing the host's Read tool
//! could stand in for, and in `cd src && cat x` the file is another one; guessing there would
//! be wrong more often than right. A suggestion matches the command as written, not the
//! commands it runs through wrappers: `sudo cat /etc/shadow` needs the shell.
//!
//! Pure: matches words, runs nothing.

use crate::commands;
use crate::rules::{self, Rule};
use crate::words::{Arg, Found, Redirect};

/// A built-in suggestion: a kind of command a harness tool does better.
pub(crate) struct BuiltinSuggestion {
    pub name: &'static str,
    /// What it stops, for documentation and `agent-bash config`.
    pub description: &'static str,
    /// What the model is told, with `{tool}` standing for the tool's name.
    message: &'static str,
    /// True if the command as written (its only segment) is one this suggestion is for.
    test: fn(&Found, &[Arg]) -> bool,
}

pub(crate) const BUILTIN_SUGGESTIONS: &[BuiltinSuggestion] = &[
    BuiltinSuggestion {
        name: "suggest-read",
        description: "reading files: `cat FILE…` (or `-n`), `head`/`tail` [-n N] FILE… (not -f, -c), `less`/`more FILE`",
        message: "read files with `{tool}` rather than the shell",
        test: reads_files,
    },
    BuiltinSuggestion {
        name: "suggest-search",
        description: "searching file contents: `grep -r`/`-R`/`--recursive` (not -v), `rg` (not -v, -r, --files)",
        message: "search file contents with `{tool}` rather than the shell",
        test: searches_contents,
    },
    BuiltinSuggestion {
        name: "suggest-glob",
        description: "finding files by name: `find [DIR…]` with -name/-iname/-path tests, -type f, -maxdepth and nothing else",
        message: "find files by name with `{tool}` rather than the shell",
        test: finds_by_name,
    },
    BuiltinSuggestion {
        name: "suggest-edit",
        description: "editing files in place: `sed -i`/`--in-place` with at least one file",
        message: "edit files with `{tool}` rather than the shell",
        test: edits_in_place,
    },
    BuiltinSuggestion {
        name: "suggest-write",
        description: "writing a file: literal `echo`/`printf` text, or `cat` of a here-document or here-string, sent with `>` to a file",
        message: "write files with `{tool}` rather than the shell",
        test: writes_file,
    },
];

/// A built-in set: a harness and the tool each built-in suggestion names there. Naming
/// the set (`policy.host`) declares these tools the host's and turns these suggestions on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Host {
    /// `claude-code`, `codex`, `gemini-cli` or `opencode`.
    pub name: &'static str,
    /// (built-in suggestion, the harness's tool for it), in the order they are checked.
    pub tools: &'static [(&'static str, &'static str)],
}

/// The built-in sets. The tool names were read from the harnesses' published npm packages
/// (docs/suggest.md says which versions, and what each set leaves out).
pub(crate) const HOSTS: &[Host] = &[
    Host {
        name: "claude-code",
        tools: &[
            ("suggest-read", "Read"),
            ("suggest-search", "Grep"),
            ("suggest-glob", "Glob"),
            ("suggest-edit", "Edit"),
            ("suggest-write", "Write"),
        ],
    },
    // Codex has no tool to read, search or list files: its models are told to use the shell.
    Host {
        name: "codex",
        tools: &[
            ("suggest-edit", "apply_patch"),
            ("suggest-write", "apply_patch"),
        ],
    },
    Host {
        name: "gemini-cli",
        tools: &[
            ("suggest-read", "read_file"),
            ("suggest-search", "grep_search"),
            ("suggest-glob", "glob"),
            ("suggest-edit", "replace"),
            ("suggest-write", "write_file"),
        ],
    },
    Host {
        name: "opencode",
        tools: &[
            ("suggest-read", "read"),
            ("suggest-search", "grep"),
            ("suggest-glob", "glob"),
            ("suggest-edit", "edit"),
            ("suggest-write", "write"),
        ],
    },
];

/// The name of `policy.host` that names no set.
pub(crate) const NO_HOST: &str = "none";

/// An active suggestion: its tool is among the host's.
#[derive(Clone, Debug)]
pub(crate) struct Suggestion {
    /// The rule's name, or the built-in's.
    pub name: String,
    pub tool: String,
    pub message: String,
    matcher: Matcher,
}

#[derive(Clone)]
enum Matcher {
    Rule(Box<Rule>),
    Builtin(&'static BuiltinSuggestion),
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Matcher::Rule(rule) => write!(formatter, "rule {:?}", rule.name),
            Matcher::Builtin(builtin) => write!(formatter, "built-in {}", builtin.name),
        }
    }
}

impl Suggestion {
    /// A user's `suggest` rule, `message` defaulting to naming the tool.
    pub(crate) fn of_rule(rule: Rule, tool: &str, message: Option<&str>) -> Suggestion {
        let message = message.map_or_else(
            || format!("the host has the `{tool}` tool for this"),
            str::to_owned,
        );
        Suggestion {
            name: rule.name.clone(),
            tool: tool.to_owned(),
            message,
            matcher: Matcher::Rule(Box::new(rule)),
        }
    }

    /// The built-in suggestion `name` with the host's `tool`; `None` for an unknown name.
    fn of_builtin(name: &str, tool: &str) -> Option<Suggestion> {
        let builtin = BUILTIN_SUGGESTIONS.iter().find(|one| one.name == name)?;
        Some(Suggestion {
            name: builtin.name.to_owned(),
            tool: tool.to_owned(),
            message: builtin.message.replace("{tool}", tool),
            matcher: Matcher::Builtin(builtin),
        })
    }

    /// True if the suggestion is for `found`, the command as written.
    fn matches(&self, found: &Found) -> bool {
        match &self.matcher {
            Matcher::Rule(rule) => rule.matches_as_written(found),
            Matcher::Builtin(builtin) => (builtin.test)(found, &found.argv),
        }
    }
}

/// The built-in set called `name`, if there is one.
pub(crate) fn host(name: &str) -> Option<&'static Host> {
    HOSTS.iter().find(|host| host.name == name)
}

/// The tools of the host: those its set implies, then the declared ones.
pub(crate) fn host_tools(host: Option<&Host>, declared: &[String]) -> Vec<String> {
    let mut tools: Vec<String> = Vec::new();
    let implied = host
        .into_iter()
        .flat_map(|host| host.tools.iter().map(|(_, tool)| *tool));
    for tool in implied.chain(declared.iter().map(String::as_str)) {
        if !tools.iter().any(|known| known == tool) {
            tools.push(tool.to_owned());
        }
    }
    tools
}

/// The built-in suggestions of `host`'s set that are not switched off.
pub(crate) fn builtins_of(host: Option<&Host>, disabled: &[String]) -> Vec<Suggestion> {
    host.into_iter()
        .flat_map(|host| host.tools.iter())
        .filter(|(name, _)| !disabled.iter().any(|off| off == name))
        .filter_map(|(name, tool)| Suggestion::of_builtin(name, tool))
        .collect()
}

/// The first of `suggestions` for `command`, whose segments are `found`: only when the
/// command is one simple command (see the module's docs).
pub(crate) fn first<'s>(
    suggestions: &'s [Suggestion],
    command: &str,
    found: &[Found],
) -> Option<&'s Suggestion> {
    if suggestions.is_empty() {
        return None;
    }
    let one = rules::sole_segment(found)?;
    let suggestion = suggestions.iter().find(|one_of| one_of.matches(one))?;
    // Checked last, because it parses the text again: the walk lists one segment for a
    // loop, a group or a subshell around a command as well.
    rules::is_one_simple_command(command).then_some(suggestion)
}

/// Words after the command name that are plain (no expansion, no unquoted glob) and name no
/// special file: a tool reads the files the words name only if the words are the names.
fn plain_words(argv: &[Arg]) -> bool {
    argv.iter().skip(1).all(Arg::is_plain)
}

/// A file operand a harness tool can stand in for: not standard input, not a device or a
/// kernel file (`/dev/stdin`, `/proc/…`), whose reads are the shell's business.
fn ordinary_file(word: &str) -> bool {
    let special = ["/dev", "/proc", "/sys"].iter().any(|special| {
        word.strip_prefix(special)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    });
    word != "-" && !special
}

/// A redirection that does not change what the command does: stderr sent to `/dev/null`
/// or to stdout.
fn quiet(redirect: &Redirect) -> bool {
    redirect.fd == Some(2)
        && match redirect.op {
            ">" | ">>" | ">|" => redirect.target.text == "/dev/null",
            ">&" => redirect.target.text == "1",
            _ => false,
        }
}

/// Only quiet redirections.
fn only_quiet(found: &Found) -> bool {
    found.redirects.iter().all(quiet)
}

/// The command's name, lower-cased, when it is a plain word.
fn name(argv: &[Arg]) -> Option<String> {
    commands::program(argv).map(|name| name.into_owned())
}

/// `cat [-n] FILE…`, `head`/`tail` with at most a line count, `less`/`more FILE…`.
fn reads_files(found: &Found, argv: &[Arg]) -> bool {
    let Some(name) = name(argv) else { return false };
    if !plain_words(argv) || !only_quiet(found) {
        return false;
    }
    let words: Vec<&str> = argv.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let files = match name.as_str() {
        "cat" => files_after(
            &words,
            |option| matches!(option, "-n" | "--number"),
            |_| false,
        ),
        "head" | "tail" => files_after(&words, line_count, |option| {
            matches!(option, "-n" | "--lines")
        }),
        "less" | "more" => files_after(&words, |_| false, |_| false),
        _ => None,
    };
    files.is_some_and(|files| !files.is_empty() && files.iter().all(|file| ordinary_file(file)))
}

/// `-20`, `-n20`, `-n+3`, `--lines=20`: a line count in one word.
fn line_count(option: &str) -> bool {
    let count = |text: &str| {
        let digits = text.strip_prefix('+').unwrap_or(text);
        !digits.is_empty() && digits.bytes().all(|byte| byte.is_ascii_digit())
    };
    option
        .strip_prefix("--lines=")
        .or_else(|| option.strip_prefix("-n"))
        .or_else(|| option.strip_prefix('-'))
        .is_some_and(count)
}

/// The file operands of `words` when every option is one `alone` accepts, or one
/// `with_value` accepts followed by its value (a line count); `--` ends the options.
/// `None` when an option is not accepted.
fn files_after<'w>(
    words: &[&'w str],
    alone: impl Fn(&str) -> bool,
    with_value: impl Fn(&str) -> bool,
) -> Option<Vec<&'w str>> {
    let mut files = Vec::new();
    let mut options_end = false;
    let mut index = 0;
    while let Some(word) = words.get(index) {
        index += 1;
        if options_end || !word.starts_with('-') || *word == "-" {
            files.push(*word);
        } else if *word == "--" {
            options_end = true;
        } else if with_value(word) {
            let value = words.get(index)?;
            if !line_count(&format!("-{value}")) {
                return None;
            }
            index += 1;
        } else if !alone(word) {
            return None;
        }
    }
    Some(files)
}

/// `grep -r PATTERN [PATH…]` (any recursive spelling) or `rg PATTERN [PATH…]`, not
/// inverted and not rewriting what it prints.
fn searches_contents(found: &Found, argv: &[Arg]) -> bool {
    let Some(name) = name(argv) else { return false };
    if !plain_words(argv) || !only_quiet(found) {
        return false;
    }
    let words: Vec<&str> = argv.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let inverted = words
        .iter()
        .any(|word| *word == "--invert-match" || short_flag(word, 'v'));
    let paths_ordinary = words
        .iter()
        .filter(|word| !word.starts_with('-'))
        .all(|word| ordinary_file(word));
    if inverted || !paths_ordinary {
        return false;
    }
    match name.as_str() {
        "grep" | "egrep" | "fgrep" => words.iter().any(|word| {
            matches!(*word, "--recursive" | "--dereference-recursive")
                || short_flag(word, 'r')
                || short_flag(word, 'R')
        }),
        "rg" => {
            let rewrites = words.iter().any(|word| {
                matches!(*word, "--files" | "--replace" | "--pre")
                    || word.starts_with("--replace=")
                    || word.starts_with("--pre=")
                    || short_flag(word, 'r')
            });
            !rewrites && words.iter().any(|word| !word.starts_with('-'))
        }
        _ => false,
    }
}

/// True if `word` is a cluster of short options (`-rn`) that sets `flag` before any option
/// that takes a value (`-A3`, `-e`, `-f`, `-m`, …: what follows those is their value).
fn short_flag(word: &str, flag: char) -> bool {
    let Some(cluster) = word.strip_prefix('-') else {
        return false;
    };
    if cluster.starts_with('-') {
        return false;
    }
    for letter in cluster.chars() {
        if letter == flag {
            return true;
        }
        if "ABCDdefgmMtTj".contains(letter) || !letter.is_ascii_alphabetic() {
            return false;
        }
    }
    false
}

/// `find [DIR…] EXPR` whose expression only tests names (`-name`, `-iname`, `-path`,
/// `-ipath`, `-wholename`), `-type f`, depths, `-print` and the operators between them.
fn finds_by_name(found: &Found, argv: &[Arg]) -> bool {
    if name(argv).as_deref() != Some("find") || !plain_words(argv) || !only_quiet(found) {
        return false;
    }
    let words: Vec<&str> = argv.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let starts = words
        .iter()
        .position(|word| word.starts_with('-') || matches!(*word, "!" | "(" | ")"))
        .unwrap_or(words.len());
    let (dirs, expression) = words.split_at(starts);
    if !dirs.iter().all(|dir| ordinary_file(dir)) {
        return false;
    }
    let mut tests_name = false;
    let mut index = 0;
    while let Some(word) = expression.get(index) {
        index += 1;
        match *word {
            "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename" => {
                tests_name = true;
                index += 1;
            }
            "-type" if expression.get(index) == Some(&"f") => index += 1,
            "-maxdepth" | "-mindepth" => index += 1,
            "-print" | "-o" | "-or" | "-a" | "-and" | "!" | "-not" | "(" | ")" => {}
            _ => return false,
        }
    }
    tests_name && index <= expression.len()
}

/// `sed -i`/`--in-place` (with or without a backup suffix) given at least one file.
fn edits_in_place(found: &Found, argv: &[Arg]) -> bool {
    if name(argv).as_deref() != Some("sed") || !plain_words(argv) || !only_quiet(found) {
        return false;
    }
    let words: Vec<&str> = argv.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let mut in_place = false;
    let mut script_given = false;
    let mut operands = Vec::new();
    let mut index = 0;
    while let Some(word) = words.get(index) {
        index += 1;
        if *word == "--in-place" || word.starts_with("--in-place=") {
            in_place = true;
        } else if matches!(*word, "-e" | "--expression" | "-f" | "--file") {
            script_given = true;
            index += 1;
        } else if word.starts_with("--expression=") || word.starts_with("--file=") {
            script_given = true;
        } else if word.starts_with("--") || *word == "-" {
            // `--posix`, `--regexp-extended`, …: they change no file.
            if *word == "-" {
                operands.push(*word);
            }
        } else if let Some(cluster) = word.strip_prefix('-') {
            // `-i`, `-i.bak`, `-Ei`, `-ni`: `i` takes the rest of the word as its suffix; `e`
            // and `f` take the next word (or the rest of this one) as the script.
            for (at, letter) in cluster.char_indices() {
                match letter {
                    'i' => {
                        in_place = true;
                        break;
                    }
                    'e' | 'f' => {
                        script_given = true;
                        if at + 1 == cluster.len() {
                            index += 1;
                        }
                        break;
                    }
                    _ => {}
                }
            }
        } else {
            operands.push(*word);
        }
    }
    let files = if script_given {
        operands.as_slice()
    } else {
        operands.get(1..).unwrap_or_default()
    };
    in_place && !files.is_empty() && files.iter().all(|file| ordinary_file(file))
}

/// Literal `echo`/`printf` text, or `cat` of a here-document or here-string, sent with `>`
/// (or `>|`) to a file.
fn writes_file(found: &Found, argv: &[Arg]) -> bool {
    let Some(name) = name(argv) else { return false };
    if !plain_words(argv) {
        return false;
    }
    let mut written = 0;
    let mut fed_text = false;
    for redirect in &found.redirects {
        let stdout = matches!(redirect.fd, None | Some(1));
        if stdout && matches!(redirect.op, ">" | ">|") {
            let file = &redirect.target;
            if !file.is_plain() || !ordinary_file(&file.text) {
                return false;
            }
            written += 1;
        } else if matches!(redirect.op, "<<" | "<<-" | "<<<") {
            // A text with `$` or a backquote in it may expand: what it writes is then only
            // known to the shell.
            let text = redirect.body.as_deref().unwrap_or(&redirect.target.text);
            if text.contains(['$', '`']) || !redirect.target.is_plain() {
                return false;
            }
            fed_text = true;
        } else if !quiet(redirect) {
            return false;
        }
    }
    let prints_text = match name.as_str() {
        "echo" | "printf" => !fed_text,
        "cat" => fed_text && argv.len() == 1,
        _ => false,
    };
    written == 1 && prints_text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::is_one_simple_command;

    #[test]
    fn one_simple_command_is_a_whole_command_line() {
        for whole in [
            "cat x",
            "cat x 2>/dev/null",
            "X=1 cat x",
            "cat x # why",
            "cat x;",
        ] {
            assert!(is_one_simple_command(whole), "{whole}");
        }
        for part in [
            "cat x | grep y",
            "cat x; ls",
            "cd a && cat x",
            "cat x &",
            "(cat x)",
            "{ cat x; }",
            "for f in a b; do cat $f; done",
            "while true; do cat x; done",
            "! cat x",
            "time cat x",
            "if true; then cat x; fi",
            "cat 'x",
        ] {
            assert!(!is_one_simple_command(part), "{part}");
        }
    }

    #[test]
    fn line_counts_are_recognised() {
        for count in ["-20", "-n20", "-n+3", "--lines=7"] {
            assert!(line_count(count), "{count}");
        }
        for other in ["-f", "-c5", "-n", "--lines=x", "-"] {
            assert!(!line_count(other), "{other}");
        }
    }

    #[test]
    fn short_flags_stop_at_an_option_with_a_value() {
        assert!(short_flag("-rn", 'r'));
        assert!(short_flag("-nR", 'R'));
        assert!(!short_flag("-A3r", 'r'));
        assert!(!short_flag("-er", 'r'));
        assert!(!short_flag("--recursive", 'r'));
        assert!(!short_flag("r", 'r'));
    }
}
