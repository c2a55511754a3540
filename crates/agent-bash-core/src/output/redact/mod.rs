//! Secret redaction: the stage after line assembly. Values of secret-named environment
//! variables and well-known token shapes are replaced by `[redacted:NAME]` once sanitizing
//! and assembly can join no more bytes (a colour code or a NUL inside a secret is gone by
//! then), and before the window and the files see the text, so the model's text, the JSON,
//! spill files and job files all hold the same redacted stream, and every count describes
//! it. A binary stream is redacted as raw bytes on its way to its file.
//!
//! A value of at least `min_length` bytes is replaced wherever it appears, in every form it
//! is printed in (`printed`: escaped by `declare -p`, JSON, `printf %q`…), and so is each
//! long enough line of a multi-line value (`head -3` of a key). A shorter one would match
//! everywhere (`root` in `/root`), so it is replaced only right after its name, as `env`,
//! `set`, `declare -p`, `/proc/*/environ`, YAML, JSON and tables print variables
//! (`named_pattern`): the name stays, the value becomes the label. The password of a URL
//! (`postgres://u:pw@h`) is a secret whatever the variable's name.
//!
//! Streaming: a secret may arrive split across two reads. The redactor passes on only what
//! no later byte can turn into a secret, and holds back the rest:
//! - the line being written (single-line secrets and token shapes cannot cross a `\n`, and
//!   the later stages only show complete lines while a command runs, so holding it delays
//!   nothing the model would see);
//! - a private key block that has begun and not yet ended;
//! - the start of a multi-line secret value (a PEM key kept in a variable).
//!
//! A line longer than `MAX_HOLD_BYTES` is passed on in pieces, keeping back as many bytes as
//! the longest secret, so memory stays bounded; a token-shaped match longer than that at a
//! piece's edge can then escape (a secret value cannot). A private key block cut that way
//! is replaced, and the rest of it dropped up to its end line.
//!
//! Here: what to redact (`Secrets`, compiled once per session) and how it is found; the
//! streaming stage of one stream is `stream`'s `Redactor`.

use std::ops::Range;

use agent_bash_policy::glob;
use memchr::memmem;
use regex_automata::meta::Regex;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input};

use super::printed;
use crate::config::{KIB, SecretsConfig, SecretsMode};
use crate::error::Error;

mod stream;

pub(crate) use stream::Redactor;

/// Most bytes held back waiting for a line's end (beyond the longest secret).
pub(crate) const MAX_HOLD_BYTES: usize = 64 * KIB;

/// Longest environment value treated as a secret; longer values are not matched.
const MAX_SECRET_BYTES: usize = 64 * KIB;

