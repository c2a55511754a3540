//! What a command prints when the line shows it: `echo` and `printf` rendered as bash would
//! (the format's conversions filled from the arguments, the format used again while
//! arguments remain, backslash escapes — `\n`, octal `\162`, hex `\x72` — read in a
//! `printf` format, in `%b` and in `echo -e`), and the text filters that only transform
//! their input (`base64 -d`, `xxd -r -p`, `rev`, `tr`, `cat`). The policy reads the result
//! where it becomes a script (`printf '\162\155 …' | sh`, `echo … | base64 -d | bash`), a
//! command name (`$(rev <<< mr) -rf ~`) or a file's text. Pure: looks at words, runs
//! nothing.

use crate::words::Arg;

/// What `form` (an `echo` or `printf` command) prints, when every argument is known: written
/// out, or the home directory (read as `~`). `None` for `printf -v` (it prints nothing) and
/// for arguments known only at run time.
pub(crate) fn printed_known(form: &[Arg]) -> Option<String> {
    let mut words = Vec::with_capacity(form.len());
    for arg in form.iter().skip(1) {
        if arg.literal {
            words.push(arg.text.clone());
        } else {
            let spelled = crate::paths::home_spellings(&arg.text);
            if spelled.starts_with('~') && !spelled.contains(['$', '`']) {
                words.push(spelled.into_owned());
                continue;
            }
            let rest = spelled
                .strip_prefix("$HOME")
                .or_else(|| spelled.strip_prefix("${HOME}"))
                .filter(|rest| !rest.contains(['$', '`']))?;
            words.push(format!("~{rest}"));
        }
    }
    render(&form.first()?.text, &words)
}

/// What the text filter `form` prints given `input`: `cat`, `rev`, `tr SET1 SET2`, `tr -d
/// SET`, `base64 -d` (also through `openssl base64 -d` and `python3 -m base64 -d`) and
/// `xxd -r -p`. `None` for anything else, or input it cannot decode.
pub(crate) fn filtered(form: &[Arg], input: &str) -> Option<String> {
    use base64::Engine;
    if form.iter().any(|arg| !arg.literal) {
        return None;
    }
    let name = crate::commands::program_name(form)?;
    let words: Vec<&str> = form.iter().skip(1).map(|arg| arg.text.as_str()).collect();
    let decode_base64 = || {
        let compact: String = input.chars().filter(|c| !c.is_whitespace()).collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(compact.as_bytes())
            .ok()?;
        String::from_utf8(bytes).ok()
    };
    match (&*name, words.as_slice()) {
        ("cat", []) => Some(input.to_owned()),
        ("rev", []) => Some(
            input
                .lines()
                .map(|line| line.chars().rev().collect::<String>() + "\n")
                .collect(),
        ),
        ("base64", ["-d" | "--decode" | "-D"])
        | (
            "openssl",
            ["base64" | "enc", "-d"] | ["enc", "-base64", "-d"] | ["enc", "-d", "-base64"],
        )
        | ("python3" | "python", ["-m", "base64", "-d"]) => decode_base64(),
        ("xxd", ["-r", "-p"] | ["-p", "-r"] | ["-rp"] | ["-pr"]) => {
            let hex: Vec<u8> = input.bytes().filter(u8::is_ascii_hexdigit).collect();
            let bytes: Option<Vec<u8>> = hex
                .chunks(2)
                .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
                .collect();
            String::from_utf8(bytes?).ok()
        }
        ("tr", ["-d", set]) => {
            let set = tr_set(set);
            Some(input.chars().filter(|c| !set.contains(c)).collect())
        }
        ("tr", [from, to]) => {
            let (from, to) = (tr_set(from), tr_set(to));
            let last = *to.last()?;
            Some(
                input
                    .chars()
                    .map(|c| match from.iter().position(|f| *f == c) {
                        Some(at) => *to.get(at).unwrap_or(&last),
                        None => c,
                    })
                    .collect(),
            )
        }
        _ => None,
    }
}

/// The characters of a `tr` set: ranges (`a-z`) spelled out, escapes read.
fn tr_set(set: &str) -> Vec<char> {
    let chars: Vec<char> = unescape(set).chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        if at + 2 < chars.len() && chars[at + 1] == '-' && chars[at] <= chars[at + 2] {
            out.extend(chars[at]..=chars[at + 2]);
            at += 3;
        } else {
            out.push(chars[at]);
            at += 1;
        }
    }
    out
}

fn render(name: &str, words: &[String]) -> Option<String> {
    match crate::commands::basename(name) {
        "printf" => {
            let mut words = words.iter().map(String::as_str);
            let mut format = words.next()?;
            if format == "-v" {
                return None;
            }
            if format == "--" {
                format = words.next()?;
            }
            let arguments: Vec<&str> = words.collect();
            Some(printf(format, &arguments))
        }
        _ => Some(echo(words)),
    }
}

/// `echo`'s output: options `-n`, `-e`, `-E` (any cluster of them) first; escapes read with
/// `-e`.
fn echo(words: &[String]) -> String {
    let mut escapes = false;
    let mut newline = true;
    let mut rest = words;
    while let Some((first, tail)) = rest.split_first() {
        let Some(letters) = first.strip_prefix('-') else {
            break;
        };
        if letters.is_empty() || !letters.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for letter in letters.chars() {
            match letter {
                'n' => newline = false,
                'e' => escapes = true,
                _ => escapes = false,
            }
        }
        rest = tail;
    }
    let joined = rest.join(" ");
    let mut out = if escapes { unescape(&joined) } else { joined };
    if newline {
        out.push('\n');
    }
    out
}

