//! The user's files and the project's history: home folders, credentials and start-up files
//! destroyed, system files deleted, `.git` removed.

use super::remote::is_protected_branch;
use super::*;

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

/// True if `form` destroys the user's files outside the project or the system's: a
/// recursive delete, move or permission change of the home directory or a folder directly
/// in it, of a credential or start-up file, or of anything below a system directory;
/// `find` from there running a destroyer; `rsync --delete` into there; `git clean` with a
/// work tree there.
pub(crate) fn user_files(found: &Found, form: &[Arg]) -> bool {
    if empties_a_user_file(found, form) {
        return true;
    }
    let name = name(form);
    let is_data = |arg: &Arg| place(found, arg) != Place::Other;
    let recursive = has(form, &["-r", "-R", "--recursive"]);
    let operand_list: Vec<&Arg> = operands(form).collect();
    match &*name {
        "rm" | "rimraf" | "del" | "del-cli" | "trash" | "trash-put" | "gio" => {
            operand_list.iter().any(|arg| match place(found, arg) {
                Place::UserData => {
                    let target = located(found, arg);
                    recursive
                        || name != "rm"
                        || SECRETS
                            .iter()
                            .chain(STARTUP_FILES)
                            .any(|place| under(&target, place))
                }
                // The kernels and boot loader files, one by one too.
                // The kernels and the files the machine cannot run or reach the network
                // without, one by one too.
                Place::System => {
                    let target = located(found, arg);
                    recursive
                        || target.starts_with("/boot/")
                        || matches!(
                            target.as_str(),
                            "/etc/resolv.conf"
                                | "/etc/passwd"
                                | "/etc/shadow"
                                | "/etc/group"
                                | "/etc/fstab"
                                | "/etc/hosts"
                                | "/etc/sudoers"
                                | "/etc/nsswitch.conf"
                                | "/etc/ld.so.conf"
                                | "/etc/os-release"
                                | "/etc/machine-id"
                        )
                }
                Place::Other => false,
            })
        }
        // Every file `find` listed from the home directory or the root, destroyed.
        "xargs" => {
            found.stdin == Stdin::HomePaths
                && found.each_form().nth(1).is_some_and(|inner| {
                    matches!(
                        &*commands::program_name(inner).unwrap_or_default(),
                        "rm" | "shred" | "unlink" | "truncate" | "wipe" | "srm" | "chmod" | "chown"
                    )
                })
        }
        // A browser's or tool's own database emptied (`sqlite3 …/places.sqlite 'DELETE …'`).
        "sqlite3" => {
            form.iter().skip(1).any(|arg| {
                let upper = arg.text.to_ascii_uppercase();
                upper.contains("DELETE FROM") || upper.contains("DROP TABLE")
            }) && form.iter().skip(1).any(|arg| {
                let target = located(found, arg);
                SECRETS
                    .iter()
                    .chain(DEEP_USER_DATA)
                    .any(|place| under(&target, place))
                    || target.starts_with("~/.mozilla")
            })
        }
        // The user's scheduled jobs, all of them.
        "crontab" => has(form, &["-r"]),
        "unlink" | "shred" | "truncate" | "wipe" | "srm" => {
            operand_list.iter().any(|arg| is_data(arg))
        }
        "chmod" | "chown" | "chgrp" | "setfacl" | "chattr" => {
            recursive && operand_list.iter().skip(1).any(|arg| is_data(arg))
        }
        // Moving the home directory, or its credentials out of it (a backup beside the file
        // is everyday work).
        "mv" => {
            let target_outside = form
                .windows(2)
                .find(|pair| matches!(pair[0].text.as_str(), "-t" | "--target-directory"))
                .map(|pair| &pair[1])
                .or(operand_list.last().copied())
                .is_some_and(|target| {
                    !path(&crate::paths::home_spellings(&target.text)).starts_with('~')
                });
            operand_list.iter().any(|arg| {
                let target = home_of_someone(&path(&crate::paths::home_spellings(&arg.text)));
                // A top-level system directory moved away (`mv /etc /tmp/x`).
                let system_root = target.matches('/').count() == 1
                    && crate::paths::is_system_dir(target.trim_start_matches('/'));
                target == "~"
                    || system_root
                    || (target_outside && SECRETS.iter().any(|place| under(&target, place)))
            })
        }
        "rsync" => {
            let deletes = form
                .iter()
                .any(|arg| arg.text.starts_with("--delete") || arg.text == "--remove-source-files");
            // Into `/usr/local` or `/opt` as a whole, what else is installed there goes.
            let whole_prefix = operand_list.last().is_some_and(|target| {
                matches!(path(&target.text).as_str(), "/usr/local" | "/opt" | "/srv")
            });
            deletes
                && (whole_prefix
                    || operand_list
                        .iter()
                        .any(|arg| is_data(arg) || crate::paths::is_root_or_home(found, arg)))
        }
        "tar" | "bsdtar" => {
            form.iter().any(|arg| arg.text == "--remove-files")
                && operand_list.iter().any(|arg| is_data(arg))
        }
        // `7z a -sdel`: the sources deleted once archived.
        "7z" | "7za" | "7zz" => {
            form.iter().any(|arg| arg.text == "-sdel")
                && operand_list.iter().any(|arg| is_data(arg))
        }
        "zip" => {
            let moves = has(form, &["-m", "--move"])
                || form.iter().any(|arg| {
                    arg.text.starts_with('-')
                        && !arg.text.starts_with("--")
                        && arg.text.contains('m')
                });
            moves && operand_list.iter().any(|arg| is_data(arg))
        }
        "git" => {
            let cleans = form.iter().any(|arg| arg.text == "clean");
            let tree_value = |arg: &Arg| {
                arg.text
                    .strip_prefix("--work-tree=")
                    .or_else(|| arg.text.strip_prefix("--git-dir="))
                    .map(|value| Arg {
                        text: value.to_owned(),
                        ..arg.clone()
                    })
            };
            let in_home = form
                .iter()
                .filter_map(tree_value)
                .chain(
                    form.windows(2)
                        .filter(|pair| matches!(pair[0].text.as_str(), "-C" | "--work-tree"))
                        .map(|pair| pair[1].clone()),
                )
                .any(|tree| {
                    // Another repository in the home directory (`git -C ~/src/infra clean`).
                    let target = located(found, &tree);
                    place(found, &tree) == Place::UserData
                        || (target.starts_with("~/")
                            && !CACHES.iter().any(|cache| under(&target, cache)))
                });
            cleans && in_home
        }
        "find" => {
            let start: Vec<&Arg> = form
                .iter()
                .skip(1)
                .take_while(|arg| !arg.text.starts_with('-') && arg.text != "(" && arg.text != "!")
                .collect();
            let destroys = form.windows(2).any(|pair| {
                matches!(
                    pair[0].text.as_str(),
                    "-exec" | "-execdir" | "-ok" | "-okdir"
                ) && matches!(
                    basename(&pair[1].text),
                    "truncate"
                        | "shred"
                        | "chmod"
                        | "chown"
                        | "mv"
                        | "dd"
                        | "wipe"
                        | "unlink"
                        | "sed"
                        | "perl"
                )
            }) || (form.iter().any(|arg| arg.text == "-delete")
                && !form.iter().any(|arg| {
                    matches!(
                        arg.text.as_str(),
                        "-name"
                            | "-iname"
                            | "-path"
                            | "-ipath"
                            | "-regex"
                            | "-newer"
                            | "-mtime"
                            | "-mmin"
                            | "-size"
                            | "-empty"
                            | "-user"
                            | "-perm"
                    )
                }));
            // Any `-exec rm` counts inside a credential folder (`find ~/.aws -exec rm {} \;`).
            let removes = form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-exec" | "-execdir")
                    && basename(&pair[1].text) == "rm"
                    || (pair[0].text.ends_with("busybox") && pair[1].text == "rm")
            });
            let secret_start = start.iter().any(|arg| {
                let target = located(found, arg);
                SECRETS.iter().any(|place| under(&target, place)) || target == "~/.ssh"
            });
            (destroys
                && start
                    .iter()
                    .any(|arg| is_data(arg) || crate::paths::is_root_or_home(found, arg)))
                || (removes && secret_start)
        }
        "dd" => form
            .iter()
            .filter_map(|arg| arg.text.strip_prefix("of="))
            .any(|target| place(found, &Arg::literal(target)) == Place::UserData),
        "cp" | "install" => {
            let operand_list: Vec<&Arg> = form
                .iter()
                .skip(1)
                .enumerate()
                .filter(|(at, arg)| {
                    // An option's value (`install -m 600`) is not an operand.
                    let value = *at > 0
                        && matches!(
                            form[*at].text.as_str(),
                            "-m" | "--mode" | "-o" | "-g" | "--owner" | "--group"
                        );
                    !arg.text.starts_with('-') && !value
                })
                .map(|(_, arg)| arg)
                .collect();
            operand_list
                .first()
                .is_some_and(|source| source.text == "/dev/null")
                && operand_list
                    .last()
                    .is_some_and(|target| place(found, target) == Place::UserData)
        }
        _ => false,
    }
}

