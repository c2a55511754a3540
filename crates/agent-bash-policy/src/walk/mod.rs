//! From command text to the list of simple commands the shell would run.
//!
//! The walker parses the text with brush-parser and visits every part of the tree that can run
//! a command: pipelines, lists, subshells, groups, loops, conditionals, `case`, function bodies,
//! `[[ ]]`, arithmetic, assignments, redirect targets, here-documents that expand, and the
//! words themselves, whose `$(…)`, backquotes and `${x:-$(…)}` brush-parser keeps as text and we
//! parse again. Scripts given as text to a launcher (`bash -c`, `eval`, `ssh host …`) are parsed
//! too, up to [`MAX_NESTING`] levels. Each simple command becomes one [`Found`], in source order
//! (an outer command comes before the commands nested in its words).
//!
//! Pure: parses and records, runs nothing.

mod bind;
mod expand;
mod finish;
mod lists;
mod marks;
mod output;
mod redirects;
mod scripts;
mod simple;
#[cfg(test)]
mod tests;
mod unseen;

use std::collections::HashMap;

use crate::commands;
use crate::env::KnownEnv;
use crate::harm;
use crate::parse;
use crate::salvage;
use crate::words::{Arg, Found, Redirect, Stdin};
use crate::written;

use bind::bind_values;
use marks::{mark_fork_bombs, mark_network};

/// How many scripts-within-scripts (substitutions, `bash -c`, `eval`) are parsed before the
/// walker gives up and reports the rest as unknown.
pub(crate) const MAX_NESTING: usize = 16;

/// Brace expansion beyond this many words is not expanded: the word is reported as unknown.
const MAX_BRACE_WORDS: usize = 1024;

/// How many scripts-within-scripts one check parses at most; beyond, the rest are unknown.
/// Bounds the work on inputs built to multiply (a substitution inside a substitution inside
/// …, each in a word with several brace alternatives).
const MAX_NESTED_SCRIPTS: usize = 10_000;

/// Longest command text quoted in a segment that could not be parsed.
const MAX_QUOTED_CHARS: usize = 200;

/// Finds every simple command in `command`. A command name made of variables from `env` (the
/// session's environment) is read with their values where nothing in the command can have
/// changed them (see `env.rs`).
pub(crate) fn walk(command: &str, env: &HashMap<String, String>) -> Vec<Found> {
    let (mut found, bindings) = walk_with(command, env);
    bind_values(&mut found, &bindings);
    mark_fork_bombs(&mut found);
    mark_network(&mut found);
    found
}

/// The commands of `command`, and the values its text gives variables.
type Walked = (Vec<Found>, Vec<(String, Vec<Arg>)>);

fn walk_with(command: &str, env: &HashMap<String, String>) -> Walked {
    let plain = || {
        let mut walker = Walker::default();
        let found = walker.walk(command);
        (found, walker.bindings)
    };
    if env.is_empty() {
        return plain();
    }
    let known = KnownEnv::new(env, command);
    let mut walker = Walker {
        env: Some(&known),
        ..Walker::default()
    };
    let found = walker.walk(command);
    // A variable the text never names can still be assigned: by a sourced file or `eval`,
    // or by a builtin given a name made at run time. Before or (in a loop) after any command.
    if walker.resolved_names && found.iter().any(assigns_unnamed_variables) {
        return plain();
    }
    (found, walker.bindings)
}

/// True if the command may assign a variable whose name is not written in it: `source`,
/// `.`, `eval`, a name reference (`declare -n`), or an assigning builtin (`declare`,
/// `export`, `read`, `printf -v`, …) given a name that is not literal (`read "$n"`,
/// `export "${p}ATH=…"`).
fn assigns_unnamed_variables(found: &Found) -> bool {
    found.each_form().any(|form| {
        let Some(name) = commands::program(form) else {
            return false;
        };
        let arguments = || form.iter().skip(1);
        match name.as_ref() {
            "source" | "." | "eval" => true,
            "declare" | "typeset" | "local" | "export" | "readonly" | "read" | "printf"
            | "mapfile" | "readarray" | "getopts" | "unset" | "let" => arguments().any(|arg| {
                let text = arg.text.as_str();
                let name_part = text.split_once('=').map_or(text, |(name, _)| name);
                let reference =
                    text.starts_with('-') && !text.starts_with("--") && text.contains('n');
                (reference && name != "read" && name != "printf" && name != "unset")
                    || (!arg.literal && name_part.contains(['$', '`']))
            }),
            _ => false,
        }
    })
}

