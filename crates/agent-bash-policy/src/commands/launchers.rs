//! Launchers, which run a script given as text: `bash -c TEXT`, `eval WORDS`, `su -c`,
//! `env -S`, `trap`, `watch`, `ssh HOST WORDS`, …; the script, its label, and whether the
//! launcher is transparent (only hands it to a local shell).

use super::interpreters::{ProgramSource, shell_mode, shell_program_source};
use super::{is_shell, program, wrapped_command};
use crate::words::Arg;

/// A script given as text to a command that runs it: the text and a short label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Launch {
    pub script: String,
    pub label: String,
    /// The launcher only hands the script to a local shell (`bash -c`, `eval`), so it needs
    /// no decision of its own: its script's commands decide.
    pub transparent: bool,
    /// `$0`, `$1`, … inside the script, when the launcher sets them (`sh -c TEXT ARG0 ARG1`).
    pub positional: Option<Vec<Arg>>,
}

/// The script `form` runs as text, if it is a launcher: `bash -c TEXT`, `eval WORDS…`,
/// `su -c TEXT`, `env -S TEXT`, `watch WORDS…`, `ssh HOST WORDS…`.
pub(crate) fn launch(form: &[Arg]) -> Option<Launch> {
    let name = program(form)?;
    match name.as_ref() {
        // `eval "$(ssh-agent -s)"`: the setup code a known tool prints for the shell.
        "eval" if form.len() == 2 && prints_shell_setup(&form[1].text) => {
            transparent(":".to_owned(), "eval")
        }
        "eval" if form.len() > 1 => transparent(joined(&form[1..]), "eval"),
        _ if is_shell(&name) => shell_launch(&name, form),
        "trap" => trap_launch(form),
        "flock" | "script" => command_option_launch(&name, form),
        "sg" => sg_launch(form),
        // `sudo -s CMD…` hands the words to the shell's `-c`.
        "sudo" | "doas" if shell_mode(form) => {
            let start = wrapped_command(form)?;
            transparent(joined(&form[start..]), &format!("{name} -s"))
        }
        "su" | "runuser" => su_launch(&name, form),
        "env" => env_split_string(form).and_then(|(first, rest)| {
            let rest = form.get(rest..).map(joined).unwrap_or_default();
            transparent(format!("{first} {rest}"), "env -S")
        }),
        "watch" => watch_launch(form),
        // `mvn exec:exec -Dexec.executable=sh -Dexec.args="-c '…'"`: that program, run.
        "mvn" | "mvnw" => {
            let value = |key: &str| {
                form.iter()
                    .find_map(|arg| arg.text.strip_prefix(key).map(str::to_owned))
            };
            let program = value("-Dexec.executable=")?;
            let args = value("-Dexec.args=").unwrap_or_default();
            Some(Launch {
                script: format!("{program} {args}"),
                label: "mvn exec".to_owned(),
                transparent: false,
                positional: None,
            })
        }
        // `ansible HOSTS -m shell -a TEXT`: the text runs on every host of the inventory.
        "ansible"
            if form.windows(2).any(|pair| {
                matches!(pair[0].text.as_str(), "-m" | "--module-name")
                    && matches!(
                        pair[1].text.as_str(),
                        "shell"
                            | "command"
                            | "raw"
                            | "ansible.builtin.shell"
                            | "ansible.builtin.command"
                    )
            }) =>
        {
            form.windows(2)
                .find(|pair| matches!(pair[0].text.as_str(), "-a" | "--args"))
                .map(|pair| Launch {
                    script: pair[1].text.clone(),
                    label: "ansible".to_owned(),
                    transparent: false,
                    positional: None,
                })
        }
        "ssh" => ssh_launch(form),
        _ => None,
    }
}

