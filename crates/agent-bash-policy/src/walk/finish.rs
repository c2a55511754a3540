//! What a found command runs in turn: launcher scripts, scripts fed to a program, `find
//! -exec` commands, files the line wrote earlier. Each is walked as a script of its own.

use crate::commands;
use crate::runners;
use crate::words::{Arg, Found, Printed, Redirect, Stdin};
use crate::written;

use super::bind::{nameref_bindings, names_read_from_data};
use super::scripts::{
    Fed, Script, build_file_scripts, code_scripts, exported_functions, fed_script, script_file,
};
use super::unseen::{non_literal_code, unseen_nameref, unseen_program_file, unseen_reason};
use super::{MAX_NESTING, Walker, name_of};

/// What a found command hands on to run, gathered over its forms before any of it is walked.
#[derive(Default)]
struct Handed {
    /// Scripts it runs: a launcher's, interpreter code, files the line wrote, …
    scripts: Vec<Script>,
    /// Scripts a program runs and feeds with data of its own (`tar --to-command=sh`,
    /// `vim -c 'w !sh'`, a git alias `!sh` reading git's input).
    fed: Vec<(String, String)>,
    /// The commands `find -exec` runs.
    sub_commands: Vec<Vec<Arg>>,
    /// Words bash evaluates as array subscripts or arithmetic (`let`, `read`, `printf -v`).
    subscripts: Vec<Arg>,
    /// It only hands a script to a local shell (`Found::launcher`).
    launcher: bool,
    /// Why what it runs cannot be known, if it cannot: the first reason found.
    unknown: Option<String>,
}

