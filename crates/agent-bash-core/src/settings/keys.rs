//! Every setting, declared once: its dotted key, how layers combine it, how a TOML value
//! becomes its `Config` field (range checks included), how its default is shown, and what it
//! is for. The file reader, the environment variables, the merge, the provenance of errors
//! and `Settings::explain` all work from [`SETTINGS`]; adding a setting is adding an entry.

use std::ops::Range;

use serde::de::{DeserializeOwned, IntoDeserializer as _};
use toml::de::DeValue;
use toml::{Spanned, Value};

use crate::config::Config;
use crate::error::Error;

/// How the values of several layers combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A later layer replaces the value.
    Scalar,
    /// A later layer appends its items.
    List,
    /// Entries (`env.set.NAME`) merge one by one; a later layer replaces an entry.
    Table,
}

/// Sets the `Config` field from a value, checking it (on the config built so far).
pub(super) type Apply = fn(&mut Config, Raw<'_>) -> Result<(), Problem>;
/// The value of the field, as a settings file would write it.
pub(super) type Show = fn(&Config) -> Value;

/// One setting.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    /// The dotted key: `timeout_secs`, `output.budget_bytes`.
    pub key: &'static str,
    /// How the values of several layers combine.
    pub kind: Kind,
    /// What it is for, in one line.
    pub doc: &'static str,
    apply: Apply,
    show: Show,
    /// The names `Config::validate` gives this field in its errors.
    checked_as: &'static [&'static str],
    /// For a default worked out when a session starts (no value a file could hold), what it
    /// is: `agent-bash config` shows it as a comment, so that its output stays a valid
    /// settings file.
    computed: Option<fn() -> String>,
}

impl Setting {
    pub(super) const fn new(
        key: &'static str,
        kind: Kind,
        doc: &'static str,
        apply: Apply,
        show: Show,
    ) -> Self {
        Setting {
            key,
            kind,
            doc,
            apply,
            show,
            checked_as: &[],
            computed: None,
        }
    }

    pub(super) const fn checked_as(mut self, names: &'static [&'static str]) -> Self {
        self.checked_as = names;
        self
    }

    pub(super) const fn computed(mut self, what: fn() -> String) -> Self {
        self.computed = Some(what);
        self
    }

    /// What the default is, when it is worked out as a session starts rather than a value.
    pub fn computed_default(&self) -> Option<String> {
        self.computed.map(|what| what())
    }

    /// Sets this setting's field of `config` from `value`.
    ///
    /// # Errors
    /// A `Problem` for a value of the wrong type or out of range.
    pub(crate) fn apply(&self, config: &mut Config, value: Raw<'_>) -> Result<(), Problem> {
        (self.apply)(config, value).map_err(|problem| problem.in_key(self.key))
    }

    /// This setting's value in `config`, as a settings file would write it.
    pub fn show(&self, config: &Config) -> Value {
        (self.show)(config)
    }

    /// Whether an error of `Config::validate` about `name` is about this setting.
    pub(crate) fn checked_as_name(&self, name: &str) -> bool {
        self.checked_as.contains(&name)
    }
}

/// A value as a layer holds it: parsed from a file (with its place in the text), or plain.
pub(crate) enum Raw<'i> {
    Plain(Value),
    Parsed(Spanned<DeValue<'i>>),
}

impl Raw<'_> {
    /// The value as a `T`.
    pub(super) fn get<T: DeserializeOwned>(self) -> Result<T, Problem> {
        let value = match self {
            Raw::Plain(value) => T::deserialize(value),
            Raw::Parsed(value) => T::deserialize(value.into_deserializer()),
        };
        value.map_err(Problem::from)
    }

    /// The value as one of the `choices`, by name.
    pub(super) fn choose<T: Copy>(self, choices: &[(&str, T)]) -> Result<T, Problem> {
        let name: String = self.get()?;
        choices
            .iter()
            .find(|(choice, _)| *choice == name)
            .map(|(_, value)| *value)
            .ok_or_else(|| {
                let names: Vec<String> = choices.iter().map(|(n, _)| format!("`{n}`")).collect();
                Problem::new(format!(
                    "unknown variant `{name}`, expected one of {}",
                    names.join(", ")
                ))
            })
    }
}

/// What is wrong with a value, and where in its file when that is known.
#[derive(Debug)]
pub(crate) struct Problem {
    pub message: String,
    pub span: Option<Range<usize>>,
}

impl Problem {
    pub(crate) fn new(message: impl Into<String>) -> Problem {
        Problem {
            message: message.into(),
            span: None,
        }
    }

    /// The problem, said to be about `key` (unless it names a part of it already:
    /// `secrets.patterns.NAME`).
    pub(crate) fn in_key(self, key: &str) -> Problem {
        if self
            .message
            .strip_prefix(key)
            .is_some_and(|rest| rest.starts_with(['.', ':']))
        {
            return self;
        }
        Problem {
            message: format!("{key}: {}", self.message),
            span: self.span,
        }
    }
}

impl From<toml::de::Error> for Problem {
    fn from(err: toml::de::Error) -> Problem {
        Problem {
            message: err.message().trim_end().to_string(),
            span: err.span(),
        }
    }
}

impl From<Error> for Problem {
    fn from(err: Error) -> Problem {
        match err {
            Error::Config { key, reason } => Problem::new(format!("{key}: {reason}")),
            other => Problem::new(other.to_string()),
        }
    }
}
