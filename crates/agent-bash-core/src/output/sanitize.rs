//! Sanitizing: turn a raw (already redacted) byte stream into plain text, as the bytes arrive.
//!
//! Strips ANSI/ECMA-48 control sequences (CSI, OSC ended by BEL or ST, DCS/SOS/PM/APC
//! strings, other ESC sequences, and their 8-bit C1 forms), drops C0 controls except `\t`
//! and `\n`, reports `\r` and backspace to the sink (which gives them their line meaning),
//! and turns invalid UTF-8 into U+FFFD without ever splitting a valid character across two
//! `feed` calls. Any chunking of the same bytes gives the same events.
//!
//! Why not `vte`: it streams correctly but ran at 440–580 MB/s here, and its state cannot
//! be observed from outside, so no exact fast path can go around it. Finding where a
//! sequence *ends* (all we need: we never act on one) is the eight states below, and the
//! plain-text path is a vectorised scan. Never allocates.

/// Receives the sanitized stream.
pub(crate) trait TextSink {
    /// Printable text: no control characters except `\t` and `\n` (line feeds).
    fn text(&mut self, text: &str);
    /// A line feed met inside an escape sequence (terminals act on it there too).
    fn newline(&mut self);
    /// A carriage return not (yet) known to be followed by a line feed.
    fn carriage_return(&mut self);
    /// A backspace.
    fn backspace(&mut self);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Text.
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and intermediate bytes (0x20–0x2F).
    EscapeIntermediate,
    /// Inside a control sequence (`ESC [`): parameters until a final byte 0x40–0x7E.
    Csi,
    /// Inside an operating system command (`ESC ]`), ended by BEL or ST.
    Osc,
    /// An ESC inside an OSC: `\` ends it (ST), anything else starts a new sequence.
    OscEscape,
    /// Inside a DCS, SOS, PM or APC string, ended by ST.
    Str,
    /// An ESC inside such a string.
    StrEscape,
}

const ESC: u8 = 0x1b;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;
const BEL: u8 = 0x07;
const REPLACEMENT: &str = "\u{FFFD}";

/// The streaming sanitizer. One per stream.
#[derive(Clone, Debug)]
pub(crate) struct Sanitizer {
    state: State,
    /// The start of a UTF-8 character cut off by the end of the previous chunk.
    carry: [u8; 4],
    carry_len: usize,
}

impl Default for Sanitizer {
    fn default() -> Sanitizer {
        Sanitizer::new()
    }
}

impl Sanitizer {
    pub(crate) fn new() -> Sanitizer {
        Sanitizer {
            state: State::Ground,
            carry: [0; 4],
            carry_len: 0,
        }
    }

    /// Processes the next chunk of the stream.
    pub(crate) fn feed(&mut self, bytes: &[u8], sink: &mut impl TextSink) {
        let mut at = 0;
        if self.carry_len > 0 {
            at = self.finish_carried_char(bytes, sink);
        }
        while at < bytes.len() {
            at += match self.state {
                State::Ground => self.ground(&bytes[at..], sink),
                _ => self.sequence(&bytes[at..], sink),
            };
        }
    }

    /// Ends the stream: a character still cut off becomes U+FFFD.
    pub(crate) fn finish(&mut self, sink: &mut impl TextSink) {
        if self.carry_len > 0 {
            self.carry_len = 0;
            sink.text(REPLACEMENT);
        }
    }

