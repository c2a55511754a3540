//! The user's files and the project's history: home folders, credentials and start-up files
//! destroyed, system files deleted, `.git` removed. This file says where a path points;
//! the deletions and the history each have a file of their own.

use super::remote::is_protected_branch;
use super::*;

mod deletions;
mod history;

pub(crate) use deletions::user_files;
pub(crate) use history::project_history;

/// Folders of the home directory that only hold caches, which tools delete as a matter of
/// course (`rm -rf ~/.cache/pip`).
const CACHES: &[&str] = &[
    "~/.cache",
    "~/.npm",
    "~/.yarn",
    "~/.pnpm-store",
    "~/.gradle",
    "~/.m2",
    "~/.nuget",
    "~/.bun",
    "~/.deno",
    "~/.node-gyp",
    "~/.cargo/registry",
    "~/.cargo/git",
    "~/.rustup/tmp",
    "~/go/pkg",
    "~/.pyenv/cache",
    "~/.tmp",
    "~/tmp",
    "~/.ccache",
    "~/.sbt",
    "~/.ivy2",
    "~/.conda/pkgs",
    "~/.expo",
    "~/.android/cache",
    "~/.vscode-server",
    "~/.local/share/pnpm",
    "~/.parcel-cache",
    "~/.turbo",
    "~/.next",
];

/// Folders below the home directory's own that hold what the user cannot get back: the
/// trash (emptying it after a move is a delete), the keyrings, the mail.
const DEEP_USER_DATA: &[&str] = &[
    "~/Library",
    "~/.local/share",
    "~/.local/share/Trash",
    "~/.local/share/keyrings",
    "~/.local/share/evolution",
    "~/.thunderbird",
    "~/.mozilla/firefox",
    "~/.config/google-chrome",
    "~/.config/chromium",
];

/// Where a path argument points, as the deletion family sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// The home directory, a folder directly in it (`~/src`, `~/.ssh`), a credential or a
    /// start-up file, another user's home.
    UserData,
    /// Below a system directory (`/usr/lib/python3*`, `/var/www`, `/etc/nginx`).
    System,
    Other,
}

/// The path `arg` names, read from the directory the command runs in when the line made it
/// known, home directories as `~`.
fn located(found: &Found, arg: &Arg) -> String {
    let spelled = crate::paths::home_spellings(&arg.text);
    let mut text = spelled.into_owned();
    if let Some(dir) = &found.cwd
        && !text.starts_with(['/', '~', '$'])
    {
        text = format!("{dir}/{text}");
    }
    home_of_someone(&path(&text))
}

/// True if `text` is a relative path naming an ancestor of the working directory or all
/// that is in one (`..`, `../*`, `../../.*`): the projects next to this one, and more.
fn names_an_ancestor(text: &str) -> bool {
    let parts: Vec<&str> = text.split('/').filter(|part| !part.is_empty()).collect();
    let parts = match parts.split_last() {
        Some((last, rest)) if matches!(*last, "*" | ".*" | "{*,.*}" | "?*") => rest,
        _ => &parts[..],
    };
    parts.contains(&"..") && parts.iter().all(|part| matches!(*part, ".." | "."))
}

