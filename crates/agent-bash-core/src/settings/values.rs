//! How the settings table's entries read and show values: seconds and counts of at least
//! one, paths under `~/`, the policy's fallback decisions, and TOML values for `show`.

use std::path::PathBuf;
use std::time::Duration;

use toml::Value;

use super::keys::{Problem, Raw};
use crate::config::Config;
use agent_bash_policy::{Decision, Policy};

/// A number of seconds that must be at least 1.
pub(super) fn seconds(value: Raw<'_>) -> Result<Duration, Problem> {
    match value.get()? {
        0 => Err(Problem::new("must be at least 1")),
        secs => Ok(Duration::from_secs(secs)),
    }
}

/// A count that must be at least 1 (a limit of 0 would not mean "none").
pub(super) fn at_least_one(value: Raw<'_>) -> Result<u64, Problem> {
    match value.get()? {
        0 => Err(Problem::new("must be at least 1")),
        n => Ok(n),
    }
}

/// An absolute path, or one under the home directory written `~/…`.
/// A list of paths, each absolute or under `~/`.
pub(super) fn home_paths(value: Raw<'_>) -> Result<Vec<PathBuf>, Problem> {
    let paths: Vec<String> = value.get()?;
    paths.iter().map(|path| home_path(path)).collect()
}

/// Paths as a settings file writes them.
pub(super) fn shown_paths(paths: &[PathBuf]) -> Value {
    Value::Array(
        paths
            .iter()
            .map(|path| Value::String(path.display().to_string()))
            .collect(),
    )
}

pub(super) fn home_path(path: &str) -> Result<PathBuf, Problem> {
    let path = match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    };
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(Problem::new(format!(
            "`{}` is not an absolute path",
            path.display()
        )))
    }
}

/// A fallback decision: `allow`, `ask` or `deny` (`suggest` is a rule's).
pub(super) fn fallback(value: Raw<'_>) -> Result<Decision, Problem> {
    match value.get()? {
        Decision::Suggest => Err(Problem::new(
            "`suggest` is a rule's decision; expected `allow`, `ask` or `deny`",
        )),
        decision => Ok(decision),
    }
}

/// The user's rules must compile and their examples hold; disabled names must exist.
pub(super) fn policy_holds(config: &Config) -> Result<(), Problem> {
    Policy::new(&config.policy)
        .map(drop)
        .map_err(|err| Problem::new(err.to_string()))
}

pub(super) fn int(number: impl TryInto<i64>) -> Value {
    Value::Integer(number.try_into().unwrap_or(i64::MAX))
}

pub(super) fn strings(items: &[String]) -> Value {
    Value::Array(items.iter().cloned().map(Value::String).collect())
}

pub(super) fn pairs(entries: &[(String, String)]) -> Value {
    let table = entries
        .iter()
        .map(|(name, value)| (name.clone(), Value::String(value.clone())))
        .collect();
    Value::Table(table)
}

pub(super) fn name_of<T: PartialEq>(value: T, choices: &[(&str, T)]) -> Value {
    let name = choices
        .iter()
        .find(|(_, choice)| *choice == value)
        .map_or("", |(name, _)| name);
    Value::String(name.to_string())
}

pub(super) fn path_or(path: Option<&PathBuf>, otherwise: impl FnOnce() -> String) -> Value {
    Value::String(path.map_or_else(otherwise, |path| path.display().to_string()))
}