/// True if `text` is the output of a tool that prints setup code for the shell it is
/// evaluated in (`$(ssh-agent -s)`, `$(direnv hook bash)`, `$(pyenv init -)`): what
/// such tools print is their own, not data from elsewhere.
fn prints_shell_setup(text: &str) -> bool {
    let Some(inner) = text
        .strip_prefix("$(")
        .and_then(|rest| rest.strip_suffix(')'))
    else {
        return false;
    };
    if inner.contains(['$', '`', '|', ';', '&', '<', '>']) {
        return false;
    }
    let mut words = inner.split_whitespace();
    let program = words.next().unwrap_or("");
    let rest: Vec<&str> = words.collect();
    match program {
        "ssh-agent" | "gpg-agent" | "keychain" => true,
        "direnv" | "zoxide" | "starship" | "pyenv" | "rbenv" | "nodenv" | "goenv" | "jenv"
        | "fnm" | "mise" | "rtx" | "atuin" | "thefuck" | "opam" | "luarocks" | "dircolors"
        | "conda" | "mamba" | "micromamba" | "brew" | "fzf" | "rustup" | "gh" | "kubectl" => {
            rest.iter().any(|word| {
                matches!(
                    *word,
                    "init"
                        | "hook"
                        | "env"
                        | "activate"
                        | "shellenv"
                        | "export"
                        | "path"
                        | "completion"
                        | "completions"
                        | "shell.bash"
                        | "--bash"
                        | "-b"
                        | "-s"
                )
            }) || program == "dircolors"
        }
        _ => false,
    }
}