/// The built-in token shapes: (name, regex). A setting of the same name replaces one; an
/// empty regex switches it off. A shape with a capture group replaces only the group.
/// Distinctive prefixes need no word boundary before them, so a token glued to a word
/// (`x$TOKEN`) is still found. Each begins with a literal, which keeps the scan for them
/// a vectorised literal search (a leading class or `(?i)` makes it an automaton over every
/// byte, several times slower).
pub(crate) const BUILTIN_PATTERNS: &[(&str, &str)] = &[
    ("github_token", r"gh[pousr]_[A-Za-z0-9]{36,}(?-u:\b)"),
    ("github_pat", r"github_pat_[A-Za-z0-9_]{22,}"),
    ("gitlab_token", r"glpat-[A-Za-z0-9_-]{20,}"),
    ("aws_access_key", r"(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)"),
    (
        "aws_secret_access_key",
        r#"(?:aws_secret_access_key|AWS_SECRET_ACCESS_KEY|SecretAccessKey)["']?[ \t]*[=:][ \t]*["']?([A-Za-z0-9/+=]{40})(?-u:\b)"#,
    ),
    ("api_key_sk", r"(?-u:\b)sk-[A-Za-z0-9][A-Za-z0-9_-]{19,}"),
    ("stripe_key", r"[sr]k_(?:live|test)_[A-Za-z0-9]{10,}"),
    ("huggingface_token", r"hf_[A-Za-z0-9]{30,}(?-u:\b)"),
    ("npm_token", r"npm_[A-Za-z0-9]{36,}(?-u:\b)"),
    ("google_api_key", r"AIza[0-9A-Za-z_-]{35}"),
    ("slack_token", r"xox[abposr]-[A-Za-z0-9-]{10,}"),
    (
        "jwt",
        r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{0,}",
    ),
    ("url_password", r#"://[^\s/:@'"]*:([^\s/@'"]+)@"#),
    (
        "private_key",
        r"(?s)-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=:, \t\n-]*)",
    ),
];

/// Name shapes of secret variables (upper-cased names; `*` is any run of characters).
pub(crate) const SECRET_NAMES: &[&str] = &[
    "*_KEY",
    "*APIKEY*",
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_PASS",
    "*_PWD",
    "*PASSPHRASE*",
    "*CREDENTIAL*",
    "*PRIVATE*",
];

/// The start and end markers of a PEM block, which may span many lines.
const BEGIN: &[u8] = b"-----BEGIN";
const END: &[u8] = b"-----END";

/// True if and only if `byte` may stand in the body of a PEM block (base64, headers).
fn is_block_body(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"+/=:, \t\n-".contains(&byte)
}

/// A variable's name and value.
type Variable<'a> = (&'a str, &'a [u8]);

/// What to redact, compiled once per session and shared by every stream.
#[derive(Debug)]
pub struct Secrets {
    /// One pattern per secret value (its forms and lines), then one per short value beside
    /// its name, then one per token shape.
    regex: Option<Regex>,
    /// The replacement text of each pattern, by pattern index.
    labels: Vec<Vec<u8>>,
    /// The forms of the secret values, each with its pattern's index.
    values: Vec<(Vec<u8>, usize)>,
    /// Index of the first pattern of a short value beside its name (after the values).
    named_from: usize,
    /// For each such pattern, the forms its value may be printed in, longest first: a match
    /// ends with one of them, and only that part is replaced.
    named: Vec<Vec<Vec<u8>>>,
    /// Whether each pattern replaces only its first capture group.
    grouped: Vec<bool>,
    /// Forms of the values that span lines: their start must be held back.
    multi_line: Vec<Vec<u8>>,
    /// Bytes kept back when a long line is passed on in pieces.
    keep_bytes: usize,
    /// The patterns of private key blocks, if any: a block in progress must be held back.
    blocks: Vec<usize>,
    begin: memmem::Finder<'static>,
}

/// The regex sources and what goes with each, as `Secrets::new` collects them.
#[derive(Default)]
struct Sources {
    sources: Vec<String>,
    labels: Vec<Vec<u8>>,
    grouped: Vec<bool>,
}

impl Sources {
    fn push(&mut self, source: String, name: &str, grouped: bool) {
        self.sources.push(source);
        self.labels.push(format!("[redacted:{name}]").into_bytes());
        self.grouped.push(grouped);
    }
}

impl Secrets {
    /// Nothing to redact.
    pub fn none() -> Secrets {
        Secrets {
            regex: None,
            labels: Vec::new(),
            values: Vec::new(),
            named_from: 0,
            named: Vec::new(),
            grouped: Vec::new(),
            multi_line: Vec::new(),
            keep_bytes: 0,
            blocks: Vec::new(),
            begin: memmem::Finder::new(BEGIN),
        }
    }

    /// The secrets of `env` (the variables commands see) under `config`.
    ///
    /// # Errors
    /// `Error::Config` naming the pattern, for a token pattern that is not a valid regex.
    pub fn new<'a>(
        env: impl IntoIterator<Item = (&'a str, &'a [u8])>,
        config: &SecretsConfig,
    ) -> Result<Secrets, Error> {
        if config.mode == SecretsMode::Pass {
            return Ok(Secrets::none());
        }
        let (values, short) = secret_values(env, config);
        let mut sources = Sources::default();
        let mut secrets = Secrets::none();
        secrets.keep_bytes = KIB;
        for (name, value) in &values {
            let index = sources.sources.len();
            let mut forms = printed::forms(value);
            let lines = printed::lines(value, config.min_length);
            secrets.keep_bytes = secrets.keep_bytes.max(forms[0].len());
            let mut alternatives: Vec<String> = forms.iter().map(|f| escape_bytes(f)).collect();
            alternatives.extend(lines.iter().map(|line| escape_bytes(line)));
            sources.push(format!("(?:{})", alternatives.join("|")), name, false);
            forms.retain(|form| !form.is_empty());
            secrets
                .multi_line
                .extend(forms.iter().filter(|form| form.contains(&b'\n')).cloned());
            secrets
                .values
                .extend(forms.into_iter().map(|form| (form, index)));
        }
        secrets.named_from = sources.sources.len();
        for (name, value) in &short {
            let forms = printed::forms(value);
            sources.push(named_pattern(name, &forms), name, false);
            let longest = name.len() + NAMED_GAP_BYTES + forms[0].len();
            secrets.keep_bytes = secrets.keep_bytes.max(longest);
            secrets.named.push(forms);
        }
        for (name, pattern) in token_patterns(config) {
            let parsed = syntax::parse(&pattern).map_err(|err| {
                Error::config(&format!("secrets.patterns.{name}"), err.to_string())
            })?;
            if pattern.contains("-----BEGIN") {
                secrets.blocks.push(sources.sources.len());
            }
            let grouped = parsed.properties().explicit_captures_len() > 0;
            sources.push(pattern, &name, grouped);
        }
        secrets.regex = build(&sources.sources)?;
        secrets.labels = sources.labels;
        secrets.grouped = sources.grouped;
        Ok(secrets)
    }

    /// True if nothing is redacted.
    pub fn is_empty(&self) -> bool {
        self.regex.is_none()
    }

    /// `bytes` with every secret replaced (all at once, as at the end of a stream).
    pub fn redact(&self, bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len());
        self.replace(bytes, bytes.len(), &mut out);
        out
    }

    /// Appends `data` up to `hold` (or past it, to the end of a match that starts before
    /// it) to `out`, secrets replaced. Returns how many bytes of `data` were used, and
    /// whether the last replacement was a private key block still open at the end of
    /// `data`.
    fn replace(&self, data: &[u8], hold: usize, out: &mut Vec<u8>) -> (usize, bool) {
        let mut done = 0;
        let mut open_block = false;
        if let Some(regex) = &self.regex {
            for found in regex.find_iter(data) {
                if found.start() >= hold {
                    break;
                }
                let pattern = found.pattern().as_usize();
                let span = self.secret_span(regex, data, &found);
                out.extend_from_slice(&data[done..span.start]);
                out.extend_from_slice(&self.labels[pattern]);
                done = span.end;
                open_block = self.blocks.contains(&pattern)
                    && found.end() == data.len()
                    && memmem::find(&data[found.range()], END).is_none();
            }
        }
        let end = hold.max(done);
        out.extend_from_slice(&data[done..end]);
        (end, open_block)
    }

    /// The part of a match that is the secret: all of it, but for a short value beside its
    /// name (the name and what separates them stay) and a shape with a capture group.
    fn secret_span(
        &self,
        regex: &Regex,
        data: &[u8],
        found: &regex_automata::Match,
    ) -> Range<usize> {
        let pattern = found.pattern().as_usize();
        if self.grouped[pattern] {
            let input = Input::new(data)
                .range(found.range())
                .anchored(Anchored::Pattern(found.pattern()));
            let mut captures = regex.create_captures();
            regex.search_captures(&input, &mut captures);
            return captures
                .get_group(1)
                .map_or(found.range(), |span| span.range());
        }
        let matched = &data[found.range()];
        let start = pattern
            .checked_sub(self.named_from)
            .and_then(|index| self.named.get(index))
            .and_then(|forms| forms.iter().find(|form| matched.ends_with(form)))
            .map_or(0, |form| matched.len() - form.len());
        found.start() + start..found.end()
    }

    /// True if a secret starts in `data` before `hold`.
    fn finds_before(&self, data: &[u8], hold: usize) -> bool {
        self.regex
            .as_ref()
            .and_then(|regex| regex.find(data))
            .is_some_and(|found| found.start() < hold)
    }

    /// Where the bytes that a later byte could still turn into a secret begin.
    fn hold_point(&self, data: &[u8]) -> usize {
        let mut hold = memchr::memrchr(b'\n', data).map_or(0, |at| at + 1);
        if !self.blocks.is_empty() && self.begin.find(&data[..hold]).is_some() {
            // The first block begun after the last complete end line, if any, is still open.
            let after = memmem::rfind(&data[..hold], END).unwrap_or(0);
            if let Some(begin) = self.begin.find(&data[after..hold]) {
                hold = after + begin;
            }
        }
        for value in &self.multi_line {
            let from = data.len().saturating_sub(value.len() - 1);
            if from >= hold {
                continue;
            }
            if let Some(start) = memchr::memchr_iter(value[0], &data[from..hold])
                .map(|at| from + at)
                .find(|&at| value.starts_with(&data[at..]))
            {
                hold = start;
            }
        }
        if data.len() - hold > MAX_HOLD_BYTES + self.keep_bytes {
            hold = data.len() - self.keep_bytes;
            // Not inside a UTF-8 character: what is passed on stays text.
            while hold > 0 && (data[hold] & 0xc0) == 0x80 {
                hold -= 1;
            }
        }
        hold
    }
}