    /// Completes the character carried over from the previous chunk; returns how many bytes
    /// of `bytes` it used.
    fn finish_carried_char(&mut self, bytes: &[u8], sink: &mut impl TextSink) -> usize {
        let old = self.carry_len;
        let take = bytes.len().min(4 - old);
        let mut buf = [0u8; 8];
        buf[..old].copy_from_slice(&self.carry[..old]);
        buf[old..old + take].copy_from_slice(&bytes[..take]);
        let candidate = &buf[..old + take];
        let valid = match std::str::from_utf8(candidate) {
            Ok(_) => candidate.len(),
            Err(err) => err.valid_up_to(),
        };
        if valid > 0 {
            // The first character is complete; it ends within `bytes` because the `old`
            // carried bytes alone were not a character.
            let text = std::str::from_utf8(&candidate[..valid]).unwrap_or(REPLACEMENT);
            let first_len = text.chars().next().map_or(text.len(), char::len_utf8);
            self.carry_len = 0;
            self.unicode_text(&text[..first_len], sink);
            return first_len.saturating_sub(old);
        }
        match std::str::from_utf8(candidate)
            .err()
            .and_then(|err| err.error_len())
        {
            Some(bad) => {
                // The carried bytes did not continue as a character: one U+FFFD for the
                // invalid sequence, which may take a few bytes of `bytes` with it.
                self.carry_len = 0;
                sink.text(REPLACEMENT);
                bad.saturating_sub(old)
            }
            None => {
                // Still incomplete (a very short chunk): keep carrying.
                self.carry[old..old + take].copy_from_slice(&bytes[..take]);
                self.carry_len = old + take;
                take
            }
        }
    }

    /// Processes text in the ground state up to the start of a sequence or the end of
    /// `bytes`; returns the number of bytes consumed (at least 1).
    fn ground(&mut self, bytes: &[u8], sink: &mut impl TextSink) -> usize {
        let mut at = 0;
        while at < bytes.len() {
            let plain = plain_prefix_len(&bytes[at..]);
            if plain > 0 {
                sink.text(ascii_str(&bytes[at..at + plain]));
                at += plain;
                continue;
            }
            match bytes[at] {
                b'\r' => sink.carriage_return(),
                0x08 => sink.backspace(),
                ESC => {
                    // Colour codes are most of what coloured output adds: one met whole
                    // is skipped here, without the states.
                    if let Some(csi) = complete_csi(&bytes[at..]) {
                        at += csi;
                        continue;
                    }
                    self.state = State::Escape;
                    return at + 1;
                }
                0x00..=0x7f => {} // other C0 controls and DEL: dropped
                _ => {
                    let used = self.non_ascii(&bytes[at..], sink);
                    at += used;
                    if self.state != State::Ground {
                        return at;
                    }
                    continue;
                }
            }
            at += 1;
        }
        at
    }

    /// Decodes the run of text starting at a non-ASCII byte. Returns the bytes consumed.
    fn non_ascii(&mut self, bytes: &[u8], sink: &mut impl TextSink) -> usize {
        // The run ends at the first ASCII control but tab and line feed: `ground` handles those.
        let run_len = bytes
            .iter()
            .position(|&b| !is_text_byte(b))
            .unwrap_or(bytes.len());
        let run = &bytes[..run_len];
        let mut at = 0;
        while at < run.len() {
            match std::str::from_utf8(&run[at..]) {
                Ok(text) => {
                    return at + self.unicode_text(text, sink);
                }
                Err(err) => {
                    let valid_end = at + err.valid_up_to();
                    if let Ok(text) = std::str::from_utf8(&run[at..valid_end]) {
                        let used = self.unicode_text(text, sink);
                        if self.state != State::Ground {
                            return at + used;
                        }
                    }
                    match err.error_len() {
                        Some(bad) => {
                            sink.text(REPLACEMENT);
                            at = valid_end + bad;
                        }
                        None if run_len == bytes.len() => {
                            // Cut off by the end of the chunk: carry it to the next one.
                            let tail = &run[valid_end..];
                            self.carry[..tail.len()].copy_from_slice(tail);
                            self.carry_len = tail.len();
                            return run.len();
                        }
                        None => {
                            // Cut off by a control character: it will never complete.
                            sink.text(REPLACEMENT);
                            return run.len();
                        }
                    }
                }
            }
        }
        run.len()
    }

