//! Shell words as the policy sees them: unquoted text, and whether the shell could change it.
//!
//! A word is *literal* when the shell would pass it on unchanged apart from removing quotes
//! and escapes: `'rm'`, `\rm`, `r"m"`, `$'rm'` and `rm` are the same literal word `rm`. Any
//! expansion (`$x`, `${x}`, `~`, `$(…)`, `` `…` ``, `$((…))`) makes it non-literal; its
//! source text is kept in place, so `rm -rf "$dir"/x` reads `rm -rf $dir/x`.
//!
//! Also the walker's product, each [`Found`] simple command with its [`Redirect`]s and
//! [`Stdin`]: here at the bottom of the crate, so the rule modules read them without reaching
//! up into `walk`.
//!
//! Pure: renders text, runs nothing.

use brush_parser::word::{
    Parameter, ParameterExpr, SpecialParameter, WordPiece, WordPieceWithSource,
};

use crate::env::KnownEnv;

/// One word of a command line after brace expansion and quote removal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Arg {
    /// The unquoted text; expansions appear as their source text.
    pub text: String,
    /// True if and only if no expansion takes part in the word.
    pub literal: bool,
    /// True if the word has an unquoted glob character (`*`, `?`, `[`), so the shell may
    /// replace it with file names.
    pub glob: bool,
    /// True if a command substitution inside the word runs a download (`$(curl …)`).
    pub download: bool,
    /// True if an unquoted expansion of unknown value takes part, so the shell may split the
    /// word into several (`X=$v` is two words when `v` holds a space; `X="$v"` never is).
    pub splits: bool,
    /// The text once the shell expands it, when each expansion in it is a variable of the
    /// session's environment that the command leaves alone (see `env.rs`): `$HOME/bin/x`
    /// may become `/home/me/bin/x`. `None` when some expansion's value is not known.
    pub resolved: Option<String>,
    /// For a process substitution `<(…)`, what it prints as far as the line shows it.
    pub(crate) printed: Option<Box<Printed>>,
}

/// What a process substitution `<(…)` prints, as far as the line shows it: read when a
/// shell runs it as a script (`bash <(…)`, `source <(…)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Printed {
    /// Literal `echo`/`printf` text.
    Text(String),
    /// The output of a program of the system that prints code of its own (`kubectl
    /// completion bash`).
    Tool,
    /// Anything else (a decoder, a project script, a value), with the command that prints it.
    Unseen(String),
}

impl Arg {
    /// A literal word, as used for text the policy makes up itself.
    pub(crate) fn literal(text: impl Into<String>) -> Arg {
        Arg {
            text: text.into(),
            literal: true,
            ..Arg::default()
        }
    }

    /// True if the shell runs exactly this text as a command name.
    pub(crate) fn is_plain(&self) -> bool {
        self.literal && !self.glob
    }

    /// Appends text that stays as it is once expanded.
    fn push_text(&mut self, text: &str) {
        self.text.push_str(text);
        if let Some(resolved) = &mut self.resolved {
            resolved.push_str(text);
        }
    }

    /// Appends an expansion: its source text, and its value if known. `quoted`: inside
    /// double quotes.
    fn push_expansion(&mut self, source: &str, value: Option<&str>, quoted: bool) {
        self.literal = false;
        // Known values never hold white space (`env::usable`).
        self.splits |= !quoted && value.is_none();
        self.text.push_str(source);
        match (&mut self.resolved, value) {
            (Some(resolved), Some(value)) => resolved.push_str(value),
            _ => self.resolved = None,
        }
    }
}

/// What the walker knows of the values expansions will have where a word is expanded.
#[derive(Clone, Copy, Default)]
pub(crate) struct Known<'k, 'e> {
    /// `$0`, `$1`, … when a launcher set them (`sh -c SCRIPT ARG0 ARG1…`).
    pub positional: Option<&'k [Arg]>,
    /// The session's environment, when the word is expanded by the call's own shell.
    pub env: Option<&'k KnownEnv<'e>>,
}

