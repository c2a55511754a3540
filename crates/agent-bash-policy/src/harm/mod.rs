//! Families of harm beyond deletion: disks and firmware, the kernel, privilege and
//! persistence, the system's own packages, irreversible actions on remote systems, reverse
//! shells and secrets sent out. Each is a table of programs and places, read through every
//! wrapper (the built-in rules in `builtin.rs` list them by name), and the `*_ask`/`*unseen` functions name what is
//! harmful only sometimes, so a person decides. Pure: looks at words, runs nothing.

use crate::commands::{self, basename};
use crate::words::{Arg, Found, Stdin};

mod files;
mod lasting;
mod machine;
mod network;
mod remote;

pub(crate) use files::{
    climbs_out, deletes_working_directory, lists_home, project_history, user_files,
};
pub(crate) use lasting::{persistence, privilege, startup_write_unseen, written_paths};
pub(crate) use machine::{
    cuts_off, disk_write, firmware, kernel, kill_many, power, unusual_module,
};
pub(crate) use network::{
    evaluates_code, fetches_in_code, raw_network, reads_secret, reverse_shell, sends,
    sends_only_to, token_service,
};
pub(crate) use remote::{remote_ask, remote_destroy, system_packages};

fn name(form: &[Arg]) -> std::borrow::Cow<'_, str> {
    commands::program_name(form).unwrap_or_default()
}

/// The words after the program that do not start with `-`.
fn operands(form: &[Arg]) -> impl Iterator<Item = &Arg> {
    form.iter().skip(1).filter(|arg| !arg.text.starts_with('-'))
}

fn has(form: &[Arg], options: &[&str]) -> bool {
    form.iter().skip(1).any(|arg| {
        options.iter().any(|option| {
            arg.text == *option
                || (option.starts_with("--")
                    && arg
                        .text
                        .strip_prefix(option)
                        .is_some_and(|rest| rest.starts_with('=')))
                || (option.len() == 2
                    && !option.starts_with("--")
                    && arg.text.starts_with('-')
                    && !arg.text.starts_with("--")
                    && arg.text[1..].contains(&option[1..]))
        })
    })
}

/// A path as the rules compare it: `~`, `$HOME` and `${HOME}` read as `~`, `/proc/self/root`
/// dropped, `.` and `..` applied.
pub(crate) fn path(text: &str) -> String {
    let text = text
        .strip_prefix("$HOME")
        .or_else(|| text.strip_prefix("${HOME}"))
        .map_or_else(|| text.to_owned(), |rest| format!("~{rest}"));
    let (base, rest) = match text.strip_prefix('~') {
        Some(rest) => ("~", rest.to_owned()),
        None => ("", text.clone()),
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    if base.is_empty() && rest.starts_with('/') {
        // `/proc/self/root/etc` is `/etc`.
        if let ["proc", _, "root", tail @ ..] = parts.as_slice() {
            parts = tail.to_vec();
        }
        return format!("/{}", parts.join("/"));
    }
    if base == "~" {
        return if parts.is_empty() {
            "~".to_owned()
        } else {
            format!("~/{}", parts.join("/"))
        };
    }
    parts.join("/")
}

/// True if `path` (as [`path`] gives it) is `place` or inside it; a trailing `*` in `place`
/// matches any rest of that component.
fn under(path: &str, place: &str) -> bool {
    if let Some(prefix) = place.strip_suffix('*') {
        return path.starts_with(prefix);
    }
    path == place
        || path
            .strip_prefix(place)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// `/home/NAME/…`, `/root/…` and `/Users/NAME/…` read as `~/…`.
fn home_of_someone(target: &str) -> String {
    let parts: Vec<&str> = target.trim_start_matches('/').split('/').collect();
    let rest = match parts.as_slice() {
        ["home" | "Users", name, rest @ ..] if !name.is_empty() && !name.contains('*') => rest,
        ["root", rest @ ..] if target.starts_with('/') => rest,
        _ => return target.to_owned(),
    };
    if rest.is_empty() {
        "~".to_owned()
    } else {
        format!("~/{}", rest.join("/"))
    }
}

/// True for a host that is this machine.
pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host.starts_with("127.")
        || host == "::1"
        || host == "0.0.0.0"
        || host.ends_with(".localhost")
}

/// The host of a `/dev/tcp/HOST/PORT` or `/dev/udp/HOST/PORT` path.
pub(crate) fn dev_net_host(text: &str) -> Option<&str> {
    let rest = text
        .strip_prefix("/dev/tcp/")
        .or_else(|| text.strip_prefix("/dev/udp/"))?;
    rest.split('/').next()
}

/// Files and directories that hold credentials (`~`-relative, or absolute).
const SECRETS: &[&str] = &[
    "~/.ssh/id_*",
    // Where containers and build steps are handed their secrets (Docker, Kubernetes).
    "/run/secrets",
    "/var/run/secrets",
    "~/.ssh/identity",
    "~/.aws",
    "~/.netrc",
    "~/.git-credentials",
    "~/.kube",
    "~/.docker/config.json",
    "~/.config/gh",
    "~/.npmrc",
    "~/.pypirc",
    "~/.gnupg",
    "~/.password-store",
    "~/.config/gcloud",
    "~/.azure",
    "~/.terraform.d",
    "~/.cargo/credentials*",
    "~/.vault-token",
    "~/.pgpass",
    "~/.my.cnf",
    "~/.local/share/keyrings",
    "~/.config/hub",
    "~/.gem/credentials",
    "~/.m2/settings.xml",
    "~/.config/rclone",
    "~/.s3cfg",
    "~/.boto",
    "~/.oci",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.mozilla",
    "~/.config/google-chrome",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/ssh/ssh_host_*",
    "/root/.ssh",
    "/proc/self/environ",
    "/proc/1/environ",
    "~/.ssh",
    ".env",
    ".env.*",
];

/// The user's shell start-up files and the configuration of tools that run commands from it:
/// a write there runs at the next login or the next use of the tool.
const STARTUP_FILES: &[&str] = &[
    "~/.bashrc",
    "~/.bash_aliases",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.profile",
    "~/.zshrc",
    "~/.zprofile",
    "~/.zshenv",
    "~/.zlogin",
    "~/.zlogout",
    "~/.config/fish",
    "~/.xprofile",
    "~/.xinitrc",
    "~/.xsession",
    "~/.gitconfig",
    "~/.config/git",
    "~/.ssh/config",
    "~/.inputrc",
    "~/.npmrc",
    "~/.yarnrc",
    "~/.cshrc",
    "~/.tcshrc",
    "~/.kshrc",
    "~/.mkshrc",
    "~/.config/nvim",
    "~/.vimrc",
    "~/.emacs",
    "~/.config/direnv",
    "~/.envrc",
];

/// True for the name of a variable that holds a secret (`AWS_SECRET_ACCESS_KEY`,
/// `GITHUB_TOKEN`, `DB_PASSWORD`).
fn is_secret_name(text: &str) -> bool {
    let name: String = text
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let upper = name.to_ascii_uppercase();
    name.len() > 3
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && [
            "SECRET",
            "TOKEN",
            "PASSWORD",
            "PASSWD",
            "API_KEY",
            "ACCESS_KEY",
            "PRIVATE_KEY",
            "CREDENTIAL",
        ]
        .iter()
        .any(|word| upper.contains(word))
}