    /// Emits valid text, acting on 8-bit C1 controls (U+0080–U+009F) inside it. Returns the
    /// bytes consumed: all of `text`, or up to a C1 control that opened a sequence.
    fn unicode_text(&mut self, text: &str, sink: &mut impl TextSink) -> usize {
        // C1 controls are encoded as C2 80..C2 9F; most text has no 0xC2 byte at all.
        if memchr::memchr(0xc2, text.as_bytes()).is_none() {
            sink.text(text);
            return text.len();
        }
        let mut start = 0;
        for (index, c) in text.char_indices() {
            let code = c as u32;
            if !(0x80..=0x9f).contains(&code) {
                continue;
            }
            sink.text(&text[start..index]);
            start = index + c.len_utf8();
            let next = match code {
                0x9b => State::Csi,
                0x9d => State::Osc,
                0x90 | 0x98 | 0x9e | 0x9f => State::Str,
                _ => State::Ground, // other C1 controls are dropped
            };
            if next != State::Ground {
                self.state = next;
                return start;
            }
        }
        sink.text(&text[start..]);
        text.len()
    }

    /// Advances through a sequence as far as `bytes` go or until it ends; returns the bytes
    /// consumed. The bodies of sequences (parameters, strings) are skipped in tight loops.
    fn sequence(&mut self, bytes: &[u8], sink: &mut impl TextSink) -> usize {
        let mut at = 0;
        while at < bytes.len() && self.state != State::Ground {
            let body = &bytes[at..];
            at += match self.state {
                State::Csi => body.iter().position(|b| !(0x20..=0x3f).contains(b)),
                State::Osc => body
                    .iter()
                    .position(|&b| matches!(b, BEL | ESC | CAN | SUB)),
                State::Str => body.iter().position(|&b| matches!(b, ESC | CAN | SUB)),
                _ => Some(0),
            }
            .unwrap_or(body.len());
            if at == bytes.len() {
                break;
            }
            let used = self.sequence_byte(bytes[at], sink);
            if used == 0 {
                break; // the byte is text again, and the state is Ground
            }
            at += used;
        }
        at
    }

    /// Advances a sequence by one byte; returns the bytes consumed (0 when the byte ended
    /// the sequence by not belonging to it and must be read again as text).
    fn sequence_byte(&mut self, byte: u8, sink: &mut impl TextSink) -> usize {
        use State::*;
        let state = self.state;
        self.state = match (state, byte) {
            (_, CAN | SUB) => Ground,
            (Osc | OscEscape, BEL) => Ground,
            (OscEscape | StrEscape, b'\\') => Ground,
            // An ESC that does not form ST starts a new escape sequence.
            (OscEscape | StrEscape, _) => {
                self.state = Escape;
                return self.sequence_byte(byte, sink);
            }
            (Osc, ESC) => OscEscape,
            (Str, ESC) => StrEscape,
            (Osc | Str, _) => state,
            (_, ESC) => Escape,
            // C0 controls inside a sequence still act, as on a terminal.
            (_, 0x00..=0x1f) => {
                match byte {
                    b'\n' => sink.newline(),
                    b'\r' => sink.carriage_return(),
                    0x08 => sink.backspace(),
                    _ => {}
                }
                state
            }
            (_, 0x7f) => state,
            (Escape, b'[') => Csi,
            (Escape, b']') => Osc,
            (Escape, b'P' | b'X' | b'^' | b'_') => Str,
            (Escape | EscapeIntermediate, 0x20..=0x2f) => EscapeIntermediate,
            (Escape | EscapeIntermediate, _) if byte < 0x80 => Ground,
            (Csi, 0x20..=0x3f) => Csi,
            (Csi, _) if byte < 0x80 => Ground,
            // A non-ASCII byte cannot be part of an escape sequence: it is text again.
            (Escape | EscapeIntermediate | Csi, _) => {
                self.state = Ground;
                return 0;
            }
            (Ground, _) => Ground,
        };
        1
    }
}

/// True if and only if `byte` is printable ASCII (0x20–0x7E), a tab or a line feed.
#[inline(always)]
fn is_plain(byte: u8) -> bool {
    byte.wrapping_sub(0x20) < 0x5f || byte == b'\t' || byte == b'\n'
}

/// True if and only if `byte` may stand in a run of text: plain, or part of a non-ASCII
/// UTF-8 sequence (which the decoder checks).
#[inline(always)]
fn is_text_byte(byte: u8) -> bool {
    is_plain(byte) || byte >= 0x80
}

