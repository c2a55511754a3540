//! Cloud accounts and other hosts: infrastructure destroyed, buckets, objects and
//! resources deleted, a `DELETE` sent to a remote URL, another machine's files or
//! container engine wiped.

use super::*;

/// True if `words` (after the program `name`) destroy infrastructure or storage through a
/// cloud provider's own tool.
pub(super) fn destroys(name: &str, words: &[&str]) -> bool {
    let has_word = |word: &str| words.contains(&word);
    match name {
        "terraform" | "tofu" | "terragrunt" => {
            has_word("destroy")
                || (has_word("apply") && (has_word("-destroy") || has_word("--destroy")))
        }
        "pulumi" => has_word("destroy") || (has_word("stack") && has_word("rm")),
        "aws" => {
            (has_word("s3") && (has_word("rb") || (has_word("rm") && has_word("--recursive"))))
                || (has_word("s3")
                    && has_word("sync")
                    && has_word("--delete")
                    && words
                        .iter()
                        .rev()
                        .find(|word| !word.starts_with('-'))
                        .is_some_and(|target| target.starts_with("s3://")))
                || words.iter().any(|word| {
                    word.starts_with("delete-")
                        || word.starts_with("terminate-")
                        || *word == "deregister-image"
                        || *word == "schedule-key-deletion"
                })
        }
        "gsutil" => {
            has_word("rb")
                || (has_word("rm")
                    && (has_word("-r")
                        || has_word("-rf")
                        || words
                            .iter()
                            .any(|w| w.ends_with("/**") || w.ends_with("/*"))))
        }
        // `gcloud storage rm --recursive gs://…`, `az storage blob delete-batch`.
        "gcloud" | "az" | "doctl" | "linode-cli" | "hcloud" | "scw" => {
            words
                .iter()
                .any(|word| matches!(*word, "delete" | "destroy" | "purge" | "delete-batch"))
                || (has_word("storage")
                    && has_word("rm")
                    && words
                        .iter()
                        .any(|word| matches!(*word, "-r" | "--recursive") || word.ends_with("/**")))
        }
        "heroku" => words.iter().any(|word| {
            matches!(
                *word,
                "apps:destroy" | "pg:reset" | "destroy" | "apps:delete"
            )
        }),
        "fly" | "flyctl" => {
            words.iter().any(|word| matches!(*word, "destroy"))
                || (has_word("apps") && has_word("destroy"))
        }
        "vercel" => has_word("remove") || has_word("rm"),
        "netlify" => has_word("sites:delete"),
        "firebase" => words
            .iter()
            .any(|word| word.ends_with(":delete") || *word == "firestore:delete"),
        "s3cmd" => {
            has_word("rb") || (has_word("del") && (has_word("-r") || has_word("--recursive")))
        }
        "rclone" => {
            words.iter().any(|word| matches!(*word, "purge" | "delete"))
                || (has_word("sync") && words.last().is_some_and(|last| last.contains(':')))
        }
        _ => false,
    }
}

/// True if `form` deletes on another machine through a general tool: an HTTP `DELETE` to
/// a remote URL, `rsync --delete` into its system folders, a prune of its container engine.
pub(super) fn destroys_on_host(name: &str, form: &[Arg], words: &[&str]) -> bool {
    let has_word = |word: &str| words.contains(&word);
    match name {
        "curl" | "http" | "https" | "xh" => {
            let deletes = form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-X" | "--request")
                    && pair[1].text.eq_ignore_ascii_case("delete")
            }) || words
                .iter()
                .any(|word| word.eq_ignore_ascii_case("-XDELETE") || *word == "DELETE");
            deletes && sends_to_remote(form)
        }
        // `--delete` into another machine's root or system folders.
        "rsync" => {
            form.iter().any(|arg| arg.text.starts_with("--delete"))
                && form
                    .iter()
                    .skip(1)
                    .rev()
                    .find(|arg| !arg.text.starts_with('-'))
                    .is_some_and(|target| {
                        target.text.split_once(':').is_some_and(|(host, place)| {
                            !host.is_empty()
                                && !host.contains('/')
                                && (place.is_empty()
                                    || place == "/"
                                    || crate::paths::is_system_dir(
                                        place.trim_matches('/').split('/').next().unwrap_or(""),
                                    ))
                        })
                    })
        }
        // Pruned on another machine's engine (`docker -H ssh://prod system prune -af`).
        "docker" | "podman" => {
            has_word("prune")
                && (has_word("-a") || has_word("-af") || has_word("--all") || has_word("--volumes"))
                && form.iter().enumerate().any(|(at, arg)| {
                    let host = match arg.text.as_str() {
                        "-H" | "--host" => form.get(at + 1).map(|next| next.text.as_str()),
                        text => text.strip_prefix("--host="),
                    };
                    host.is_some_and(|host| {
                        let name = host.split("://").last().unwrap_or("");
                        let name = name.rsplit('@').next().unwrap_or(name);
                        !host.starts_with("unix://")
                            && !is_loopback(name.split([':', '/']).next().unwrap_or(""))
                    })
                })
        }
        _ => false,
    }
}
