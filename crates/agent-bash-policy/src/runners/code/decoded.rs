//! Code hidden in encoded literals the code decodes (base64, hex): read like the rest of
//! the code, and taken as shell text where the code runs a shell or it looks like one.

use super::*;

/// Commands in code hidden in an encoded literal it decodes (`eval pack "H*", "…"`,
/// `eval(Buffer.from("…", "base64").toString())`): read like the rest, once.
pub(super) fn decoded_commands(language: &str, code: &str) -> Vec<String> {
    let mut commands = Vec::new();
    if code.contains("\u{0}decoded") {
        return commands;
    }
    for decoded in decoded_literals(code) {
        let marked = format!("{decoded}\u{0}decoded");
        commands.extend(code_commands(language, &marked));
        let shells = [
            "system(",
            "popen(",
            "exec(",
            "execSync(",
            "spawn(",
            "subprocess",
        ]
        .iter()
        .any(|call| code.contains(call));
        if shells || looks_like_shell(&decoded) {
            commands.push(decoded);
        }
    }
    commands
}

/// The texts of the encoded literals `code` decodes: base64 (`b64decode('…')`,
/// `Buffer.from('…', 'base64')`, `atob('…')`, `decode_base64('…')`) and hex (`pack "H*",
/// "…"`, `bytes.fromhex('…')`, `Buffer.from('…', 'hex')`).
fn decoded_literals(code: &str) -> Vec<String> {
    use base64::Engine;
    let mut found = Vec::new();
    let literal_after = |at: usize| {
        let rest = &code[at..];
        let start = rest.find(['"', '\''])?;
        let quote = rest[start..].chars().next()?;
        let inner = &rest[start + 1..];
        inner.find(quote).map(|end| &inner[..end])
    };
    for call in [
        "b64decode(",
        "Buffer.from(",
        "atob(",
        "decode_base64(",
        "base64_decode(",
        "Base64.decode64(",
    ] {
        for (at, _) in code.match_indices(call) {
            let Some(text) = literal_after(at + call.len()) else {
                continue;
            };
            let hex_call = call == "Buffer.from("
                && code[at..]
                    .split(')')
                    .next()
                    .is_some_and(|args| args.contains("hex"));
            let bytes = if hex_call {
                hex_bytes(text)
            } else {
                base64::engine::general_purpose::STANDARD
                    .decode(text.trim())
                    .ok()
            };
            found.extend(bytes.and_then(|bytes| String::from_utf8(bytes).ok()));
        }
    }
    for call in [
        "pack \"H*\",",
        "pack('H*',",
        "pack(\"H*\",",
        "pack 'H*',",
        "bytes.fromhex(",
        "unhexlify(",
    ] {
        for (at, _) in code.match_indices(call) {
            let Some(text) = literal_after(at + call.len()) else {
                continue;
            };
            found.extend(hex_bytes(text).and_then(|bytes| String::from_utf8(bytes).ok()));
        }
    }
    found
}

/// The bytes of a hex string (`726d20`), if it is one.
fn hex_bytes(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) || !text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return None;
    }
    text.as_bytes()
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

/// True if decoded text starts like a shell command that does harm often enough to look.
fn looks_like_shell(text: &str) -> bool {
    matches!(
        text.split_whitespace().next().unwrap_or(""),
        "rm" | "sh"
            | "bash"
            | "curl"
            | "wget"
            | "shutdown"
            | "reboot"
            | "mkfs"
            | "dd"
            | "chmod"
            | "chown"
            | "kill"
            | "pkill"
            | "nc"
            | "python"
            | "python3"
            | "perl"
            | "eval"
    )
}