impl Walker<'_> {
    /// Records the command in `slot`, then walks what it runs: launcher scripts, scripts fed
    /// to a shell's input, `find -exec` commands.
    pub(super) fn finish(&mut self, slot: usize, argv: Vec<Arg>, redirects: Vec<Redirect>) {
        let mut found = self.found(argv, redirects);
        let mut handed = Handed::default();
        for form in found.each_form() {
            self.form_hands_on(&found, form, &mut handed);
        }
        self.built_command(&found, &mut handed.scripts);
        handed.scripts.extend(xargs_scripts(&found));
        if handed.unknown.is_none() {
            handed.unknown = unseen_reason(&mut found);
        }
        self.written_runs(&mut found, &mut handed);
        self.moved_deletions(&found, &mut handed.scripts);
        self.record_writes(&found, &mut handed.scripts);
        found.launcher = handed.launcher;
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
            found.unknown = handed.unknown.take();
        }
        self.out[slot] = found;
        self.walk_handed(slot, handed);
    }

    /// Gathers what one form of `found` hands on: the scripts its words and input carry,
    /// why it is unknown, a launcher's script, `find -exec` commands, a script fed to a
    /// shell on its input.
    fn form_hands_on(&mut self, found: &Found, form: &[Arg], handed: &mut Handed) {
        self.form_scripts(found, form, handed);
        self.form_unknowns(form, handed);
        if let Some(launch) = commands::launch(form) {
            handed.launcher |= launch.transparent;
            handed
                .scripts
                .push((launch.script, launch.label, launch.positional));
            return;
        }
        handed
            .subscripts
            .extend(commands::evaluated_names(form).into_iter().cloned());
        if let Some(reason) = commands::changes_what_names_run(form) {
            handed.unknown.get_or_insert(reason);
        }
        let name = commands::program(form).unwrap_or_default();
        if name == "find" {
            handed.sub_commands.extend(find_exec_commands(form));
        }
        if commands::shell_reads_stdin(form) {
            match fed_script(found) {
                Fed::Script(body) => {
                    handed.launcher = true;
                    handed.scripts.push((body, format!("{name} <<"), None));
                }
                Fed::Unseen => {
                    handed
                        .unknown
                        .get_or_insert_with(|| format!("`{name}` runs a script read from a pipe"));
                }
                Fed::Nothing => {}
            }
        }
    }

    /// Gathers the scripts one form of `found` carries in its words and input (option
    /// scripts, runners' texts, exported functions, interpreter code, build files), and
    /// learns what it tells of variables: names read from data, values, name references.
    fn form_scripts(&mut self, found: &Found, form: &[Arg], handed: &mut Handed) {
        handed.fed.extend(
            commands::option_scripts(form)
                .into_iter()
                .map(|launch| (launch.script, launch.label)),
        );
        handed.fed.extend(
            runners::texts(form)
                .into_iter()
                .chain(runners::git_texts(form)),
        );
        for (script, label) in exported_functions(form) {
            handed.scripts.push((script, label, None));
        }
        handed.scripts.extend(code_scripts(found, form));
        if let Some(names) = names_read_from_data(found, form) {
            self.read_names.extend(names);
        }
        self.values.learn(form, spelled_input(found));
        handed.scripts.extend(build_file_scripts(found, form));
        self.bindings.extend(nameref_bindings(form));
    }

    /// Notes why one form cannot be known (the first reason found wins), and takes the
    /// script file it runs when the line shows its text.
    fn form_unknowns(&self, form: &[Arg], handed: &mut Handed) {
        if let Some(reason) = unseen_nameref(form) {
            handed.unknown.get_or_insert(reason);
        }
        if self.watched > 0
            && let Some(commands::ProgramSource::File(script)) = commands::program_source(form)
        {
            handed.unknown.get_or_insert_with(|| {
                format!(
                    "runs `{}` on every change a file watcher reports; the file may be \
                     rewritten between runs",
                    script.text
                )
            });
        }
        if let Some(reason) = unseen_program_file(form) {
            handed.unknown.get_or_insert(reason);
        }
        match script_file(form, &self.bindings) {
            Some(Printed::Text(text)) => handed.scripts.push((text, "<(…)".to_owned(), None)),
            Some(Printed::Unseen(reason)) => {
                handed.unknown.get_or_insert(reason);
            }
            Some(Printed::Tool) | None => {}
        }
        if runners::runs_its_input(form) || non_literal_code(form) {
            handed.unknown.get_or_insert_with(|| {
                "runs commands made from its input, which cannot be seen here".to_owned()
            });
        }
    }

    /// `a=r; b=m; $a$b -rf ~`: the command as the line's values build it (it stays unknown
    /// too: a value may change in ways the text does not show).
    fn built_command(&self, found: &Found, scripts: &mut Vec<Script>) {
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
    }

    /// `mv ~/.gnupg x && rm -rf x`: deleting what the line moved deletes the original.
    fn moved_deletions(&self, found: &Found, scripts: &mut Vec<Script>) {
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
    }

    /// Records the files `found` writes: a program downloaded into a `PATH` folder, a git
    /// hook whose text is known (its script walked now: it runs on the next commit or
    /// checkout, whoever makes it), and everything written, for the commands after it.
    fn record_writes(&mut self, found: &Found, scripts: &mut Vec<Script>) {
        let writes = written::writes(found, &self.written);
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
    }

    /// Walks what the command in `slot` hands on, once it is recorded: subscripts, scripts,
    /// scripts fed with the program's own data, `find -exec` commands.
    fn walk_handed(&mut self, slot: usize, handed: Handed) {
        for arg in &handed.subscripts {
            self.subscript(arg);
        }
        for (script, label, positional) in handed.scripts {
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
        for (script, label) in handed.fed {
            let saved = std::mem::replace(&mut self.stdin, feed);
            self.inherited = spelled.clone();
            self.launched_script(&script, &label, None);
            self.inherited.clear();
            self.stdin = saved;
        }
        self.find_exec(handed.sub_commands);
    }

    /// The files written earlier in the line that `found` runs: their known text walked,
    /// a download or clone marked as one, a copy of a program read as it, the rest unknown.
    fn written_runs(&self, found: &mut Found, handed: &mut Handed) {
        for ran in self.ran_files(found) {
            let contents = if ran == ".git/hooks/" {
                written::hooks(&self.written)
            } else {
                written::lookup(&self.written, &ran).into_iter().collect()
            };
            for content in contents {
                content_runs(found, &ran, content, handed);
            }
        }
    }

    /// The files `found` runs as code (`written::runs`), and a bare name that is a program
    /// the line downloaded into a `PATH` folder (`~/.local/bin/gitx`).
    fn ran_files(&self, found: &Found) -> Vec<String> {
        let mut ran_files = written::runs(found);
        // Only a download written to exactly that path counts: a link to an installed
        // program, or a folder an archive was unpacked into, is not it.
        if let Some(first) = found.argv.first().filter(|first| first.is_plain())
            && let Some((_, path)) = self
                .downloaded_programs
                .iter()
                .find(|(name, _)| *name == first.text)
        {
            ran_files.push(path.clone());
        }
        ran_files
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

/// What running the file `ran`, which the line wrote with `content`, does: its known text
/// walked (as an ssh configuration, a makefile, a shell script or interpreter code), a
/// download or clone marked as one, a copy of a program read as it, the rest unknown.
fn content_runs(found: &mut Found, ran: &str, content: written::Content, handed: &mut Handed) {
    let scripts = &mut handed.scripts;
    match content {
        written::Content::Known(text) if found.each_form().any(|form| name_of(form) == "ssh") => {
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
            handed.unknown.get_or_insert_with(|| {
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
                scripts.push((runners::quote_join(&words), format!("{ran} (a copy)"), None));
            }
        }
        written::Content::Moved(_) | written::Content::Unknown => {
            handed.unknown.get_or_insert_with(|| format!("runs `{ran}`, written earlier in this command with content that cannot be seen here"));
        }
    }
}

/// The text `found` reads when the line spells it out: a here-document or here-string, or
/// the file `<` reads when a process substitution prints it (`< <(echo …)`). The last wins.
fn spelled_input(found: &Found) -> Option<&str> {
    found.redirects.iter().rev().find_map(|redirect| {
        redirect
            .body
            .as_deref()
            .or(match redirect.target.printed.as_deref() {
                Some(Printed::Text(text)) if redirect.op == "<" => Some(text.as_str()),
                _ => None,
            })
    })
}

/// `echo ~ | xargs rm -rf`: what xargs runs, when its input shows.
fn xargs_scripts(found: &Found) -> Vec<Script> {
    let forms: Vec<&[Arg]> = found.each_form().collect();
    let input = spelled_input(found);
    forms
        .windows(2)
        .filter_map(|pair| runners::xargs_commands(pair[0], pair[1], input))
        .map(|script| (script, "xargs".to_owned(), None))
        .collect()
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
