//! The table of programs that run a command or shell text they are given, and how each finds
//! it: the words after its own options (`uv run CMD…`), an option's value in each form the
//! program accepts (`npx -c TEXT`, `tar --to-command=TEXT`, `man -P TEXT`), or text in its
//! own command language that reaches a shell (`gdb -ex 'shell …'`, `sqlite3 '.shell …'`).
//!
//! One table, read wherever the walker meets a program: the commands it finds become forms
//! of the segment (rules match them as if written alone) and the texts become scripts walked
//! as their own segments. Text that is not literal is walked as written, so its command name
//! is unknown and the segment asks. Pure: looks at words, runs nothing.

use crate::commands::program;
use crate::words::Arg;

/// What a runner's words after its subcommand are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rest {
    /// Arguments of its own (files, packages): nothing it runs.
    Data,
    /// A command and its arguments (`uv run pytest -x`).
    Command,
    /// A command, after one of these options (`nix develop -c CMD…`, `gdb --args CMD…`).
    CommandAfter(&'static [&'static str]),
    /// Shell text in each word (`hyperfine 'make -j4' 'make -j8'`).
    EachText,
}

/// A program that runs what it is given.
struct Runner {
    /// The program's names.
    names: &'static [&'static str],
    /// The subcommand words that lead to what it runs (`exec` of `npm exec`).
    sub: &'static [&'static str],
    /// Options whose value is shell text it runs (`-c` of `npx`), given as the next word,
    /// after `=`, or attached to a one-letter option (`-cTEXT`).
    text: &'static [&'static str],
    /// Option values that are text in the program's own language, with the prefixes that
    /// make that text reach a shell (`gdb -ex 'shell …'`).
    language: &'static [(&'static str, &'static [&'static str])],
    rest: Rest,
}

const NO: &[&str] = &[];
const NO_LANGUAGE: &[(&str, &[&str])] = &[];

/// A runner of the command after its options (`uv run CMD…`).
const fn run(names: &'static [&'static str], sub: &'static [&'static str]) -> Runner {
    Runner {
        names,
        sub,
        text: NO,
        language: NO_LANGUAGE,
        rest: Rest::Command,
    }
}

/// A runner of shell text given as an option's value (`man -P TEXT`).
const fn text(names: &'static [&'static str], options: &'static [&'static str]) -> Runner {
    Runner {
        names,
        sub: NO,
        text: options,
        language: NO_LANGUAGE,
        rest: Rest::Data,
    }
}

/// A runner whose every word after its options is shell text (`hyperfine 'make'`).
const fn each(names: &'static [&'static str], sub: &'static [&'static str]) -> Runner {
    Runner {
        names,
        sub,
        text: NO,
        language: NO_LANGUAGE,
        rest: Rest::EachText,
    }
}

/// A runner of the command after one of `options` (`nix develop -c CMD…`).
const fn after(
    names: &'static [&'static str],
    sub: &'static [&'static str],
    options: &'static [&'static str],
) -> Runner {
    Runner {
        names,
        sub,
        text: NO,
        language: NO_LANGUAGE,
        rest: Rest::CommandAfter(options),
    }
}

/// A program whose own command language reaches a shell through `language`.
const fn speaks(
    names: &'static [&'static str],
    language: &'static [(&'static str, &'static [&'static str])],
) -> Runner {
    Runner {
        names,
        sub: NO,
        text: NO,
        language,
        rest: Rest::Data,
    }
}

const VIM: &[(&str, &[&str])] = &[
    (
        "-c",
        &[
            "!",
            ":!",
            "silent !",
            ":silent !",
            "call system(",
            "r !",
            ":r !",
            "w !",
            ":w !",
        ],
    ),
    ("--cmd", &["!", ":!", "silent !", "call system("]),
    ("+", &["!", ":!"]),
];
const GDB: &[(&str, &[&str])] = &[
    ("-ex", &["shell ", "!", "pipe ", "|"]),
    ("--ex", &["shell ", "!", "pipe ", "|"]),
    ("-iex", &["shell ", "!"]),
    ("--eval-command", &["shell ", "!", "pipe ", "|"]),
    ("--init-eval-command", &["shell ", "!"]),
];

