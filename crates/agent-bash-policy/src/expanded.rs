//! A command name built at run time, read as bash would build it from what the line shows:
//! variables given literal values (`a=r; b=m; $a$b -rf ~`), arrays and positional
//! parameters (`a=(rm -rf ~); "${a[@]}"`, `set -- …; "$@"`), indirect names (`${!v}`), a
//! custom `IFS` splitting an unquoted word, values filled by `read <<<`, `printf -v` and
//! `mapfile`, the output of a substitution that only prints or decodes text (`$(rev <<<
//! mr)`), and names rebound by `hash -p`.
//!
//! The walker keeps such a command unknown (a value may change in ways the text does not
//! show), and also walks the command as read here: the rules see what it most likely runs,
//! which can only make the decision stricter. Pure: looks at words, runs nothing.

use crate::runners::quote_join;
use crate::words::Arg;

/// What the line showed so far: values of variables, arrays, substitution outputs, names
/// rebound by `hash -p`.
#[derive(Debug, Default)]
pub(crate) struct Values {
    scalars: Vec<(String, String)>,
    arrays: Vec<(String, Vec<String>)>,
    /// The source text of a command substitution (`$(…)`) and what it prints.
    outputs: Vec<(String, String)>,
    hashed: Vec<(String, String)>,
}

impl Values {
    pub(crate) fn scalar(&mut self, name: &str, value: &str) {
        self.scalars.push((name.to_owned(), value.to_owned()));
    }

    /// `name=value`, or `name+=value` (`append`), which adds to the value it had.
    pub(crate) fn assign(&mut self, name: &str, value: &str, append: bool) {
        let before = append.then(|| self.scalar_of(name)).flatten().unwrap_or("");
        let value = format!("{before}{value}");
        self.scalar(name, &value);
    }

    pub(crate) fn array(&mut self, name: &str, values: Vec<String>) {
        self.arrays.push((name.to_owned(), values));
    }

    pub(crate) fn output(&mut self, source: String, printed: &str) {
        self.outputs
            .push((source, printed.trim_end_matches('\n').to_owned()));
    }

    fn scalar_of(&self, name: &str) -> Option<&str> {
        self.scalars
            .iter()
            .rev()
            .find(|(bound, _)| bound == name)
            .map(|(_, value)| value.as_str())
    }

    fn array_of(&self, name: &str) -> Option<&[String]> {
        self.arrays
            .iter()
            .rev()
            .find(|(bound, _)| bound == name)
            .map(|(_, values)| values.as_slice())
    }

    /// Records what `form` gives values to: `read NAME <<< TEXT`, `printf -v NAME …`,
    /// `mapfile NAME` from spelled-out text, `set -- WORDS`, `hash -p PATH NAME`. `input` is
    /// the text the command reads, when the line spells it out.
    pub(crate) fn learn(&mut self, form: &[Arg], input: Option<&str>) {
        let name = crate::commands::program_name(form).unwrap_or_default();
        if !matches!(
            &*name,
            "read" | "printf" | "mapfile" | "readarray" | "set" | "hash"
        ) {
            return;
        }
        let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
        match (&*name, words.as_slice()) {
            ("read", _) => {
                let names: Vec<&&str> =
                    words.iter().filter(|word| !word.starts_with('-')).collect();
                if let (Some(text), [only]) = (input, names.as_slice()) {
                    self.scalar(only, text.lines().next().unwrap_or(""));
                }
            }
            ("printf", ["-v", variable, ..]) => {
                let mut rest = vec![Arg::literal("printf")];
                rest.extend(form[3..].iter().cloned());
                if let Some(text) = crate::printed::printed_known(&rest) {
                    self.scalar(variable, &text);
                }
            }
            ("mapfile" | "readarray", _) => {
                if let (Some(text), Some(variable)) = (
                    input,
                    words.iter().rev().find(|word| !word.starts_with('-')),
                ) {
                    self.array(variable, text.lines().map(str::to_owned).collect());
                }
            }
            ("set", ["--", rest @ ..]) => {
                let values = rest.iter().map(|word| (*word).to_owned()).collect();
                self.array("@", values);
            }
            ("hash", ["-p", path, rebound]) => {
                self.hashed
                    .push(((*rebound).to_owned(), (*path).to_owned()));
            }
            _ => {}
        }
    }

