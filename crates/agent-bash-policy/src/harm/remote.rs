//! Other systems and the system's own packages: forced pushes and deletions of shared
//! branches, cloud, cluster and database deletions, essential packages removed.

use super::*;

/// Packages the system cannot run without.
const ESSENTIAL_PACKAGES: &[&str] = &[
    "libc6",
    "libc-bin",
    "glibc",
    "glibc-common",
    "musl",
    "bash",
    "dash",
    "coreutils",
    "dpkg",
    "apt",
    "rpm",
    "yum",
    "dnf",
    "pacman",
    "systemd",
    "systemd-sysv",
    "init",
    "login",
    "passwd",
    "util-linux",
    "base-files",
    "base-passwd",
    "debianutils",
    "sed",
    "grep",
    "tar",
    "gzip",
    "findutils",
    "diffutils",
    "perl-base",
    "libpam-modules",
    "libpam-runtime",
    "sudo",
    "linux-image-generic",
    "kernel",
    "kernel-core",
    "grub-pc",
    "grub2",
    "grub-efi-amd64",
    "e2fsprogs",
    "mount",
    "ncurses-base",
    "zlib1g",
    "libselinux1",
    "libstdc++6",
    "libgcc-s1",
    "apk-tools",
    "busybox",
    "filesystem",
    "shadow",
    "shadow-utils",
    "openssl",
    "ca-certificates",
];

/// True if `form` removes a package the system needs, or removes one with the package
/// manager's safety checks forced off.
pub(crate) fn system_packages(_: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    if !matches!(
        &*name,
        "apt"
            | "apt-get"
            | "aptitude"
            | "yum"
            | "dnf"
            | "zypper"
            | "microdnf"
            | "dpkg"
            | "rpm"
            | "pacman"
            | "apk"
    ) {
        return false;
    }
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let removes = match &*name {
        "apt" | "apt-get" | "aptitude" | "yum" | "dnf" | "zypper" | "microdnf" => {
            words.iter().any(|word| {
                matches!(
                    *word,
                    "remove" | "purge" | "autoremove" | "erase" | "rm" | "-R"
                )
            })
        }
        "dpkg" => words.iter().any(|word| {
            matches!(*word, "-r" | "-P" | "--remove" | "--purge") || word.starts_with("--force-")
        }),
        "rpm" => words
            .iter()
            .any(|word| *word == "-e" || *word == "--erase" || word.starts_with("-e")),
        "pacman" => words
            .iter()
            .any(|word| word.starts_with("-R") || *word == "--remove"),
        "apk" => words.iter().any(|word| matches!(*word, "del" | "delete")),
        "snap" | "flatpak" | "brew" | "port" | "nix-env" => false,
        _ => false,
    };
    if !removes {
        return false;
    }
    let forced = words.iter().any(|word| {
        word.starts_with("--force-all")
            || word.starts_with("--force-remove-essential")
            || word.starts_with("--force-depends")
            || *word == "--allow-remove-essential"
            || *word == "--nodeps"
            || (name == "pacman" && word.starts_with("-R") && word.matches('d').count() >= 2)
    });
    forced
        || words.iter().any(|word| {
            let package = word
                .split([':', '='])
                .next()
                .unwrap_or(word)
                .trim_end_matches('*');
            ESSENTIAL_PACKAGES.contains(&package)
                || package.starts_with("linux-image")
                || package.starts_with("libc6")
                || package.starts_with("python3") && package.len() <= 10 && name != "pip"
        })
}

/// Branch names that a forced push or a deletion must not rewrite.
pub(super) fn is_protected_branch(name: &str) -> bool {
    let name = name
        .trim_start_matches('+')
        .trim_start_matches("refs/heads/");
    matches!(
        name,
        "main" | "master" | "trunk" | "develop" | "production" | "prod" | "stable" | "HEAD"
    ) || name.starts_with("release")
}