const RUNNERS: &[Runner] = &[
    // Project and package runners.
    Runner {
        text: &["-c", "--call"],
        ..run(&["npx"], NO)
    },
    Runner {
        text: &["-c", "--call"],
        ..run(&["npm"], &["exec"])
    },
    Runner {
        text: &["-c", "--call"],
        ..run(&["npm"], &["x"])
    },
    run(&["pnpm"], &["exec"]),
    run(&["pnpm"], &["dlx"]),
    run(
        &[
            "pnpx", "bunx", "uvx", "chronic", "ifne", "lckdo", "zrun", "cpulimit",
        ],
        NO,
    ),
    run(&["yarn"], &["exec"]),
    run(&["yarn"], &["dlx"]),
    run(&["bun"], &["x"]),
    run(&["uv"], &["run"]),
    run(&["uv"], &["tool", "run"]),
    run(&["pipx"], &["run"]),
    run(
        &["poetry", "pipenv", "pdm", "hatch", "rye", "pixi", "devbox"],
        &["run"],
    ),
    run(&["conda", "mamba", "micromamba"], &["run"]),
    run(
        &["bundle", "bundler", "direnv", "mise", "rtx", "asdf"],
        &["exec"],
    ),
    run(&["mise"], &["x"]),
    run(&["dotenv"], NO),
    run(&["dotenvx"], &["run"]),
    run(&["cargo"], &["watch", "--"]),
    Runner {
        text: &["-s", "--shell"],
        ..run(&["cargo"], &["watch"])
    },
    after(&["nix"], &["develop"], &["-c", "--command"]),
    after(&["nix"], &["shell"], &["-c", "--command"]),
    text(&["nix-shell"], &["--run", "--command"]),
    run(&["cmake"], &["-E"]),
    // Wrappers that limit, daemonise, time or trace what they run.
    run(
        &[
            "daemonize",
            "dbus-launch",
            "gosu",
            "su-exec",
            "setuidgid",
            "chpst",
            "trickle",
            "faketime",
            "timelimit",
            "schedtool",
            "bwrap",
            "ssh-agent",
            "run0",
            "heaptrack",
            "torify",
            "tsocks",
            "sshpass",
            "nsjail",
            "tini",
            "dumb-init",
            "catatonit",
            "screen",
            "abduco",
            "dtach",
            "kitty",
            "foot",
            "with-contenv",
        ],
        NO,
    ),
    run(&["docker", "podman", "nerdctl"], &["run"]),
    run(&["docker", "podman", "nerdctl"], &["exec"]),
    run(&["docker", "podman"], &["container", "run"]),
    run(&["docker", "podman"], &["container", "exec"]),
    run(&["machinectl"], &["shell"]),
    run(&["rr"], &["record"]),
    run(&["perf"], &["record"]),
    run(&["perf"], &["stat"]),
    run(&["perf"], &["trace"]),
    run(&["wezterm"], &["start"]),
    after(
        &["start-stop-daemon"],
        NO,
        &["--exec", "-x", "--startas", "-a", "--"],
    ),
    Runner {
        language: GDB,
        ..after(&["gdb"], NO, &["--args"])
    },
    Runner {
        language: &[
            ("-o", &["platform shell ", "!"]),
            ("--one-line", &["platform shell "]),
        ],
        ..after(&["lldb"], NO, &["--"])
    },
    after(
        &["gnome-terminal", "mate-terminal", "tilix", "terminator"],
        NO,
        &["-x", "--"],
    ),
    after(
        &["xfce4-terminal", "lxterminal", "qterminal"],
        NO,
        &["-x", "--"],
    ),
    after(
        &[
            "konsole",
            "alacritty",
            "st",
            "sakura",
            "terminology",
            "xterm",
            "uxterm",
            "urxvt",
            "rxvt",
        ],
        NO,
        &["-e", "--"],
    ),
    // Shell text in an option, or in every word.
    text(&["capsh", "git-shell"], &["-c"]),
    speaks(&["expect"], &[("-c", &["spawn ", "exec "])]),
    text(&["nodemon"], &["--exec", "-x"]),
    text(&["chokidar"], &["-c", "--command"]),
    text(&["watchman-make"], &["--run", "-r"]),
    text(&["reflex", "entr"], &["-s"]),
    text(&["man"], &["-P", "--pager", "-H", "--html"]),
    text(
        &["tar", "gtar", "bsdtar"],
        &[
            "-I",
            "--use-compress-program",
            "--to-command",
            "--info-script",
            "--new-volume-script",
            "-F",
            "--rsh-command",
            "--rmt-command",
            "--checkpoint-action",
        ],
    ),
    text(&["split", "gsplit"], &["--filter"]),
    text(&["zip"], &["-TT", "--unzip-command"]),
    text(&["sort"], &["--compress-program"]),
    text(&["rsync"], &["--rsync-path"]),
    text(&["scp"], &["-S"]),
    Runner {
        text: &["--prepare", "-p", "--cleanup", "-c", "--setup", "-s"],
        ..each(&["hyperfine"], NO)
    },
    each(&["pee", "mispipe"], NO),
    each(&["tmux"], &["run-shell"]),
    each(&["tmux"], &["run"]),
    each(&["tmux"], &["new-session"]),
    each(&["tmux"], &["new"]),
    each(&["tmux"], &["new-window"]),
    each(&["tmux"], &["neww"]),
    each(&["tmux"], &["split-window"]),
    each(&["tmux"], &["splitw"]),
    each(&["tmux"], &["respawn-pane"]),
    each(&["tmux"], &["display-popup"]),
    speaks(
        &["vim", "vi", "nvim", "view", "ex", "gvim", "rvim", "vimdiff"],
        VIM,
    ),
    speaks(
        &["emacs", "emacsclient"],
        &[
            (
                "--eval",
                &[
                    "(shell-command",
                    "(call-process",
                    "(start-process",
                    "(async-shell-command",
                ],
            ),
            ("-eval", &["(shell-command", "(call-process"]),
        ],
    ),
    speaks(&["psql"], &[("-c", &["\\!"]), ("--command", &["\\!"])]),
    speaks(
        &["mysql", "mariadb"],
        &[
            ("-e", &["\\!", "system "]),
            ("--execute", &["\\!", "system "]),
        ],
    ),
    speaks(&["less", "more"], &[("+", &["!"])]),
    // Bash builtins that run shell text they are given.
    text(&["mapfile", "readarray"], &["-C"]),
    text(&["complete", "compgen"], &["-C"]),
    text(&["make", "gmake"], &["--eval"]),
];

