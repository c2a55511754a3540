//! How a session starts: its root, the bash it runs, the variables commands get or not,
//! and the shell snapshot with the secrets to redact.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::{Config, SecretsMode, ShellSnapshot};
use crate::error::Error;
use crate::output::redact::{self, Secrets};
use crate::output::spill::SpillDir;
use crate::snapshot::{Capture, Shell};

/// The session root `root`, absolute, if it is a directory.
pub(super) fn session_root(root: &Path) -> Result<PathBuf, Error> {
    let absolute = std::path::absolute(root).map_err(|err| Error::Root {
        path: root.to_path_buf(),
        reason: err.to_string(),
    })?;
    match std::fs::metadata(&absolute) {
        Ok(meta) if meta.is_dir() => Ok(absolute),
        Ok(_) => Err(Error::Root {
            path: absolute,
            reason: "is not a directory".into(),
        }),
        Err(err) => Err(Error::Root {
            path: absolute,
            reason: err.to_string(),
        }),
    }
}

/// The first executable file called `name` in this process's PATH.
pub(super) fn find_in_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// The inherited variables commands do not get, and the secrets to redact: those of the
/// inherited environment and of `env.set`. In `remove` mode, secret-named inherited
/// variables are not passed on, and their values are still redacted, in case a command
/// finds them elsewhere (a dotfile, another process's environment). `env.set` is an
/// explicit choice: passed on, and redacted.
/// The variables a call's shell starts with, as the policy may read them: the inherited
/// environment without the removed variables, with the session's own set over it. Secret-named
/// variables are left out, so that no secret value appears in a verdict.
pub(super) fn shell_environment(
    set: &[(String, String)],
    removed: &[String],
    config: &Config,
) -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, _)| !removed.contains(name) && !set.iter().any(|(set, _)| set == name))
        .chain(set.iter().cloned())
        .filter(|(name, _)| !redact::is_secret_name(name, &config.secrets))
        .collect()
}

pub(super) fn removed_variables(config: &Config) -> Vec<String> {
    let mut remove = config.env_remove.clone();
    if config.secrets.mode == SecretsMode::Remove {
        remove.extend(
            std::env::vars_os()
                .map(|(name, _)| name.to_string_lossy().into_owned())
                .filter(|name| redact::is_secret_name(name, &config.secrets))
                .filter(|name| !config.env_set.iter().any(|(set, _)| set == name)),
        );
    }
    remove
}

/// The session's shell snapshot (captured now when `shell.snapshot` is `rc`), why there is
/// none, and the secrets to redact: those of the inherited environment, `env.set`, and the
/// snapshot's exported variables. Removed variables count too: a command may still find
/// their values elsewhere.
pub(super) fn start_shell(
    config: &Config,
    bash: &Path,
    spill_dir: &SpillDir,
    env: &[(String, String)],
    env_remove: &[String],
) -> Result<(Shell, Option<String>, Secrets), Error> {
    use std::os::unix::ffi::OsStrExt as _;
    let inherited: Vec<(String, OsString)> = std::env::vars_os()
        .map(|(name, value)| (name.to_string_lossy().into_owned(), value))
        .collect();
    let capture = match config.shell_snapshot {
        ShellSnapshot::Off => Ok(None),
        ShellSnapshot::Rc => spill_dir.path().map(|dir| {
            Some(Capture {
                bash: bash.to_path_buf(),
                dir,
                env: env.to_vec(),
                env_remove: env_remove.to_vec(),
                skip: env
                    .iter()
                    .map(|(name, _)| name.clone())
                    .chain(env_remove.iter().cloned())
                    .collect(),
            })
        }),
    };
    let (capture, no_dir) = match capture {
        Ok(capture) => (capture, None),
        Err(problem) => (None, Some(problem)),
    };
    let known_secrets = inherited
        .iter()
        .filter(|(name, _)| redact::is_secret_name(name, &config.secrets))
        .map(|(name, value)| (name.clone(), value.to_string_lossy().into_owned()))
        .chain(config.env_set.iter().cloned())
        .collect();
    let (shell, exported, problem) = Shell::start(capture, &config.secrets, known_secrets);
    let known = inherited
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()))
        .chain(
            config
                .env_set
                .iter()
                .chain(&exported)
                .map(|(name, value)| (name.as_str(), value.as_bytes())),
        );
    let secrets = Secrets::new(known, &config.secrets)?;
    Ok((shell, problem.or(no_dir), secrets))
}
