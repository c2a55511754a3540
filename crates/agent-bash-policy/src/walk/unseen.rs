//! Why the policy cannot know what a command does, when its name and scripts do not say:
//! names made at run time, `xargs` feeding a destroyer, code made from input.

use crate::builtin;
use crate::commands;
use crate::harm;
use crate::runners;
use crate::words::{Arg, Found, Printed, Stdin};

use super::name_of;

/// Why the policy cannot know what `found` does, when no name or script says it: a destroyer
/// fed paths by `xargs`, a cleanup of home, a root reached by empty expansions, and the
/// families of harm that ask.
pub(super) fn unseen_reason(found: &mut Found) -> Option<String> {
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

/// Why a `declare -n r="$1"` cannot be followed: the name it refers to is made at run time,
/// and a subscript in it (`a[$(cmd)]`) runs when `r` is assigned or read.
pub(super) fn unseen_nameref(form: &[Arg]) -> Option<String> {
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

/// Why the program or makefile `form` runs cannot be seen: `make -f <(…)`, `find -exec {}`
/// running what it finds.
pub(super) fn unseen_program_file(form: &[Arg]) -> Option<String> {
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
pub(super) fn non_literal_code(form: &[Arg]) -> bool {
    let Some(name) = commands::program(form) else {
        return false;
    };
    commands::is_language_interpreter(&name)
        && matches!(commands::program_source(form), Some(commands::ProgramSource::Inline(arg)) if !arg.literal)
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
pub(super) fn first_unknown_name(found: &Found) -> Option<String> {
    let name = found
        .each_form()
        .filter_map(<[Arg]>::first)
        .find(|first| !first.is_plain())?;
    Some(format!(
        "the command name `{}` is only known when the shell runs it",
        name.text
    ))
}