/// The secret variables of `env` under `config`: those whose values are looked for
/// everywhere (longest first, so that a secret containing another is replaced whole), and
/// the short ones looked for beside their names. The password in a URL value counts as a
/// value of its variable, whatever its name.
fn secret_values<'a>(
    env: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    config: &SecretsConfig,
) -> (Vec<Variable<'a>>, Vec<Variable<'a>>) {
    let min_length = config.min_length.max(1);
    let mut values = Vec::new();
    let mut short = Vec::new();
    for (name, value) in env {
        if value.is_empty() || value.len() > MAX_SECRET_BYTES {
            continue;
        }
        if is_secret_name(name, config) {
            match value.len() >= min_length {
                true => values.push((name, value)),
                // One that spans lines is left alone (its name and its end are on
                // different lines).
                false if !value.contains(&b'\n') => short.push((name, value)),
                false => {}
            }
        } else if let Some(password) = url_password(value).filter(|p| p.len() >= min_length) {
            values.push((name, password));
        }
    }
    values.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    values.dedup_by(|later, earlier| later.1 == earlier.1);
    short.sort_unstable();
    short.dedup();
    (values, short)
}

/// The password of a URL with credentials (`scheme://user:password@host…`), if `value` is
/// one.
fn url_password(value: &[u8]) -> Option<&[u8]> {
    let rest = &value[memmem::find(value, b"://")? + 3..];
    let at = memchr::memchr(b'@', rest)?;
    let userinfo = &rest[..at];
    if userinfo.contains(&b'/') {
        return None;
    }
    let colon = memchr::memchr(b':', userinfo)?;
    Some(&userinfo[colon + 1..]).filter(|password| !password.is_empty())
}

/// One regex of all `sources`, `None` for none.
fn build(sources: &[String]) -> Result<Option<Regex>, Error> {
    if sources.is_empty() {
        return Ok(None);
    }
    Regex::builder()
        // Secret values are bytes, not necessarily UTF-8.
        .syntax(syntax::Config::new().utf8(false))
        .configure(Regex::config().utf8_empty(false))
        .build_many(sources)
        .map(Some)
        .map_err(|err| Error::config("secrets.patterns", err.to_string()))
}

/// True if `name` looks like it holds a secret under `config`. Shapes are `*` globs, and
/// compared without regard to ASCII case.
pub(crate) fn is_secret_name(name: &str, config: &SecretsConfig) -> bool {
    let upper = name.to_ascii_uppercase();
    let matches = |shape: &String| glob::matches(&shape.to_ascii_uppercase(), &upper);
    if config.ignore_names.iter().any(matches) {
        return false;
    }
    SECRET_NAMES
        .iter()
        .any(|shape| glob::matches(shape, &upper))
        || config.names.iter().any(matches)
}

