//! User rules: compiling `[[policy.rules]]` entries, matching them against commands, and
//! checking their examples when the rules load.
//!
//! Pure: compiles and matches, runs nothing.

use std::collections::HashMap;

use brush_parser::ast;
use regex::Regex;

use crate::commands;
use crate::glob;
use crate::parse;
use crate::walk;
use crate::words::{self, Arg, Found};
use crate::{Decision, PolicyError, RuleSpec};

/// A compiled user rule.
#[derive(Clone, Debug)]
pub(crate) struct Rule {
    pub name: String,
    pub decision: Decision,
    pub reason: Option<String>,
    pattern: Option<Pattern>,
    regex: Option<Regex>,
}

impl Rule {
    /// Compiles rule number `index` (counted from 1) and checks its examples.
    pub(crate) fn compile(index: usize, spec: &RuleSpec) -> Result<Rule, PolicyError> {
        let rule = match (&spec.name, &spec.command, &spec.regex) {
            (Some(name), _, _) => format!("policy rule {index} ({name:?})"),
            (None, Some(command), _) => format!("policy rule {index} (command {command:?})"),
            (None, None, Some(regex)) => format!("policy rule {index} (regex {regex:?})"),
            (None, None, None) => format!("policy rule {index}"),
        };
        if spec.command.is_none() && spec.regex.is_none() {
            return Err(PolicyError::MissingPattern { rule });
        }
        if let Some(problem) = suggestion_fields(spec) {
            return Err(PolicyError::BadSuggestion { rule, problem });
        }
        let pattern = match &spec.command {
            Some(command) if command.trim().is_empty() => {
                return Err(PolicyError::EmptyPattern {
                    rule,
                    field: "command",
                });
            }
            Some(command) => {
                Some(
                    Pattern::parse(command).map_err(|problem| PolicyError::BadCommand {
                        rule: rule.clone(),
                        problem,
                    })?,
                )
            }
            None => None,
        };
        let regex = match &spec.regex {
            Some(regex) if regex.is_empty() => {
                return Err(PolicyError::EmptyPattern {
                    rule,
                    field: "regex",
                });
            }
            Some(regex) => Some(Regex::new(regex).map_err(|source| PolicyError::BadRegex {
                rule: rule.clone(),
                problem: source.to_string(),
            })?),
            None => None,
        };
        let name = spec
            .name
            .clone()
            .or_else(|| spec.command.clone())
            .or_else(|| spec.regex.clone())
            .unwrap_or_default();
        let compiled = Rule {
            name,
            decision: spec.decision,
            reason: spec.reason.clone(),
            pattern,
            regex,
        };
        compiled.check_examples(spec, rule)?;
        Ok(compiled)
    }

    /// Checks that the rule matches each of `spec`'s examples and none of its counter
    /// examples; `rule` names the rule in the error.
    fn check_examples(&self, spec: &RuleSpec, rule: String) -> Result<(), PolicyError> {
        // A suggestion applies only to a whole command, as written: its examples are read so.
        let matches_example = |example: &str| {
            let found = walk::walk(example, &HashMap::new());
            if spec.decision == Decision::Suggest {
                applies(example, &found, |one| self.matches_as_written(one))
            } else {
                found.iter().any(|one| self.matches(one))
            }
        };
        for example in &spec.examples {
            if !matches_example(example) {
                return Err(PolicyError::ExampleNotMatched {
                    rule,
                    example: example.clone(),
                });
            }
        }
        for example in &spec.counter_examples {
            if matches_example(example) {
                return Err(PolicyError::CounterExampleMatched {
                    rule,
                    example: example.clone(),
                });
            }
        }
        Ok(())
    }

    /// True if the rule matches the command or one it runs through wrappers.
    pub(crate) fn matches(&self, found: &Found) -> bool {
        found.each_form().any(|form| self.matches_form(form, found))
    }

    /// True if the rule matches the command as written, not what it runs through wrappers
    /// (how a `suggest` rule matches: `sudo cat FILE` is not a plain read).
    pub(crate) fn matches_as_written(&self, found: &Found) -> bool {
        found.forms.first() == Some(&0) && self.matches_form(&found.argv, found)
    }

