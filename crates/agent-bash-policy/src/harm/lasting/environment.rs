//! The environment a start-up file sets: which of its lines only set variables, aliases
//! and options (everyday set-up), and which make later programs run code.

use super::*;

/// Hidden home folders that tools install programs into, so a `PATH` led by them is
/// everyday set-up.
const TOOL_FOLDERS: &[&str] = &[
    "cargo",
    "local",
    "npm-global",
    "npm",
    "pyenv",
    "rbenv",
    "nodenv",
    "goenv",
    "bun",
    "deno",
    "yarn",
    "poetry",
    "volta",
    "asdf",
    "sdkman",
    "jenv",
    "fnm",
    "go",
    "krew",
    "dotnet",
    "rd",
    "linuxbrew",
    "nix-profile",
    "opam",
    "pulumi",
    "tfenv",
    "rvm",
    "gem",
    "composer",
    "config",
    "mix",
    "ghcup",
    "cabal",
    "elan",
    "wasmer",
    "wasmtime",
    "foundry",
    "juliaup",
    "pixi",
    "rye",
    "fly",
    "docker",
    "kube",
    "istioctl",
    "nvm",
    "cargo-target",
    "rustup",
    "platformio",
    "pub-cache",
];

/// Variables whose value makes every later program or prompt run code.
const ENV_HOOKS: &[&str] = &[
    "LD_PRELOAD",
    "LD_AUDIT",
    "PROMPT_COMMAND",
    "BASH_ENV",
    "StrictHostKeyChecking=no",
    "UserKnownHostsFile=/dev/null",
    "PS0=",
    "NODE_OPTIONS",
    "PYTHONSTARTUP",
    "PERL5OPT",
    "RUBYOPT",
    "trap ",
];

/// Scratch and cache places: a file sourced from there is code anyone may have put there.
const SCRATCH_SOURCES: &[&str] = &[
    "/tmp/",
    "/dev/shm/",
    "/var/tmp/",
    "~/.cache/",
    "$HOME/.cache/",
];

/// Programs people trust with passwords or keys: an alias of one of them takes its place.
const TRUSTED_PROGRAMS: &[&str] = &[
    "sudo", "su", "ssh", "scp", "git", "passwd", "gpg", "doas", "pkexec", "aws", "kubectl",
    "docker", "ls", "cd",
];

/// Shell built-ins that set the environment, options or completions.
const SETTING_COMMANDS: &[&str] = &[
    "export", "alias", "source", ".", "unalias", "set", "shopt", "umask", "bind", "complete",
    "fpath+=(", "setopt", "autoload",
];

/// True for a start-up line that only sets the environment or loads a file.
pub(super) fn sets_environment_only(line: &str) -> bool {
    let line = line.trim();
    let first = line.split_whitespace().next().unwrap_or("");
    !runs_code(line, first) && is_setting(line, first)
}

/// True for a line that makes later programs run code, whatever else it does: a hook
/// variable, a file sourced from a scratch place, `PATH` led by a place anyone or nothing
/// known writes, an alias that takes a trusted program's name.
fn runs_code(line: &str, first: &str) -> bool {
    if ENV_HOOKS.iter().any(|hook| line.contains(hook)) {
        return true;
    }
    // A file sourced from a scratch or cache place, or a hidden one: code, not settings.
    if matches!(first, "source" | ".")
        && line.split_whitespace().nth(1).is_some_and(|sourced| {
            let sourced = sourced.trim_matches(['"', '\'']);
            SCRATCH_SOURCES
                .iter()
                .any(|place| sourced.starts_with(place))
                || basename(sourced).starts_with('.') && !basename(sourced).ends_with("rc")
        })
    {
        return true;
    }
    if path_led_by_untrusted(line) {
        return true;
    }
    // An alias that takes the name of a program people trust with passwords or keys.
    line.strip_prefix("alias ")
        .and_then(|rest| rest.split('=').next())
        .is_some_and(|name| TRUSTED_PROGRAMS.contains(&name.trim()))
}

/// True if the line sets `PATH` led by a folder from which every command name can be taken
/// over: a hidden home folder that no tool would name so, or a scratch folder.
fn path_led_by_untrusted(line: &str) -> bool {
    // `PATH` led by a hidden home folder that no tool would name so (`~/.x/bin`, a cache or
    // scratch folder): every command name can be taken over from there.
    if line.contains("PATH=")
        && let Some(value) = line.split("PATH=").nth(1)
        && let Some(first_dir) = value.trim_matches(['"', '\'']).split(':').next()
        && let Some(hidden) = first_dir
            .strip_prefix("$HOME/.")
            .or_else(|| first_dir.strip_prefix("${HOME}/."))
            .or_else(|| first_dir.strip_prefix("~/."))
        && let Some(folder) = hidden.split('/').next()
        && !TOOL_FOLDERS.contains(&folder)
        && (folder.len() <= 2 || folder.contains("cache") || folder.contains("tmp"))
    {
        return true;
    }
    // `PATH` led by a scratch folder anyone can write to.
    if line.contains("PATH=")
        && let Some(value) = line.split("PATH=").nth(1)
        && ["/tmp/", "/dev/shm/", "/var/tmp/"]
            .iter()
            .any(|scratch| value.trim_matches(['"', '\'']).starts_with(scratch))
    {
        return true;
    }
    false
}

/// True for a line that sets something and runs nothing else: empty, a comment, a setting
/// built-in, a plain assignment, a tool's `eval "$(X init)"`, a guarded `source`.
fn is_setting(line: &str, first: &str) -> bool {
    line.is_empty()
        || line.starts_with('#')
        || SETTING_COMMANDS.contains(&first)
        || (commands::is_assignment(first)
            && !line.contains("$(")
            && !line.contains('`')
            && !line.contains(';'))
        || (line.starts_with("eval \"$(")
            && line.contains(" init")
            && !line.contains("curl")
            && !line.contains("wget"))
        || (line.starts_with("[ -") && line.contains("] && . ")
            || line.starts_with("[ -") && line.contains("] && source "))
}
