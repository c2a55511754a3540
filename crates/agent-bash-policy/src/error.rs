//! The error of loading a policy: what is wrong with which rule. Checking a command never
//! fails; only building a [`crate::Policy`] does.

/// Why [`crate::Policy::new`] refused the settings. `rule` reads like `policy rule 2
/// ("no force push")`: the rule's position in `[[policy.rules]]`, counted from 1, and its name
/// or pattern.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The rule has neither `command` nor `regex`.
    #[error("{rule}: needs `command` or `regex` (or both)")]
    MissingPattern { rule: String },
    /// `command` is blank or `regex` is empty (`field` says which).
    #[error("{rule}: `{field}` is empty")]
    EmptyPattern { rule: String, field: &'static str },
    /// `command` cannot be split into words (open quote, shell operator, only `*`).
    #[error("{rule}: `command`: {problem}")]
    BadCommand { rule: String, problem: String },
    /// `regex` does not compile.
    #[error("{rule}: `regex`: {problem}")]
    BadRegex { rule: String, problem: String },
    /// An entry of `examples` that the rule does not match.
    #[error("{rule}: `examples`: {example:?} does not match the rule")]
    ExampleNotMatched { rule: String, example: String },
    /// An entry of `counter_examples` that the rule matches.
    #[error("{rule}: `counter_examples`: {example:?} matches the rule")]
    CounterExampleMatched { rule: String, example: String },
    /// A `disable` entry that names no built-in rule; `known` lists the names.
    #[error("policy `disable`: {name:?} is not a built-in rule (built-in rules: {known})")]
    UnknownBuiltin { name: String, known: String },
    /// A `suggest` rule without `tool`, or `tool`/`message` on another rule (or `reason` on
    /// a `suggest` rule, which says what to do with `message`).
    #[error("{rule}: {problem}")]
    BadSuggestion { rule: String, problem: &'static str },
    /// `default` or `unknown` set to `suggest`, which only a rule can decide (`field` says
    /// which).
    #[error("policy `{field}`: `suggest` is a rule's decision (`allow`, `ask` or `deny` here)")]
    SuggestNotAFallback { field: &'static str },
    /// A `host` that names no built-in set; `known` lists the names.
    #[error("policy `host`: {name:?} is not a known host (known: {known}, or \"none\")")]
    UnknownHost { name: String, known: String },
}