    fn matches_form(&self, form: &[Arg], found: &Found) -> bool {
        self.pattern
            .as_ref()
            .is_none_or(|pattern| pattern.matches(form))
            && self
                .regex
                .as_ref()
                .is_none_or(|regex| regex.is_match(&normalized_text(form, found)))
    }
}

/// What is wrong with the fields only a `suggest` rule has (`tool`, `message`), if anything.
fn suggestion_fields(spec: &RuleSpec) -> Option<&'static str> {
    let suggests = spec.decision == Decision::Suggest;
    match (&spec.tool, &spec.message, &spec.reason) {
        (None, _, _) if suggests => {
            Some("a `suggest` rule needs `tool`: the host's tool to use instead")
        }
        (Some(tool), _, _) if suggests && tool.trim().is_empty() => Some("`tool` is empty"),
        (_, _, Some(_)) if suggests => {
            Some("a `suggest` rule says what to do with `message`, not `reason`")
        }
        (Some(_), _, _) | (_, Some(_), _) if !suggests => Some(
            "`tool` and `message` are for `decision = \"suggest\"` (`reason` says why a rule asks or denies)",
        ),
        _ => None,
    }
}

/// The text a rule's regex sees: the words joined by single spaces, then each redirection
/// (`2>&1`, `>/dev/null`, `<<EOF`), also after a single space.
pub(crate) fn normalized_text(form: &[Arg], found: &Found) -> String {
    let mut text = String::new();
    let redirects = found.redirects.iter().map(words::Redirect::text);
    for part in form.iter().map(|arg| arg.text.clone()).chain(redirects) {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&part);
    }
    text
}

/// An argv prefix pattern such as `git push --force *`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pattern {
    words: Vec<Glob>,
    /// The pattern ended with a lone unquoted `*`: any number of further words may follow.
    rest: bool,
    /// The first word has no `/`, so it is compared with the command name's basename.
    basename: bool,
}

impl Pattern {
    fn parse(text: &str) -> Result<Pattern, String> {
        let mut words = split_pattern(text)?;
        let rest = words.last().is_some_and(Glob::is_star);
        if rest {
            words.pop();
        }
        let Some(first) = words.first() else {
            return Err("the pattern is empty: name at least the command".to_owned());
        };
        let basename = !first.runs.iter().any(|run| run.contains('/'));
        Ok(Pattern {
            words,
            rest,
            basename,
        })
    }

    fn matches(&self, argv: &[Arg]) -> bool {
        let length_fits = if self.rest {
            argv.len() >= self.words.len()
        } else {
            argv.len() == self.words.len()
        };
        length_fits
            && self
                .words
                .iter()
                .zip(argv)
                .enumerate()
                .all(|(index, (glob, arg))| {
                    let text = if index == 0 && self.basename {
                        commands::basename(&arg.text)
                    } else {
                        &arg.text
                    };
                    glob.matches(text)
                })
    }
}

/// One pattern word: literal text with unquoted `*` standing for any run of characters (a
/// quoted `*` is literal), matched by [`glob::matches_runs`].
#[derive(Clone, Debug, PartialEq, Eq)]
struct Glob {
    /// The literal texts before, between and after the wildcards: one more than the wildcards.
    runs: Vec<String>,
}

impl Default for Glob {
    fn default() -> Self {
        Glob {
            runs: vec![String::new()],
        }
    }
}

impl Glob {
    fn push_char(&mut self, c: char) {
        if let Some(run) = self.runs.last_mut() {
            run.push(c);
        }
    }

    fn push_star(&mut self) {
        // `**` is one wildcard: no empty run between two stars.
        let after_star = self.runs.len() > 1 && self.runs.last().is_some_and(String::is_empty);
        if !after_star {
            self.runs.push(String::new());
        }
    }

    /// A lone `*`.
    fn is_star(&self) -> bool {
        self.runs == ["", ""]
    }

    fn matches(&self, text: &str) -> bool {
        glob::matches_runs(self.runs.iter().map(String::as_str), text)
    }
}

