//! The walker over one simple command: its words, assignments and redirections, and the
//! [`Found`] it becomes (names resolved, the directory it runs in).

use brush_parser::ast;

use crate::commands;
use crate::words::{Arg, Found, Printed, Redirect, Stdin};
use crate::written;

use super::output::printed;
use super::unseen::first_unknown_name;
use super::{Walker, name_of};

impl Walker<'_> {
    pub(super) fn simple(&mut self, simple: &ast::SimpleCommand, inherited: &[Redirect]) {
        // Reserve the slot first, so the command comes before those nested in its words.
        let slot = self.out.len();
        self.out.push(Found::default());
        let mut argv = Vec::new();
        let mut redirects = inherited.to_vec();
        if let Some(text) = self.piped_text.take() {
            redirects.push(piped_redirect(text));
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
                    self.set_for_command(assignment, &mut injected, &mut preloaded);
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
        self.mark_downloads_carried(slot, &preloaded, substitutions);
    }

    /// What an assignment before a command name sets for that command alone: a library
    /// loaded into it (`LD_PRELOAD=/tmp/l.so ls`), and arguments it reads from the
    /// environment (`TF_CLI_ARGS_apply=-destroy terraform apply`), judged as its own.
    fn set_for_command(
        &mut self,
        assignment: &ast::Assignment,
        injected: &mut Vec<Arg>,
        preloaded: &mut Vec<String>,
    ) {
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

    /// Marks downloads the command in `slot` carries: a library the line downloaded loaded
    /// into it, and what a downloading command writes into its `>(…)` (`substitutions`).
    fn mark_downloads_carried(
        &mut self,
        slot: usize,
        preloaded: &[String],
        substitutions: Vec<(usize, usize)>,
    ) {
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

    /// The command as found here: its forms, where it runs, whether it fans out or is a fork
    /// bomb, why its name is unknown; a `cd` moves the commands after it.
    pub(super) fn found(&mut self, mut argv: Vec<Arg>, redirects: Vec<Redirect>) -> Found {
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
        let mut forms = crate::forms::forms(argv);
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
            forms = crate::forms::forms(argv);
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
    pub(super) fn subscript(&mut self, arg: &Arg) {
        if arg.literal && (arg.text.contains("$(") || arg.text.contains('`')) {
            let text = arg.text.clone();
            self.inside("a[…]", |walker| walker.scan_text(&text));
        }
    }
}

/// What the command before this one in a pipeline prints, when a literal `echo`/`printf`
/// shows it, as this command's input: read like a here-string (`|` marks it as the pipe's),
/// its own redirections come after and win.
fn piped_redirect(text: String) -> Redirect {
    Redirect {
        fd: Some(0),
        op: "|",
        target: Arg::literal(text.clone()),
        body: Some(text),
    }
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

/// True if the only expansion in `text` is the home directory (`$HOME/.config`).
fn shows_only_home(text: &str) -> bool {
    let rest = text.replace("${HOME}", "").replace("$HOME", "");
    !rest.contains(['$', '`'])
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
