//! The places a `workspace-write` command may write besides the project root: the
//! temporary directories, the device files every program writes, the caches of the common
//! build tools, and the git directory of the project when it lies outside the root (a
//! worktree, a submodule, a root below the repository's top).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Device files any program may write (or drive as a terminal) in every mode.
pub(crate) const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// Cache directories under the home directory, each with the program whose presence on
/// the `PATH` makes a missing one worth creating (a sandboxed first run could not).
const HOME_CACHES: &[(&str, Option<&str>)] = &[
    (".cache", None),
    (".cargo", Some("cargo")),
    (".rustup", Some("rustup")),
    (".npm", Some("npm")),
    (".yarn", Some("yarn")),
    (".pnpm-store", Some("pnpm")),
    (".local/share/pnpm", Some("pnpm")),
    (".bun", Some("bun")),
    (".deno", Some("deno")),
    (".gradle", Some("gradle")),
    (".m2", Some("mvn")),
    ("go", Some("go")),
];

/// Variables that move a tool's cache elsewhere: where they point is writable too.
const CACHE_VARIABLES: &[&str] = &[
    "CARGO_HOME",
    "RUSTUP_HOME",
    "CARGO_TARGET_DIR",
    "npm_config_cache",
    "NPM_CONFIG_CACHE",
    "YARN_CACHE_FOLDER",
    "PNPM_HOME",
    "XDG_CACHE_HOME",
    "PIP_CACHE_DIR",
    "UV_CACHE_DIR",
    "GOPATH",
    "GOMODCACHE",
    "GOCACHE",
    "GRADLE_USER_HOME",
    "TMPDIR",
];

/// The default writable set, worked out once per session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Places {
    /// The project root.
    pub(crate) root: PathBuf,
    /// Temporary directories, the session's output directory, caches, outside git dirs.
    pub(crate) extra: Vec<PathBuf>,
    /// The project's git directories (inside or outside the root).
    pub(crate) git: Vec<PathBuf>,
}

impl Places {
    /// The places of a session rooted at `root`, writing its output in `output`, for
    /// commands that get the environment `env` (looked up by name).
    pub(crate) fn find(
        root: &Path,
        output: &Path,
        env: &dyn Fn(&str) -> Option<OsString>,
    ) -> Places {
        let home = env("HOME")
            .map(PathBuf::from)
            .filter(|home| home.is_absolute());
        let mut extra = vec![std::env::temp_dir(), "/tmp".into(), "/var/tmp".into()];
        extra.push(output.to_path_buf());
        if let Some(home) = &home {
            let path = env("PATH").unwrap_or_default();
            for (dir, tool) in HOME_CACHES {
                let dir = home.join(dir);
                if !dir.exists() && tool.is_none_or(|tool| on_path(tool, &path)) {
                    // Best effort: a cache the tool cannot create in the sandbox.
                    let _ = std::fs::create_dir_all(&dir);
                }
                extra.push(dir);
            }
        }
        extra.extend(
            CACHE_VARIABLES
                .iter()
                .filter_map(|name| env(name))
                .map(PathBuf::from)
                .filter(|path| path.is_absolute()),
        );
        let git = git_dirs(root);
        extra.extend(git.iter().filter(|dir| !dir.starts_with(root)).cloned());
        Places {
            root: root.to_path_buf(),
            extra: existing(extra),
            git,
        }
    }
}

/// The paths of `paths` that exist, canonical (Landlock and bind mounts need them), once.
pub(crate) fn existing(paths: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for path in paths {
        if let Ok(path) = path.canonicalize()
            && !found.contains(&path)
        {
            found.push(path);
        }
    }
    found
}

fn on_path(tool: &str, path: &std::ffi::OsStr) -> bool {
    std::env::split_paths(path).any(|dir| dir.join(tool).is_file())
}

/// The git directories of the repository `root` is in: its `.git` (a directory, or a file
/// naming one, as in a worktree or submodule) and the common directory a worktree shares.
fn git_dirs(root: &Path) -> Vec<PathBuf> {
    let Some(dot_git) = root
        .ancestors()
        .map(|dir| dir.join(".git"))
        .find(|git| git.exists())
    else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    let git_dir = if dot_git.is_file() {
        let text = std::fs::read_to_string(&dot_git).unwrap_or_default();
        match text.trim().strip_prefix("gitdir:") {
            Some(dir) => dot_git.parent().unwrap_or(root).join(dir.trim()),
            None => return Vec::new(),
        }
    } else {
        dot_git
    };
    if let Ok(common) = std::fs::read_to_string(git_dir.join("commondir")) {
        dirs.push(git_dir.join(common.trim()));
    }
    dirs.push(git_dir);
    existing(dirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktrees_git_directories_outside_the_root_are_writable() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("main");
        let common = main.join(".git");
        let own = common.join("worktrees/wt");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("commondir"), "../..\n").unwrap();
        let tree = dir.path().join("wt");
        std::fs::create_dir_all(tree.join("src")).unwrap();
        std::fs::write(tree.join(".git"), format!("gitdir: {}\n", own.display())).unwrap();

        let output = dir.path().join("out");
        std::fs::create_dir(&output).unwrap();
        let root = tree.join("src").canonicalize().unwrap();
        let places = Places::find(&root, &output, &|_| None);
        let common = common.canonicalize().unwrap();
        let own = own.canonicalize().unwrap();
        assert_eq!(places.git, [common.clone(), own.clone()]);
        assert!(places.extra.contains(&common) && places.extra.contains(&own));
        assert!(places.extra.contains(&output.canonicalize().unwrap()));
    }

    #[test]
    fn caches_come_from_home_and_from_the_variables_that_move_them() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let cargo_home = dir.path().join("cargo-elsewhere");
        std::fs::create_dir_all(&cargo_home).unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("npm"), "").unwrap();
        let env = |name: &str| match name {
            "HOME" => Some(home.clone().into_os_string()),
            "PATH" => Some(bin.clone().into_os_string()),
            "CARGO_HOME" => Some(cargo_home.clone().into_os_string()),
            _ => None,
        };
        let places = Places::find(dir.path(), dir.path(), &env);
        let home = home.canonicalize().unwrap();
        // `.cache` is always made; `.npm` because npm is on the PATH; `.gradle` is not.
        assert!(places.extra.contains(&home.join(".cache")));
        assert!(places.extra.contains(&home.join(".npm")));
        assert!(!home.join(".gradle").exists());
        assert!(places.extra.contains(&cargo_home.canonicalize().unwrap()));
    }
}