/// True if `form` empties (or replaces with nothing) a start-up or credential file: `: >
/// ~/.zshrc`, `tee ~/.bashrc < /dev/null`, `sed -i d ~/.bashrc`, `ln -sf /dev/null ~/.zshrc`,
/// `find … -fprint ~/.bashrc`.
fn empties_a_user_file(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let truncating_redirect = found
        .redirects
        .iter()
        .any(|redirect| matches!(redirect.op, ">" | ">|"));
    let empties = match &*name {
        ":" | "true" => truncating_redirect,
        "echo" => truncating_redirect && words == ["-n"],
        "tee" => {
            !has(form, &["-a", "--append"])
                && found
                    .redirects
                    .iter()
                    .any(|redirect| redirect.op == "<" && redirect.target.text == "/dev/null")
        }
        "sed" => words
            .iter()
            .any(|word| matches!(*word, "d" | "1,$d" | "1,$ d")),
        "ln" => words.contains(&"/dev/null"),
        "find" => words
            .iter()
            .any(|word| word.starts_with("-fprint") || *word == "-fls"),
        // `perl -i -ne ''`: every line read, none printed back.
        "perl" => words
            .windows(2)
            .any(|pair| pair[0].starts_with('-') && pair[0].ends_with("ne") && pair[1].is_empty()),
        "sort" => words.contains(&"-o") && words.contains(&"/dev/null"),
        _ => false,
    };
    empties
        && super::written_paths(found, form).iter().any(|target| {
            SECRETS
                .iter()
                .chain(STARTUP_FILES)
                .any(|place| under(target, place))
        })
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

/// True if `form` destroys the project's history: deletes or moves the `.git` directory or
/// its objects, deletes the refs of a shared branch, or expires the reflog (the only way
/// back to commits a reset dropped).
pub(crate) fn project_history(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    let git_dir = |text: &str| {
        let target = path(text);
        target == ".git"
            || target.ends_with("/.git")
            || ["objects", "refs", "packed-refs", "HEAD", "logs"]
                .iter()
                .any(|inner| {
                    target.starts_with(&format!(".git/{inner}"))
                        || target.contains(&format!("/.git/{inner}"))
                })
    };
    // The refs or objects overwritten in place (`: > .git/packed-refs`).
    if name != "git"
        && super::written_paths(found, form)
            .iter()
            .any(|target| git_dir(target) && target != ".git" && !target.ends_with("/.git"))
    {
        return true;
    }
    match &*name {
        "rm" | "rimraf" | "shred" | "mv" => operands(form).any(|arg| git_dir(&arg.text)),
        "find" => {
            let deletes = form.iter().any(|arg| arg.text == "-delete")
                || form.windows(2).any(|pair| {
                    pair[0].text.starts_with("-exec") && basename(&pair[1].text) == "rm"
                });
            deletes
                && form
                    .iter()
                    .any(|arg| arg.text.contains(".git/objects") || git_dir(&arg.text))
        }
        "git" => {
            let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
            let after = |sub: &str| {
                words
                    .iter()
                    .position(|word| *word == sub)
                    .map(|at| &words[at + 1..])
            };
            let expires = after("reflog").is_some_and(|rest| {
                rest.first() == Some(&"expire")
                    && rest.iter().any(|word| {
                        matches!(
                            *word,
                            "--expire=now"
                                | "--expire=all"
                                | "--expire-unreachable=now"
                                | "--expire-unreachable=all"
                        )
                    })
            });
            let deletes_ref = after("update-ref").is_some_and(|rest| {
                rest.first() == Some(&"-d")
                    && rest.get(1).is_some_and(|target| {
                        is_protected_branch(target.trim_start_matches("refs/heads/"))
                    })
                    // `--stdin` fed `delete` lines for every ref (`git for-each-ref
                    // --format='delete %(refname)' | git update-ref --stdin`).
                    || rest.contains(&"--stdin")
                        && found
                            .redirects
                            .iter()
                            .filter_map(|redirect| redirect.body.as_deref())
                            .any(|body| {
                                body.lines().any(|line| {
                                    line.trim_start().starts_with("delete ")
                                        && (line.contains("%(refname)") || line.contains("refs/heads/main") || line.contains("refs/heads/master"))
                                })
                            })
            });
            // The main branch, or every branch (`xargs git branch -D` fed `for-each-ref`).
            let deletes_branch = after("branch").is_some_and(|rest| {
                rest.iter()
                    .any(|word| matches!(*word, "-D" | "--delete" | "-d"))
                    && rest.iter().any(|word| {
                        matches!(*word, "main" | "master" | "trunk") || word.contains("%(refname")
                    })
            });
            // Every ref rewritten with the backups overwritten, or the history filtered by
            // `filter-repo` (which drops the reflogs and repacks).
            let rewrites_all = after("filter-branch").is_some_and(|rest| {
                (rest.contains(&"-f") || rest.contains(&"--force")) && rest.contains(&"--all")
            }) || after("filter-repo")
                .is_some_and(|rest| rest.contains(&"--force"));
            // The reflog told to forget at once: the next `gc` drops what only it kept.
            let forgets = words.contains(&"config")
                && words.windows(2).any(|pair| {
                    pair[0].to_ascii_lowercase().starts_with("gc.reflogexpire")
                        && matches!(pair[1], "now" | "0" | "all")
                });
            let empties_index = after("filter-branch").is_some_and(|rest| {
                rest.iter().any(|word| {
                    word.contains("git rm") && (word.contains(" .") || word.contains(" *"))
                })
            });
            expires || deletes_ref || deletes_branch || empties_index || rewrites_all || forgets
        }
        _ => {
            let _ = found;
            false
        }
    }
}
