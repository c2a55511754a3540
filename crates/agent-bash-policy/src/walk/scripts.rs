//! The scripts a command's words carry, read without walking them: interpreter code, a
//! shell's here-document, exported functions, a script file a process substitution prints.

use crate::commands;
use crate::harm;
use crate::runners;
use crate::words::{Arg, Found, Printed, Stdin};

use super::{Walker, name_of};

/// A script found to walk: its text, the label it is found under (`bash -c`, `$(…)`), and
/// the positional parameters a launcher gives it.
pub(super) type Script = (String, String, Option<Vec<Arg>>);

/// Scripts in code `form` carries: interpreter code on the command line or fed on input
/// (the commands it runs), and `ed`'s `!command` lines.
pub(super) fn code_scripts(found: &Found, form: &[Arg]) -> Vec<Script> {
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

/// Scripts from the build files `form` reads: the `RUN` steps of a Dockerfile on its input
/// that send data out, and the recipes of a makefile the line spells out (`make -f
/// <(printf …)`, `make -f - <<EOF`).
pub(super) fn build_file_scripts(found: &Found, form: &[Arg]) -> Vec<Script> {
    let mut scripts = Vec::new();
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
                scripts.push((runners::make_recipes(text), "make -f <(…)".to_owned(), None));
            }
        }
    }
    if let Some(recipes) = runners::stdin_makefile(form)
        .then(|| found.redirects.iter().rev().find_map(|r| r.body.as_deref()))
        .flatten()
    {
        scripts.push((runners::make_recipes(recipes), "make -f -".to_owned(), None));
    }
    scripts
}

/// Functions exported through the environment (`env 'BASH_FUNC_f%%=() { …; }' bash -c f`):
/// their bodies, which the child bash defines and may run.
pub(super) fn exported_functions(form: &[Arg]) -> Vec<(String, String)> {
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

/// What the script a shell or `source` runs from a file holds, when the line shows it or
/// shows that it cannot: a process substitution's output, or a path known only at run time
/// (`source "$HOOK_FILE"`, `bash "$(ls -t …)"`). A path whose file name is written out
/// (`. "$NVM_DIR/nvm.sh"`) names a known script.
pub(super) fn script_file(form: &[Arg], bindings: &[(String, Vec<Arg>)]) -> Option<Printed> {
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
pub(super) enum Fed {
    /// A here-document or here-string: its script.
    Script(String),
    /// A pipe or a process substitution: a script the policy cannot see.
    Unseen,
    /// Whatever the enclosing command reads.
    Nothing,
}

pub(super) fn fed_script(found: &Found) -> Fed {
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
