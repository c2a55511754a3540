//! Shell text git runs: subcommands that take a command, `ext::` remotes, and `git config`
//! of the keys whose value git runs.

use super::*;

/// Shell texts a `git` command runs: `rebase -x`/`--exec`, `submodule foreach`,
/// `--upload-pack`/`--receive-pack`/`--exec` (also with `-u`), `difftool -x`/`--extcmd`,
/// `filter-branch --*-filter`, `grep -O`, `bisect run`, an `ext::` remote, and `git config`
/// setting a key whose value git runs (`alias.x '!…'`, `core.pager`, `core.fsmonitor`).
pub(crate) fn git_texts(form: &[Arg]) -> Vec<(String, String)> {
    if crate::commands::program_name(form).as_deref() != Some("git") {
        return Vec::new();
    }
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    // The subcommand: the first word that is not a global option (or its value).
    let mut at = 0;
    while let Some(word) = words.get(at) {
        match *word {
            "-c" | "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" => at += 2,
            word if word.starts_with('-') => at += 1,
            _ => break,
        }
    }
    let Some(sub) = words.get(at).copied() else {
        return Vec::new();
    };
    let rest = &words[at + 1..];
    let label = |option: &str| format!("git {sub} {option}");
    let mut found = Vec::new();
    let options: &[&str] = match sub {
        "rebase" => &["-x", "--exec"],
        "clone" | "fetch" | "pull" | "ls-remote" | "archive" => &["-u", "--upload-pack", "--exec"],
        "push" | "send-pack" => &["--receive-pack", "--exec"],
        "difftool" | "mergetool" => &["-x", "--extcmd", "-t"],
        "grep" => &["-O", "--open-files-in-pager"],
        "filter-branch" => &[
            "--tree-filter",
            "--index-filter",
            "--env-filter",
            "--msg-filter",
            "--commit-filter",
            "--parent-filter",
            "--tag-name-filter",
        ],
        _ => NO,
    };
    let mut index = 0;
    while let Some(word) = rest.get(index) {
        index += 1;
        let next = form.get(at + 2 + index);
        if let Some(value) = option_value(options, word, next) {
            found.push((value, label(option_name(word))));
        }
        if let Some(url) = word.strip_prefix("ext::") {
            found.push((git_ext_command(url), "git ext::".to_owned()));
        }
    }
    match sub {
        "submodule" if rest.contains(&"foreach") => {
            let after = rest.iter().position(|word| *word == "foreach").unwrap_or(0) + 1;
            let script: Vec<&str> = rest[after..]
                .iter()
                .copied()
                .skip_while(|word| word.starts_with("--"))
                .collect();
            if !script.is_empty() {
                found.push((script.join(" "), label("foreach")));
            }
        }
        "bisect" if rest.first() == Some(&"run") && rest.len() > 1 => {
            found.push((quote_join(&form[at + 3..]), label("run")));
        }
        "config" => found.extend(git_config_script(rest)),
        _ => {}
    }
    found
}

/// The command of an `ext::` remote: words split at spaces not escaped by `%`, then each
/// word's `% ` and `%%` read back, quoted for the shell.
fn git_ext_command(url: &str) -> String {
    let mut words = vec![String::new()];
    let mut chars = url.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('%', Some(' ' | '%')) => words
                .last_mut()
                .map(|word| word.push(chars.next().unwrap_or(' ')))
                .unwrap_or(()),
            (' ', _) => words.push(String::new()),
            (c, _) => words.last_mut().map(|word| word.push(c)).unwrap_or(()),
        }
    }
    quote_join(
        &words
            .into_iter()
            .filter(|word| !word.is_empty())
            .map(Arg::literal)
            .collect::<Vec<_>>(),
    )
}

/// The script of `git config [options] KEY VALUE` (or `git config set KEY VALUE`) when git
/// runs the value of KEY.
fn git_config_script(rest: &[&str]) -> Option<(String, String)> {
    let mut words = rest.iter().copied().filter(|word| !word.starts_with('-'));
    let mut key = words.next()?;
    if matches!(key, "set" | "add") {
        key = words.next()?;
    }
    let value = words.next()?;
    let lowered = key.to_ascii_lowercase();
    crate::commands::GIT_COMMAND_KEYS
        .iter()
        .any(|pattern| crate::glob::matches(pattern, &lowered))
        .then(|| {
            let script = crate::commands::git_value_script(&lowered, value);
            (script, format!("git config {lowered}"))
        })
}