/// `printf FORMAT ARGS…`: conversions take the arguments in turn, and the format is used
/// again while some remain.
fn printf(format: &str, arguments: &[&str]) -> String {
    let mut out = String::new();
    let mut next = 0;
    loop {
        let mut consumed = false;
        let mut chars = format.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    let mut escape = String::from('\\');
                    while let Some(&d) = chars.peek() {
                        let more = escape.len() == 1
                            || (escape[1..].starts_with(|c: char| c.is_ascii_digit())
                                && escape.len() < 4
                                && d.is_digit(8))
                            || (escape[1..].starts_with('x')
                                && escape.len() < 4
                                && d.is_ascii_hexdigit());
                        if !more {
                            break;
                        }
                        escape.push(d);
                        chars.next();
                    }
                    out.push_str(&unescape(&escape));
                }
                '%' => {
                    if chars.peek() == Some(&'%') {
                        chars.next();
                        out.push('%');
                        continue;
                    }
                    // Flags, width and precision, then the conversion.
                    let mut conversion = None;
                    for d in chars.by_ref() {
                        if d.is_ascii_alphabetic() {
                            conversion = Some(d);
                            break;
                        }
                    }
                    let argument = arguments.get(next).copied().unwrap_or("");
                    next += 1;
                    consumed = true;
                    match conversion {
                        Some('b') => out.push_str(&unescape(argument)),
                        Some('c') => out.extend(argument.chars().next()),
                        Some(_) => out.push_str(argument),
                        None => {}
                    }
                }
                c => out.push(c),
            }
        }
        if !consumed || next >= arguments.len() {
            return out;
        }
    }
}

/// Backslash escapes read: `\n`, `\t`, `\\`, `\a`, `\e`, octal (`\162`, `\0162`) and hex
/// (`\x72`); others kept as written.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(kind) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut number = |radix: u32, start: u32, most: usize| {
            let mut value = start;
            for _ in 0..most {
                match chars.peek().and_then(|d| d.to_digit(radix)) {
                    Some(digit) => {
                        value = value * radix + digit;
                        chars.next();
                    }
                    None => break,
                }
            }
            char::from_u32(value).unwrap_or('\u{fffd}')
        };
        match kind {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'e' | 'E' => out.push('\u{1b}'),
            '\\' => out.push('\\'),
            '0' => out.push(number(8, 0, 3)),
            '1'..='7' => out.push(number(8, kind.to_digit(8).unwrap_or(0), 2)),
            'x' => out.push(number(16, 0, 2)),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Arg> {
        text.split(' ').map(Arg::literal).collect()
    }

    fn printed(form: &[Arg]) -> String {
        printed_known(form).unwrap_or_default()
    }

    #[test]
    fn printf_fills_its_format_and_reads_escapes() {
        assert_eq!(printed(&words(r"printf \162\155 \055\162\146 \176")), "rm");
        assert_eq!(
            printed(&[
                Arg::literal("printf"),
                Arg::literal(r"\162\155 \055\162\146 \176")
            ]),
            "rm -rf ~"
        );
        assert_eq!(printed(&words(r"printf \x72\x6d")), "rm");
        assert_eq!(printed(&words(r"printf %s-%s\n a b c")), "a-b\nc-\n");
        assert_eq!(printed(&words(r"printf %b x\ty")), "x\ty");
        assert_eq!(printed(&words("printf 100%%")), "100%");
    }

    #[test]
    fn filters_transform_their_input() {
        let form = |line: &str| words(line);
        assert_eq!(
            filtered(&form("base64 -d"), "cm0gLXJmIH4=\n").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            filtered(&form("xxd -r -p"), "726d202d7266207e").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            filtered(&form("rev"), "~ fr- mr\n").as_deref(),
            Some("rm -rf ~\n")
        );
        assert_eq!(
            filtered(&form("tr a-z n-za-m"), "ez").as_deref(),
            Some("rm")
        );
        assert_eq!(filtered(&form("tr -d \""), "\"ls\"").as_deref(), Some("ls"));
        assert_eq!(filtered(&form("sort"), "b\na"), None);
        assert_eq!(filtered(&form("base64 -d"), "%%%"), None);
    }

    #[test]
    fn echo_reads_escapes_only_with_e() {
        assert_eq!(printed(&words(r"echo -e a\nb")), "a\nb\n");
        assert_eq!(printed(&words(r"echo a\nb")), "a\\nb\n");
        assert_eq!(printed(&words("echo -n x")), "x");
        assert_eq!(printed(&words("echo -x y")), "-x y\n");
    }

    #[test]
    fn the_home_directory_is_known_and_other_values_are_not() {
        let home = Arg {
            text: "$HOME/.aws".to_owned(),
            ..Arg::default()
        };
        let form = [
            Arg::literal("printf"),
            Arg::literal("rm -rf %s\n"),
            home.clone(),
        ];
        assert_eq!(printed_known(&form).as_deref(), Some("rm -rf ~/.aws\n"));
        let value = Arg {
            text: "$X".to_owned(),
            ..Arg::default()
        };
        assert_eq!(printed_known(&[Arg::literal("echo"), value]), None);
        assert_eq!(printed_known(&words("printf -v x %s y")), None);
    }
}
