//! Settings: the layered configuration that becomes a `Config`, and where each value came
//! from. Reads files and the environment it is given; spawns nothing.
//!
//! Layers, later ones winning: the built-in defaults, the user file
//! (`~/.config/agent-bash/config.toml`), the project file (`<root>/.agent-bash.toml`), a
//! file named on the command line (`--config`), the environment (`AGENT_BASH_*`), then the
//! command-line flags. Scalars are replaced by later layers; lists are appended to; tables
//! (`env.set`) merge key by key. Every layer is checked on its own before the merge, so a
//! mistake is reported against the file (and line) or variable it is in. An unknown key is an
//! error, never ignored.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::{Table, Value};

use crate::config::{Config, OnTimeout, SecretsMode};
use crate::error::Error;
use crate::output::redact::BUILTIN_PATTERNS;
use agent_bash_policy::{Policy, PolicySettings};

/// The project file's name, in the session root.
pub const PROJECT_FILE: &str = ".agent-bash.toml";

/// Environment variables that set values start with this.
pub const ENV_PREFIX: &str = "AGENT_BASH_";

/// One source of settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Default,
    UserFile(PathBuf),
    ProjectFile(PathBuf),
    ConfigFile(PathBuf),
    Env(String),
    Flag(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Default => write!(f, "default"),
            Source::UserFile(path) => write!(f, "user file {}", path.display()),
            Source::ProjectFile(path) => write!(f, "project file {}", path.display()),
            Source::ConfigFile(path) => write!(f, "--config {}", path.display()),
            Source::Env(name) => write!(f, "environment {name}"),
            Source::Flag(flag) => write!(f, "flag --{flag}"),
        }
    }
}

/// What to load besides the defaults.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    /// The user file; `None`: `~/.config/agent-bash/config.toml` (XDG), if it exists.
    pub user_file: Option<PathBuf>,
    /// Skip the user file altogether.
    pub no_user_file: bool,
    /// A file named on the command line (must exist).
    pub config_file: Option<PathBuf>,
    /// The environment to read `AGENT_BASH_*` from (usually `std::env::vars()`).
    pub env: Vec<(String, String)>,
    /// Values from command-line flags, by key (`timeout_secs`, `output.budget_bytes`).
    pub flags: Vec<(String, Value)>,
}

/// The effective settings: the engine's `Config` and, for each key, the layers it came from.
#[derive(Clone, Debug)]
pub struct Settings {
    pub config: Config,
    /// Dotted key → the sources that set it (several for lists), in layer order.
    pub origins: BTreeMap<String, Vec<Source>>,
    /// The merged values of every key that some layer set.
    pub values: Table,
}