#[derive(Default)]
struct Walker<'a> {
    out: Vec<Found>,
    /// The session's environment, as the command leaves it.
    env: Option<&'a KnownEnv<'a>>,
    /// Whether some command name was read from the environment.
    resolved_names: bool,
    /// The directory the next command runs in, when a `cd` made it known (`Found::cwd`).
    cwd: Option<String>,
    /// Names called twice or more by the pipelines that enclose the current point.
    fanned: Vec<String>,
    /// How many scripts run by another shell (`bash -c`, `ssh`) enclose the current point:
    /// the session's environment is not known there.
    launched: usize,
    via: Vec<String>,
    /// How many parsed-again scripts enclose the current point.
    nesting: usize,
    /// How many scripts were parsed again so far.
    nested_scripts: usize,
    /// Functions whose bodies enclose the current point.
    functions: Vec<String>,
    /// How many background lists (`… &`) enclose the current point, within the innermost
    /// function body.
    background: usize,
    /// How many pipelines with two or more calls of an enclosing function (`f | f`) enclose
    /// the current point, within the innermost function body.
    self_pipelines: usize,
    stdin: Stdin,
    /// `$0`, `$1`, … when a launcher set them (`sh -c SCRIPT ARG0 ARG1`).
    positional: Option<Vec<Arg>>,
    /// The input of the next script launched (`bash -c`, `eval`): the launcher's.
    launch_stdin: Option<Stdin>,
    /// Redirections the next script parsed applies to all its commands (those of a `( ( … ) )`
    /// read again as the subshells bash runs).
    inherited: Vec<Redirect>,
    /// Whether the parts of an unparseable text are being walked (see [`Walker::salvage`]).
    salvaging: bool,
    /// The text of the script being walked, by character (brush-parser's locations count
    /// characters).
    text: Vec<char>,
    /// Files the line wrote so far, and what they hold (`written.rs`).
    written: Vec<(String, written::Content)>,
    /// Where the commands of each `>(…)` of the current command start and end in `out`.
    output_substitutions: Vec<(usize, usize)>,
    /// Values the text gives variables: `D=~`, `for d in a ~/src` (see [`bind_values`]).
    bindings: Vec<(String, Vec<Arg>)>,
    /// What the command before this one in a pipeline prints, when a literal `echo` or
    /// `printf` shows it: read by the next simple command as its input.
    piped_text: Option<String>,
    /// Variables `read` or `mapfile` filled from a file or a pipe: arithmetic on them may
    /// run what the file holds.
    read_names: Vec<String>,
    /// How many pipelines fed by a file watcher (`inotifywait -m … | while …`) enclose the
    /// current point: what runs there runs again on every change.
    watched: usize,
    /// Values the line gives variables, arrays and substitutions (`expanded.rs`).
    values: crate::expanded::Values,
    /// What the last pipeline walked prints, when the line shows it.
    last_output: Option<String>,
    /// Programs the line downloaded into a `PATH` folder, by name (`gitx`), with their path.
    downloaded_programs: Vec<(String, String)>,
    /// The command before this one in a pipeline prints without end (`yes`, `seq inf`).
    endless_input: bool,
}

