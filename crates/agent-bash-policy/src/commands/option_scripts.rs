//! Scripts hidden in option values and variables that a program runs with the shell:
//! `ssh -o ProxyCommand=…`, `rsync -e`, `git -c core.sshCommand=…`, `GIT_SSH_COMMAND`,
//! `PAGER`, alias values.

use super::launchers::Launch;
use super::{is_assignment, program};
use crate::words::Arg;

/// Environment variables whose value a program runs as a shell command
/// (`GIT_SSH_COMMAND='…' git fetch`).
pub(crate) const COMMAND_VARIABLES: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_EXTERNAL_DIFF",
    "GIT_PROXY_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "LESSOPEN",
    "LESSCLOSE",
    "BROWSER",
];

/// True if a program runs the value of variable `name` as a shell command: the table above,
/// `PROMPT_COMMAND`, and git's `GIT_CONFIG_VALUE_N` (whose key may be any command key).
pub(crate) fn runs_variable(name: &str) -> bool {
    COMMAND_VARIABLES.contains(&name)
        || name == "PROMPT_COMMAND"
        || name
            .strip_prefix("GIT_CONFIG_VALUE_")
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

/// The values of command keys in `GIT_CONFIG_PARAMETERS` (`'core.pager'='less -R'`).
pub(crate) fn git_config_parameters(text: &str) -> Vec<String> {
    let parts: Vec<&str> = text.split('\'').collect();
    let mut scripts = Vec::new();
    // 'key'='value' 'key'='value': keys at 1, 5, …; values at 3, 7, ….
    for pair in parts.chunks(4) {
        if let [_, key, _, value, ..] = pair {
            let key = key.to_ascii_lowercase();
            if GIT_COMMAND_KEYS
                .iter()
                .any(|pattern| crate::glob::matches(pattern, &key))
            {
                scripts.push(value.strip_prefix('!').unwrap_or(value).to_owned());
            }
        }
    }
    scripts
}

/// `git -c` keys whose value git runs with the shell (lower-cased; `*` is any part).
pub(crate) const GIT_COMMAND_KEYS: &[&str] = &[
    "core.sshcommand",
    "core.fsmonitor",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.gitproxy",
    "sequence.editor",
    "diff.external",
    "gpg.program",
    "gpg.*.program",
    "credential.helper",
    "credential.*.helper",
    "alias.*",
    "pager.*",
    "diff.*.textconv",
    "diff.*.command",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "merge.*.driver",
    "uploadpack.packobjectshook",
    "mergetool.*.cmd",
    "difftool.*.cmd",
    "sendemail.*cmd",
    "sendemail.smtpserver",
    "remote.*.receivepack",
    "remote.*.uploadpack",
];

/// Scripts an option value of `form` holds, which the program runs with a local shell:
/// `ssh -o ProxyCommand=…`, `rsync -e …`, `git -c core.sshCommand=…`, `alias x='…'`, and
/// `env NAME='…'` for a variable in [`COMMAND_VARIABLES`].
pub(crate) fn option_scripts(form: &[Arg]) -> Vec<Launch> {
    let Some(name) = program(form) else {
        return Vec::new();
    };
    let launch = |script: &str, label: &str| Launch {
        script: script.to_owned(),
        label: label.to_owned(),
        transparent: true,
        positional: None,
    };
    let mut scripts = Vec::new();
    let values = option_values(form, &name);
    for (key, value) in values {
        let key = key.to_ascii_lowercase();
        let runs = match name.as_ref() {
            "ssh" | "scp" | "sftp" => matches!(
                key.as_str(),
                "proxycommand" | "localcommand" | "knownhostscommand"
            ),
            "rsync" => true,
            "git" => GIT_COMMAND_KEYS
                .iter()
                .any(|pattern| crate::glob::matches(pattern, &key)),
            "alias" => true,
            _ if key.eq_ignore_ascii_case("GIT_CONFIG_PARAMETERS") => {
                for script in git_config_parameters(value) {
                    scripts.push(launch(&script, &format!("{name} GIT_CONFIG_PARAMETERS")));
                }
                false
            }
            _ => runs_variable(&key.to_ascii_uppercase()),
        };
        if runs {
            scripts.push(launch(
                &git_value_script(&key, value),
                &format!("{name} {key}"),
            ));
        }
    }
    scripts
}

/// The script a configuration value runs: `!cmd` runs `cmd` with the shell; an alias without
/// `!` runs git with its words (`alias.ship='push --force origin HEAD:main'`).
pub(crate) fn git_value_script(key: &str, value: &str) -> String {
    match value.strip_prefix('!') {
        Some(script) => script.to_owned(),
        None if key.starts_with("alias.") => format!("git {value}"),
        None => value.to_owned(),
    }
}

/// The `(key, value)` option pairs of `form` that may name a command: `-o K=V`/`-oK V` for
/// ssh, `-e V`/`--rsh=V` for rsync, `-c K=V` for git, `NAME=V` words for `alias`, `env`,
/// `sudo`. Only literal words count (others are unknown elsewhere or plain data), but for
/// git's `-c`, whose key is written out: a value made at run time (`alias.t="!$T"`) is
/// walked as written, so what it runs is unknown.
fn option_values<'a>(form: &'a [Arg], name: &str) -> Vec<(&'a str, &'a str)> {
    let mut pairs = Vec::new();
    let mut index = 1;
    while let Some(arg) = form.get(index) {
        index += 1;
        if !arg.literal {
            continue;
        }
        let text = arg.text.as_str();
        let next = form
            .get(index)
            .filter(|next| next.literal || (name == "git" && text == "-c"))
            .map(|next| next.text.as_str());
        let pair = |setting: &'a str| {
            setting
                .split_once('=')
                .or_else(|| setting.split_once([' ', '\t']))
        };
        match name {
            "ssh" | "scp" | "sftp" => {
                if text == "-o" {
                    pairs.extend(next.and_then(pair));
                    index += 1;
                } else if let Some(setting) = text.strip_prefix("-o") {
                    pairs.extend(pair(setting));
                }
            }
            "rsync" => {
                if text == "-e" || text == "--rsh" {
                    pairs.extend(next.map(|value| ("-e", value)));
                    index += 1;
                } else if let Some(value) = text
                    .strip_prefix("--rsh=")
                    .or_else(|| text.strip_prefix("-e").filter(|value| !value.is_empty()))
                {
                    pairs.push(("-e", value));
                }
            }
            "git" => {
                if text == "-c" {
                    pairs.extend(next.and_then(|value| value.split_once('=')));
                    index += 1;
                } else if !text.starts_with('-') {
                    break; // the subcommand: its own options are not configuration
                }
            }
            "alias" | "env" | "sudo" | "export" | "declare" | "typeset" | "readonly" | "local"
                if is_assignment(text) =>
            {
                pairs.extend(text.split_once('='))
            }
            _ => {}
        }
    }
    pairs
}