/// The length of a control sequence (`ESC [`, parameter and intermediate bytes, a final
/// byte) at the start of `bytes`, if one is there whole and holds nothing else: exactly
/// what the states would consume for it, with no event.
#[inline]
fn complete_csi(bytes: &[u8]) -> Option<usize> {
    if bytes.get(1) != Some(&b'[') {
        return None;
    }
    let body = bytes.get(2..)?;
    let params = body.iter().position(|byte| !(0x20..=0x3f).contains(byte))?;
    matches!(body[params], 0x40..=0x7e).then_some(2 + params + 1)
}

/// Length of the prefix of `bytes` made of `is_plain` bytes.
///
/// Checks 32 bytes at a time without an early exit inside a block, which the compiler
/// turns into SIMD compares: this loop is the plain-text throughput. The block that ends
/// the run is searched 8 bytes at a time (`not_plain`), so a short run (between colour
/// codes) costs a few word operations, not a loop over its bytes.
#[inline]
fn plain_prefix_len(bytes: &[u8]) -> usize {
    // A short run (text between colour codes) ends in its first block.
    let first = bytes.len().min(32);
    let run = first_not_plain(&bytes[..first]);
    if run < 32 {
        return run;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, the one requirement of `plain_prefix_len_avx2`.
        return 32 + unsafe { plain_prefix_len_avx2(&bytes[32..]) };
    }
    32 + plain_prefix_len_portable(&bytes[32..])
}

/// `plain_prefix_len`, compiled for AVX2: the same loop checks 32 bytes per compare, twice
/// the baseline's 16, on a long run of plain text (a flood of log lines).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn plain_prefix_len_avx2(bytes: &[u8]) -> usize {
    plain_prefix_len_portable(bytes)
}

#[inline(always)]
fn plain_prefix_len_portable(bytes: &[u8]) -> usize {
    let mut blocks = bytes.chunks_exact(32);
    let mut len = 0;
    for block in &mut blocks {
        if !block.iter().fold(true, |all, &byte| all & is_plain(byte)) {
            return len + first_not_plain(block);
        }
        len += 32;
    }
    len + first_not_plain(blocks.remainder())
}

/// Index of the first byte of `bytes` that is not `is_plain`, or its length.
#[inline]
fn first_not_plain(bytes: &[u8]) -> usize {
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let mut le = [0; 8];
        le.copy_from_slice(word);
        let found = not_plain(u64::from_le_bytes(le));
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    let rest = words.remainder();
    at + rest
        .iter()
        .position(|&byte| !is_plain(byte))
        .unwrap_or(rest.len())
}

const LOW_7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// `byte` in every byte of a word.
const fn splat(byte: u8) -> u64 {
    byte as u64 * 0x0101_0101_0101_0101
}

/// The high bit of each byte of `word` that is zero, and no other bit (exact: no carry
/// crosses a byte).
#[inline(always)]
fn zero_bytes(word: u64) -> u64 {
    !(((word & LOW_7) + LOW_7) | word) & HIGH
}

/// The high bit of each byte of `word` that is not `is_plain`, and no other bit.
#[inline(always)]
fn not_plain(word: u64) -> u64 {
    // For a byte below 0x80, `byte + 0x60` reaches the high bit if and only if the byte
    // is at least 0x20; bytes from 0x80 are not plain anyway.
    let below_space = !((word & LOW_7) + splat(0x60)) & HIGH;
    let allowed = zero_bytes(word ^ splat(b'\n')) | zero_bytes(word ^ splat(b'\t'));
    (word & HIGH) | (below_space & !allowed) | zero_bytes(word ^ splat(0x7f))
}