fn place(found: &Found, arg: &Arg) -> Place {
    // The working directory and the repository's root, named by expansion, are where
    // relative paths start.
    // `$(dirname "$PWD")` is `..`, nested as often as it is written.
    let mut text = arg.text.clone();
    for (parent, relative) in [
        ("$(dirname \"$(dirname \"$PWD\")\")", "../.."),
        ("$(dirname \"$PWD\")", ".."),
        ("$(dirname $PWD)", ".."),
        ("$(dirname \"$(pwd)\")", ".."),
    ] {
        if let Some(rest) = text.strip_prefix(parent) {
            text = format!("{relative}{rest}");
        }
    }
    let arg = &Arg {
        text,
        ..arg.clone()
    };
    let mut relative = [
        "$PWD/",
        "${PWD}/",
        "$(pwd)/",
        "$(git rev-parse --show-toplevel)/",
    ]
    .iter()
    .find_map(|start| arg.text.strip_prefix(start))
    .map_or_else(|| arg.text.clone(), |rest| format!("./{rest}"));
    if let Some(dir) = &found.cwd
        && !relative.starts_with(['/', '~', '$'])
    {
        relative = format!("{dir}/{relative}");
    }
    if names_an_ancestor(&relative) {
        return Place::UserData;
    }
    let target = located(found, arg);
    if target.contains('$') || target.contains('`') {
        return Place::Other;
    }
    if CACHES.iter().any(|cache| under(&target, cache)) {
        return Place::Other;
    }
    if let Some(rest) = target.strip_prefix("~/") {
        let secret = SECRETS
            .iter()
            .chain(STARTUP_FILES)
            .chain(DEEP_USER_DATA)
            .any(|place| under(&target, place));
        return if secret || !rest.contains('/') {
            Place::UserData
        } else {
            Place::Other
        };
    }
    if target == "~" {
        return Place::UserData;
    }
    let parts: Vec<&str> = target.trim_start_matches('/').split('/').collect();
    let system = match parts.as_slice() {
        ["usr", "local", ..] | ["var", "tmp", ..] | ["var", "cache", ..] | ["tmp", ..] => false,
        ["var", "lib", "apt", "lists", ..] | ["var", "log", _, ..] | ["opt", ..] | ["mnt", ..] => {
            false
        }
        ["dev", "shm", ..]
        | ["run", "user", ..]
        | ["media", ..]
        | ["workspace" | "work" | "app" | "src" | "code", ..] => false,
        [first, ..] => crate::paths::is_system_dir(first),
        _ => false,
    };
    if system { Place::System } else { Place::Other }
}

/// True if `found` is a `find` that lists paths from the home directory or the root with no
/// name test narrowing them (`find ~ -type f -print`, `find / -newer x`).
pub(crate) fn lists_home(found: &Found) -> bool {
    let Some(form) = found.each_form().last() else {
        return false;
    };
    if name(form) != "find" {
        return false;
    }
    let start: Vec<&Arg> = form
        .iter()
        .skip(1)
        .take_while(|arg| !arg.text.starts_with('-') && arg.text != "(" && arg.text != "!")
        .collect();
    let narrowed = form.iter().any(|arg| {
        matches!(
            arg.text.as_str(),
            "-name" | "-iname" | "-regex" | "-iregex" | "-wholename" | "-iwholename" | "-lname"
        )
    });
    // A hidden home folder holds configuration and credentials: whatever pattern picks
    // files there picks the user's settings (`find ~/.config -name '*.json'`).
    let dot_folder = start.iter().any(|arg| {
        let target = located(found, arg);
        target.starts_with("~/.") && !CACHES.iter().any(|cache| under(&target, cache))
    });
    (dot_folder || !narrowed)
        && start.iter().any(|arg| {
            place(found, arg) == Place::UserData && (located(found, arg) == "~" || dot_folder)
                || crate::paths::is_root_or_home(found, arg)
        })
}

/// A reason to ask when a recursive delete's target climbs out of a directory known only at
/// run time (`rm -rf "$PWD/../../.."`): where it lands cannot be seen.
pub(crate) fn climbs_out(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let name = name(form);
        let destroys = matches!(&*name, "rm" | "rimraf") && has(form, &["-r", "-R", "--recursive"])
            || matches!(&*name, "chmod" | "chown" | "chgrp") && has(form, &["-R", "--recursive"]);
        let climbing = operands(form)
            .find(|arg| !arg.literal && arg.text.trim_end_matches('/').ends_with("/.."))?;
        destroys.then(|| {
            format!(
                "`{}` climbs out of a directory known only at run time",
                climbing.text
            )
        })
    })
}

/// A reason to ask for a recursive delete of the working directory or the previous one
/// (`rm -rf "$PWD"`, `rm -rf "$OLDPWD"`): the project itself, or a place known at run time.
pub(crate) fn deletes_working_directory(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let recursive = name(form) == "rm" && has(form, &["-r", "-R", "--recursive"]);
        let operand = operands(form).find(|arg| {
            matches!(
                arg.text.trim_end_matches('/'),
                "$PWD" | "${PWD}" | "$OLDPWD" | "${OLDPWD}" | "~+" | "~-"
            )
        })?;
        recursive.then(|| {
            format!(
                "`{}` is a working directory: the project itself, or one known only at run time",
                operand.text
            )
        })
    })
}