/// The token patterns in force: the built-ins, replaced or switched off by the settings,
/// then the settings' own.
fn token_patterns(config: &SecretsConfig) -> Vec<(String, String)> {
    let mut patterns: Vec<(String, String)> = BUILTIN_PATTERNS
        .iter()
        .map(|(name, pattern)| (name.to_string(), pattern.to_string()))
        .collect();
    for (name, pattern) in &config.patterns {
        match patterns.iter_mut().find(|(known, _)| known == name) {
            Some(entry) => entry.1.clone_from(pattern),
            None => patterns.push((name.clone(), pattern.clone())),
        }
    }
    patterns.retain(|(_, pattern)| !pattern.is_empty());
    patterns
}

/// Most bytes between a name and its short value in a match (separators, spaces, a quote),
/// with one to spare for the byte after the value that the match looks at.
const NAMED_GAP_BYTES: usize = 2 * NAMED_SPACES + 4;

/// Most spaces or tabs on either side of the separator between a name and its value.
const NAMED_SPACES: usize = 64;

/// A regex matching `name`, then a separator, then one of `forms` of its value, as printed
/// by `env` and `/proc/*/environ` (`NAME=value`), `set`, `declare -p` and `export -p`
/// (`NAME='value'`, `NAME="value"`, `NAME=$'value'`), YAML and JSON (`NAME: value`, `"NAME": "value"`) and
/// tables (`NAME   value`). Neither the name nor the value may be part of a longer word:
/// `MY_NAME=value` and `NAME=values` do not match.
fn named_pattern(name: &str, forms: &[Vec<u8>]) -> String {
    let spaces = format!("[ \\t]{{0,{NAMED_SPACES}}}");
    let alternatives: Vec<String> = forms.iter().map(|form| escape_bytes(form)).collect();
    format!(
        "(?-u:\\b{{start-half}}){name}(?:{spaces}[=:]{spaces}|[ \\t]{{1,{NAMED_SPACES}}}|\"{spaces}:{spaces})(?:[\"']|\\$')?(?:{values})(?-u:\\b{{end-half}})",
        name = regex::escape(name),
        values = alternatives.join("|"),
    )
}