impl Walker<'_> {
    fn walk(&mut self, command: &str) -> Vec<Found> {
        self.script(command);
        std::mem::take(&mut self.out)
    }

    /// Parses `text` and walks it; an unparseable text becomes one unknown command.
    fn script(&mut self, text: &str) {
        let openers = parse::count_openers(text);
        let saved_text = std::mem::replace(&mut self.text, text.chars().collect());
        // The tree is walked, and dropped, on a stack sized for its depth.
        parse::on_big_enough_stack(openers, || match parse::program(text) {
            Ok(program) => {
                let inherited = std::mem::take(&mut self.inherited);
                for list in &program.complete_commands {
                    self.compound_list(list, &inherited);
                }
            }
            Err(failure) => {
                let start = self.out.len();
                self.unknown(text, format!("the command could not be parsed: {failure}"));
                self.out[start].unparsed = true;
                self.salvage(text);
            }
        });
        self.text = saved_text;
    }

    /// Walks the parts of a text that does not parse as a whole which parse on their own
    /// (its top-level commands, split at newlines, `;`, `&`, `|`), so that a command denied
    /// in one of them stays denied whatever else is wrong with the text. Only once: parts
    /// that do not parse either are covered by the unknown the whole text already is.
    fn salvage(&mut self, text: &str) {
        if self.salvaging {
            return;
        }
        let pieces = salvage::pieces(text);
        if pieces.len() == 1 && pieces[0] == text.trim() {
            return;
        }
        self.salvaging = true;
        for piece in pieces {
            if parse::program(&piece).is_ok() {
                self.script(&piece);
            }
        }
        self.salvaging = false;
    }

    /// Parses and walks a script found inside another one.
    fn nested_script(&mut self, text: &str, label: &str) {
        if self.nesting >= MAX_NESTING {
            self.unknown(
                text,
                format!("commands nest more than {MAX_NESTING} levels deep"),
            );
            return;
        }
        if self.nested_scripts >= MAX_NESTED_SCRIPTS {
            let reason = format!("more than {MAX_NESTED_SCRIPTS} nested scripts to check");
            self.unknown(text, reason);
            return;
        }
        self.nested_scripts += 1;
        self.nesting += 1;
        self.inside(label, |walker| walker.script(text));
        self.nesting -= 1;
    }

    /// Parses and walks a script a launcher runs in a new shell, with its positional
    /// parameters.
    fn launched_script(&mut self, text: &str, label: &str, positional: Option<Vec<Arg>>) {
        let saved = std::mem::replace(&mut self.positional, positional);
        // The launched shell reads the launcher's input (`curl … | bash -c bash`).
        self.launch_stdin = Some(self.stdin);
        self.launched += 1;
        self.nested_script(text, label);
        self.launch_stdin = None;
        self.launched -= 1;
        self.positional = saved;
    }

    /// Runs `walk` with `label` on the path, with the input of a fresh command.
    fn inside(&mut self, label: &str, walk: impl FnOnce(&mut Walker)) {
        self.via.push(label.to_owned());
        let stdin = self.launch_stdin.take().unwrap_or_default();
        let saved_stdin = std::mem::replace(&mut self.stdin, stdin);
        walk(self);
        self.stdin = saved_stdin;
        self.via.pop();
    }

    fn unknown(&mut self, text: &str, reason: String) {
        let quoted: String = if text.chars().count() > MAX_QUOTED_CHARS {
            text.chars().take(MAX_QUOTED_CHARS).chain(['…']).collect()
        } else {
            text.to_owned()
        };
        self.out.push(Found {
            argv: vec![Arg::literal(quoted)],
            via: self.via.clone(),
            unknown: Some(reason),
            stdin: self.stdin,
            ..Found::default()
        });
    }
}

/// What the walker reads in a command it found. Here, not with [`Found`] in `words.rs`: it asks
/// `commands` and `harm`, which sit above the words.
impl Found {
    /// True if this command (or one it wraps) is a downloader: a program that fetches data,
    /// interpreter code that does, a DNS query for text records, or `ssh HOST cat FILE`.
    pub(crate) fn downloads(&self) -> bool {
        self.each_form().any(|form| {
            commands::program(form).is_some_and(|name| {
                commands::is_downloader(&name)
                    || (commands::is_language_interpreter(&name) && harm::fetches_in_code(form))
                    || (matches!(name.as_ref(), "dig" | "host" | "drill" | "nslookup")
                        && form.iter().any(|arg| {
                            arg.text.eq_ignore_ascii_case("txt")
                                || arg.text.eq_ignore_ascii_case("-t txt")
                                || arg.text.eq_ignore_ascii_case("-type=txt")
                        }))
                    || (name == "ssh"
                        && commands::launch(form).is_some_and(|launch| {
                            matches!(
                                launch.script.split_whitespace().next(),
                                Some("cat" | "curl" | "wget" | "base64")
                            )
                        }))
            })
        })
    }
}

fn name_of(form: &[Arg]) -> std::borrow::Cow<'_, str> {
    commands::program_name(form).unwrap_or_default()
}
