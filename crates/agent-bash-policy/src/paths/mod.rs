//! What a path argument names, for the rules that protect whole trees: the root, the home
//! directory (spelled any way), a system directory, a disk device. Words only, no rule here:
//! the built-ins and the harm judgements both read paths through this bottom module.

use crate::words::Arg;
use crate::words::Found;

mod devices;
mod home;

pub(crate) use devices::{is_block_device, names_disk};
pub(crate) use home::home_spellings;

/// Where a path argument points, for the rules that protect whole trees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// `/`, `//`, `/.`, `/*`, `/tmp/..`.
    Root,
    /// `~`, `~/`, `~user`, `$HOME`, `${HOME}/`, `~/*`.
    Home,
    /// A top-level system directory (`/usr`, `/etc/`, `/var/*`).
    SystemDir,
    Other,
}

const SYSTEM_DIRS: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "opt",
    "proc",
    "root",
    "sbin",
    "srv",
    "sys",
    "usr",
    "var",
    "Applications",
    "Library",
    "System",
    "Users",
    "private",
];

pub(crate) fn classify(arg: &Arg) -> Target {
    let spelled = home_spellings(&arg.text);
    let text = spelled.as_ref();
    let home_rest = text
        .strip_prefix("$HOME")
        .or_else(|| text.strip_prefix("${HOME}"))
        .or_else(|| {
            // `~` or `~user`, followed by nothing or a path.
            let rest = text.strip_prefix('~')?;
            let user_end = rest.find('/').unwrap_or(rest.len());
            let user = &rest[..user_end];
            user.bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-'))
                .then_some(&rest[user_end..])
        });
    if let Some(rest) = home_rest {
        // `~/*`, `~/.*`, `~/?*`: every file of the home directory.
        let wide = |part: &str| {
            is_star(part)
                || (crate::words::has_glob(part)
                    && (shell_glob_matches(part.as_bytes(), b"qx7")
                        || shell_glob_matches(part.as_bytes(), b".qx7")))
        };
        let whole_tree = rest
            .split('/')
            .all(|part| matches!(part, "" | "." | "..") || wide(part));
        return if whole_tree && (rest.is_empty() || rest.starts_with('/')) {
            Target::Home
        } else {
            Target::Other
        };
    }
    if !text.starts_with('/') {
        return Target::Other;
    }
    let components = normalize(text);
    if arg.glob
        && let Some(target) = classify_glob(&components)
    {
        return target;
    }
    match components.as_slice() {
        [] => Target::Root,
        ["root"] | ["home" | "Users", _] => Target::Home,
        parts if parts.iter().all(|part| is_star(part)) => Target::Root,
        [first, second, rest @ ..]
            if SYSTEM_SUBDIRS.contains(&(*first, *second))
                && rest.iter().all(|part| is_star(part)) =>
        {
            Target::SystemDir
        }
        [first, rest @ ..]
            if SYSTEM_DIRS.contains(first) && rest.iter().all(|part| is_star(part)) =>
        {
            Target::SystemDir
        }
        _ => Target::Other,
    }
}

/// Second-level directories the system needs (`/usr/bin`).
const SYSTEM_SUBDIRS: &[(&str, &str)] = &[
    ("usr", "bin"),
    ("usr", "sbin"),
    ("usr", "lib"),
    ("usr", "lib32"),
    ("usr", "lib64"),
    ("usr", "libexec"),
    ("usr", "share"),
    ("usr", "include"),
    ("var", "lib"),
];

/// Where a path whose first or second component is a glob may reach: everything (`/?*`,
/// `/[a-z]*`, `/.*`) or a system directory (`/u*`, `/usr/b*`); `None` if it can reach
/// neither or its first components are not globs.
fn classify_glob(components: &[&str]) -> Option<Target> {
    let glob = |part: &str| crate::words::has_glob(part);
    let matches =
        |pattern: &str, name: &str| shell_glob_matches(pattern.as_bytes(), name.as_bytes());
    let rest_wide = |rest: &[&str]| rest.iter().all(|part| is_star(part) || glob(part));
    match components {
        [first, rest @ ..] if glob(first) && rest_wide(rest) => {
            if matches(first, "qx7") || matches(first, ".x") || *first == ".*" {
                Some(Target::Root)
            } else if SYSTEM_DIRS.iter().any(|dir| matches(first, dir)) {
                Some(Target::SystemDir)
            } else {
                None
            }
        }
        [first, second, rest @ ..] if glob(second) && rest_wide(rest) => SYSTEM_SUBDIRS
            .iter()
            .any(|(top, sub)| top == first && matches(second, sub))
            .then_some(Target::SystemDir),
        _ => None,
    }
}

fn is_star(part: &str) -> bool {
    !part.is_empty() && part.bytes().all(|byte| byte == b'*')
}