/// Splits a pattern into words the way the shell splits a command line: blanks separate,
/// quotes and backslashes make text literal, and an unquoted `*` is a wildcard.
fn split_pattern(text: &str) -> Result<Vec<Glob>, String> {
    let mut words = Vec::new();
    let mut word: Option<Glob> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => words.extend(word.take()),
            '\'' => {
                let current = word.get_or_insert_with(Glob::default);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(inner) => current.push_char(inner),
                        None => return Err("a single quote is not closed".to_owned()),
                    }
                }
            }
            '"' => {
                let current = word.get_or_insert_with(Glob::default);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(escaped @ ('"' | '\\' | '$' | '`')) => current.push_char(escaped),
                            Some(other) => {
                                current.push_char('\\');
                                current.push_char(other);
                            }
                            None => return Err("a double quote is not closed".to_owned()),
                        },
                        Some(inner) => current.push_char(inner),
                        None => return Err("a double quote is not closed".to_owned()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(escaped) => word.get_or_insert_with(Glob::default).push_char(escaped),
                None => return Err("the pattern ends with a lone backslash".to_owned()),
            },
            '*' => word.get_or_insert_with(Glob::default).push_star(),
            ';' | '|' | '&' | '<' | '>' | '(' | ')' | '`' => {
                return Err(format!(
                    "`{c}` is shell syntax, but a pattern is the words of one command (quote it to match it literally)"
                ));
            }
            other => word.get_or_insert_with(Glob::default).push_char(other),
        }
    }
    words.extend(word);
    Ok(words)
}

// What a suggestion sees of a command line: kept here, with the rules, because a `suggest`
// rule's examples are checked with it (suggest.rs builds on these).

/// True if `test` holds for `command` (whose segments are `found`) as a suggestion would
/// see it: the one simple command of the line, as written. (A `suggest` rule's examples are
/// checked with it.)
pub(crate) fn applies(command: &str, found: &[Found], test: impl Fn(&Found) -> bool) -> bool {
    sole_segment(found).is_some_and(test) && is_one_simple_command(command)
}

/// The only segment of the line, when it is known, plain and run as written.
pub(crate) fn sole_segment(found: &[Found]) -> Option<&Found> {
    let [one] = found else { return None };
    let eligible = one.via.is_empty()
        && one.unknown.is_none()
        && !one.launcher
        && !one.unparsed
        && !one.fans_out
        && one.forms.first() == Some(&0);
    eligible.then_some(one)
}

/// True if the command line is one simple command: no list, pipeline, `&`, `!`, `time`,
/// loop, group or subshell (substitutions inside it are segments of their own).
pub(crate) fn is_one_simple_command(command: &str) -> bool {
    let Ok(program) = parse::program(command) else {
        return false;
    };
    let [ast::CompoundList(items)] = program.complete_commands.as_slice() else {
        return false;
    };
    let [ast::CompoundListItem(and_or, separator)] = items.as_slice() else {
        return false;
    };
    let pipeline = &and_or.first;
    matches!(separator, ast::SeparatorOperator::Sequence)
        && and_or.additional.is_empty()
        && pipeline.timed.is_none()
        && !pipeline.bang
        && matches!(pipeline.seq.as_slice(), [ast::Command::Simple(_)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, line: &str) -> bool {
        let pattern = Pattern::parse(pattern).unwrap();
        let argv: Vec<Arg> = line.split_whitespace().map(Arg::literal).collect();
        pattern.matches(&argv)
    }

    #[test]
    fn prefix_patterns_match_like_the_contract_says() {
        assert!(matches(
            "git push --force *",
            "git push --force origin main"
        ));
        assert!(matches("git push --force *", "git push --force"));
        assert!(!matches("git push --force *", "git push origin"));
        assert!(matches("git push", "git push"));
        assert!(!matches("git push", "git push origin"));
        assert!(matches("npm run test*", "npm run test:unit"));
        assert!(matches("git * main", "git push main"));
        assert!(!matches("git * main", "git push origin main"));
        assert!(matches("rm", "/bin/rm"));
        assert!(!matches("/usr/bin/rm", "/bin/rm"));
        assert!(matches("a*b*c", "aXXbYYc"));
        assert!(!matches("a*b*c", "aXXc"));
        assert!(!matches("ab*ba", "aba"));
        assert!(matches("echo '*'", "echo *"));
        assert!(!matches("echo '*'", "echo x"));
    }

    #[test]
    fn bad_patterns_are_refused() {
        assert!(Pattern::parse("").is_err());
        assert!(Pattern::parse("*").is_err());
        assert!(Pattern::parse("ls | wc").is_err());
        assert!(Pattern::parse("echo 'open").is_err());
        assert!(Pattern::parse("echo 'a | b'").is_ok());
    }
}
