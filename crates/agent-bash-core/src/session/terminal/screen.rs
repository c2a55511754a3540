//! The terminal's screen: everything the program writes goes through a real terminal
//! emulator (`vt100`), so cursor movement, redraws, colours and the alternate screen become
//! the screen a person would see. Rows that scroll off the top of the main screen go, as
//! they leave, into the scrollback capture of the current answer (`output::Capture`: the
//! same sanitizing, redaction, window and spill file as any command's output).
//!
//! Memory is bounded whatever the program prints: the emulator keeps no scrollback of its
//! own (capacity 0: a row is handed to the capture as it leaves), and the capture holds a
//! few budgets. Never prints, never blocks but on the capture's buffered file writes.

use std::num::NonZeroU16;

use regex::Regex;
use vt100::Callbacks;
use vt100::capture::{BasicFormattedCaptureState, RowContents};

use crate::output::Capture;

/// The emulator and what has scrolled off its top since the last answer.
pub(crate) struct Screen {
    parser: vt100::Parser<Scrolled>,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (rows, cols) = self.parser.screen().size();
        f.debug_struct("Screen")
            .field("rows", &rows)
            .field("cols", &cols)
            .finish_non_exhaustive()
    }
}

/// The emulator's callbacks: rows leaving the top of the main screen.
struct Scrolled {
    /// The scrollback since the last answer.
    capture: Capture,
    /// The formatting state across rows: knows whether the previous row ended its line.
    format: BasicFormattedCaptureState,
    /// Nothing went into `capture` yet: a newline it would start with ends a line that an
    /// earlier answer already showed.
    fresh: bool,
    /// Rows handed to `capture` since the last answer.
    rows: u64,
    /// A wait's pattern, checked on each row as it leaves; `matched` once one matched.
    pattern: Option<Regex>,
    matched: bool,
    row_text: String,
    /// Rows not yet fed to `capture`: the output pipeline is made for large reads, so rows
    /// go to it in batches of up to `BATCH_BYTES`.
    batch: String,
    /// What the terminal answers to the program's queries (cursor position, device
    /// attributes), to be written back to it: a program that asks waits for the answer.
    replies: Vec<u8>,
}

/// Most bytes of rows held before they are fed to the capture.
const BATCH_BYTES: usize = 64 * 1024;

impl Scrolled {
    fn flush(&mut self) {
        if !self.batch.is_empty() {
            self.capture.feed(self.batch.as_bytes());
            self.batch.clear();
        }
    }
}

impl Callbacks for Scrolled {
    /// The queries a real terminal answers: the cursor position (DSR 6, which TUIs send at
    /// start and wait for), the status (DSR 5), the device attributes (DA1, DA2).
    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        first: Option<u8>,
        _second: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let param = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
        let reply = match (c, first, param) {
            ('n', None, 6) => {
                let (row, col) = screen.cursor_position();
                format!("\x1b[{};{}R", row + 1, col + 1)
            }
            ('n', None, 5) => "\x1b[0n".into(),
            ('c', None, 0) => "\x1b[?62;22c".into(),
            ('c', Some(b'>'), 0) => "\x1b[>1;10;0c".into(),
            _ => return,
        };
        self.replies.extend_from_slice(reply.as_bytes());
    }

    fn on_scroll(&mut self, row: RowContents<'_>, alternate_screen: bool) {
        // A full-screen program's alternate screen has no scrollback in a real terminal
        // either: what scrolls there is redrawn, not kept.
        if alternate_screen {
            return;
        }
        self.row_text.clear();
        // Writing to a String cannot fail.
        let _ = row.write_formatted_basic(&mut self.row_text, &mut self.format);
        let mut text = self.row_text.as_str();
        if self.fresh {
            text = text.strip_prefix('\n').unwrap_or(text);
            self.fresh = false;
        }
        if let Some(pattern) = &self.pattern
            && !self.matched
        {
            let row = text.strip_prefix('\n').unwrap_or(text);
            let plain: String = vt100::capture::basic_formatted_to_plain(row).collect();
            self.matched = pattern.is_match(&plain);
        }
        self.rows += 1;
        self.batch.push_str(text);
        if self.batch.len() >= BATCH_BYTES {
            self.flush();
        }
    }
}

/// What one answer shows of the screen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shot {
    /// The rows, trailing spaces and trailing empty rows (below the cursor) removed.
    pub(crate) text: String,
    /// Row and column of the cursor, from 0.
    pub(crate) cursor: (u16, u16),
    /// The program shows its alternate screen (a full-screen program: less, vim, top).
    pub(crate) alternate: bool,
}

impl Screen {
    /// An empty screen of `rows` × `cols`, scrolling into `capture`.
    pub(crate) fn new(rows: NonZeroU16, cols: NonZeroU16, capture: Capture) -> Screen {
        let scrolled = Scrolled {
            capture,
            format: BasicFormattedCaptureState::new(),
            fresh: true,
            rows: 0,
            pattern: None,
            matched: false,
            row_text: String::new(),
            batch: String::new(),
            replies: Vec::new(),
        };
        Screen {
            parser: vt100::Parser::new_with_callbacks(rows, cols, 0, scrolled),
        }
    }