/// The components of an absolute path with `.`, `..` and repeated slashes resolved.
pub(crate) fn normalize(path: &str) -> Vec<&str> {
    // `/proc/self/root/…` and `/proc/PID/root/…` are the root seen through a process.
    let mut path = path;
    while let Some(rest) = path.strip_prefix("/proc/") {
        match rest.split_once('/') {
            Some((_, tail)) if tail == "root" || tail.starts_with("root/") => path = &tail[4..],
            _ => break,
        }
    }
    let mut components = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                components.pop();
            }
            other => components.push(other),
        }
    }
    components
}

/// True if a shell glob (`*`, `?`, `[…]`, `[!…]`) matches all of `name`.
pub(crate) fn shell_glob_matches(pattern: &[u8], name: &[u8]) -> bool {
    match (pattern.first(), name.first()) {
        (None, _) => name.is_empty(),
        (Some(b'*'), _) => {
            shell_glob_matches(&pattern[1..], name)
                || (!name.is_empty() && shell_glob_matches(pattern, &name[1..]))
        }
        (Some(b'?'), Some(_)) => shell_glob_matches(&pattern[1..], &name[1..]),
        (Some(b'['), Some(&byte)) => match pattern.iter().skip(1).position(|c| *c == b']') {
            Some(offset) => {
                let set = &pattern[1..=offset];
                let (negated, set) = match set.first() {
                    Some(b'!' | b'^') => (true, &set[1..]),
                    _ => (false, set),
                };
                let mut hit = false;
                let mut at = 0;
                while at < set.len() {
                    if at + 2 < set.len() && set[at + 1] == b'-' {
                        hit |= (set[at]..=set[at + 2]).contains(&byte);
                        at += 3;
                    } else {
                        hit |= set[at] == byte;
                        at += 1;
                    }
                }
                hit != negated && shell_glob_matches(&pattern[offset + 2..], &name[1..])
            }
            None => byte == b'[' && shell_glob_matches(&pattern[1..], &name[1..]),
        },
        (Some(expected), Some(byte)) => {
            expected == byte && shell_glob_matches(&pattern[1..], &name[1..])
        }
        (Some(_), None) => false,
    }
}

/// What an operand names, read from the directory the command runs in when an earlier `cd`
/// made it known (`cd / && rm -rf *` deletes `/*`).
pub(crate) fn classify_in(found: &Found, arg: &Arg) -> Target {
    match &found.cwd {
        Some(dir) if !arg.text.starts_with(['/', '~', '$']) && !arg.text.is_empty() => {
            classify(&Arg {
                text: format!("{dir}/{}", arg.text),
                ..arg.clone()
            })
        }
        _ => classify(arg),
    }
}

/// True if `name` is a top-level system directory (`usr`, `etc`, `var`, …).
pub(crate) fn is_system_dir(name: &str) -> bool {
    SYSTEM_DIRS.contains(&name)
}

/// True if `arg` is the root or the home directory, spelled any way.
pub(crate) fn is_root_or_home(found: &Found, arg: &Arg) -> bool {
    matches!(classify_in(found, arg), Target::Root | Target::Home)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_classified() {
        let class = |text: &str| classify(&Arg::literal(text));
        for root in ["/", "//", "/.", "/*", "/tmp/..", "/./", "/**"] {
            assert_eq!(class(root), Target::Root, "{root}");
        }
        for home in [
            "~", "~/", "$HOME", "${HOME}", "$HOME/", "~/*", "~root", "~/.", "$HOME/*",
        ] {
            assert_eq!(class(home), Target::Home, "{home}");
        }
        for system in [
            "/usr",
            "/etc/",
            "/var/*",
            "/usr/local/..",
            "/usr/bin",
            "/var/lib/",
        ] {
            assert_eq!(class(system), Target::SystemDir, "{system}");
        }
        let glob = |text: &str| {
            classify(&Arg {
                glob: true,
                ..Arg::literal(text)
            })
        };
        assert_eq!(glob("/?*"), Target::Root);
        assert_eq!(glob("/[a-z]*"), Target::Root);
        assert_eq!(glob("/u*"), Target::SystemDir);
        assert_eq!(glob("/usr/b*"), Target::SystemDir);
        assert_eq!(glob("/tmp/*"), Target::Other);
        assert_eq!(glob("/x[0-9]"), Target::Other);
        assert_eq!(glob("~/.*"), Target::Home);
        assert_eq!(class("${HOME:?}"), Target::Home);
        assert_eq!(class("/home/$USER"), Target::Home);
        assert_eq!(class("${IFS}/"), Target::Root);
        assert_eq!(class("${HOME:+x}"), Target::Other);
        assert_eq!(class("${HOME:+$HOME}"), Target::Home);
        assert_eq!(class("${HOME[0]}"), Target::Home);
        assert_eq!(class("$(echo ~)"), Target::Home);
        assert_eq!(class("/proc/self/root/"), Target::Root);
        assert_eq!(class("/proc/1/root/etc"), Target::SystemDir);
        for other in [
            "/tmp/foo",
            "./build",
            "~/project/target",
            "$HOMEDIR",
            "$HOME/x",
            "/usr/local",
            "build",
        ] {
            assert_eq!(class(other), Target::Other, "{other}");
        }
    }
}