/// The entry for `form`, and where the words after its subcommand start.
fn runner(form: &[Arg]) -> Option<(&'static Runner, usize)> {
    static BY_NAME: std::sync::LazyLock<
        std::collections::HashMap<&'static str, Vec<&'static Runner>>,
    > = std::sync::LazyLock::new(|| {
        let mut by_name: std::collections::HashMap<&'static str, Vec<&'static Runner>> =
            std::collections::HashMap::new();
        for runner in RUNNERS {
            for name in runner.names {
                by_name.entry(name).or_default().push(runner);
            }
        }
        by_name
    });
    let name = crate::commands::program_name(form)?;
    BY_NAME.get(&*name)?.iter().copied().find_map(|runner| {
        let mut at = 1;
        for word in runner.sub {
            // Global options may come before the subcommand (`npm --prefix x exec`).
            while form.get(at).is_some_and(|arg| {
                arg.text.starts_with('-') && arg.text != *word && !word.starts_with('-')
            }) {
                at += 1;
            }
            if form.get(at)?.text != *word {
                return None;
            }
            at += 1;
        }
        Some((runner, at))
    })
}

/// Where the commands that `form` runs may start, as offsets into `form`: the first word
/// after its options, and each later word that may be the command if the word before it
/// was an option's value (`uv run --python 3.12 pytest`: `3.12` or `pytest`). Empty if
/// `form` is not a runner of commands.
pub(crate) fn command_starts(form: &[Arg]) -> Vec<usize> {
    let Some((runner, at)) = runner(form) else {
        return Vec::new();
    };
    let mut starts = Vec::new();
    let after: &[&str] = match runner.rest {
        Rest::Command => NO,
        Rest::CommandAfter(options) => options,
        Rest::Data | Rest::EachText => return starts,
    };
    let mut index = at;
    let mut armed = after.is_empty();
    let mut previous_option = false;
    let mut operands = 0;
    while index < form.len() {
        let text = form[index].text.as_str();
        if !armed {
            armed = after.contains(&text);
            index += 1;
            // The command is the word right after the option (`nix develop -c CMD…`).
            if armed && let Some(next) = form.get(index).filter(|next| next.is_plain()) {
                let _ = next;
                starts.push(index);
                break;
            }
            continue;
        }
        if text == "--" && !after.contains(&"--") {
            starts.push(index + 1);
            break;
        }
        if text.starts_with('-') && text.len() > 1 && form[index].literal {
            previous_option = !text.contains('=');
            index += 1;
            continue;
        }
        // A word bash changes (`browser-use[cli]`, `$TOOL`) is a package or an argument
        // here as often as a command: no form of its own.
        if form[index].is_plain() {
            starts.push(index);
        }
        // The first word may be an operand of the runner (`direnv exec DIR CMD`, `faketime
        // TIME CMD`, `docker exec CONTAINER CMD`): the next one may be the command too.
        operands += usize::from(!previous_option);
        if operands >= 2 {
            break;
        }
        previous_option = false;
        index += 1;
    }
    starts.retain(|start| *start < form.len());
    starts
}

/// Shell texts `form` runs, each with a label: option values of the table's `text`
/// options, words of runners whose every word is a script, and language commands that
/// reach a shell (`vim -c '!cmd'`).
pub(crate) fn texts(form: &[Arg]) -> Vec<(String, String)> {
    let name = program(form).unwrap_or_default();
    let mut found = own_language_texts(&name, form);
    let Some((runner, at)) = runner(form) else {
        return found;
    };
    // `xterm -e 'rm -rf x'`: one word holding spaces where a command goes is shell text.
    for start in command_starts(form) {
        if start + 1 == form.len() && form[start].text.contains(' ') {
            found.push((form[start].text.clone(), name.clone()));
        }
    }
    let mut index = at;
    while let Some(arg) = form.get(index) {
        index += 1;
        let text = arg.text.as_str();
        if let Some(value) = option_value(runner.text, text, form.get(index)) {
            if !text.contains('=') && runner.text.contains(&text) {
                index += 1;
            }
            // `--checkpoint-action=exec=CMD`.
            let value = value
                .strip_prefix("exec=")
                .map_or(value.clone(), str::to_owned);
            found.push((value, format!("{name} {}", option_name(text))));
            continue;
        }
        for (option, prefixes) in runner.language {
            let value = if *option == "+" {
                text.strip_prefix('+').map(str::to_owned)
            } else {
                option_value(&[option], text, form.get(index))
            };
            let Some(value) = value else { continue };
            if *option != "+" && !text.contains('=') && text == *option {
                index += 1;
            }
            if let Some(script) = shell_part(&value, prefixes) {
                found.push((script, format!("{name} {option}")));
            }
            // `call system('…')`, `lua os.execute('…')`, `python os.system('…')`.
            for script in code_commands("", &value)
                .into_iter()
                .filter(|script| !script.starts_with("$(code"))
            {
                found.push((script, format!("{name} {option}")));
            }
        }
        if runner.rest == Rest::EachText && !text.starts_with('-') {
            found.push((arg.text.clone(), name.clone()));
        }
    }
    found
}