    /// Feeds what the program wrote.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
    }

    /// What the terminal must answer the program, since the last call.
    pub(crate) fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.parser.callbacks_mut().replies)
    }

    /// The screen as text, the cursor, and whether it is the alternate screen.
    pub(crate) fn shot(&self) -> Shot {
        let screen = self.parser.screen();
        let (_, cols) = screen.size();
        let cursor = screen.cursor_position();
        let mut rows: Vec<String> = screen
            .rows(0, cols.get())
            .map(|row| row.trim_end().to_string())
            .collect();
        let keep = rows
            .iter()
            .rposition(|row| !row.is_empty())
            .map_or(0, |last| last + 1)
            .max(usize::from(cursor.0) + 1)
            .min(rows.len());
        rows.truncate(keep);
        Shot {
            text: rows.join("\n"),
            cursor,
            alternate: screen.alternate_screen(),
        }
    }

    /// True if and only if the program asked for application cursor keys (DECCKM).
    pub(crate) fn application_cursor(&self) -> bool {
        self.parser.screen().application_cursor()
    }

    /// The screen's size, rows × cols.
    pub(crate) fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.parser.screen().size();
        (rows.get(), cols.get())
    }

    /// Sets the pattern rows are checked against as they scroll off (`None`: none), and
    /// forgets an earlier match.
    pub(crate) fn watch_scrollback(&mut self, pattern: Option<Regex>) {
        let scrolled = self.parser.callbacks_mut();
        scrolled.pattern = pattern;
        scrolled.matched = false;
    }

    /// True once a row matching the watched pattern scrolled off.
    pub(crate) fn scrollback_matched(&self) -> bool {
        self.parser.callbacks().matched
    }

    /// The scrollback since the last answer, and how many rows it holds; `next` takes its
    /// place for the next answer.
    pub(crate) fn take_scrollback(&mut self, next: Capture) -> (Capture, u64) {
        let scrolled = self.parser.callbacks_mut();
        scrolled.flush();
        scrolled.fresh = true;
        let rows = std::mem::take(&mut scrolled.rows);
        (std::mem::replace(&mut scrolled.capture, next), rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Budget;
    use crate::output::Stream;
    use crate::output::spill::SpillDir;
    use crate::output::window::Share;

    fn capture(dir: &std::path::Path) -> Capture {
        Capture::new(
            Stream::Stdout,
            Budget::default(),
            SpillDir::new(dir.to_path_buf()),
            "scrollback".into(),
            u64::MAX,
        )
    }

    fn size(n: u16) -> NonZeroU16 {
        NonZeroU16::new(n).unwrap()
    }

    fn screen(rows: u16, cols: u16, dir: &std::path::Path) -> Screen {
        Screen::new(size(rows), size(cols), capture(dir))
    }

    fn scrollback(screen: &mut Screen, dir: &std::path::Path) -> (String, u64) {
        let (capture, rows) = screen.take_scrollback(capture(dir));
        let share = Share {
            bytes: 50_000,
            lines: 2000,
        };
        (capture.finish(share).text, rows)
    }

    #[test]
    fn redraws_and_cursor_moves_become_one_screen() {
        let dir = tempfile::tempdir().unwrap();
        let mut screen = screen(4, 20, dir.path());
        screen.feed(b"frame 1\r\nload 0.5");
        // Home, clear, redraw: a person sees only the last frame.
        screen.feed(b"\x1b[H\x1b[2J\x1b[31mframe 2\x1b[0m\r\nload 0.7");
        screen.feed(b"abc\x08\x08X\rZ");
        let shot = screen.shot();
        assert_eq!(shot.text, "frame 2\nZoad 0.7aXc");
        assert_eq!(shot.cursor, (1, 1));
        assert!(!shot.alternate);
        assert_eq!(scrollback(&mut screen, dir.path()), (String::new(), 0));
    }

    #[test]
    fn rows_that_scroll_off_are_the_scrollback_once_each() {
        let dir = tempfile::tempdir().unwrap();
        let mut screen = screen(3, 10, dir.path());
        screen.feed(b"one\r\n\x1b[1mtwo\x1b[0m\r\nthree\r\nfour\r\nabcdefghijklmno\r\n");
        assert_eq!(screen.shot().text, "abcdefghij\nklmno\n");
        // `four` is shown whole although its end of line is known only with the next row.
        assert_eq!(
            scrollback(&mut screen, dir.path()),
            ("one\ntwo\nthree\nfour".to_string(), 4)
        );
        screen.feed(b"six\r\n");
        assert_eq!(
            scrollback(&mut screen, dir.path()),
            ("abcdefghij".to_string(), 1)
        );
        assert_eq!(screen.shot().text, "klmno\nsix\n");
    }

    #[test]
    fn queries_are_answered_as_a_terminal_would() {
        let dir = tempfile::tempdir().unwrap();
        let mut screen = screen(5, 20, dir.path());
        screen.feed(b"ab\r\ncd\x1b[6n\x1b[c\x1b[>c\x1b[5n");
        assert_eq!(
            screen.take_replies(),
            b"\x1b[2;3R\x1b[?62;22c\x1b[>1;10;0c\x1b[0n"
        );
        assert!(screen.take_replies().is_empty());
    }

    #[test]
    fn the_alternate_screen_keeps_no_scrollback() {
        let dir = tempfile::tempdir().unwrap();
        let mut screen = screen(3, 10, dir.path());
        screen.feed(b"\x1b[?1049h");
        screen.feed(b"a\r\nb\r\nc\r\nd\r\ne");
        let shot = screen.shot();
        assert!(shot.alternate);
        assert_eq!(shot.text, "c\nd\ne");
        screen.feed(b"\x1b[?1049l");
        assert!(!screen.shot().alternate);
        assert_eq!(scrollback(&mut screen, dir.path()).1, 0);
    }

    #[test]
    fn a_watched_pattern_matches_rows_as_they_leave() {
        let dir = tempfile::tempdir().unwrap();
        let mut screen = screen(2, 20, dir.path());
        screen.watch_scrollback(Regex::new("^needle$").ok());
        screen.feed(b"hay\r\nneedle\r\nhay\r\n");
        assert!(screen.scrollback_matched());
        screen.watch_scrollback(Regex::new("^needle$").ok());
        assert!(!screen.scrollback_matched());
    }
}