/// Renders parsed pieces of `raw` into `arg`. `quoted` is true inside double quotes. Start
/// `arg.resolved` at `Some("")` to have the expanded text worked out along the way.
pub(crate) fn render(
    raw: &str,
    pieces: &[WordPieceWithSource],
    quoted: bool,
    known: Known<'_, '_>,
    arg: &mut Arg,
) {
    for piece in pieces {
        match &piece.piece {
            WordPiece::Text(text) => {
                if !quoted && has_glob(text) {
                    arg.glob = true;
                }
                arg.push_text(text);
            }
            WordPiece::SingleQuotedText(text) => arg.push_text(text),
            WordPiece::AnsiCQuotedText(text) => arg.push_text(&decode_ansi_c(text)),
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => render(raw, inner, true, known, arg),
            WordPiece::ParameterExpansion(ParameterExpr::Parameter {
                parameter:
                    parameter @ (Parameter::Positional(_)
                    | Parameter::Special(SpecialParameter::ShellName)),
                indirect: false,
            }) if known.positional.is_some() => {
                // A positional parameter the launcher gave (`$0` too): its value (unset ones
                // are empty).
                let index = match parameter {
                    Parameter::Positional(index) => usize::try_from(*index).ok(),
                    _ => Some(0),
                };
                let value = known.positional.and_then(|values| values.get(index?));
                if let Some(value) = value {
                    arg.text.push_str(&value.text);
                    arg.literal &= value.literal;
                    arg.glob |= value.glob;
                    arg.download |= value.download;
                    arg.splits |= value.splits || (!quoted && !value.literal);
                    if !value.literal {
                        arg.resolved = None;
                    }
                }
            }
            WordPiece::ParameterExpansion(ParameterExpr::Parameter {
                parameter: Parameter::Named(name),
                indirect: false,
            }) => {
                let value = known.env.and_then(|env| env.value(name));
                arg.push_expansion(source_of(raw, piece), value, quoted);
            }
            WordPiece::EscapeSequence(escape) => {
                // `\x` stands for `x`; a backslash-newline is a line continuation.
                let escaped = escape.strip_prefix('\\').unwrap_or(escape);
                if escaped != "\n" {
                    arg.push_text(escaped);
                }
            }
            // A tilde is not split.
            WordPiece::TildeExpansion(_) => arg.push_expansion(source_of(raw, piece), None, true),
            WordPiece::ParameterExpansion(_)
            | WordPiece::CommandSubstitution(_)
            | WordPiece::BackquotedCommandSubstitution(_)
            | WordPiece::ArithmeticExpression(_) => {
                arg.push_expansion(source_of(raw, piece), None, quoted);
            }
        }
    }
}

/// True if the word has a `{` outside quotes and expansions, so brace expansion may apply.
pub(crate) fn has_unquoted_brace(pieces: &[WordPieceWithSource]) -> bool {
    pieces
        .iter()
        .any(|piece| matches!(&piece.piece, WordPiece::Text(text) if text.contains('{')))
}

/// True if the pieces are exactly `$@`, `"$@"`, `$*` or `"$*"`.
pub(crate) fn is_all_positional(pieces: &[WordPieceWithSource]) -> bool {
    match pieces {
        [only] => match &only.piece {
            WordPiece::DoubleQuotedSequence(inner) => is_all_positional(inner),
            WordPiece::ParameterExpansion(ParameterExpr::Parameter {
                parameter: Parameter::Special(SpecialParameter::AllPositionalParameters { .. }),
                indirect: false,
            }) => true,
            _ => false,
        },
        _ => false,
    }
}

/// The source text of one piece, or `""` if the parser's offsets do not fall on it.
pub(crate) fn source_of<'a>(raw: &'a str, piece: &WordPieceWithSource) -> &'a str {
    raw.get(piece.start_index..piece.end_index).unwrap_or("")
}

/// True if the word may need the parser: anything but plain characters.
pub(crate) fn needs_parsing(raw: &str) -> bool {
    raw.bytes().any(|byte| {
        matches!(
            byte,
            b'\'' | b'"' | b'\\' | b'$' | b'`' | b'~' | b'{' | b'(' | b'<' | b'>'
        )
    })
}

/// True if unquoted `text` has a glob: `*`, `?`, a bracket expression (`[…]`, not a lone
/// `[`) or an extended glob (`@(…)`, `!(…)`, `+(…)`).
pub(crate) fn has_glob(text: &str) -> bool {
    let bracket = text
        .find('[')
        .is_some_and(|open| text[open + 1..].contains(']'));
    bracket
        || text.bytes().any(|byte| matches!(byte, b'*' | b'?'))
        || ["@(", "!(", "+("]
            .iter()
            .any(|opener| text.contains(opener))
}

/// Decodes the body of an ANSI-C quoted string (`$'…'`), as bash does: the string ends at a
/// NUL (`$'rm\0x'` is `rm`), as the C strings bash keeps it in do.
pub(crate) fn decode_ansi_c(body: &str) -> String {
    let mut out = decode_ansi_c_escapes(body);
    if let Some(nul) = out.find('\0') {
        out.truncate(nul);
    }
    out
}

