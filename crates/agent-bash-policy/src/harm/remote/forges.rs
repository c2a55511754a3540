//! Source hosts and package registries: a shared branch force-pushed or deleted, a
//! repository, release, key or secret deleted, a package unpublished.

use super::*;

/// True if `words` (after the program `name`) destroy something on a source host or a
/// package registry.
pub(super) fn destroys(name: &str, words: &[&str]) -> bool {
    let has_word = |word: &str| words.contains(&word);
    match name {
        "git" => git_push_destroys(words),
        "gh" if words.first() == Some(&"api")
            && words.iter().any(|word| {
                word.split("refs/heads/")
                    .nth(1)
                    .is_some_and(is_protected_branch)
            })
            && words
                .iter()
                .any(|word| word.eq_ignore_ascii_case("delete") || *word == "force=true") =>
        {
            true
        }
        "gh" => {
            (words.first() == Some(&"repo")
                && words
                    .get(1)
                    .is_some_and(|sub| matches!(*sub, "delete" | "archive")))
                // A private repository made public; an account's keys deleted.
                || (words.first() == Some(&"repo")
                    && words.get(1) == Some(&"edit")
                    && words.windows(2).any(|pair| pair == ["--visibility", "public"])
                        | words.contains(&"--visibility=public"))
                || (matches!(words.first(), Some(&"ssh-key") | Some(&"gpg-key"))
                    && words.get(1) == Some(&"delete"))
                || (words.first() == Some(&"release") && words.get(1) == Some(&"delete"))
                || (words.first() == Some(&"api")
                    && words.iter().any(|word| {
                        word.eq_ignore_ascii_case("delete")
                            || word.eq_ignore_ascii_case("-XDELETE")
                            || word.eq_ignore_ascii_case("--method=DELETE")
                    }))
                || (words.first() == Some(&"secret") && words.get(1) == Some(&"delete"))
                // A repository deleted through the GraphQL API.
                || (has_word("graphql")
                    && words.iter().any(|word| {
                        word.contains("deleteRepository") || word.contains("deleteRef")
                    }))
        }
        "glab" => has_word("repo") && has_word("delete"),
        "npm" | "pnpm" | "yarn" => has_word("unpublish"),
        _ => false,
    }
}

/// `git push` that rewrites or deletes a shared branch, or everything: `--force`/`-f`/`+ref`
/// to a protected branch, `--mirror`, `--delete`/`:ref` of one, `--force --all`.
fn git_push_destroys(words: &[&str]) -> bool {
    let Some(at) = words.iter().position(|word| *word == "push") else {
        return false;
    };
    let rest = &words[at + 1..];
    // A lease only checks that nobody pushed meanwhile: the shared branch is still rewritten.
    let forced = rest.iter().any(|word| {
        matches!(*word, "--force" | "-f")
            || word.starts_with("--force-with-lease")
            || word.starts_with("--force-if-includes")
            || (word.starts_with('-') && !word.starts_with("--") && word.contains('f'))
    });
    let deletes = rest.iter().any(|word| matches!(*word, "--delete" | "-d"));
    // Every branch or tag, as fed by `git tag -l | xargs git push origin --delete`.
    if (deletes && rest.iter().any(|word| word.contains("%(refname")))
        || rest.iter().any(|word| word.starts_with(":%(refname"))
    {
        return true;
    }
    if rest
        .iter()
        .any(|word| *word == "--mirror" || word.starts_with("--prune"))
    {
        return true;
    }
    let refs: Vec<&str> = rest
        .iter()
        .filter(|word| !word.starts_with('-'))
        .skip(1)
        .copied()
        .collect();
    if (forced || deletes)
        && rest
            .iter()
            .any(|word| *word == "--all" || *word == "--tags")
    {
        return forced || deletes;
    }
    refs.iter().any(|spec| {
        let (source, destination) = spec.split_once(':').unwrap_or(("", spec));
        let plus = spec.starts_with('+');
        let target = if destination.is_empty() {
            source
        } else {
            destination
        };
        let deleting = spec.starts_with(':') || deletes;
        (forced || plus || deleting) && is_protected_branch(target)
    })
}
