//! Line assembly: gives `\r` and backspace their meaning on the sanitized text. This is
//! the last stage that can join bytes (a backspace erases the byte between two halves of a
//! secret, the sanitizer before it drops colour codes and controls), so what it passes on
//! goes to the redactor, and only the redactor's output reaches the window and the files.
//!
//! Complete lines are collected and passed on together at the end of each read (`flush`),
//! so the redactor scans a read's worth of text at once whatever the sanitizer's events.
//! Never writes anything itself.

use std::borrow::Cow;

use super::lines::Lines;
use super::redact::Redactor;
use super::sanitize::TextSink;

/// Complete lines collected past this many bytes are passed on before the read ends.
const FLUSH_BYTES: usize = 64 * 1024;

/// The line being assembled, and complete lines not yet passed on.
#[derive(Clone, Debug, Default)]
pub(super) struct Assembly {
    /// Complete lines (`..line_start`), then the line being written.
    buf: String,
    line_start: usize,
    /// A `\r` was seen; the next text overwrites the line unless a `\n` comes first.
    cr_pending: bool,
    /// Part of the line being written was already passed on (it outgrew `hold_bytes`).
    overflowed: bool,
    /// Most bytes of the line being written held here.
    pub(super) hold_bytes: usize,
}

/// The stages after the sanitizer, borrowed for one read.
pub(super) struct Joined<'a> {
    pub(super) assembly: &'a mut Assembly,
    pub(super) redactor: Option<&'a mut Redactor>,
    pub(super) lines: &'a mut Lines,
}

impl Assembly {
    pub(super) fn new(hold_bytes: usize) -> Assembly {
        Assembly {
            hold_bytes,
            ..Assembly::default()
        }
    }

    /// The line being written (after the last flush, nothing else is held).
    pub(super) fn held(&self) -> &str {
        &self.buf
    }
}

impl Joined<'_> {
    /// Passes on the complete lines collected so far.
    pub(super) fn flush(&mut self) {
        let complete = self.assembly.line_start;
        if complete > 0 {
            pass(
                self.redactor.as_deref_mut(),
                self.lines,
                &self.assembly.buf[..complete],
            );
            self.assembly.buf.drain(..complete);
            self.assembly.line_start = 0;
        }
    }

    /// The end of the stream: passes on everything, the redactor's hold included.
    pub(super) fn finish(&mut self) {
        self.flush();
        let rest = std::mem::take(&mut self.assembly.buf);
        pass(self.redactor.as_deref_mut(), self.lines, &rest);
        if let Some(redactor) = self.redactor.as_deref_mut() {
            self.lines.text(&utf8(redactor.finish()));
        }
        self.lines.end_of_stream();
    }

    /// Adds text without newline to the line being written.
    fn partial_line(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let assembly = &mut *self.assembly;
        if assembly.cr_pending {
            assembly.cr_pending = false;
            if assembly.overflowed {
                // Part of the line is already passed on and cannot be taken back: the
                // carriage return ends it instead.
                assembly.overflowed = false;
                assembly.buf.push('\n');
                assembly.line_start = assembly.buf.len();
            } else {
                assembly.buf.truncate(assembly.line_start);
            }
        }
        assembly.buf.push_str(text);
        if assembly.buf.len() - assembly.line_start > assembly.hold_bytes {
            // Too long to hold: pass it on in pieces (a backspace can no longer erase it).
            assembly.overflowed = true;
            assembly.line_start = assembly.buf.len();
            self.flush();
        }
    }

    /// Ends the line being written with a newline.
    fn end_line(&mut self) {
        let assembly = &mut *self.assembly;
        assembly.buf.push('\n');
        assembly.line_start = assembly.buf.len();
        assembly.cr_pending = false;
        assembly.overflowed = false;
        if assembly.line_start > FLUSH_BYTES {
            self.flush();
        }
    }
}

impl TextSink for Joined<'_> {
    fn text(&mut self, text: &str) {
        let Some(first_newline) = memchr::memchr(b'\n', text.as_bytes()) else {
            return self.partial_line(text);
        };
        self.partial_line(&text[..first_newline]);
        self.end_line();
        let rest = &text[first_newline + 1..];
        let complete = memchr::memrchr(b'\n', rest.as_bytes()).map_or(0, |last| last + 1);
        if complete > FLUSH_BYTES / 16 {
            // A block of complete lines: no line buffer, one pass.
            self.flush();
            pass(self.redactor.as_deref_mut(), self.lines, &rest[..complete]);
        } else {
            self.assembly.buf.push_str(&rest[..complete]);
            self.assembly.line_start = self.assembly.buf.len();
        }
        self.partial_line(&rest[complete..]);
    }

    fn newline(&mut self) {
        self.end_line();
    }

    fn carriage_return(&mut self) {
        self.assembly.cr_pending = true;
    }

    fn backspace(&mut self) {
        let assembly = &mut *self.assembly;
        if !assembly.cr_pending && assembly.buf.len() > assembly.line_start {
            assembly.buf.pop();
        }
    }
}

/// Hands assembled text to the redactor, and what it passes on to the lines.
fn pass(redactor: Option<&mut Redactor>, lines: &mut Lines, text: &str) {
    match redactor {
        None => lines.text(text),
        Some(redactor) => {
            let out = redactor.feed(text.as_bytes());
            // Passed on unchanged, as most text is: a prefix of `text`, which needs no
            // second validation when it ends between two characters.
            let unchanged = std::ptr::eq(out.as_ptr(), text.as_ptr())
                .then(|| text.get(..out.len()))
                .flatten();
            match unchanged {
                Some(prefix) => lines.text(prefix),
                None => lines.text(&utf8(out)),
            }
        }
    }
}

/// The redactor's output as text. It is text already (assembled text in, ASCII labels
/// replacing whole characters), but for a secret value that is not UTF-8 itself.
pub(super) fn utf8(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}
