//! The project's history: the `.git` directory or its objects deleted or overwritten, a
//! shared branch's refs deleted, the reflog expired, every ref rewritten.

use super::*;

/// The parts of a `.git` directory whose loss loses history.
const GIT_DIR_PARTS: &[&str] = &["objects", "refs", "packed-refs", "HEAD", "logs"];

/// True if `text` is a `.git` directory or a part of one that holds history.
fn is_git_dir(text: &str) -> bool {
    let target = path(text);
    target == ".git"
        || target.ends_with("/.git")
        || GIT_DIR_PARTS.iter().any(|inner| {
            target.starts_with(&format!(".git/{inner}"))
                || target.contains(&format!("/.git/{inner}"))
        })
}

/// True if `form` destroys the project's history: deletes or moves the `.git` directory or
/// its objects, deletes the refs of a shared branch, or expires the reflog (the only way
/// back to commits a reset dropped).
pub(crate) fn project_history(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    // The refs or objects overwritten in place (`: > .git/packed-refs`).
    if name != "git"
        && super::written_paths(found, form)
            .iter()
            .any(|target| is_git_dir(target) && target != ".git" && !target.ends_with("/.git"))
    {
        return true;
    }
    match &*name {
        "rm" | "rimraf" | "shred" | "mv" => operands(form).any(|arg| is_git_dir(&arg.text)),
        "find" => {
            let deletes = form.iter().any(|arg| arg.text == "-delete")
                || form.windows(2).any(|pair| {
                    pair[0].text.starts_with("-exec") && basename(&pair[1].text) == "rm"
                });
            deletes
                && form
                    .iter()
                    .any(|arg| arg.text.contains(".git/objects") || is_git_dir(&arg.text))
        }
        "git" => git_destroys_history(found, form),
        _ => false,
    }
}

/// True if a `git` command destroys history: the reflog expired or told to forget, a
/// shared branch's ref or every ref deleted, every ref rewritten or the index emptied.
fn git_destroys_history(found: &Found, form: &[Arg]) -> bool {
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
    let deletes_ref = after("update-ref").is_some_and(|rest| deletes_shared_ref(found, rest));
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
    }) || after("filter-repo").is_some_and(|rest| rest.contains(&"--force"));
    // The reflog told to forget at once: the next `gc` drops what only it kept.
    let forgets = words.contains(&"config")
        && words.windows(2).any(|pair| {
            pair[0].to_ascii_lowercase().starts_with("gc.reflogexpire")
                && matches!(pair[1], "now" | "0" | "all")
        });
    let empties_index = after("filter-branch").is_some_and(|rest| {
        rest.iter()
            .any(|word| word.contains("git rm") && (word.contains(" .") || word.contains(" *")))
    });
    expires || deletes_ref || deletes_branch || empties_index || rewrites_all || forgets
}

/// True if `git update-ref` arguments `rest` delete a protected branch, or every ref.
fn deletes_shared_ref(found: &Found, rest: &[&str]) -> bool {
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
}