/// The words joined by single spaces, as a shell receiving them as one script would see them.
fn joined(words: &[Arg]) -> String {
    words
        .iter()
        .map(|arg| arg.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A local launch of `script`, whose commands decide for it.
fn transparent(script: String, label: &str) -> Option<Launch> {
    Some(Launch {
        script,
        label: label.to_owned(),
        transparent: true,
        positional: None,
    })
}

/// `sh -c TEXT ARG0 ARG1…`: the words after the script are `$0`, `$1`, ….
fn shell_launch(name: &str, form: &[Arg]) -> Option<Launch> {
    let ProgramSource::Inline(arg) = shell_program_source(form) else {
        return None;
    };
    let after = form
        .iter()
        .position(|other| std::ptr::eq(other, arg))
        .map_or(form.len(), |at| at + 1);
    Some(Launch {
        script: arg.text.clone(),
        label: format!("{name} -c"),
        transparent: true,
        positional: Some(form[after..].to_vec()),
    })
}

/// `trap [--] 'cmd' SIGNAL…` runs the text later, as if by eval.
fn trap_launch(form: &[Arg]) -> Option<Launch> {
    let rest = match form.get(1).map(|arg| arg.text.as_str()) {
        Some("--") => &form[2..],
        _ => &form[1..],
    };
    match rest.first().map(|arg| arg.text.as_str()) {
        Some("-" | "-p" | "-l" | "-P") | None => None,
        Some(_) if rest.len() < 2 => None,
        Some(script) => transparent(script.to_owned(), "trap"),
    }
}

/// `flock FILE -c TEXT`, `script -c TEXT`: TEXT runs with `sh -c`.
fn command_option_launch(name: &str, form: &[Arg]) -> Option<Launch> {
    let at = form.iter().position(|arg| {
        arg.text == "-c"
            || arg.text == "--command"
            || (arg.text.starts_with('-') && !arg.text.starts_with("--") && arg.text.ends_with('c'))
    })?;
    transparent(form.get(at + 1)?.text.clone(), &format!("{name} -c"))
}

/// `sg GROUP [-c] TEXT` runs TEXT with `sh -c`.
fn sg_launch(form: &[Arg]) -> Option<Launch> {
    let rest: Vec<Arg> = form
        .iter()
        .skip(2)
        .filter(|arg| arg.text != "-c")
        .cloned()
        .collect();
    if rest.is_empty() {
        return None;
    }
    transparent(joined(&rest), "sg")
}

/// `su`/`runuser` `-c TEXT`, `-cTEXT`, `-lc TEXT`, `--command=TEXT` (and abbreviations).
fn su_launch(name: &str, form: &[Arg]) -> Option<Launch> {
    let label = format!("{name} -c");
    let mut words = form.iter().skip(1);
    while let Some(arg) = words.next() {
        let text = arg.text.as_str();
        if text == "--" {
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (option, value) = match long.split_once('=') {
                Some((option, value)) => (option, Some(value)),
                None => (long, None),
            };
            if option.len() >= 2
                && ("command".starts_with(option) || "session-command".starts_with(option))
            {
                let script = match value {
                    Some(value) => value.to_owned(),
                    None => words.next()?.text.clone(),
                };
                return transparent(script, &label);
            }
            continue;
        }
        if let Some(letters) = text.strip_prefix('-')
            && let Some(at) = letters.find('c')
        {
            let rest = &letters[at + 1..];
            let script = if rest.is_empty() {
                words.next()?.text.clone()
            } else {
                rest.to_owned()
            };
            return transparent(script, &label);
        }
    }
    None
}

/// `watch [options] WORDS…` runs the words with `sh -c`, again and again.
fn watch_launch(form: &[Arg]) -> Option<Launch> {
    let mut index = 1;
    while let Some(arg) = form.get(index) {
        match arg.text.as_str() {
            "-n" | "--interval" | "-q" | "--equexit" => index += 2,
            text if text.starts_with('-') => index += 1,
            _ => break,
        }
    }
    let rest = form.get(index..).filter(|rest| !rest.is_empty())?;
    transparent(joined(rest), "watch")
}

/// `ssh [options] HOST WORDS…` runs the words on another machine: not transparent.
fn ssh_launch(form: &[Arg]) -> Option<Launch> {
    let mut index = 1;
    while let Some(arg) = form.get(index) {
        let text = arg.text.as_str();
        if text == "--" {
            index += 1;
            break;
        }
        let Some(letters) = text.strip_prefix('-') else {
            break;
        };
        index += 1;
        let takes_value = letters
            .chars()
            .last()
            .is_some_and(|last| "BbcDEeFIiJLlmOoPpQRSWw".contains(last));
        if takes_value {
            index += 1;
        }
    }
    // The host, then the remote command.
    let rest = form.get(index + 1..).filter(|rest| !rest.is_empty())?;
    Some(Launch {
        script: joined(rest),
        label: "ssh".to_owned(),
        transparent: false,
        positional: None,
    })
}

/// The text of `env -S TEXT` (also `-iS'TEXT'`, `--split-string=TEXT`, `--sp TEXT`) and where
/// the words after it start.
fn env_split_string(form: &[Arg]) -> Option<(String, usize)> {
    let mut skip_value = false;
    for (position, arg) in form.iter().enumerate().skip(1) {
        let text = arg.text.as_str();
        if skip_value {
            skip_value = false;
            continue;
        }
        if text == "--" || !text.starts_with('-') {
            return None;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            if name.len() >= 2 && "split-string".starts_with(name) {
                return match value {
                    Some(value) => Some((value.to_owned(), position + 1)),
                    None => Some((form.get(position + 1)?.text.clone(), position + 2)),
                };
            }
            continue;
        }
        // A cluster of short options: `-S` takes the rest of the word, or the next word;
        // `-u` and `-C` take theirs the same way, ending the cluster.
        for (offset, letter) in text.char_indices().skip(1) {
            let rest = &text[offset + 1..];
            match letter {
                'S' if rest.is_empty() => {
                    return Some((form.get(position + 1)?.text.clone(), position + 2));
                }
                'S' => return Some((rest.to_owned(), position + 1)),
                'u' | 'C' => {
                    skip_value = rest.is_empty();
                    break;
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<Arg> {
        line.split_whitespace().map(Arg::literal).collect()
    }

    #[test]
    fn launchers_give_their_script() {
        let script = |line: &str| launch(&argv(line)).map(|launch| launch.script);
        assert_eq!(script("bash -c ls"), Some("ls".to_owned()));
        assert_eq!(script("bash -euo pipefail -c ls"), Some("ls".to_owned()));
        assert_eq!(script("sh -lc ls"), Some("ls".to_owned()));
        assert_eq!(script("bash script.sh"), None);
        assert_eq!(script("eval rm -rf /"), Some("rm -rf /".to_owned()));
        assert_eq!(
            script("ssh -p 22 host rm -rf /"),
            Some("rm -rf /".to_owned())
        );
        assert_eq!(script("ssh host"), None);
        assert_eq!(script("su root -c ls"), Some("ls".to_owned()));
        assert_eq!(script("env -S ls -la"), Some("ls -la".to_owned()));
        assert_eq!(script("env --sp ls"), Some("ls ".to_owned()));
        assert_eq!(script("env -iSls"), Some("ls ".to_owned()));
        assert_eq!(script("env -u X -Sls"), Some("ls ".to_owned()));
        assert_eq!(script("su -cls"), Some("ls".to_owned()));
        assert_eq!(script("su -lc ls"), Some("ls".to_owned()));
        assert_eq!(script("sudo -s ls -la"), Some("ls -la".to_owned()));
        assert_eq!(script("trap -- ls EXIT"), Some("ls".to_owned()));
    }
}