    /// The command `argv` runs as the line's values build it, as shell text; `None` when
    /// its name is written out (and not rebound) or some part is not shown.
    pub(crate) fn expanded_command(&self, argv: &[Arg]) -> Option<String> {
        let first = argv.first()?;
        // `/???/?m -rf ~`, `/usr/bin/[r]m`: a glob as the command names the programs it
        // matches; each is read.
        // Only `?` and `[…]`: names of one length, which few programs share (with `*`, the
        // first of many names, unknown here, would run).
        if first.glob && first.text.starts_with('/') && !first.text.contains('*') {
            let matched: Vec<String> = GLOBBED
                .iter()
                .flat_map(|program| {
                    ["/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/"]
                        .iter()
                        .map(move |dir| format!("{dir}{program}"))
                })
                .filter(|path| {
                    crate::paths::shell_glob_matches(first.text.as_bytes(), path.as_bytes())
                })
                .map(|path| {
                    let mut words = vec![Arg::literal(path)];
                    words.extend(argv[1..].iter().cloned());
                    quote_join(&words)
                })
                .collect();
            return (!matched.is_empty()).then(|| matched.join("\n"));
        }
        // `rm -rf "${!p}/.ssh"`, `rm -rf "$*"`: arguments bash builds from the line's values.
        let built = |arg: &Arg| {
            !arg.literal
                && ["${!", "$*", "${*}", "[*]}", "[@]}"]
                    .iter()
                    .any(|part| arg.text.contains(part))
        };
        if first.literal && argv.iter().any(built) {
            let ifs = self.scalar_of("IFS").filter(|ifs| ifs.chars().count() <= 1);
            let mut parts = vec![quote_join(std::slice::from_ref(first))];
            for arg in &argv[1..] {
                parts.push(if built(arg) {
                    self.expanded_word(arg, ifs)?
                } else if arg.literal {
                    quote_join(std::slice::from_ref(arg))
                } else {
                    arg.text.clone()
                });
            }
            return Some(parts.join(" "));
        }
        if first.literal {
            let (_, path) = self
                .hashed
                .iter()
                .rev()
                .find(|(name, _)| *name == first.text)?;
            let mut words = vec![Arg::literal(path.clone())];
            words.extend(argv[1..].iter().cloned());
            return Some(quote_join(&words));
        }
        let ifs = self.scalar_of("IFS").filter(|ifs| ifs.chars().count() == 1);
        let mut parts = Vec::with_capacity(argv.len());
        for arg in argv {
            if arg.literal {
                parts.push(quote_join(std::slice::from_ref(arg)));
                continue;
            }
            parts.push(self.expanded_word(arg, ifs)?);
        }
        Some(parts.join(" "))
    }

    /// One word as shell text once its values are put in: split where bash would split
    /// it, quoted where it would not.
    fn expanded_word(&self, arg: &Arg, ifs: Option<&str>) -> Option<String> {
        let text = arg.text.as_str();
        // `"${a[@]}"` and `"$@"`: each element a word of its own.
        if let Some(inner) = text
            .strip_prefix("${")
            .and_then(|rest| rest.strip_suffix("[@]}"))
        {
            return self.array_of(inner).map(quoted_words);
        }
        if matches!(text, "$@" | "${@}") {
            return self.array_of("@").map(quoted_words);
        }
        // `${a[*]}` and `$*`: the elements joined by the first character of `IFS`.
        let joined = text
            .strip_prefix("${")
            .and_then(|rest| rest.strip_suffix("[*]}"))
            .or(matches!(text, "$*" | "${*}").then_some("@"));
        if let Some(inner) = joined {
            let separator: String = self
                .scalar_of("IFS")
                .map_or(" ".to_owned(), |ifs| ifs.chars().take(1).collect());
            let value = self.array_of(inner)?.join(&separator);
            return Some(if arg.splits {
                value
            } else {
                quote_join(&[Arg::literal(value)])
            });
        }
        let mut value = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            value.push_str(&rest[..at]);
            let after = &rest[at..];
            let (expanded, used) = self.expansion(after)?;
            value.push_str(&expanded);
            rest = &after[used..];
        }
        value.push_str(rest);
        if arg.splits {
            if let Some(ifs) = ifs {
                value = value.replace(ifs, " ");
            }
            return Some(value);
        }
        Some(if value.starts_with('~') || value.starts_with("$HOME") {
            value
        } else {
            quote_join(&[Arg::literal(value)])
        })
    }

    /// The value of the expansion `text` starts with, and how many bytes it took: a known
    /// variable (`$a`, `${a}`), an indirect one (`${!v}`), a known substitution's output,
    /// or the home directory (kept as `$HOME`).
    fn expansion(&self, text: &str) -> Option<(String, usize)> {
        if let Some((source, output)) = self
            .outputs
            .iter()
            .rev()
            .find(|(source, _)| text.starts_with(source.as_str()))
        {
            return Some((output.clone(), source.len()));
        }
        let (name, used) = if let Some(braced) = text.strip_prefix("${") {
            let end = braced.find('}')?;
            (&braced[..end], end + 3)
        } else {
            let name_len = text[1..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(text.len() - 1);
            (&text[1..=name_len], name_len + 1)
        };
        if name == "HOME" {
            return Some(("$HOME".to_owned(), used));
        }
        // Unset by the line, `IFS` is a blank: unquoted, it splits words.
        if name == "IFS" && self.scalar_of("IFS").is_none() {
            return Some((" ".to_owned(), used));
        }
        if let Some(pointer) = name.strip_prefix('!') {
            let target = self.scalar_of(pointer)?;
            if target == "HOME" {
                return Some(("$HOME".to_owned(), used));
            }
            return Some((self.scalar_of(target)?.to_owned(), used));
        }
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        Some((self.scalar_of(name)?.to_owned(), used))
    }
}