/// True if `kubectl exec … -- CMD` runs a recursive delete of an absolute path in the
/// container, directly or in a `sh -c` text: the data of a running service.
fn exec_deletes(words: &[&str]) -> bool {
    let Some(at) = words.iter().position(|word| *word == "--") else {
        return false;
    };
    if !words[..at].contains(&"exec") {
        return false;
    }
    let command: Vec<&str> = words[at + 1..]
        .iter()
        .flat_map(|word| word.split_whitespace())
        .collect();
    command.windows(2).enumerate().any(|(start, pair)| {
        pair[0] == "rm"
            && command[start + 1..]
                .iter()
                .take_while(|word| !matches!(**word, ";" | "&&" | "||" | "|"))
                .any(|word| {
                    word.starts_with('-') && !word.starts_with("--") && word.contains(['r', 'R'])
                        || *word == "--recursive"
                })
            && command[start + 1..]
                .iter()
                .take_while(|word| !matches!(**word, ";" | "&&" | "||" | "|"))
                .any(|word| word.trim_matches(['"', '\'']).starts_with('/'))
    })
}

/// True if `form` destroys something on a remote system through credentials this machine
/// holds: a forced push, deletion or mirror of a shared branch, `terraform destroy`, a
/// repository, release, cloud resource, bucket or database deleted.
pub(crate) fn remote_destroy(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    const NAMES: &[&str] = &[
        "git",
        "terraform",
        "tofu",
        "terragrunt",
        "pulumi",
        "gh",
        "helm",
        "supabase",
        "rsync",
        "docker",
        "podman",
        "rails",
        "rake",
        "python",
        "python3",
        "mix",
        "php",
        "bundle",
        "kubectl",
        "oc",
        "aws",
        "gsutil",
        "gcloud",
        "az",
        "doctl",
        "linode-cli",
        "hcloud",
        "scw",
        "heroku",
        "fly",
        "flyctl",
        "vercel",
        "netlify",
        "glab",
        "etcdctl",
        "consul",
        "curl",
        "http",
        "https",
        "xh",
        "firebase",
        "dropdb",
        "dropuser",
        "vault",
        "psql",
        "mysql",
        "mariadb",
        "sqlcmd",
        "cockroach",
        "clickhouse-client",
        "mongo",
        "mongosh",
        "redis-cli",
        "valkey-cli",
        "keydb-cli",
        "npm",
        "pnpm",
        "yarn",
        "s3cmd",
        "rclone",
    ];
    if !NAMES.contains(&&*name) {
        return false;
    }
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let has_word = |word: &str| words.contains(&word);
    match &*name {
        "git" => git_push_destroys(&words),
        "terraform" | "tofu" | "terragrunt" => {
            has_word("destroy")
                || (has_word("apply") && (has_word("-destroy") || has_word("--destroy")))
        }
        "pulumi" => has_word("destroy") || (has_word("stack") && has_word("rm")),
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
        // A release removed from a production namespace or context, or from the cluster's
        // own components.
        "helm"
            if words
                .iter()
                .any(|word| matches!(*word, "uninstall" | "delete" | "del" | "un"))
                && form.windows(2).any(|pair| {
                    matches!(
                        pair[0].text.as_str(),
                        "--kube-context" | "-n" | "--namespace"
                    ) && ["prod", "production", "kube-system"]
                        .iter()
                        .any(|name| pair[1].text.contains(name))
                }) =>
        {
            true
        }
        "kubectl" | "oc"
            if (has_word("delete") || exec_deletes(&words))
                && form.windows(2).any(|pair| {
                    matches!(
                        pair[0].text.as_str(),
                        "--context" | "-n" | "--namespace" | "--cluster"
                    ) && ["prod", "production", "kube-system"]
                        .iter()
                        .any(|name| pair[1].text.contains(name))
                }) =>
        {
            true
        }
        "kubectl" | "oc" => {
            let deletes = has_word("delete");
            deletes
                && words.iter().any(|word| {
                    matches!(
                        *word,
                        "namespace"
                            | "namespaces"
                            | "ns"
                            | "--all"
                            | "-A"
                            | "--all-namespaces"
                            | "node"
                            | "nodes"
                            | "pv"
                            | "crd"
                            | "crds"
                            | "customresourcedefinition"
                            | "clusterrole"
                            | "clusterrolebinding"
                    ) || word.starts_with("namespace/")
                        || word.starts_with("ns/")
                        || word.starts_with("node/")
                })
        }
        "helm" => has_word("uninstall") && has_word("--all"),
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
        "glab" => has_word("repo") && has_word("delete"),

        "etcdctl" => has_word("del") && (has_word("--prefix") || has_word("--from-key")),
        "consul" => {
            has_word("kv")
                && has_word("delete")
                && words.iter().any(|word| word.starts_with("-recurse"))
        }
        "curl" | "http" | "https" | "xh" => {
            let deletes = form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-X" | "--request")
                    && pair[1].text.eq_ignore_ascii_case("delete")
            }) || words
                .iter()
                .any(|word| word.eq_ignore_ascii_case("-XDELETE") || *word == "DELETE");
            deletes && sends_to_remote(form)
        }
        "firebase" => words
            .iter()
            .any(|word| word.ends_with(":delete") || *word == "firestore:delete"),
        // Dropping a database on another host (a local test database is everyday work); a
        // command run over ssh is on another host.
        "dropdb" | "dropuser" if found.via.iter().any(|via| via == "ssh") => true,
        "dropdb" | "dropuser" => {
            form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-h" | "--host") && !is_loopback(&pair[1].text)
            }) || form.iter().any(|arg| {
                arg.text
                    .strip_prefix("--host=")
                    .is_some_and(|host| !is_loopback(host))
            })
        }
        // A framework's database dropped or emptied in production.
        "rails" | "rake" | "python" | "python3" | "mix" | "php" | "npx" | "bundle" => {
            let production = words.iter().any(|word| {
                let lower = word.to_ascii_lowercase();
                (lower.contains("env=prod") || lower.contains("settings") || lower.contains("env="))
                    && lower.contains("prod")
            });
            let drops = words.iter().any(|word| {
                matches!(
                    *word,
                    "db:drop"
                        | "db:reset"
                        | "db:purge"
                        | "db:schema:load"
                        | "flush"
                        | "reset_db"
                        | "ecto.drop"
                        | "ecto.reset"
                        | "migrate:fresh"
                        | "db:wipe"
                        | "migrate:reset"
                )
            });
            production && drops
        }
        "supabase" => has_word("reset") && has_word("--linked"),
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
        "vault" => {
            has_word("delete")
                || has_word("destroy")
                || (has_word("secrets") && has_word("disable"))
        }
        // The SQL on the command line, or fed on input (`echo 'DROP …' | psql`).
        // A database on another host, or named by a variable (a local development database
        // is everyday work to reset).
        "psql" | "mysql" | "mariadb" | "sqlcmd" | "cockroach" | "clickhouse-client" => {
            (words.iter().any(|word| is_destructive_sql(word))
                || found
                    .redirects
                    .iter()
                    .filter_map(|redirect| redirect.body.as_deref())
                    .any(is_destructive_sql))
                && !local_database(form)
        }
        "mongo" | "mongosh" => {
            words
                .iter()
                .any(|word| word.contains("dropDatabase") || word.contains(".drop()"))
                && !local_database(form)
        }
        // Flushing a local development server is everyday work; a named remote one is not.
        "redis-cli" | "valkey-cli" | "keydb-cli" => {
            words.iter().any(|word| {
                word.eq_ignore_ascii_case("flushall") || word.eq_ignore_ascii_case("flushdb")
            }) && form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-h" | "-u")
                    && !is_loopback(
                        pair[1]
                            .text
                            .split("://")
                            .last()
                            .unwrap_or("")
                            .split([':', '@', '/'])
                            .next()
                            .unwrap_or(""),
                    )
            })
        }
        "npm" | "pnpm" | "yarn" => has_word("unpublish"),
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