fn decode_ansi_c_escapes(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(kind) = chars.next() else {
            out.push('\\');
            break;
        };
        match kind {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(kind),
            'c' => {
                if let Some(control) = chars.next() {
                    out.push(char::from((control as u32 & 0x1f) as u8));
                }
            }
            '0'..='7' => {
                let mut value = kind.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|next| next.to_digit(8)) {
                        Some(digit) => {
                            value = value * 8 + digit;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(value & 0xff).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                let max_digits = match kind {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut value = 0u32;
                let mut n_digits = 0;
                while n_digits < max_digits {
                    match chars.peek().and_then(|next| next.to_digit(16)) {
                        Some(digit) => {
                            value = value.wrapping_mul(16).wrapping_add(digit);
                            n_digits += 1;
                            chars.next();
                        }
                        None => break,
                    }
                }
                if n_digits == 0 {
                    out.push('\\');
                    out.push(kind);
                } else {
                    out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
                }
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// Where a command's standard input comes from, as far as the policy cares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Stdin {
    /// Whatever the enclosing command has.
    #[default]
    Inherited,
    /// A pipe from an earlier command of the same pipeline.
    Pipe,
    /// A pipe from a pipeline in which an earlier command downloads (`curl … | …`).
    DownloadPipe,
    /// A pipe that carries only paths under the working directory: a `find` of relative
    /// places or `git ls-files`, then only filters that keep whole lines (`grep`, `sort`).
    LocalPaths,
    /// A pipe that carries paths from all over the home directory or the whole system: a
    /// `find` from there that no name test narrows (`find ~ -type f | xargs rm`).
    HomePaths,
}

/// One redirection, normalized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Redirect {
    pub fd: Option<i32>,
    /// `<`, `>`, `>>`, `<>`, `>|`, `<&`, `>&`, `&>`, `&>>`, `<<`, `<<-` or `<<<`; `|` for
    /// the text a literal `echo`/`printf` before it in a pipeline prints.
    pub op: &'static str,
    /// The file, fd or here-document delimiter.
    pub target: Arg,
    /// The text a here-document or here-string feeds to the command.
    pub body: Option<String>,
}

impl Redirect {
    /// `2>&1`, `>/dev/null`, `<<EOF`, `<<<text`.
    pub(crate) fn text(&self) -> String {
        let fd = self.fd.map(|fd| fd.to_string()).unwrap_or_default();
        format!("{fd}{}{}", self.op, self.target.text)
    }

    /// True if the redirect opens its target for writing.
    pub(crate) fn writes(&self) -> bool {
        match self.op {
            ">" | ">>" | ">|" | "<>" | "&>" | "&>>" => true,
            // `>&word` writes stdout and stderr to a file unless the word is an fd or `-`.
            ">&" => !self
                .target
                .text
                .bytes()
                .all(|byte| byte.is_ascii_digit() || byte == b'-'),
            _ => false,
        }
    }
}

/// One simple command the shell would run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Found {
    /// The words as written, assignments and redirections removed. Empty for a command made
    /// only of redirections (`> file`).
    pub argv: Vec<Arg>,
    /// Where each command run through wrappers starts in `argv` (`sudo rm` is `[0, 1]`).
    /// Empty when the text could not be parsed: no rule can match it then.
    pub forms: Vec<usize>,
    pub redirects: Vec<Redirect>,
    /// The constructs this command was found in, outermost first (`$(…)`, `bash -c`, `f()`).
    pub via: Vec<String>,
    /// Why the policy cannot know what this command runs, if it cannot.
    pub unknown: Option<String>,
    /// The command calls the function it is defined in, in the background or twice in one
    /// pipeline.
    pub fork_bomb: bool,
    pub stdin: Stdin,
    /// The command only hands a script to a local shell (`bash -c`, `eval`); that script's
    /// commands are found separately.
    pub launcher: bool,
    /// The text could not be parsed (this stands for all of it).
    pub unparsed: bool,
    /// The directory the command runs in, when an earlier `cd` or `pushd` of the same text
    /// moved to a known place: `/…` (normalized) or `~` / `~/…`.
    pub cwd: Option<String>,
    /// The command runs in the background, or twice in one pipeline: if it calls a function
    /// that calls back, each call starts several more at once.
    pub fans_out: bool,
    /// It is unknown only because which files under the working directory it deletes or
    /// changes the mode or owner of is known at run time (`find . -name x | xargs rm -rf`):
    /// a sandbox that confines writes to the project bounds what it can do.
    pub files_only: bool,
    /// The command line reads a credential or the environment and this command sends data
    /// to another machine.
    pub exfiltrates: bool,
    /// A shell of the command line reads from a pipe while this command talks to the
    /// network (`mkfifo f; sh < f | nc HOST PORT > f`).
    pub reverse_shell: bool,
    /// It runs code that came from the network by a route the pipe rules do not see: a file
    /// the line downloaded, a shell fed by a coprocess or a fifo while a download runs.
    pub runs_download: bool,
}

impl Found {
    /// The words of each command it runs, outermost first.
    pub(crate) fn each_form(&self) -> impl Iterator<Item = &[Arg]> {
        self.forms
            .iter()
            .filter_map(|start| self.argv.get(*start..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_strings_decode() {
        assert_eq!(decode_ansi_c(r"rm"), "rm");
        assert_eq!(decode_ansi_c(r"\x72\x6d"), "rm");
        assert_eq!(decode_ansi_c(r"\162\155"), "rm");
        assert_eq!(decode_ansi_c(r"\u0072m"), "rm");
        assert_eq!(decode_ansi_c(r"a\nb\'"), "a\nb'");
        assert_eq!(decode_ansi_c(r"\q\x"), r"\q\x");
        assert_eq!(decode_ansi_c(r"rm\0x"), "rm");
        assert_eq!(decode_ansi_c(r"a\x00b"), "a");
        assert_eq!(decode_ansi_c(r"a\c@b"), "a");
        assert_eq!(decode_ansi_c(r"a\u0000b"), "a");
    }

    #[test]
    fn globs_are_seen() {
        assert!(has_glob("/bin/r?"));
        assert!(has_glob("r[m]"));
        assert!(has_glob("@(rm)"));
        assert!(!has_glob("rm"));
    }
}