/// A regex matching exactly `bytes` (any byte, UTF-8 or not).
fn escape_bytes(bytes: &[u8]) -> String {
    let mut pattern = String::with_capacity(bytes.len() * 2);
    for chunk in bytes.utf8_chunks() {
        pattern.push_str(&regex::escape(chunk.valid()));
        for byte in chunk.invalid() {
            pattern.push_str(&format!(r"\x{byte:02x}"));
        }
    }
    pattern
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::Arc;

    fn secrets(env: &[(&str, &str)]) -> Arc<Secrets> {
        let env = env.iter().map(|(name, value)| (*name, value.as_bytes()));
        Arc::new(Secrets::new(env, &SecretsConfig::default()).unwrap())
    }

    fn streamed(secrets: &Arc<Secrets>, input: &[u8], cuts: &[usize]) -> Vec<u8> {
        let mut redactor = Redactor::new(secrets.clone());
        let mut out = Vec::new();
        let mut at = 0;
        for &cut in cuts {
            let cut = cut.clamp(at, input.len());
            out.extend_from_slice(redactor.feed(&input[at..cut]));
            at = cut;
        }
        out.extend_from_slice(redactor.feed(&input[at..]));
        out.extend_from_slice(redactor.finish());
        out
    }

    #[test]
    fn names_that_look_secret() {
        let config = SecretsConfig::default();
        for name in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "aws_secret_access_key",
            "DB_PASSWORD",
            "MYSQL_PASSWD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "SSH_PRIVATE_KEY_FILE",
        ] {
            assert!(is_secret_name(name, &config), "{name}");
        }
        for name in ["PATH", "HOME", "KEYBOARD", "MONKEY_BUSINESS", "TOKENS_"] {
            assert_eq!(is_secret_name(name, &config), name == "TOKENS_", "{name}");
        }
        let config = SecretsConfig {
            names: vec!["DATABASE_URL".into(), "*_DSN".into()],
            ignore_names: vec!["TOKENIZERS_*".into()],
            ..SecretsConfig::default()
        };
        assert!(is_secret_name("DATABASE_URL", &config));
        assert!(is_secret_name("SENTRY_DSN", &config));
        assert!(!is_secret_name("TOKENIZERS_PARALLELISM", &config));
    }

    #[test]
    fn values_and_shapes_are_replaced() {
        let secrets = secrets(&[
            ("GITHUB_TOKEN", "hunter2-but-longer"),
            ("SHORT_KEY", "abc"),
            ("HOME", "/root/home-dir-path"),
        ]);
        let aws = "AKIAIOSFODNN7EXAMPLE";
        let input = format!(
            "token=hunter2-but-longer short=abc home=/root/home-dir-path aws={aws} \
             gh=ghp_{} sk=sk-proj-abcdefghij0123456789XYZ task-runner-abcdefghijklmnopqrstuvw\n",
            "a".repeat(36)
        );
        let out = String::from_utf8(secrets.redact(input.as_bytes())).unwrap();
        assert_eq!(
            out,
            "token=[redacted:GITHUB_TOKEN] short=abc home=/root/home-dir-path \
             aws=[redacted:aws_access_key] gh=[redacted:github_token] sk=[redacted:api_key_sk] \
             task-runner-abcdefghijklmnopqrstuvw\n"
        );
    }

    fn short_secrets() -> Arc<Secrets> {
        secrets(&[
            ("AWS_SECRET_ACCESS_KEY", "abc"),
            ("MYSQL_ROOT_PASSWORD", "root"),
            ("ONE_TOKEN", "x"),
            ("QUOTE_SECRET", "a\"b$c"),
            ("HOME", "/root"),
        ])
    }

    fn redacted(secrets: &Secrets, text: &str) -> String {
        String::from_utf8(secrets.redact(text.as_bytes())).unwrap()
    }

    #[test]
    fn a_short_value_is_redacted_beside_its_name_as_env_set_and_environ_print_it() {
        let secrets = short_secrets();
        let cases = [
            // env, printenv, set
            (
                "MYSQL_ROOT_PASSWORD=root\nHOME=/root\n",
                "MYSQL_ROOT_PASSWORD=[redacted:MYSQL_ROOT_PASSWORD]\nHOME=/root\n",
            ),
            ("ONE_TOKEN=x\n", "ONE_TOKEN=[redacted:ONE_TOKEN]\n"),
            // /proc/*/environ
            (
                "HOME=/root\0AWS_SECRET_ACCESS_KEY=abc\0ONE_TOKEN=x\0",
                "HOME=/root\0AWS_SECRET_ACCESS_KEY=[redacted:AWS_SECRET_ACCESS_KEY]\0ONE_TOKEN=[redacted:ONE_TOKEN]\0",
            ),
            // set with quotes
            (
                "AWS_SECRET_ACCESS_KEY='abc'",
                "AWS_SECRET_ACCESS_KEY='[redacted:AWS_SECRET_ACCESS_KEY]'",
            ),
            // declare -p, export -p
            (
                "declare -x MYSQL_ROOT_PASSWORD=\"root\"\n",
                "declare -x MYSQL_ROOT_PASSWORD=\"[redacted:MYSQL_ROOT_PASSWORD]\"\n",
            ),
            (
                "declare -x QUOTE_SECRET=\"a\\\"b\\$c\"\n",
                "declare -x QUOTE_SECRET=\"[redacted:QUOTE_SECRET]\"\n",
            ),
            (
                "QUOTE_SECRET=a\"b$c\n",
                "QUOTE_SECRET=[redacted:QUOTE_SECRET]\n",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(redacted(&secrets, input), expected, "{input:?}");
        }
    }

    #[test]
    fn a_short_value_is_redacted_beside_its_name_in_yaml_json_and_tables() {
        let secrets = short_secrets();
        let cases = [
            (
                "MYSQL_ROOT_PASSWORD: root\n",
                "MYSQL_ROOT_PASSWORD: [redacted:MYSQL_ROOT_PASSWORD]\n",
            ),
            (
                "  MYSQL_ROOT_PASSWORD: \"root\"\n",
                "  MYSQL_ROOT_PASSWORD: \"[redacted:MYSQL_ROOT_PASSWORD]\"\n",
            ),
            (
                "{\"AWS_SECRET_ACCESS_KEY\": \"abc\", \"QUOTE_SECRET\":\"a\\\"b$c\"}",
                "{\"AWS_SECRET_ACCESS_KEY\": \"[redacted:AWS_SECRET_ACCESS_KEY]\", \"QUOTE_SECRET\":\"[redacted:QUOTE_SECRET]\"}",
            ),
            (
                "\"Env\": [\"MYSQL_ROOT_PASSWORD=root\", \"HOME=/root\"]",
                "\"Env\": [\"MYSQL_ROOT_PASSWORD=[redacted:MYSQL_ROOT_PASSWORD]\", \"HOME=/root\"]",
            ),
            (
                "NAME                   VALUE\nMYSQL_ROOT_PASSWORD    root\nONE_TOKEN\tx\n",
                "NAME                   VALUE\nMYSQL_ROOT_PASSWORD    [redacted:MYSQL_ROOT_PASSWORD]\nONE_TOKEN\t[redacted:ONE_TOKEN]\n",
            ),
            (
                "MYSQL_ROOT_PASSWORD = root",
                "MYSQL_ROOT_PASSWORD = [redacted:MYSQL_ROOT_PASSWORD]",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(redacted(&secrets, input), expected, "{input:?}");
        }
    }

    #[test]
    fn a_short_value_without_its_name_or_inside_longer_words_is_left_alone() {
        let secrets = short_secrets();
        for text in [
            "abc root\n",
            "echo abc root x\n",
            // Another variable, another value.
            "MY_MYSQL_ROOT_PASSWORD=root\n",
            "MYSQL_ROOT_PASSWORD_FILE=root\n",
            "MYSQL_ROOT_PASSWORD=rooted\n",
            "MYSQL_ROOT_PASSWORD=groot\n",
            "ONE_TOKEN=xyz\n",
            // The name alone.
            "unset MYSQL_ROOT_PASSWORD\n",
            "MYSQL_ROOT_PASSWORD\n\nroot\n",
        ] {
            assert_eq!(redacted(&secrets, text), text);
        }
        // A long value is still redacted everywhere.
        let long = super::tests::secrets(&[
            ("MYSQL_ROOT_PASSWORD", "root"),
            ("API_TOKEN", "s3cr3t-value"),
        ]);
        assert_eq!(
            redacted(&long, "s3cr3t-value root API_TOKEN=s3cr3t-value"),
            "[redacted:API_TOKEN] root API_TOKEN=[redacted:API_TOKEN]"
        );
        // `min_length` still decides which values are short.
        let config = SecretsConfig {
            min_length: 3,
            ..SecretsConfig::default()
        };
        let env = [
            ("AWS_SECRET_ACCESS_KEY", &b"abc"[..]),
            ("DB_PASSWORD", b"pw"),
        ];
        let secrets = Secrets::new(env, &config).unwrap();
        assert_eq!(
            secrets.redact(b"abc pw DB_PASSWORD=pw"),
            b"[redacted:AWS_SECRET_ACCESS_KEY] pw DB_PASSWORD=[redacted:DB_PASSWORD]"
        );
    }

    #[test]
    fn a_short_value_beside_its_name_waits_for_the_end_of_its_line() {
        let secrets = short_secrets();
        let mut redactor = Redactor::new(secrets);
        assert_eq!(redactor.feed(b"A=1\nMYSQL_ROOT_PASSWORD=roo"), b"A=1\n");
        assert_eq!(
            redactor.preview(b""),
            b"MYSQL_ROOT_PASSWORD=roo".to_vec(),
            "not yet the value"
        );
        assert_eq!(redactor.feed(b"t"), b"");
        assert_eq!(
            redactor.preview(b""),
            b"MYSQL_ROOT_PASSWORD=[redacted:MYSQL_ROOT_PASSWORD]".to_vec()
        );
        assert_eq!(
            redactor.feed(b"ed\nMYSQL_ROOT_PASSWORD=root"),
            b"MYSQL_ROOT_PASSWORD=rooted\n"
        );
        assert_eq!(
            redactor.finish(),
            b"MYSQL_ROOT_PASSWORD=[redacted:MYSQL_ROOT_PASSWORD]"
        );
    }

    #[test]
    fn private_key_blocks_are_replaced_whole_even_when_streamed_line_by_line() {
        let secrets = secrets(&[]);
        let input = "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQUJDREVGRw==\n-----END OPENSSH PRIVATE KEY-----\nafter\n";
        let cuts: Vec<usize> = input.match_indices('\n').map(|(at, _)| at + 1).collect();
        let out = streamed(&secrets, input.as_bytes(), &cuts);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "before\n[redacted:private_key]\nafter\n"
        );
    }

    #[test]
    fn a_complete_line_passes_at_once_and_the_line_being_written_waits() {
        let secrets = secrets(&[("API_TOKEN", "s3cr3t-value")]);
        let mut redactor = Redactor::new(secrets);
        assert_eq!(redactor.feed(b"one\ntwo s3cr3t"), b"one\n");
        assert_eq!(redactor.preview(b""), b"two [redacted:API_TOKEN]");
        assert_eq!(
            redactor.feed(b"-value\nthree"),
            b"two [redacted:API_TOKEN]\n"
        );
        assert_eq!(redactor.finish(), b"three");
    }

    #[test]
    fn a_multi_line_secret_is_held_back_until_it_is_complete() {
        let secrets = secrets(&[("DEPLOY_KEY", "line-one-abc\nline-two-def\n")]);
        let mut redactor = Redactor::new(secrets);
        assert_eq!(redactor.feed(b"start\nline-one-abc\n"), b"start\n");
        assert_eq!(
            redactor.feed(b"line-two-def\nend\n"),
            b"[redacted:DEPLOY_KEY]end\n"
        );
    }

    #[test]
    fn an_endless_line_is_passed_on_in_pieces() {
        let secrets = secrets(&[("API_TOKEN", "s3cr3t-value")]);
        let mut redactor = Redactor::new(secrets);
        let mut passed = 0;
        for _ in 0..100 {
            passed += redactor.feed(&[b'x'; 4096]).len();
        }
        assert!(passed >= 400 * KIB - MAX_HOLD_BYTES - 2 * KIB, "{passed}");
        assert!(redactor.pending.len() <= MAX_HOLD_BYTES + 2 * KIB);
    }

    #[test]
    fn more_secret_names() {
        let config = SecretsConfig::default();
        for name in [
            "DB_PASS",
            "MYSQL_PWD",
            "APIKEY",
            "STRIPE_APIKEY_LIVE",
            "GPG_PASSPHRASE",
            "SSH_KEY_PASSPHRASE_FILE",
        ] {
            assert!(is_secret_name(name, &config), "{name}");
        }
        for name in ["PASSENGER", "PWD", "OLDPWD", "COMPASS", "BYPASS"] {
            assert!(!is_secret_name(name, &config), "{name}");
        }
    }

    #[test]
    fn token_shapes_even_glued_to_a_word() {
        let secrets = secrets(&[]);
        let body36 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
        let cases = [
            (format!("x{}", &format!("ghp_{body36}")), "x[redacted:github_token]"),
            (format!("tok=sk_live_{body36}"), "tok=[redacted:stripe_key]"),
            (format!("rk_live_{body36}"), "[redacted:stripe_key]"),
            (format!("glpat-{}", &body36[..20]), "[redacted:gitlab_token]"),
            (format!("Bearer hf_{}", &body36[..34]), "Bearer [redacted:huggingface_token]"),
            (format!("//registry/:_authToken=npm_{body36}"), "//registry/:_authToken=[redacted:npm_token]"),
            (format!("key=AIza{}", &body36[..35]), "key=[redacted:google_api_key]"),
            (
                "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U".to_string(),
                "Authorization: Bearer [redacted:jwt]",
            ),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n".to_string(),
                "aws_secret_access_key = [redacted:aws_secret_access_key]\n",
            ),
            (
                "\"AWS_SECRET_ACCESS_KEY\": \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"".to_string(),
                "\"AWS_SECRET_ACCESS_KEY\": \"[redacted:aws_secret_access_key]\"",
            ),
            (
                "url: postgres://app:hunter2@db.internal:5432/app".to_string(),
                "url: postgres://app:[redacted:url_password]@db.internal:5432/app",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(redacted(&secrets, &input), expected, "{input}");
        }
        // Not secrets: a word with `sk-` inside, a URL without a password, a mail address.
        for text in [
            "task-runner-abcdefghijklmnopqrstuvw",
            "https://github.com/o/r.git git@github.com:o/r.git a@b.c https://u@h/p",
        ] {
            assert_eq!(redacted(&secrets, text), text);
        }
    }

    #[test]
    fn the_password_of_a_url_in_any_variable_is_a_secret() {
        let secrets = secrets(&[("DATABASE_URL", "postgres://app:pw-0123456@db/app")]);
        assert_eq!(
            redacted(&secrets, "PGPASSWORD=pw-0123456 psql\n"),
            "PGPASSWORD=[redacted:DATABASE_URL] psql\n"
        );
    }

    #[test]
    fn escaped_forms_of_a_value_are_replaced() {
        let value = "pa\"ss$wo\\rd`x'y z";
        let secrets = secrets(&[("DEPLOY_TOKEN", value)]);
        for printed in [
            // declare -p, export -p
            "declare -x DEPLOY_TOKEN=\"pa\\\"ss\\$wo\\\\rd\\`x'y z\"",
            // printf %q
            "pa\\\"ss\\$wo\\\\rd\\`x\\'y\\ z",
            // JSON
            "{\"token\": \"pa\\\"ss$wo\\\\rd`x'y z\"}",
            // set
            "DEPLOY_TOKEN='pa\"ss$wo\\rd`x'\\''y z'",
        ] {
            let out = redacted(&secrets, printed);
            assert!(
                out.contains("[redacted:DEPLOY_TOKEN]"),
                "{printed} -> {out}"
            );
            assert!(!out.contains("wo\\"), "{printed} -> {out}");
        }
        // A value with controls, as `declare -p` and `printf %q` print it.
        let controls = super::tests::secrets(&[("MULTI_TOKEN", "line-one\nline\x01two")]);
        assert_eq!(
            redacted(
                &controls,
                "declare -x MULTI_TOKEN=$'line-one\\nline\\001two'"
            ),
            "declare -x MULTI_TOKEN=$'[redacted:MULTI_TOKEN]'"
        );
    }

    #[test]
    fn part_of_a_multi_line_secret_is_replaced_line_by_line() {
        let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAx1\nQUJDREVGR0hJSktM2\nTU5PUFFSU1RVVldY3\n-----END RSA PRIVATE KEY-----\n";
        let secrets = secrets(&[("DEPLOY_KEY", key)]);
        // `echo "$DEPLOY_KEY" | sed -n 2,3p`, streamed line by line.
        let input = "MIIEpAIBAAKCAQEAx1\nQUJDREVGR0hJSktM2\ndone\n";
        let cuts: Vec<usize> = input.match_indices('\n').map(|(at, _)| at + 1).collect();
        assert_eq!(
            String::from_utf8(streamed(&secrets, input.as_bytes(), &cuts)).unwrap(),
            "[redacted:DEPLOY_KEY]\n[redacted:DEPLOY_KEY]\ndone\n"
        );
        // `head -3`: a block without its end line, replaced whole.
        let input = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAx1\nQUJDREVGR0hJSktM2\n";
        let cuts: Vec<usize> = input.match_indices('\n').map(|(at, _)| at + 1).collect();
        assert_eq!(
            String::from_utf8(streamed(&secrets, input.as_bytes(), &cuts)).unwrap(),
            "[redacted:private_key]"
        );
    }

    #[test]
    fn a_private_key_block_without_its_end_line_is_replaced() {
        let secrets = secrets(&[]);
        let input =
            "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQUJDREVGRw==\n";
        let cuts: Vec<usize> = input.match_indices('\n').map(|(at, _)| at + 1).collect();
        assert_eq!(
            String::from_utf8(streamed(&secrets, input.as_bytes(), &cuts)).unwrap(),
            "key:\n[redacted:private_key]"
        );
        // Cut short, then other output: the block ends where its body does.
        let input = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBb3Bl\n$ ls\n";
        assert_eq!(redacted(&secrets, input), "[redacted:private_key]$ ls\n");
    }

    #[test]
    fn a_private_key_line_longer_than_the_hold_is_dropped_to_its_end() {
        let secrets = secrets(&[]);
        let body = "QUJD".repeat(40 * KIB);
        let input = format!(
            "-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\nafter\n"
        );
        for piece in [4096, 65_536, 100_000] {
            let cuts: Vec<usize> = (piece..input.len()).step_by(piece).collect();
            let out = String::from_utf8(streamed(&secrets, input.as_bytes(), &cuts)).unwrap();
            assert_eq!(out, "[redacted:private_key]\nafter\n", "pieces of {piece}");
        }
    }

    #[test]
    fn bad_patterns_and_switched_off_builtins() {
        let config = SecretsConfig {
            patterns: vec![("broken".into(), "(".into())],
            ..SecretsConfig::default()
        };
        let err = Secrets::new([], &config).unwrap_err().to_string();
        assert!(err.contains("secrets.patterns.broken"), "{err}");
        let config = SecretsConfig {
            patterns: vec![
                ("aws_access_key".into(), String::new()),
                ("internal".into(), "corp-[0-9]{6}".into()),
            ],
            ..SecretsConfig::default()
        };
        let secrets = Secrets::new([], &config).unwrap();
        assert_eq!(
            secrets.redact(b"AKIAIOSFODNN7EXAMPLE corp-123456"),
            b"AKIAIOSFODNN7EXAMPLE [redacted:internal]"
        );
        let pass = SecretsConfig {
            mode: SecretsMode::Pass,
            ..SecretsConfig::default()
        };
        let secrets = Secrets::new([("API_TOKEN", &b"s3cr3t-value"[..])], &pass).unwrap();
        assert!(secrets.is_empty());
    }

    proptest! {
        #[test]
        fn splitting_the_stream_never_changes_the_result(
            words in proptest::collection::vec(
                prop_oneof![
                    Just("s3cr3t-value".to_string()),
                    Just("multi\nline-secret".to_string()),
                    Just(format!(" ghp_{}", "Z".repeat(36))),
                    Just("-----BEGIN RSA PRIVATE KEY-----\nQUJD\n-----END RSA PRIVATE KEY-----".to_string()),
                    "[a-z \n]{0,12}",
                    Just("\n".to_string()),
                    Just("s3cr3t".to_string()),
                ],
                0..24,
            ),
            cuts in proptest::collection::vec(0usize..400, 0..12),
        ) {
            let secrets = secrets(&[("API_TOKEN", "s3cr3t-value"), ("SSH_KEY", "multi\nline-secret")]);
            let input = words.concat();
            let mut cuts = cuts;
            cuts.sort_unstable();
            let whole = secrets.redact(input.as_bytes());
            prop_assert_eq!(streamed(&secrets, input.as_bytes(), &cuts), whole.clone());
            let text = String::from_utf8(whole).unwrap();
            prop_assert!(!text.contains("s3cr3t-value"));
            prop_assert!(!text.contains("multi\nline-secret"));
            prop_assert!(!text.contains("ghp_ZZZZ"));
            prop_assert!(!text.contains("QUJD"));
        }

        #[test]
        fn splitting_the_stream_never_changes_the_result_for_short_values_beside_names(
            words in proptest::collection::vec(
                prop_oneof![
                    Just("MYSQL_ROOT_PASSWORD=root\n".to_string()),
                    Just("\0AWS_SECRET_ACCESS_KEY=abc\0".to_string()),
                    Just("{\"ONE_TOKEN\": \"x\"}".to_string()),
                    Just("MYSQL_ROOT_PASSWORD".to_string()),
                    Just("AWS_SECRET_ACCESS_KEY".to_string()),
                    Just("ONE_TOKEN".to_string()),
                    Just("root".to_string()),
                    Just("abc".to_string()),
                    Just("x".to_string()),
                    // Spaced: a name glued to the end of another secret is another name, but
                    // the check below would see it after the label.
                    Just(" s3cr3t-value ".to_string()),
                    Just("a\\\"b$c".to_string()),
                    prop_oneof![
                        Just("="), Just(": "), Just("\": \""), Just("   "), Just("\t"),
                        Just("\""), Just("'"), Just("\0"), Just("\n"), Just(" "),
                        Just("MY_"), Just("ed"),
                    ].prop_map(str::to_string),
                    "[a-z \n=\"]{0,8}",
                ],
                0..32,
            ),
            cuts in proptest::collection::vec(0usize..300, 0..12),
        ) {
            let secrets = secrets(&[
                ("MYSQL_ROOT_PASSWORD", "root"),
                ("AWS_SECRET_ACCESS_KEY", "abc"),
                ("ONE_TOKEN", "x"),
                ("QUOTE_SECRET", "a\"b$c"),
                ("API_TOKEN", "s3cr3t-value"),
            ]);
            let input = words.concat();
            let mut cuts = cuts;
            cuts.sort_unstable();
            let whole = secrets.redact(input.as_bytes());
            prop_assert_eq!(streamed(&secrets, input.as_bytes(), &cuts), whole.clone());
            let text = String::from_utf8(whole).unwrap();
            for line in text.split(['\n', '\0']) {
                for shown in [
                    "MYSQL_ROOT_PASSWORD=root",
                    "MYSQL_ROOT_PASSWORD: root",
                    "AWS_SECRET_ACCESS_KEY=abc",
                    "ONE_TOKEN\": \"x",
                ] {
                    let after = line.match_indices(shown).all(|(at, _)| {
                        let before = line[..at].bytes().last();
                        let next = line[at + shown.len()..].bytes().next();
                        let word = |byte: Option<u8>| byte.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
                        // Only another variable or another value may show.
                        word(before) || word(next)
                    });
                    prop_assert!(after, "{:?} in {:?}", shown, line);
                }
            }
            prop_assert!(!text.contains("s3cr3t-value"));
        }
    }
}
