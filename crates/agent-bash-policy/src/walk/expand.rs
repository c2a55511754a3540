//! The walker over words: brace expansion, quote removal, and the command substitutions
//! inside words, here-documents and arithmetic text, walked as nested scripts.

use brush_parser::word::{
    BraceExpressionMember, BraceExpressionOrText, WordPiece, WordPieceWithSource,
};

use crate::parse;
use crate::words::{self, Arg, Found};

use super::{MAX_BRACE_WORDS, Walker};

impl Walker<'_> {
    /// The first word a word expands to (redirect targets must expand to one word).
    pub(super) fn expand_first(&mut self, raw: &str) -> Arg {
        self.expand(raw).into_iter().next().unwrap_or_default()
    }

    /// Expands one shell word: braces, then quote removal; walks every substitution in it.
    pub(super) fn expand(&mut self, raw: &str) -> Vec<Arg> {
        if !words::needs_parsing(raw) {
            let glob = words::has_glob(raw);
            return vec![Arg {
                glob,
                ..Arg::literal(raw)
            }];
        }
        let mut args = Vec::new();
        if !raw.contains('{') {
            self.expand_one(raw, &mut args);
            return args;
        }
        // Brace expansion applies to unquoted braces only; the parsed pieces tell which.
        let pieces = match parse::word(raw) {
            Ok(pieces) if words::has_unquoted_brace(&pieces) => pieces,
            // No unquoted brace, or a word that does not parse (`expand_one` reports it).
            _ => {
                self.expand_one(raw, &mut args);
                return args;
            }
        };
        match brace_alternatives(raw, &pieces) {
            Some(alternatives) => {
                // Every alternative holds the same substitutions: walk them once.
                let mut walk = true;
                let mut download = false;
                for alternative in &alternatives {
                    let first = args.len();
                    self.expand_one_walking(alternative, walk, &mut args);
                    if walk {
                        download = args[first..].iter().any(|arg| arg.download);
                        walk = false;
                    } else {
                        for arg in &mut args[first..] {
                            arg.download |= download;
                        }
                    }
                }
            }
            None => {
                // Too many words, or braces the parser rejects: the words cannot be known.
                self.unknown(
                    raw,
                    format!("brace expansion gives more than {MAX_BRACE_WORDS} words"),
                );
                self.expand_one(raw, &mut args);
                for arg in &mut args {
                    arg.literal = false;
                }
            }
        }
        args
    }

    /// Expands a word without braces into `out` (one word, or none or several for `"$@"`).
    fn expand_one(&mut self, raw: &str, out: &mut Vec<Arg>) {
        self.expand_one_walking(raw, true, out);
    }

    /// Like [`Walker::expand_one`]; walks the word's substitutions only if `walk`.
    fn expand_one_walking(&mut self, raw: &str, walk: bool, out: &mut Vec<Arg>) {
        match parse::word(raw) {
            Ok(pieces) => {
                if let Some(positional) = &self.positional
                    && words::is_all_positional(&pieces)
                {
                    out.extend(positional.iter().skip(1).cloned());
                    return;
                }
                let env = self.env.filter(|_| self.launched == 0 && raw.contains('$'));
                let mut arg = Arg {
                    literal: true,
                    resolved: env.map(|_| String::new()),
                    ..Arg::default()
                };
                let known = words::Known {
                    positional: self.positional.as_deref(),
                    env,
                };
                words::render(raw, &pieces, false, known, &mut arg);
                if walk {
                    let start = self.out.len();
                    self.walk_pieces(raw, &pieces);
                    arg.download |= self.out[start..].iter().any(Found::downloads);
                }
                out.push(arg);
            }
            Err(failure) => {
                if walk {
                    self.unknown(raw, format!("a word could not be parsed: {failure}"));
                }
                out.push(Arg {
                    text: raw.to_owned(),
                    ..Arg::default()
                });
            }
        }
    }

    /// Walks the substitutions in text that is not a word of its own (arithmetic).
    pub(super) fn scan_text(&mut self, text: &str) {
        if !(text.contains("$(") || text.contains('`')) {
            return;
        }
        match parse::word(text) {
            Ok(pieces) => self.walk_pieces(text, &pieces),
            Err(failure) => self.unknown(
                text,
                format!("an expression could not be parsed: {failure}"),
            ),
        }
    }

    pub(super) fn scan_heredoc(&mut self, body: &str) {
        if !(body.contains('$') || body.contains('`')) {
            return;
        }
        match parse::heredoc(body) {
            Ok(pieces) => self.walk_pieces(body, &pieces),
            Err(failure) => self.unknown(
                body,
                format!("a here-document could not be parsed: {failure}"),
            ),
        }
    }

    /// Walks the command substitutions among `pieces`, however deeply they sit.
    fn walk_pieces(&mut self, raw: &str, pieces: &[WordPieceWithSource]) {
        for piece in pieces {
            match &piece.piece {
                WordPiece::CommandSubstitution(script) => {
                    self.last_output = None;
                    self.nested_script(script, "$(…)");
                    if let Some(printed) = self.last_output.take() {
                        self.values.output(format!("$({script})"), &printed);
                    }
                }
                WordPiece::BackquotedCommandSubstitution(script) => {
                    self.nested_script(script, "`…`")
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.walk_pieces(raw, inner);
                }
                WordPiece::ParameterExpansion(_) => {
                    // `${x:-$(cmd)}`: brush-parser keeps the operand as text; parse it as a word.
                    let source = words::source_of(raw, piece);
                    if let Some(inner) = source
                        .strip_prefix("${")
                        .and_then(|rest| rest.strip_suffix('}'))
                    {
                        self.scan_text(inner);
                    }
                }
                WordPiece::ArithmeticExpression(expr) => self.arithmetic_text(&expr.value),
                WordPiece::Text(_)
                | WordPiece::SingleQuotedText(_)
                | WordPiece::AnsiCQuotedText(_)
                | WordPiece::TildeExpansion(_)
                | WordPiece::EscapeSequence(_) => {}
            }
        }
    }
}