/// Commands of programs whose arguments are their own command language: `socat`
/// addresses (`EXEC:cmd`, `SYSTEM:text`), `sqlite3` dot-commands (`.shell cmd`).
fn own_language_texts(name: &str, form: &[Arg]) -> Vec<(String, String)> {
    let words = form.iter().skip(1);
    match name {
        "socat" => words
            .filter_map(|arg| {
                let (kind, rest) = arg.text.split_once(':')?;
                let kind = kind.to_ascii_lowercase();
                if !matches!(kind.as_str(), "exec" | "system") {
                    return None;
                }
                // Options of the address follow a comma: `EXEC:'bash -li',pty,stderr`.
                let command = rest.split(',').next().unwrap_or(rest);
                let command = command.trim_matches(['"', '\'']);
                Some((command.to_owned(), format!("socat {kind}:")))
            })
            .collect(),
        "sed" | "gsed" => words
            .filter(|arg| !arg.text.starts_with('-'))
            .flat_map(|arg| {
                arg.text
                    .split([';', '\n'])
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .filter_map(|command| {
                let command = command
                    .trim_start()
                    .trim_start_matches(|c: char| c.is_ascii_digit() || c == '$');
                if let Some(replacement) = sed_executed_replacement(command) {
                    return Some((replacement, "sed s///e".to_owned()));
                }
                let rest = command.strip_prefix('e')?;
                rest.starts_with(' ')
                    .then(|| (rest.trim().to_owned(), "sed e".to_owned()))
            })
            .collect(),
        "parallel" => {
            let all: Vec<&Arg> = form.iter().skip(1).collect();
            let Some(at) = all.iter().position(|arg| arg.text == ":::") else {
                return Vec::new();
            };
            // parallel's own options come first, then the command with its options.
            let first = all[..at]
                .iter()
                .position(|arg| !arg.text.starts_with('-'))
                .unwrap_or(at);
            let command: Vec<&str> = all[first..at].iter().map(|arg| arg.text.as_str()).collect();
            all[at + 1..]
                .iter()
                .filter(|arg| arg.text != ":::")
                .map(|arg| {
                    let script = if command.is_empty() {
                        arg.text.clone()
                    } else {
                        format!("{} {}", command.join(" "), arg.text)
                    };
                    (script, "parallel".to_owned())
                })
                .collect()
        }
        "start-stop-daemon" => {
            let program = form
                .windows(2)
                .find(|pair| matches!(pair[0].text.as_str(), "--exec" | "-x" | "--startas" | "-a"))
                .map(|pair| &pair[1]);
            let rest = form
                .iter()
                .position(|arg| arg.text == "--")
                .map_or(&form[form.len()..], |at| &form[at + 1..]);
            program
                .map(|program| {
                    let mut words = vec![program.clone()];
                    words.extend(rest.iter().cloned());
                    vec![(quote_join(&words), "start-stop-daemon".to_owned())]
                })
                .unwrap_or_default()
        }
        "bind" if form.iter().any(|arg| arg.text == "-x") => words
            .filter_map(|arg| {
                arg.text.split_once(':').map(|(_, command)| {
                    (
                        command.trim().trim_matches('"').to_owned(),
                        "bind -x".to_owned(),
                    )
                })
            })
            .collect(),
        "sqlite3" | "sqlite" | "duckdb" => words
            .flat_map(|arg| arg.text.lines().map(str::to_owned).collect::<Vec<_>>())
            .filter_map(|line| {
                let line = line.trim_start();
                let rest = line
                    .strip_prefix(".shell")
                    .or_else(|| line.strip_prefix(".system"))?;
                Some((rest.trim().to_owned(), format!("{name} .shell")))
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The value `word` (with `next`) gives one of `options`: `-c TEXT`, `--exec=TEXT`,
/// `-cTEXT`.
fn option_value(options: &[&str], word: &str, next: Option<&Arg>) -> Option<String> {
    for option in options {
        if word == *option {
            return Some(next?.text.clone());
        }
        if let Some(value) = word.strip_prefix(option) {
            if option.starts_with("--") {
                if let Some(value) = value.strip_prefix('=') {
                    return Some(value.to_owned());
                }
            } else if option.len() == 2 && !value.is_empty() {
                return Some(value.trim_start_matches('=').to_owned());
            }
        }
    }
    None
}

fn option_name(word: &str) -> &str {
    word.split_once('=').map_or(word, |(name, _)| name)
}

/// The shell command in a program's own command text, after one of `prefixes` (`!cmd`,
/// `shell cmd`, `call system('cmd')`).
fn shell_part(value: &str, prefixes: &[&str]) -> Option<String> {
    let trimmed = value.trim_start();
    for command in std::iter::once(trimmed).chain(trimmed.lines()) {
        let command = command.trim_start();
        for prefix in prefixes {
            if let Some(rest) = command.strip_prefix(prefix) {
                let rest = rest
                    .trim()
                    .trim_start_matches(['"', '\''])
                    .trim_end_matches([')', '"', '\'']);
                return Some(rest.to_owned());
            }
        }
    }
    None
}

/// The replacement of a sed `s` command with the `e` flag, which sed runs as a command.
fn sed_executed_replacement(command: &str) -> Option<String> {
    let rest = command.strip_prefix('s')?;
    let delimiter = rest.chars().next()?;
    if delimiter.is_alphanumeric() || delimiter == '\\' {
        return None;
    }
    let parts: Vec<&str> = rest[delimiter.len_utf8()..].split(delimiter).collect();
    let [_, replacement, flags] = parts.as_slice() else {
        return None;
    };
    flags.contains('e').then(|| (*replacement).to_owned())
}

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
                .filter(|word| *word != "--recursive")
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
            let script = value.strip_prefix('!').unwrap_or(value);
            (script.to_owned(), format!("git config {lowered}"))
        })
}

/// Words joined into a script that gives them back as they are (each single-quoted).
pub(crate) fn quote_join(words: &[Arg]) -> String {
    words
        .iter()
        .map(|arg| {
            if arg.literal {
                format!("'{}'", arg.text.replace('\'', "'\\''"))
            } else {
                arg.text.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Shell commands in code given to an interpreter on its command line (`python -c`, `perl
/// -e`, `node -e`, `awk`): the string given to `system`, `os.system`, `subprocess.*`,
/// `execSync`, backquotes, … When the string is not a literal, its text is returned as a
/// word bash cannot read (`$(…)`), so the script is unknown.
pub(crate) fn code_commands(language: &str, code: &str) -> Vec<String> {
    const CALLS: &[&str] = &[
        "os.system(",
        "os.popen(",
        "subprocess.run(",
        "subprocess.call(",
        "subprocess.Popen(",
        "subprocess.check_call(",
        "subprocess.check_output(",
        "subprocess.getoutput(",
        "subprocess.getstatusoutput(",
        "commands.getoutput(",
        "pty.spawn(",
        "os.execvp(",
        "os.execv(",
        "os.execl(",
        "os.execlp(",
        "os.spawnlp(",
        "execSync(",
        "exec(",
        "spawnSync(",
        "spawn(",
        "execFileSync(",
        "execFile(",
        "system(",
        "shell_exec(",
        "passthru(",
        "proc_open(",
        "popen(",
        "os.execute(",
        "io.popen(",
        "IO.popen(",
        "Open3.capture2(",
        "Open3.capture3(",
        "Kernel.exec(",
        "Kernel.system(",
        "%x(",
        "qx(",
        "qx{",
        "Deno.run(",
        "Bun.spawn(",
        "Bun.spawnSync(",
        "Runtime.getRuntime().exec(",
    ];
    const SUBPROCESS: &[&str] = &[
        ".run(",
        ".call(",
        ".Popen(",
        ".check_output(",
        ".check_call(",
        ".getoutput(",
    ];
    let mut commands = Vec::new();
    let calls = CALLS
        .iter()
        .chain(SUBPROCESS.iter().filter(|_| code.contains("subprocess")));
    for call in calls {
        let mut from = 0;
        while let Some(found) = code[from..].find(call) {
            let start = from + found + call.len();
            from = start;
            // `exec(` and `system(` are also parts of longer names (`os.exec(`, `execSync(`).
            let before = code[..start - call.len()].chars().last();
            if matches!(*call, "exec(" | "system(" | "spawn(" | "popen(")
                && before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                continue;
            }
            commands.push(first_argument(&code[start..]));
        }
    }
    commands.extend(code_deletions(code));
    commands.extend(code_harm(code));
    commands.extend(code_execs(code));
    // A loop that forks without end is a fork bomb: said as the shell's own.
    const ENDLESS: &[&str] = &[
        "while True",
        "while 1",
        "while(1)",
        "while (1)",
        "while true",
        "for(;;)",
        "for (;;)",
        "loop {",
        "loop do",
        "fork while",
        "fork until",
        "fork for",
        "fork() while",
    ];
    if code.contains("fork") && ENDLESS.iter().any(|form| code.contains(form)) {
        commands.push(":(){ :|:& };:".to_owned());
    }
    // Backquotes in Perl, Ruby and PHP run shell text too (in Python they are nothing, in
    // JavaScript a template).
    if !["perl", "ruby", "php"]
        .iter()
        .any(|name| language.starts_with(name))
    {
        return commands;
    }
    let mut parts = code.split('`');
    parts.next();
    while let (Some(inside), Some(_)) = (parts.next(), parts.next().or(Some(""))) {
        if !inside.is_empty() {
            commands.push(inside.to_owned());
        }
    }
    commands
}

/// Expressions that give the home directory in interpreter code.
const HOMES: &[&str] = &[
    "expanduser(\"~\")",
    "expanduser('~')",
    "Path.home()",
    "$ENV{HOME}",
    "$ENV{'HOME'}",
    "environ[\"HOME\"]",
    "environ['HOME']",
    "getenv(\"HOME\")",
    "getenv('HOME')",
    "homedir()",
    "Dir.home",
    "ENV[\"HOME\"]",
    "ENV['HOME']",
    "process.env.HOME",
    "\"~\"",
    "'~'",
    "$HOME",
    "home-dir",
    "user_home",
    "homedir",
    "Deno.env.get('HOME')",
    "Deno.env.get(\"HOME\")",
    "$env(HOME)",
    "os.getenv(\"HOME\")",
    "\"~/",
    "'~/",
];

/// Harm interpreter code does by itself, said as the shell command it amounts to so the
/// rules judge it: every process signalled (`os.kill(-1, …)`), the home directory deleted
/// by any deletion call, a start-up, credential or system file written, and the string
/// literals handed to a shell where the code runs one (`os:cmd("…")`, `"…".execute()`).
fn code_harm(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    if [
        "kill(-1",
        "kill9,-1",
        "kill(:KILL,-1",
        "kill('KILL',-1",
        "kill(-1,",
        ".kill(-1",
    ]
    .iter()
    .any(|form| compact.contains(form))
        || (compact.contains("kill") && compact.contains(",-1)"))
    {
        found.push("kill -9 -1".to_owned());
    }
    let opens_to_write = [",'a')", ",\"a\")", ",'w')", ",\"w\")", ",'ab')", ",'wb')"]
        .iter()
        .any(|mode| compact.contains(mode));
    const WRITING: &[&str] = &[
        "write",
        "append",
        "file_put_contents",
        "copy(",
        "File.new",
        "fputs",
    ];
    const PLACES: &[&str] = &[
        ".bashrc",
        ".profile",
        ".zshrc",
        ".bash_profile",
        "authorized_keys",
        "/etc/sudoers",
        "/etc/passwd",
        "/etc/shadow",
        "/etc/crontab",
        "ld.so.preload",
        "/etc/hosts",
    ];
    let named = |place: &&&str| {
        ['"', '\'', '`', ')']
            .iter()
            .any(|end| code.contains(&format!("{place}{end}")))
    };
    if (opens_to_write || WRITING.iter().any(|call| code.contains(call)))
        && let Some(place) = PLACES.iter().find(named)
    {
        let target = if place.starts_with('/') {
            (*place).to_owned()
        } else if *place == "authorized_keys" {
            "~/.ssh/authorized_keys".to_owned()
        } else {
            format!("~/{place}")
        };
        found.push(format!("cp /dev/null {target}"));
    }
    const SHELLING: &[&str] = &[
        "os:cmd(",
        ".execute()",
        "(system ",
        "system(",
        "Bun.$`",
        "$`",
        "exec(",
        "execSync(",
        "spawn(",
        "popen(",
        "os.execute(",
        "shell(",
        "run(`",
        "Process.run(",
        "Command(",
        "process-run",
        "run-program",
    ];
    if SHELLING.iter().any(|call| code.contains(call)) {
        for literal in string_literals(code) {
            let first = literal.split_whitespace().next().unwrap_or("");
            if matches!(
                first,
                "rm" | "sh"
                    | "bash"
                    | "curl"
                    | "wget"
                    | "shutdown"
                    | "reboot"
                    | "mkfs"
                    | "dd"
                    | "chmod"
                    | "chown"
                    | "kill"
                    | "pkill"
                    | "killall"
                    | "crontab"
                    | "nc"
                    | "halt"
                    | "poweroff"
            ) {
                // `"rm -rf " + homedir()`: the literal's end is a home directory.
                let mut script = literal.clone();
                if literal.ends_with(' ') && HOMES.iter().any(|home| code.contains(home)) {
                    script.push('~');
                }
                found.push(script);
            }
        }
        // Backquoted templates (`Bun.$\`rm -rf ~\``) hold shell text too.
        for part in code.split('`').skip(1).step_by(2) {
            if !part.is_empty() {
                found.push(part.replace("${", "$(").replace('}', ")"));
            }
        }
    }
    found
}

/// The contents of the string literals in `code` (`'…'` and `"…"`).
fn string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' || c == '"' {
            let mut literal = String::new();
            for inner in chars.by_ref() {
                if inner == c {
                    break;
                }
                literal.push(inner);
            }
            out.push(literal);
        }
    }
    out
}

/// Recursive deletions in interpreter code (`shutil.rmtree(Path.home())`), said as the `rm
/// -r` they amount to, so the deletion rules judge their target.
fn code_deletions(code: &str) -> Vec<String> {
    const DELETIONS: &[&str] = &[
        "rmtree(",
        "remove_tree(",
        "rm_rf(",
        "rm_r(",
        "rmSync(",
        "rmdirSync(",
        "fs.rm(",
        "remove_dir_all(",
        "remove_dir(",
        "rimraf(",
        "Deno.remove(",
        "unlinkSync(",
        "os.removedirs(",
        "rm(",
        "unlink(",
        "unlink ",
        "rm_rf!(",
        "delete-directory/files ",
        "(delete-directory ",
        "file delete ",
        "Deno.remove(",
        "os.remove(",
        "os.rmdir(",
        "FileUtils.rm_r(",
    ];

    let mut found = Vec::new();
    for call in DELETIONS {
        let mut from = 0;
        while let Some(at) = code[from..].find(call) {
            let start = from + at + call.len();
            from = start;
            let argument = balanced_argument(&code[start..]);
            if HOMES.iter().any(|home| argument.contains(home)) {
                found.push("rm -rf ~".to_owned());
            } else if let Some(text) = string_literal(argument.trim()) {
                found.push(format!("rm -rf '{}'", text.replace('\'', "")));
            }
        }
    }
    found
}

/// `os.execvp("rm", ["make", "-rf", home])`: the program, then the list without its first
/// item (the name the program is told it has), home directories read as `~`.
fn code_execs(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    // Perl's `exec {"/bin/rm"} "name", "-rf", $ENV{HOME}`: the program in braces.
    for call in ["exec {", "system {"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(call) {
            let start = from + at + call.len();
            from = start;
            let rest = &code[start..];
            let Some(close) = rest.find('}') else {
                continue;
            };
            let Some(program) = string_literal(rest[..close].trim()) else {
                continue;
            };
            let list = rest[close + 1..].split(';').next().unwrap_or("");
            let mut words = vec![Arg::literal(program)];
            for item in split_top_level(list).into_iter().skip(1) {
                let item = item.trim();
                match string_literal(item) {
                    Some(word) => words.push(Arg::literal(word)),
                    None if HOMES.iter().any(|home| item.contains(home)) => {
                        words.push(Arg::literal("~"))
                    }
                    None => words.push(Arg {
                        text: "$(value)".to_owned(),
                        ..Arg::default()
                    }),
                }
            }
            found.push(quote_join(&words).replace("'~'", "~"));
        }
    }
    for call in ["os.execvp(", "os.execv(", "os.execve(", "os.execvpe("] {
        let mut from = 0;
        while let Some(at) = code[from..].find(call) {
            let start = from + at + call.len();
            from = start;
            let rest = &code[start..];
            let program = balanced_argument(rest);
            let Some(program) = string_literal(program.trim()) else {
                continue;
            };
            let after = &rest[program.len().min(rest.len())..];
            let Some(open) = after.find('[') else {
                continue;
            };
            let list = until_close(&after[open + 1..]);
            let mut words = vec![Arg::literal(program)];
            for item in split_top_level(list).into_iter().skip(1) {
                let item = item.trim();
                match string_literal(item) {
                    Some(word) => words.push(Arg::literal(word)),
                    None if HOMES.iter().any(|home| item.contains(home)) => {
                        words.push(Arg::literal("~"))
                    }
                    None => words.push(Arg {
                        text: "$(value)".to_owned(),
                        ..Arg::default()
                    }),
                }
            }
            found.push(quote_join(&words).replace("'~'", "~"));
        }
    }
    found
}

/// The text up to the bracket that closes the one opened just before `rest`.
fn until_close(rest: &str) -> &str {
    let mut depth = 0usize;
    for (at, c) in rest.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return &rest[..at],
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    rest
}

/// The items of a list's text, split at commas outside brackets and parentheses.
fn split_top_level(list: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (at, c) in list.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(&list[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    items
}

/// The first argument of a call whose `(` came just before `rest`, parentheses balanced.
fn balanced_argument(rest: &str) -> &str {
    let mut depth = 0usize;
    for (at, c) in rest.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return &rest[..at],
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => return &rest[..at],
            _ => {}
        }
    }
    rest
}

/// The command in the first argument of a call: a string literal's text, a list of string
/// literals joined, or a text that asks (`$(…)`) when it is built at run time.
fn first_argument(rest: &str) -> String {
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('(').unwrap_or(rest).trim_start();
    let unknown = "$(code-built-at-run-time)".to_owned();
    if let Some(list) = rest.strip_prefix('[') {
        let end = list.find(']').unwrap_or(list.len());
        let mut words = Vec::new();
        for item in list[..end].split(',') {
            match string_literal(item.trim()) {
                Some(word) => words.push(format!("'{}'", word.replace('\'', "'\\''"))),
                None if item.trim().is_empty() => {}
                None => return unknown,
            }
        }
        return words.join(" ");
    }
    let end = rest.find([',', ')', ';']).unwrap_or(rest.len());
    let argument = rest[..end].trim();
    match string_literal(argument) {
        Some(text) => text,
        // A literal that holds a `,` `)` or `;`: take it whole.
        None => quoted_prefix(rest).unwrap_or(unknown),
    }
}

/// The text of a whole string literal (`'…'` or `"…"`, no interpolation).
fn string_literal(text: &str) -> Option<String> {
    let text = text.strip_prefix('r').unwrap_or(text);
    let quote = text.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    if inner.contains(quote) || inner.contains("#{") || inner.contains("${") {
        return None;
    }
    Some(inner.replace("\\n", "\n"))
}

/// The string literal that `text` starts with, if it starts with one.
fn quoted_prefix(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let inner = &text[1..];
    let end = inner.find(quote)?;
    let literal = &inner[..end];
    (!literal.contains("#{") && !literal.contains("${")).then(|| literal.to_owned())
}

/// True if `form` runs commands made from its input or its data: `awk` calling `system` or
/// a pipe with a value built at run time, `sed` with the `e` command or flag, `xargs`
/// handing its input to a shell script.
pub(crate) fn runs_its_input(form: &[Arg]) -> bool {
    let Some(name) = program(form) else {
        return false;
    };
    match name.as_str() {
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => form.iter().skip(1).any(|arg| {
            let code = arg.text.as_str();
            (code.contains("system(")
                || code.contains("| getline")
                || code.contains("|&")
                || code.contains("print |")
                || code.contains("printf |"))
                && !code_commands("awk", code)
                    .iter()
                    .all(|command| !command.starts_with("$("))
                || code.contains("system($")
                || code.contains("print | $")
                || code.contains("| \"sh")
                || code.contains("|\"sh")
                || code.contains("| \"bash")
        }),
        "sed" | "gsed" => form.iter().skip(1).any(|arg| {
            let code = arg.text.as_str();
            !code.starts_with('-')
                && (code == "e"
                    || code.ends_with("/e")
                    || code.contains("/e;")
                    || code.starts_with("1e")
                    || code.contains(";e")
                    || code.ends_with("/ge")
                    || code.ends_with("/eg"))
        }),
        "xargs" => {
            form.iter()
                .skip(1)
                .any(|arg| crate::commands::is_shell(crate::commands::basename(&arg.text)))
                && form.iter().any(|arg| arg.text == "-c")
        }
        "parallel" => !form
            .iter()
            .any(|arg| arg.text == ":::" || arg.text == "::::"),
        _ => false,
    }
}

/// A reason to ask when a package runner fetches what it runs from a repository rather
/// than a registry (`uvx --from git+https://…`, `npx github:user/repo`).
pub(crate) fn unseen_package(found: &crate::walk::Found) -> Option<String> {
    found.each_form().find_map(|form| {
        let name = program(form)?;
        if !matches!(
            name.as_str(),
            "uvx" | "npx" | "pipx" | "bunx" | "pnpx" | "uv" | "pnpm" | "yarn"
        ) {
            return None;
        }
        let source = form.iter().skip(1).find(|arg| {
            let text = arg.text.trim_start_matches("--from=");
            text.starts_with("git+")
                || text.starts_with("github:")
                || text.starts_with("gitlab:")
                || (text.starts_with("https://") && text.contains(".git"))
        })?;
        Some(format!(
            "runs code fetched from `{}`, a repository rather than a registry",
            source.text
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Arg> {
        line.split(' ').map(Arg::literal).collect()
    }

    #[test]
    fn commands_are_found_after_options_and_subcommands() {
        assert_eq!(command_starts(&words("uv run pytest -x")), [2]);
        assert_eq!(
            command_starts(&words("uv run --python 3.12 rm -rf x")),
            [3, 4, 6]
        );
        assert_eq!(command_starts(&words("direnv exec / rm -rf x")), [2, 3]);
        assert_eq!(
            command_starts(&words("npm --prefix=x exec -- rm -rf y")),
            [4]
        );
        assert_eq!(command_starts(&words("nix develop .#x -c rm -rf y")), [4]);
        assert!(command_starts(&words("uv pip install x")).is_empty());
    }

    #[test]
    fn texts_are_found_in_every_form_of_an_option() {
        let texts = |line: &str| -> Vec<String> {
            texts(&words(line))
                .into_iter()
                .map(|(text, _)| text)
                .collect()
        };
        assert_eq!(texts("npx -c x"), ["x"]);
        assert_eq!(texts("tar --to-command=x -xf a.tar"), ["x"]);
        assert_eq!(texts("man -Px ls"), ["x"]);
        assert_eq!(texts("vim -c !x"), ["x"]);
        assert_eq!(texts("socat - EXEC:x,pty"), ["x"]);
        assert!(texts("tar -xzf a.tar").is_empty());
    }
}
