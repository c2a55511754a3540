//! Deletions of the user's data: the home directory, a folder directly in it, a credential
//! or start-up file, or anything below a system directory, destroyed by whatever program.

use super::*;

/// System files the machine cannot run or reach the network without: deleting one alone
/// is harm enough.
const VITAL_SYSTEM_FILES: &[&str] = &[
    "/etc/resolv.conf",
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/fstab",
    "/etc/hosts",
    "/etc/sudoers",
    "/etc/nsswitch.conf",
    "/etc/ld.so.conf",
    "/etc/os-release",
    "/etc/machine-id",
];

/// Programs that destroy or take away the files handed to them by `find -exec`.
const FIND_DESTROYERS: &[&str] = &[
    "truncate", "shred", "chmod", "chown", "mv", "dd", "wipe", "unlink", "sed", "perl",
];

/// `find` tests that narrow what `-delete` reaches.
const FIND_NARROWING: &[&str] = &[
    "-name", "-iname", "-path", "-ipath", "-regex", "-newer", "-mtime", "-mmin", "-size", "-empty",
    "-user", "-perm",
];

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
            removes_user_data(found, &name, &operand_list, recursive)
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
        "sqlite3" => empties_user_database(found, form),
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
        "mv" => moves_user_data(form, &operand_list),
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
        "git" => cleans_user_tree(found, form),
        "find" => find_destroys_user_data(found, form),
        "dd" => form
            .iter()
            .filter_map(|arg| arg.text.strip_prefix("of="))
            .any(|target| place(found, &Arg::literal(target)) == Place::UserData),
        "cp" | "install" => copies_nothing_over_user_data(found, form),
        _ => false,
    }
}

/// True if a remover (`rm`, `trash`…) named `name` deletes the user's data: recursively,
/// or by another remover than `rm`, or a credential or start-up file; a system directory
/// recursively, or the kernels, boot files and vital system files one by one.
fn removes_user_data(found: &Found, name: &str, operand_list: &[&Arg], recursive: bool) -> bool {
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
                || VITAL_SYSTEM_FILES.contains(&target.as_str())
        }
        Place::Other => false,
    })
}

/// True for an SQL deletion run on a browser's or tool's own database.
fn empties_user_database(found: &Found, form: &[Arg]) -> bool {
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

/// True if `mv` moves the home directory or a top-level system directory away, or a
/// credential out of the home directory.
fn moves_user_data(form: &[Arg], operand_list: &[&Arg]) -> bool {
    let target_outside = form
        .windows(2)
        .find(|pair| matches!(pair[0].text.as_str(), "-t" | "--target-directory"))
        .map(|pair| &pair[1])
        .or(operand_list.last().copied())
        .is_some_and(|target| !path(&crate::paths::home_spellings(&target.text)).starts_with('~'));
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

/// True for `git clean` with its work tree (or git dir) in the home directory.
fn cleans_user_tree(found: &Found, form: &[Arg]) -> bool {
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
                || (target.starts_with("~/") && !CACHES.iter().any(|cache| under(&target, cache)))
        });
    cleans && in_home
}

/// True if `find` from the home directory, the root or a user folder runs a destroyer or
/// deletes with no test narrowing it, or runs `rm` from a credential folder.
fn find_destroys_user_data(found: &Found, form: &[Arg]) -> bool {
    let is_data = |arg: &Arg| place(found, arg) != Place::Other;
    let start: Vec<&Arg> = form
        .iter()
        .skip(1)
        .take_while(|arg| !arg.text.starts_with('-') && arg.text != "(" && arg.text != "!")
        .collect();
    let destroys = form.windows(2).any(|pair| {
        matches!(
            pair[0].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) && FIND_DESTROYERS.contains(&basename(&pair[1].text))
    }) || (form.iter().any(|arg| arg.text == "-delete")
        && !form
            .iter()
            .any(|arg| FIND_NARROWING.contains(&arg.text.as_str())));
    // Any `-exec rm` counts inside a credential folder (`find ~/.aws -exec rm {} \;`).
    let removes = form.windows(2).any(|pair| {
        matches!(pair[0].text.as_str(), "-exec" | "-execdir") && basename(&pair[1].text) == "rm"
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

/// True if `cp` or `install` copies `/dev/null` over the user's data.
fn copies_nothing_over_user_data(found: &Found, form: &[Arg]) -> bool {
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
