//! What `terminal_send` types: the bytes of its text and keys, the lines it completes at a
//! shell prompt (what the policy checks), and how the audit log shows it.

use super::TerminalInput;
use super::keys;
use crate::error::Error;

/// The bytes `input` types: the text (a newline is the Enter key, `\r`), then the keys.
///
/// # Errors
/// `Error::Key` for a key name it does not know.
pub(super) fn typed_bytes(
    input: &TerminalInput,
    application_cursor: bool,
) -> Result<Vec<u8>, Error> {
    let mut bytes: Vec<u8> = input
        .text
        .as_deref()
        .unwrap_or_default()
        .replace("\r\n", "\r")
        .replace('\n', "\r")
        .into_bytes();
    for key in &input.keys {
        bytes.extend(keys::bytes(key, application_cursor)?);
    }
    Ok(bytes)
}

/// `input` as the audit log shows it: the text (only its length, unless it was typed at a
/// shell prompt: input to a program may be a password), then the keys as `{Enter}`.
pub(super) fn shown_input(input: &TerminalInput, text_shown: bool) -> String {
    let text = input.text.clone().unwrap_or_default();
    let mut shown = match (text_shown, text.chars().count()) {
        (true, _) | (false, 0) => text,
        (false, chars) => format!("({chars} chars)"),
    };
    for key in &input.keys {
        shown.push('{');
        shown.push_str(key);
        shown.push('}');
    }
    shown
}

/// The lines `input` completes at a shell prompt (the first begun by what was `typed`
/// before), and what is typed after its last Enter.
pub(super) fn shell_lines(typed: &str, input: &TerminalInput) -> (Vec<String>, String) {
    let mut line = typed.to_string();
    let mut lines = Vec::new();
    for c in input.text.as_deref().unwrap_or_default().chars() {
        match c {
            '\n' | '\r' => lines.push(std::mem::take(&mut line)),
            '\x03' | '\x15' => line.clear(),
            '\x7f' | '\x08' => {
                line.pop();
            }
            c => line.push(c),
        }
    }
    for key in &input.keys {
        match key.trim().to_ascii_lowercase().as_str() {
            "enter" | "return" | "ctrl-m" | "ctrl-j" | "c-m" | "c-j" | "^m" | "^j" => {
                lines.push(std::mem::take(&mut line));
            }
            "ctrl-c" | "ctrl-u" | "c-c" | "c-u" | "^c" | "^u" | "ctrl+c" | "ctrl+u" => line.clear(),
            "backspace" => {
                line.pop();
            }
            "space" => line.push(' '),
            "tab" => line.push('\t'),
            _ => {}
        }
    }
    lines.retain(|line| !line.trim().is_empty());
    (lines, line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::terminal::TerminalWait;

    fn input(text: &str, keys: &[&str]) -> TerminalInput {
        TerminalInput {
            text: Some(text.into()),
            keys: keys.iter().map(|key| key.to_string()).collect(),
            wait: TerminalWait::default(),
        }
    }

    #[test]
    fn lines_typed_at_a_prompt_are_what_enter_completes() {
        let check = |typed: &str, text: &str, keys: &[&str], lines: &[&str], rest: &str| {
            let (got, left) = shell_lines(typed, &input(text, keys));
            assert_eq!(
                (got, left.as_str()),
                (
                    lines.iter().map(|l| l.to_string()).collect::<Vec<_>>(),
                    rest
                ),
                "{typed:?} {text:?} {keys:?}"
            );
        };
        check("", "ls -l", &["Enter"], &["ls -l"], "");
        check("", "ls\ncd /tmp\n", &[], &["ls", "cd /tmp"], "");
        check("rm -rf ", "/", &["Enter"], &["rm -rf /"], "");
        check("", "echo hi", &[], &[], "echo hi");
        check("junk", "", &["Ctrl-C"], &[], "");
        check("", "lsx", &["Backspace", "Enter"], &["ls"], "");
        check("", "", &["Enter"], &[], "");
    }

    #[test]
    fn text_newlines_are_typed_as_enter_and_keys_follow() {
        let bytes = typed_bytes(&input("a\nb\r\n", &["Tab", "Ctrl-D"]), false).unwrap();
        assert_eq!(bytes, b"a\rb\r\t\x04");
        assert!(matches!(
            typed_bytes(&input("", &["Nope"]), false),
            Err(Error::Key { .. })
        ));
        assert_eq!(shown_input(&input("ls", &["Enter"]), true), "ls{Enter}");
        assert_eq!(
            shown_input(&input("hunter2", &["Enter"]), false),
            "(7 chars){Enter}"
        );
    }
}