/// The shape of a settings file: every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSettings {
    timeout_secs: Option<u64>,
    max_timeout_secs: Option<u64>,
    kill_grace_ms: Option<u64>,
    on_timeout: Option<OnTimeoutSetting>,
    max_jobs: Option<usize>,
    max_wait_secs: Option<u64>,
    bash: Option<PathBuf>,
    max_command_bytes: Option<usize>,
    output: Option<OutputSettings>,
    env: Option<EnvSettings>,
    secrets: Option<SecretsSettings>,
    policy: Option<PolicySettings>,
    audit: Option<AuditSettings>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditSettings {
    enabled: Option<bool>,
    path: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputSettings {
    budget_bytes: Option<usize>,
    budget_lines: Option<usize>,
    head_percent: Option<usize>,
    line_clip_chars: Option<usize>,
    spill_cap_bytes: Option<u64>,
    spill_dir: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvSettings {
    set: Option<BTreeMap<String, String>>,
    remove: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretsSettings {
    mode: Option<SecretsModeSetting>,
    names: Option<Vec<String>>,
    ignore_names: Option<Vec<String>>,
    patterns: Option<BTreeMap<String, String>>,
    min_length: Option<usize>,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum SecretsModeSetting {
    Redact,
    Remove,
    Pass,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum OnTimeoutSetting {
    Background,
    Kill,
}

/// Every key a layer may set, with whether it is a list (appended across layers). The
/// environment variable of a key is `AGENT_BASH_` + the key upper-cased, `.` → `_`.
pub const KEYS: &[(&str, bool)] = &[
    ("timeout_secs", false),
    ("max_timeout_secs", false),
    ("kill_grace_ms", false),
    ("on_timeout", false),
    ("max_jobs", false),
    ("max_wait_secs", false),
    ("bash", false),
    ("max_command_bytes", false),
    ("output.budget_bytes", false),
    ("output.budget_lines", false),
    ("output.head_percent", false),
    ("output.line_clip_chars", false),
    ("output.spill_cap_bytes", false),
    ("output.spill_dir", false),
    ("env.remove", true),
    ("secrets.mode", false),
    ("secrets.names", true),
    ("secrets.ignore_names", true),
    ("secrets.min_length", false),
    ("policy.default", false),
    ("policy.unknown", false),
    ("policy.disable", true),
    ("policy.rules", true),
    ("audit.enabled", false),
    ("audit.path", false),
];

/// The environment variable that sets `key`.
pub fn env_name(key: &str) -> String {
    format!("{ENV_PREFIX}{}", key.replace('.', "_").to_ascii_uppercase())
}

/// The user file's usual place: `$XDG_CONFIG_HOME/agent-bash/config.toml` or
/// `~/.config/agent-bash/config.toml`.
pub fn default_user_file() -> Option<PathBuf> {
    use etcetera::BaseStrategy as _;
    let strategy = etcetera::choose_base_strategy().ok()?;
    Some(strategy.config_dir().join("agent-bash").join("config.toml"))
}

/// Loads every layer for a session rooted at `root`.
///
/// # Errors
/// `Error::Config` naming the file and line, variable or flag, and the key, for a malformed
/// file, an unknown key, a value of the wrong type, or values that do not fit together.
pub fn load(root: &Path, sources: &Sources) -> Result<Settings, Error> {
    let mut layers: Vec<(Source, Table)> = Vec::new();
    if !sources.no_user_file {
        let explicit = sources.user_file.is_some();
        if let Some(path) = sources.user_file.clone().or_else(default_user_file)
            && (explicit || path.exists())
        {
            let table = read_file(&path)?;
            layers.push((Source::UserFile(path), table));
        }
    }
    let project = root.join(PROJECT_FILE);
    if project.exists() {
        let table = read_file(&project)?;
        layers.push((Source::ProjectFile(project), table));
    }
    if let Some(path) = &sources.config_file {
        let table = read_file(path)?;
        layers.push((Source::ConfigFile(path.clone()), table));
    }
    for (name, value) in &sources.env {
        let Some(key) = KEYS
            .iter()
            .find(|(key, _)| env_name(key) == *name)
            .map(|(key, list)| (*key, *list))
        else {
            // Other AGENT_BASH_* variables (AGENT_BASH=1 in every command) are not settings.
            continue;
        };
        let table = single(key.0, env_value(value, key.1));
        check(&table, &format!("environment variable {name}"))?;
        layers.push((Source::Env(name.clone()), table));
    }
    for (key, value) in &sources.flags {
        let table = single(key, value.clone());
        check(&table, &format!("flag for {key}"))?;
        layers.push((Source::Flag(key.replace(['.', '_'], "-")), table));
    }
    let mut values = Table::new();
    let mut origins: BTreeMap<String, Vec<Source>> = BTreeMap::new();
    for (source, table) in layers {
        merge(&mut values, table, "", &source, &mut origins);
    }
    let merged: FileSettings = Value::Table(values.clone())
        .try_into()
        .map_err(|err: toml::de::Error| Error::config("settings", err.message().to_string()))?;
    let config = apply(Config::default(), merged)
        .and_then(|config| config.validate().map(|()| config))
        .map_err(|err| match err {
            Error::Config { key, reason } => {
                let from = origin_of(&origins, &key);
                Error::Config {
                    key,
                    reason: format!("{reason} (set by {from})"),
                }
            }
            other => other,
        })?;
    Ok(Settings {
        config,
        origins,
        values,
    })
}

fn origin_of(origins: &BTreeMap<String, Vec<Source>>, setting: &str) -> String {
    origins
        .iter()
        .find(|(key, _)| key.ends_with(setting) || setting.contains(key.as_str()))
        .and_then(|(_, sources)| sources.last())
        .map_or_else(|| "default".to_string(), ToString::to_string)
}

/// Reads and checks one settings file.
fn read_file(path: &Path) -> Result<Table, Error> {
    let text = std::fs::read_to_string(path).map_err(|err| Error::ConfigFile {
        path: path.to_path_buf(),
        reason: err.to_string(),
    })?;
    let table: Table = toml::from_str(&text).map_err(|err: toml::de::Error| Error::ConfigFile {
        path: path.to_path_buf(),
        reason: describe(&err, &text),
    })?;
    // Checked again as text, so that an unknown key or a wrong type has its line.
    let settings = toml::from_str::<FileSettings>(&text).map_err(|err| Error::ConfigFile {
        path: path.to_path_buf(),
        reason: describe(&err, &text),
    })?;
    // A file's own rules must hold on their own (their examples are checked here), so that
    // a broken rule is reported against the file it is in.
    if let Some(policy) = &settings.policy {
        Policy::new(policy).map_err(|err| Error::ConfigFile {
            path: path.to_path_buf(),
            reason: format!("[policy] {err}"),
        })?;
    }
    Ok(table)
}

/// `line 3: unknown field `budget`, expected …`
fn describe(err: &toml::de::Error, text: &str) -> String {
    let message = err.message().trim_end();
    match err.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {message}")
        }
        None => message.to_string(),
    }
}

/// Checks a one-key layer (a variable, a flag) against the file shape.
fn check(table: &Table, what: &str) -> Result<(), Error> {
    Value::Table(table.clone())
        .try_into::<FileSettings>()
        .map(|_| ())
        .map_err(|err| Error::config(what, err.message().to_string()))
}

/// `{a: {b: value}}` for the key `a.b`.
fn single(key: &str, value: Value) -> Table {
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().unwrap_or(key);
    let mut table = Table::new();
    table.insert(last.to_string(), value);
    for part in parts.into_iter().rev() {
        let mut outer = Table::new();
        outer.insert(part.to_string(), Value::Table(table));
        table = outer;
    }
    table
}

/// A variable's text as a TOML value: a number or a boolean if it reads as one, a list of
/// comma-separated strings for a list key, else the text itself.
fn env_value(text: &str, list: bool) -> Value {
    if list {
        return Value::Array(
            text.split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .map(|item| Value::String(item.to_string()))
                .collect(),
        );
    }
    if let Ok(number) = text.trim().parse::<i64>() {
        return Value::Integer(number);
    }
    match text.trim() {
        "true" => Value::Boolean(true),
        "false" => Value::Boolean(false),
        _ => Value::String(text.to_string()),
    }
}

/// Merges `layer` into `into`: tables key by key, lists appended, scalars replaced.
fn merge(
    into: &mut Table,
    layer: Table,
    prefix: &str,
    source: &Source,
    origins: &mut BTreeMap<String, Vec<Source>>,
) {
    for (key, value) in layer {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match (into.get_mut(&key), value) {
            (Some(Value::Table(existing)), Value::Table(table)) => {
                merge(existing, table, &path, source, origins);
            }
            (None, Value::Table(table)) => {
                let mut fresh = Table::new();
                merge(&mut fresh, table, &path, source, origins);
                into.insert(key, Value::Table(fresh));
            }
            (Some(Value::Array(existing)), Value::Array(items)) => {
                existing.extend(items);
                origins.entry(path).or_default().push(source.clone());
            }
            (_, value) => {
                let list = matches!(value, Value::Array(_));
                into.insert(key, value);
                let sources = origins.entry(path).or_default();
                if !list {
                    sources.clear();
                }
                sources.push(source.clone());
            }
        }
    }
}

/// The defaults with the merged settings applied.
fn apply(mut config: Config, settings: FileSettings) -> Result<Config, Error> {
    let seconds = |name: &str, secs: u64| {
        if secs == 0 {
            Err(Error::config(name, "must be at least 1"))
        } else {
            Ok(Duration::from_secs(secs))
        }
    };
    if let Some(secs) = settings.timeout_secs {
        config.default_timeout = seconds("timeout_secs", secs)?;
    }
    if let Some(secs) = settings.max_timeout_secs {
        config.max_timeout = seconds("max_timeout_secs", secs)?;
    }
    if let Some(ms) = settings.kill_grace_ms {
        config.kill_grace = Duration::from_millis(ms);
    }
    if let Some(action) = settings.on_timeout {
        config.on_timeout = match action {
            OnTimeoutSetting::Background => OnTimeout::Background,
            OnTimeoutSetting::Kill => OnTimeout::Kill,
        };
    }
    if let Some(max) = settings.max_jobs {
        config.max_jobs = max;
    }
    if let Some(secs) = settings.max_wait_secs {
        config.max_wait = Duration::from_secs(secs);
    }
    if let Some(bash) = settings.bash {
        config.bash = Some(bash);
    }
    if let Some(bytes) = settings.max_command_bytes {
        config.max_command_bytes = bytes;
    }
    if let Some(output) = settings.output {
        let budget = &mut config.budget;
        budget.bytes = output.budget_bytes.unwrap_or(budget.bytes);
        budget.lines = output.budget_lines.unwrap_or(budget.lines);
        budget.head_percent = output.head_percent.unwrap_or(budget.head_percent);
        budget.line_clip_chars = output.line_clip_chars.unwrap_or(budget.line_clip_chars);
        if let Some(cap) = output.spill_cap_bytes {
            config.spill_cap_bytes = cap;
        }
        if let Some(dir) = output.spill_dir {
            config.spill_parent = Some(dir);
        }
    }
    if let Some(env) = settings.env {
        config.env_set = env.set.unwrap_or_default().into_iter().collect();
        config.env_remove = env.remove.unwrap_or_default();
    }
    if let Some(secrets) = settings.secrets {
        let into = &mut config.secrets;
        if let Some(mode) = secrets.mode {
            into.mode = match mode {
                SecretsModeSetting::Redact => SecretsMode::Redact,
                SecretsModeSetting::Remove => SecretsMode::Remove,
                SecretsModeSetting::Pass => SecretsMode::Pass,
            };
        }
        into.names = secrets.names.unwrap_or_default();
        into.ignore_names = secrets.ignore_names.unwrap_or_default();
        into.patterns = secrets.patterns.unwrap_or_default().into_iter().collect();
        into.min_length = secrets.min_length.unwrap_or(into.min_length);
        // Compiled here too, so that a bad pattern is reported against its layer.
        crate::output::redact::Secrets::new([], into)?;
    }
    if let Some(policy) = settings.policy {
        Policy::new(&policy).map_err(|err| Error::config("policy", err.to_string()))?;
        config.policy = policy;
    }
    if let Some(audit) = settings.audit {
        config.audit.enabled = audit.enabled.unwrap_or(config.audit.enabled);
        config.audit.path = audit.path.or(config.audit.path);
    }
    Ok(config)
}

impl Settings {
    /// The effective settings as TOML, each value followed by where it came from.
    pub fn explain(&self) -> String {
        let mut out = String::new();
        let defaults = defaults_table();
        let mut keys: Vec<String> = KEYS.iter().map(|(key, _)| (*key).to_string()).collect();
        // Table entries (`env.set.NAME`, `secrets.patterns.NAME`) are shown one by one.
        keys.extend(
            self.origins
                .keys()
                .filter(|key| key.starts_with("env.set.") || key.starts_with("secrets.patterns."))
                .cloned(),
        );
        keys.extend(
            BUILTIN_PATTERNS
                .iter()
                .map(|(name, _)| format!("secrets.patterns.{name}"))
                .filter(|key| !self.origins.contains_key(key)),
        );
        let mut section = String::new();
        for key in keys {
            let (head, leaf) = key.rsplit_once('.').unwrap_or(("", &key));
            // `env.set.NAME` is shown as `NAME = "…"` under `[env.set]`.
            if head != section {
                let _ = writeln!(out, "\n[{head}]");
                section = head.to_string();
            }
            let value = lookup(&self.values, &key).or_else(|| lookup(&defaults, &key));
            let shown = value.map_or_else(|| "(none)".to_string(), |v| v.to_string());
            let from = self.origins.get(&key).map_or_else(
                || "default".to_string(),
                |sources| {
                    sources
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(" + ")
                },
            );
            let _ = writeln!(out, "{leaf} = {shown}  # {from}");
        }
        let _ = writeln!(
            out,
            "\n# Built-in policy rules (each denies; `policy.disable` switches one off by name):"
        );
        for (name, what) in agent_bash_policy::builtin_rules() {
            let state = if self.config.policy.disable.iter().any(|off| off == name) {
                "off"
            } else {
                "on"
            };
            let _ = writeln!(out, "#   {name} ({state}): {what}");
        }
        out.trim_start().to_string()
    }
}

fn lookup<'a>(table: &'a Table, key: &str) -> Option<&'a Value> {
    let mut parts = key.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}

/// The built-in defaults, in the files' shape (what `explain` shows for unset keys).
fn defaults_table() -> Table {
    let config = Config::default();
    let int = |n: u64| Value::Integer(i64::try_from(n).unwrap_or(i64::MAX));
    let mut table = Table::new();
    table.insert("timeout_secs".into(), int(config.default_timeout.as_secs()));
    table.insert("max_timeout_secs".into(), int(config.max_timeout.as_secs()));
    table.insert(
        "kill_grace_ms".into(),
        int(u64::try_from(config.kill_grace.as_millis()).unwrap_or(u64::MAX)),
    );
    table.insert("on_timeout".into(), Value::String("background".into()));
    table.insert("max_jobs".into(), int(config.max_jobs as u64));
    table.insert("max_wait_secs".into(), int(config.max_wait.as_secs()));
    table.insert("bash".into(), Value::String("bash (from PATH)".into()));
    table.insert(
        "max_command_bytes".into(),
        int(config.max_command_bytes as u64),
    );
    let mut output = Table::new();
    output.insert("budget_bytes".into(), int(config.budget.bytes as u64));
    output.insert("budget_lines".into(), int(config.budget.lines as u64));
    output.insert(
        "head_percent".into(),
        int(config.budget.head_percent as u64),
    );
    output.insert(
        "line_clip_chars".into(),
        int(config.budget.line_clip_chars as u64),
    );
    output.insert("spill_cap_bytes".into(), int(config.spill_cap_bytes));
    output.insert(
        "spill_dir".into(),
        Value::String(
            std::env::temp_dir()
                .join("agent-bash")
                .display()
                .to_string(),
        ),
    );
    table.insert("output".into(), Value::Table(output));
    let mut env = Table::new();
    env.insert("remove".into(), Value::Array(Vec::new()));
    table.insert("env".into(), Value::Table(env));
    let mut secrets = Table::new();
    secrets.insert("mode".into(), Value::String("redact".into()));
    secrets.insert("names".into(), Value::Array(Vec::new()));
    secrets.insert("ignore_names".into(), Value::Array(Vec::new()));
    secrets.insert("min_length".into(), int(config.secrets.min_length as u64));
    let patterns = BUILTIN_PATTERNS
        .iter()
        .map(|(name, pattern)| (name.to_string(), Value::String(pattern.to_string())))
        .collect();
    secrets.insert("patterns".into(), Value::Table(patterns));
    table.insert("secrets".into(), Value::Table(secrets));
    let mut policy = Table::new();
    policy.insert("default".into(), Value::String("allow".into()));
    policy.insert("unknown".into(), Value::String("ask".into()));
    policy.insert("disable".into(), Value::Array(Vec::new()));
    policy.insert("rules".into(), Value::Array(Vec::new()));
    table.insert("policy".into(), Value::Table(policy));
    let mut audit = Table::new();
    audit.insert("enabled".into(), Value::Boolean(true));
    audit.insert(
        "path".into(),
        Value::String("audit.jsonl in the session's output directory".into()),
    );
    table.insert("audit".into(), Value::Table(audit));
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap_or_else(|err| panic!("{err}"));
        path
    }

    fn sources(user: Option<PathBuf>) -> Sources {
        Sources {
            user_file: user,
            no_user_file: false,
            ..Sources::default()
        }
    }

    #[test]
    fn layers_override_scalars_append_lists_and_say_where_values_came_from() {
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
        let user = write(
            dir.path(),
            "user.toml",
            "timeout_secs = 30\nmax_jobs = 4\n[env]\nremove = [\"A\"]\nset = { X = \"1\", Y = \"2\" }\n",
        );
        write(
            dir.path(),
            PROJECT_FILE,
            "timeout_secs = 60\n[output]\nbudget_lines = 500\n[env]\nremove = [\"B\"]\nset = { Y = \"3\" }\n",
        );
        let mut sources = sources(Some(user.clone()));
        sources.env = vec![
            ("AGENT_BASH_MAX_JOBS".into(), "8".into()),
            ("AGENT_BASH_ENV_REMOVE".into(), "C, D".into()),
            ("AGENT_BASH".into(), "1".into()),
        ];
        sources.flags = vec![("output.budget_lines".into(), Value::Integer(700))];
        let settings = load(dir.path(), &sources).unwrap_or_else(|err| panic!("{err}"));
        let config = &settings.config;
        assert_eq!(config.default_timeout, Duration::from_secs(60));
        assert_eq!(config.max_jobs, 8);
        assert_eq!(config.budget.lines, 700);
        assert_eq!(config.env_remove, ["A", "B", "C", "D"]);
        assert_eq!(
            config.env_set,
            [("X".to_string(), "1".to_string()), ("Y".into(), "3".into())]
        );
        let project = dir.path().join(PROJECT_FILE);
        assert_eq!(
            settings.origins["timeout_secs"],
            [Source::ProjectFile(project.clone())]
        );
        assert_eq!(
            settings.origins["max_jobs"],
            [Source::Env("AGENT_BASH_MAX_JOBS".into())]
        );
        assert_eq!(
            settings.origins["env.remove"],
            [
                Source::UserFile(user.clone()),
                Source::ProjectFile(project.clone()),
                Source::Env("AGENT_BASH_ENV_REMOVE".into())
            ]
        );
        let explained = settings.explain();
        assert!(
            explained.contains(&format!(
                "timeout_secs = 60  # project file {}",
                project.display()
            )),
            "{explained}"
        );
        assert!(
            explained.contains("budget_lines = 700  # flag --output-budget-lines"),
            "{explained}"
        );
        assert!(
            explained.contains("max_timeout_secs = 3600  # default"),
            "{explained}"
        );
        assert!(
            explained.contains("[env.set]\nX = \"1\"  # user file"),
            "{explained}"
        );
    }

    #[track_caller]
    fn check_error(file: &str, expected: &[&str]) {
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
        write(dir.path(), PROJECT_FILE, file);
        let err = load(
            dir.path(),
            &Sources {
                no_user_file: true,
                ..Sources::default()
            },
        )
        .err()
        .map(|err| err.to_string())
        .unwrap_or_default();
        for part in expected {
            assert!(err.contains(part), "{part:?} not in {err:?}");
        }
        assert!(err.contains(PROJECT_FILE), "names the file: {err}");
    }

    #[test]
    fn mistakes_name_the_file_the_line_and_the_key() {
        check_error(
            "timeout_secs = 30\nbudget = 5\n",
            &["line 2", "unknown field `budget`"],
        );
        check_error(
            "[output]\nbudget_bytes = \"big\"\n",
            &["line 2", "invalid type"],
        );
        check_error("timeout_secs = \n", &["line 1"]);
        check_error(
            "on_timeout = \"later\"\n",
            &["line 1", "unknown variant `later`"],
        );
        check_error(
            "[output]\nhead_percent = 101\n",
            &["head_percent", "set by project file"],
        );
        check_error("timeout_secs = 0\n", &["timeout_secs", "at least 1"]);
    }

    #[test]
    fn bad_variables_and_missing_files_are_errors_too() {
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("{err}"));
        let mut sources = Sources {
            no_user_file: true,
            ..Sources::default()
        };
        sources.env = vec![("AGENT_BASH_MAX_JOBS".into(), "many".into())];
        let err = load(dir.path(), &sources)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("AGENT_BASH_MAX_JOBS"), "{err}");
        let sources = Sources {
            no_user_file: true,
            config_file: Some(dir.path().join("missing.toml")),
            ..Sources::default()
        };
        let err = load(dir.path(), &sources)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("missing.toml") && err.contains("No such file"),
            "{err}"
        );
        // With nothing set, the defaults.
        let settings = load(
            dir.path(),
            &Sources {
                no_user_file: true,
                ..Sources::default()
            },
        )
        .unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(settings.config.max_jobs, Config::default().max_jobs);
        assert!(settings.origins.is_empty());
    }
}