/// `bytes`, all `is_plain`, as text.
#[inline]
fn ascii_str(bytes: &[u8]) -> &str {
    debug_assert!(bytes.iter().all(|&byte| is_plain(byte)));
    // SAFETY: every byte is ASCII (checked by `plain_prefix_len`), and ASCII is valid
    // UTF-8. Validating again cost 29% of the plain-text pipeline on short lines.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Renders the events as text: `\n` for newline, `⏎` for CR, `⌫` for backspace.
    #[derive(Default)]
    pub(crate) struct Events(pub String);

    impl TextSink for Events {
        fn text(&mut self, text: &str) {
            assert!(
                !text
                    .chars()
                    .any(|c| c.is_control() && c != '\t' && c != '\n'),
                "control in {text:?}"
            );
            self.0.push_str(text);
        }
        fn newline(&mut self) {
            self.0.push('\n');
        }
        fn carriage_return(&mut self) {
            self.0.push('⏎');
        }
        fn backspace(&mut self) {
            self.0.push('⌫');
        }
    }

    pub(crate) fn events(input: &[u8], chunk: usize) -> String {
        let mut sanitizer = Sanitizer::new();
        let mut sink = Events::default();
        for piece in input.chunks(chunk.max(1)) {
            sanitizer.feed(piece, &mut sink);
        }
        sanitizer.finish(&mut sink);
        sink.0
    }

    #[track_caller]
    fn check(input: &[u8], expected: &str) {
        for chunk in [1, 2, 3, 5, 4096] {
            assert_eq!(events(input, chunk), expected, "chunk size {chunk}");
        }
    }

    #[test]
    fn plain_text_passes() {
        check(b"hello\tworld\n", "hello\tworld\n");
        check("héllo ✓ 日本\n".as_bytes(), "héllo ✓ 日本\n");
        check(b"", "");
    }

    #[test]
    fn strips_escape_sequences() {
        check(b"\x1b[1;31mred\x1b[0m plain", "red plain");
        check(b"\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor");
        check(b"\x1b]0;window title\x07after", "after");
        check(b"\x1b]8;;http://x.y\x1b\\link\x1b]8;;\x1b\\", "link");
        check(b"\x1bP1$r0m\x1b\\dcs gone", "dcs gone");
        check(b"\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\ok", "ok");
        check(b"\x1b(Bcharset\x1b7\x1b8", "charset");
        check(b"\x1b[2K\x1b[1G\x1b[3Aerase", "erase");
        check("\u{9b}31mc1 csi\u{9b}0m".as_bytes(), "c1 csi");
        check(b"\x1b[31\x18cancelled", "cancelled");
        check(b"\x1b]unterminated \x1b[1mnext", "next");
    }

    #[test]
    fn controls() {
        check(b"a\0b\x07c\x7fd\x0ce", "abcde");
        check(b"50%\r100%\r\n", "50%⏎100%⏎\n");
        check(b"ab\x08c", "ab⌫c");
        check(b"\x1b[1\nm", "\n");
    }

    #[test]
    fn invalid_utf8_becomes_replacement() {
        check(b"a\xffb\xfe\n", "a\u{FFFD}b\u{FFFD}\n");
        check(b"cut \xe2\x9c", "cut \u{FFFD}");
        check(b"cut \xe2\x9c\n", "cut \u{FFFD}\n");
        check(b"\xe2\x9cX", "\u{FFFD}X");
        check(b"\xf0\x9f\x98\x80 smile", "😀 smile");
        check(b"\xc3(", "\u{FFFD}(");
    }

    #[test]
    fn a_whole_colour_code_and_one_cut_or_interrupted_give_the_same_text() {
        check(b"a\x1b[1;31mred\x1b[0m b\n", "ared b\n");
        // A control inside the parameters still acts; CAN aborts; a cut code waits.
        check(b"a\x1b[1\n2mb\n", "a\nb\n");
        check(b"a\x1b[1\x18mb\n", "amb\n");
        check(b"a\x1b[1;3", "a");
        // A byte that is no final byte ends the code as the states would.
        check(b"a\x1b[1\xc3\xa9b\n", "a\u{e9}b\n");
    }

    proptest::proptest! {
        #[test]
        fn the_word_scan_finds_the_first_byte_that_is_not_plain(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..100),
            plain_run in 0usize..80,
        ) {
            // A plain run first, so that long prefixes are tried as well as short ones.
            let mut input = vec![b'x'; plain_run];
            input.extend(bytes);
            let naive = input.iter().position(|&byte| !is_plain(byte)).unwrap_or(input.len());
            proptest::prop_assert_eq!(plain_prefix_len(&input), naive);
        }
    }
}
