//! Named keys: what `terminal_send`'s `keys` become on the wire, as xterm sends them. Pure.
//!
//! The cursor keys (arrows, Home, End) depend on the terminal's mode: a program that asked
//! for application cursor keys (DECCKM: vim, less) gets `ESC O A`, others `ESC [ A`.

use crate::error::Error;

/// The bytes of key `name` (case-insensitive): `Enter`, `Tab`, `Esc`, `Backspace`, `Delete`,
/// `Insert`, `Space`, `Up`/`Down`/`Left`/`Right`, `Home`/`End`, `PageUp`/`PageDown`,
/// `Ctrl-A`…`Ctrl-Z` (also `Ctrl+A`, `C-a`, `^A`), `F1`…`F12`. `application_cursor`: the
/// terminal is in application cursor mode.
///
/// # Errors
/// `Error::Key` for a name it does not know, listing the ones it does.
pub(crate) fn bytes(name: &str, application_cursor: bool) -> Result<Vec<u8>, Error> {
    let lower = name.trim().to_ascii_lowercase();
    let cursor = |letter: u8| {
        let lead = if application_cursor { b'O' } else { b'[' };
        vec![0x1b, lead, letter]
    };
    let tilde = |code: &str| format!("\x1b[{code}~").into_bytes();
    let key = match lower.as_str() {
        "enter" | "return" => vec![b'\r'],
        "tab" => vec![b'\t'],
        "esc" | "escape" => vec![0x1b],
        "backspace" => vec![0x7f],
        "space" => vec![b' '],
        "delete" | "del" => tilde("3"),
        "insert" => tilde("2"),
        "up" => cursor(b'A'),
        "down" => cursor(b'B'),
        "right" => cursor(b'C'),
        "left" => cursor(b'D'),
        "home" => cursor(b'H'),
        "end" => cursor(b'F'),
        "pageup" | "pgup" => tilde("5"),
        "pagedown" | "pgdn" => tilde("6"),
        other => match control(other).or_else(|| function(other)) {
            Some(bytes) => bytes,
            None => {
                return Err(Error::Key {
                    name: name.to_string(),
                    known: KNOWN.to_string(),
                });
            }
        },
    };
    Ok(key)
}

/// The key names, in words, for errors and the tool's description.
pub const KNOWN: &str = "keys are Enter, Tab, Esc, Backspace, Delete, Insert, Space, \
    Up, Down, Left, Right, Home, End, PageUp, PageDown, Ctrl-A to Ctrl-Z, F1 to F12";

/// `ctrl-x`, `ctrl+x`, `c-x`, `^x`: the control character of the letter.
fn control(name: &str) -> Option<Vec<u8>> {
    let letter = ["ctrl-", "ctrl+", "c-", "^"]
        .iter()
        .find_map(|prefix| name.strip_prefix(prefix))?;
    match letter.as_bytes() {
        [letter @ b'a'..=b'z'] => Some(vec![letter - b'a' + 1]),
        _ => None,
    }
}

/// `f1` to `f12`, as xterm sends them.
fn function(name: &str) -> Option<Vec<u8>> {
    let number: u8 = name.strip_prefix('f')?.parse().ok()?;
    let bytes = match number {
        1..=4 => vec![0x1b, b'O', b'P' + number - 1],
        5 => b"\x1b[15~".to_vec(),
        6..=10 => format!("\x1b[{}~", number + 11).into_bytes(),
        11 | 12 => format!("\x1b[{}~", number + 12).into_bytes(),
        _ => return None,
    };
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, expected: &[u8]) {
        assert_eq!(bytes(name, false).ok().as_deref(), Some(expected), "{name}");
    }

    #[test]
    fn names_become_xterm_bytes() {
        check("Enter", b"\r");
        check("tab", b"\t");
        check("Esc", b"\x1b");
        check("Backspace", b"\x7f");
        check("Up", b"\x1b[A");
        check("Left", b"\x1b[D");
        check("PageDown", b"\x1b[6~");
        check("Ctrl-C", b"\x03");
        check("ctrl+a", b"\x01");
        check("C-z", b"\x1a");
        check("^D", b"\x04");
        check("F1", b"\x1bOP");
        check("F4", b"\x1bOS");
        check("F5", b"\x1b[15~");
        check("F6", b"\x1b[17~");
        check("F10", b"\x1b[21~");
        check("F11", b"\x1b[23~");
        check("F12", b"\x1b[24~");
    }

    #[test]
    fn application_cursor_mode_changes_the_arrows() {
        assert_eq!(bytes("Up", true).ok(), Some(b"\x1bOA".to_vec()));
        assert_eq!(bytes("Home", true).ok(), Some(b"\x1bOH".to_vec()));
        assert_eq!(bytes("PageUp", true).ok(), Some(b"\x1b[5~".to_vec()));
    }

    #[test]
    fn unknown_names_are_errors_that_list_the_known_ones() {
        for name in ["Ctrl-1", "F13", "Hyper", "", "Ctrl-"] {
            let err = bytes(name, false).expect_err(name);
            assert!(err.to_string().contains("Ctrl-A to Ctrl-Z"), "{err}");
        }
    }
}
