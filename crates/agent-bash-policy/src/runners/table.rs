//! The table itself: each program that runs what it is given, and how it finds it.

/// What a runner's words after its subcommand are.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Rest {
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
pub(super) struct Runner {
    /// The program's names.
    pub(super) names: &'static [&'static str],
    /// The subcommand words that lead to what it runs (`exec` of `npm exec`).
    pub(super) sub: &'static [&'static str],
    /// Options whose value is shell text it runs (`-c` of `npx`), given as the next word,
    /// after `=`, or attached to a one-letter option (`-cTEXT`).
    pub(super) text: &'static [&'static str],
    /// Option values that are text in the program's own language, with the prefixes that
    /// make that text reach a shell (`gdb -ex 'shell …'`).
    pub(super) language: &'static [(&'static str, &'static [&'static str])],
    pub(super) rest: Rest,
}

pub(super) const NO: &[&str] = &[];

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

pub(super) const RUNNERS: &[Runner] = &[
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
    // `kubectl exec POD -- CMD…`: the command runs in the pod.
    after(&["kubectl", "oc"], &["exec"], &["--"]),
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