/// The words a brace expression expands to (`{a,b}c` gives `ac`, `bc`), still quoted;
/// `None` if there would be more than [`MAX_BRACE_WORDS`] or the parser fails.
fn brace_alternatives(raw: &str, pieces: &[WordPieceWithSource]) -> Option<Vec<String>> {
    match parse::braces(raw, pieces) {
        Ok(Some(pieces)) => expand_pieces(&pieces),
        Ok(None) => Some(vec![raw.to_owned()]),
        Err(_) => None,
    }
}

/// The words a brace expression's pieces expand to, each piece's options after the words
/// so far; `None` beyond [`MAX_BRACE_WORDS`].
fn expand_pieces(pieces: &[BraceExpressionOrText]) -> Option<Vec<String>> {
    let mut results = vec![String::new()];
    for piece in pieces {
        let options = match piece {
            BraceExpressionOrText::Text(text) => vec![text.clone()],
            BraceExpressionOrText::Expr(members) => {
                let mut options = Vec::new();
                for member in members {
                    options.extend(expand_member(member)?);
                    if options.len() > MAX_BRACE_WORDS {
                        return None;
                    }
                }
                options
            }
        };
        if results.len().saturating_mul(options.len()) > MAX_BRACE_WORDS {
            return None;
        }
        results = results
            .iter()
            .flat_map(|prefix| {
                options
                    .iter()
                    .map(move |option| format!("{prefix}{option}"))
            })
            .collect();
    }
    Some(results)
}

/// The words one member of a brace expression expands to: a nested expression, or a
/// sequence of numbers or characters (`{1..9..2}`, `{a..e}`).
fn expand_member(member: &BraceExpressionMember) -> Option<Vec<String>> {
    match member {
        BraceExpressionMember::Child(pieces) => expand_pieces(pieces),
        BraceExpressionMember::NumberSequence {
            start,
            end,
            increment,
        } => {
            let values = sequence(i128::from(*start), i128::from(*end), i128::from(*increment))?;
            Some(values.into_iter().map(|value| value.to_string()).collect())
        }
        BraceExpressionMember::CharSequence {
            start,
            end,
            increment,
        } => {
            let values = sequence(
                i128::from(u32::from(*start)),
                i128::from(u32::from(*end)),
                i128::from(*increment),
            )?;
            Some(
                values
                    .into_iter()
                    .filter_map(|value| u32::try_from(value).ok().and_then(char::from_u32))
                    .map(String::from)
                    .collect(),
            )
        }
    }
}

/// The values from `start` to `end` by `increment` (counting down when `end` is lower);
/// `None` beyond [`MAX_BRACE_WORDS`].
fn sequence(start: i128, end: i128, increment: i128) -> Option<Vec<i128>> {
    let step = if increment == 0 { 1 } else { increment.abs() };
    let count = (end - start).abs() / step + 1;
    if count > MAX_BRACE_WORDS as i128 {
        return None;
    }
    let direction = if end >= start { step } else { -step };
    Some((0..count).map(|index| start + index * direction).collect())
}