/// Programs a glob used as a command is checked against: those a rule denies for some
/// arguments.
const GLOBBED: &[&str] = &[
    "rm", "dd", "shred", "mkfs", "wipefs", "reboot", "shutdown", "poweroff", "halt", "kill",
    "pkill", "killall", "chmod", "chown", "curl", "wget", "nc", "bash", "sh", "truncate",
];

/// Words as shell text, each quoted (a home directory left bare so it expands).
fn quoted_words(values: &[String]) -> String {
    values
        .iter()
        .map(|value| {
            if value.starts_with('~') || value.starts_with("$HOME") {
                value.clone()
            } else {
                quote_join(&[Arg::literal(value.clone())])
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str, splits: bool) -> Arg {
        Arg {
            text: text.to_owned(),
            literal: false,
            splits,
            ..Arg::default()
        }
    }

    #[test]
    fn names_built_from_values_are_read() {
        let mut values = Values::default();
        values.scalar("a", "r");
        values.scalar("b", "m");
        let argv = [word("$a$b", true), Arg::literal("-rf"), Arg::literal("x")];
        assert_eq!(
            values.expanded_command(&argv).as_deref(),
            Some("rm '-rf' 'x'")
        );
        values.scalar("IFS", ",");
        values.scalar("c", "rm,-rf,$HOME");
        assert_eq!(
            values.expanded_command(&[word("$c", true)]).as_deref(),
            Some("rm -rf $HOME")
        );
        values.array("a", vec!["sudo".into(), "reboot".into()]);
        assert_eq!(
            values
                .expanded_command(&[word("${a[@]}", false)])
                .as_deref(),
            Some("'sudo' 'reboot'")
        );
        values.scalar("cmd", "poweroff");
        values.scalar("v", "cmd");
        assert_eq!(
            values.expanded_command(&[word("${!v}", false)]).as_deref(),
            Some("'poweroff'")
        );
        assert_eq!(values.expanded_command(&[word("$unknown", true)]), None);
    }

    #[test]
    fn substitutions_rebinds_and_filled_values_are_read() {
        let mut values = Values::default();
        values.output("$(rev <<< mr)".into(), "rm\n");
        assert_eq!(
            values
                .expanded_command(&[word("$(rev <<< mr)", false), Arg::literal("-rf")])
                .as_deref(),
            Some("'rm' '-rf'")
        );
        let read = [Arg::literal("read"), Arg::literal("-r"), Arg::literal("c")];
        values.learn(&read, Some("shutdown -h now\n"));
        assert_eq!(
            values.expanded_command(&[word("$c", true)]).as_deref(),
            Some("shutdown -h now")
        );
        let hash = [
            Arg::literal("hash"),
            Arg::literal("-p"),
            Arg::literal("/bin/rm"),
            Arg::literal("ls"),
        ];
        values.learn(&hash, None);
        assert_eq!(
            values
                .expanded_command(&[Arg::literal("ls"), Arg::literal("-rf")])
                .as_deref(),
            Some("'/bin/rm' '-rf'")
        );
    }
}
