//! What a found command runs in turn: launcher scripts, scripts fed to a program, `find
//! -exec` commands, files the line wrote earlier. Each is walked as a script of its own.

use crate::commands;
use crate::harm;
use crate::runners;
use crate::words::{Arg, Found, Printed, Redirect, Stdin};
use crate::written;

use super::bind::{nameref_bindings, names_read_from_data};
use super::scripts::{Fed, code_scripts, exported_functions, fed_script, script_file};
use super::unseen::{non_literal_code, unseen_nameref, unseen_program_file, unseen_reason};
use super::{MAX_NESTING, Walker, name_of};

impl Walker<'_> {
    /// Records the command in `slot`, then walks what it runs: launcher scripts, scripts fed
    /// to a shell's input, `find -exec` commands.
    pub(super) fn finish(&mut self, slot: usize, argv: Vec<Arg>, redirects: Vec<Redirect>) {
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
