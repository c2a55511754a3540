//! Reading code's string literals and calls' arguments: a literal's text, the first
//! argument of a call, a list split at its top-level commas.

/// The contents of the string literals in `code` (`'…'` and `"…"`).
pub(super) fn string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' || c == '"' {
            let mut literal = String::new();
            for inner in chars.by_ref() {
                if inner == c {
                    break;
                }
                literal.push(inner);
            }
            out.push(literal);
        }
    }
    out
}

/// The text up to the bracket that closes the one opened just before `rest`.
pub(super) fn until_close(rest: &str) -> &str {
    balanced(rest, false)
}

/// `rest` up to the bracket that closes the one opened before it, or (with `at_comma`) up
/// to a comma outside brackets, whichever comes first.
fn balanced(rest: &str, at_comma: bool) -> &str {
    let mut depth = 0usize;
    for (at, c) in rest.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return &rest[..at],
            ')' | ']' | '}' => depth -= 1,
            ',' if at_comma && depth == 0 => return &rest[..at],
            _ => {}
        }
    }
    rest
}

/// The items of a list's text, split at commas outside brackets and parentheses.
pub(super) fn split_top_level(list: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (at, c) in list.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(&list[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    items
}

/// The first argument of a call whose `(` came just before `rest`, parentheses balanced.
pub(super) fn balanced_argument(rest: &str) -> &str {
    balanced(rest, true)
}

/// The command in the first argument of a call: a string literal's text, a list of string
/// literals joined, or a text that asks (`$(…)`) when it is built at run time.
pub(super) fn first_argument(rest: &str) -> String {
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('(').unwrap_or(rest).trim_start();
    let unknown = "$(code-built-at-run-time)".to_owned();
    if let Some(list) = rest.strip_prefix('[') {
        let end = list.find(']').unwrap_or(list.len());
        let mut words = Vec::new();
        for item in list[..end].split(',') {
            match string_literal(item.trim()) {
                Some(word) => words.push(format!("'{}'", word.replace('\'', "'\\''"))),
                None if item.trim().is_empty() => {}
                None => return unknown,
            }
        }
        return words.join(" ");
    }
    let end = rest.find([',', ')', ';']).unwrap_or(rest.len());
    let argument = rest[..end].trim();
    match string_literal(argument) {
        Some(text) => text,
        // A literal that holds a `,` `)` or `;`: take it whole.
        None => quoted_prefix(rest).unwrap_or(unknown),
    }
}

/// The text of a whole string literal (`'…'` or `"…"`, no interpolation).
pub(super) fn string_literal(text: &str) -> Option<String> {
    let text = text.strip_prefix('r').unwrap_or(text);
    let quote = text.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    if inner.contains(quote) || inner.contains("#{") || inner.contains("${") {
        return None;
    }
    Some(inner.replace("\\n", "\n"))
}

/// The string literal that `text` starts with, if it starts with one.
pub(super) fn quoted_prefix(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let inner = &text[1..];
    let end = inner.find(quote)?;
    let literal = &inner[..end];
    (!literal.contains("#{") && !literal.contains("${")).then(|| literal.to_owned())
}