fn is_destructive_sql(text: &str) -> bool {
    let upper = text.to_ascii_uppercase();
    let upper: String = upper.split_whitespace().collect::<Vec<_>>().join(" ");
    [
        "DROP DATABASE",
        "DROP SCHEMA",
        "DROP TABLE",
        "TRUNCATE",
        "DROP USER",
        "DELETE FROM",
    ]
    .iter()
    .any(|statement| {
        upper.contains(statement) && !(*statement == "DELETE FROM" && upper.contains(" WHERE "))
    })
}

/// True if a database client's target is this machine: a loopback host or socket given,
/// or none at all (the local default). A URI or host known only at run time is not.
fn local_database(form: &[Arg]) -> bool {
    let mut target = None;
    for (at, arg) in form.iter().enumerate().skip(1) {
        let text = arg.text.as_str();
        let value = match text {
            "-h" | "--host" | "-S" | "--server" => form.get(at + 1),
            _ if text.starts_with("--host=") => Some(arg),
            _ if text.contains("://") || text.starts_with("host=") || text.starts_with('$') => {
                Some(arg)
            }
            _ => None,
        };
        if let Some(value) = value {
            target = Some(value);
        }
    }
    let Some(target) = target else {
        return true;
    };
    if !target.literal {
        return false;
    }
    let text = target
        .text
        .trim_start_matches("--host=")
        .trim_start_matches("host=");
    let host = text
        .split("://")
        .last()
        .unwrap_or("")
        .rsplit('@')
        .next()
        .unwrap_or("")
        .split([':', '/', ' ', '?'])
        .next()
        .unwrap_or("");
    host.is_empty() || is_loopback(host) || text.starts_with('/')
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

/// A reason to ask for a forced push whose branch is the current one (`git push -f`), or
/// a remote action that removes data but can be undone or is local (`helm uninstall`,
/// `docker system prune -a --volumes`, `kubectl delete` of a workload).
pub(crate) fn remote_ask(found: &Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let name = name(form);
        if !matches!(&*name, "git" | "helm" | "docker" | "podman" | "cargo" | "terraform" | "tofu" | "supabase") {
            return None;
        }
        let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
        let reason = match &*name {
            "git" => {
                let at = words.iter().position(|word| *word == "push")?;
                let rest = &words[at + 1..];
                let forced = rest.iter().any(|word| matches!(*word, "--force" | "-f"));
                let refs = rest.iter().filter(|word| !word.starts_with('-')).count();
                (forced && refs < 2).then_some("a forced push of the current branch rewrites whatever branch is checked out, shared or not")?
            }
            "helm" if words.contains(&"uninstall") || words.contains(&"delete") => "this removes a release from a cluster",
            "docker" | "podman" if words.contains(&"prune") && (words.contains(&"--volumes") || words.contains(&"-a") || words.contains(&"-af")) => {
                "this deletes containers, images and volumes that other work may need"
            }
            "docker" | "podman" if words.contains(&"volume") && words.iter().any(|word| matches!(*word, "rm" | "prune")) => {
                "this deletes container volumes and their data"
            }
            "cargo" if words.contains(&"yank") => "this yanks a published crate version",
            "terraform" | "tofu" if words.contains(&"apply") && words.iter().any(|word| word.starts_with("-auto-approve")) => {
                "this applies infrastructure changes with no plan shown to anyone"
            }
            "supabase" if words.contains(&"reset") && words.contains(&"--linked") => {
                "this resets the linked (remote) project's database"
            }
            _ => return None,
        };
        Some(reason.to_owned())
    })
}

/// True if some URL or host among the words of `form` is another machine.
fn sends_to_remote(form: &[Arg]) -> bool {
    form.iter()
        .skip(1)
        .filter(|arg| arg.text.contains("://"))
        .any(|arg| {
            let host = arg
                .text
                .split_once("://")
                .map_or("", |(_, rest)| rest)
                .split(['/', ':', '@'])
                .next()
                .unwrap_or("");
            !is_loopback(host)
        })
}
