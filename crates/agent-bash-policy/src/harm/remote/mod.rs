//! Other systems and the system's own packages: forced pushes and deletions of shared
//! branches, cloud, cluster and database deletions, essential packages removed.
//! One family of tools per file; this one names the tools and asks each family in turn.

use super::*;

mod cloud;
mod clusters;
mod databases;
mod forges;
mod packages;

pub(crate) use packages::system_packages;

/// The programs whose remote deletions [`remote_destroy`] judges.
const REMOTE_TOOLS: &[&str] = &[
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

/// True if `form` destroys something on a remote system through credentials this machine
/// holds: a forced push, deletion or mirror of a shared branch, `terraform destroy`, a
/// repository, release, cloud resource, bucket or database deleted.
pub(crate) fn remote_destroy(found: &Found, form: &[Arg]) -> bool {
    let name = name(form);
    if !REMOTE_TOOLS.contains(&&*name) {
        return false;
    }
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    // Each tool belongs to one family, whose judgement is the answer.
    forges::destroys(&name, &words)
        || clusters::destroys(&name, form, &words)
        || cloud::destroys(&name, &words)
        || cloud::destroys_on_host(&name, form, &words)
        || databases::destroys(&name, found, form, &words)
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
