//! Output stage: raw bytes of one stream in, the model's view and the spill file out.
//!
//! `Capture` is fed chunks as they are read and never holds more than a few budgets:
//! binary sniffing (`binary`) → sanitizing (`sanitize`) → line assembly (here: `\r`,
//! backspace, clipping) → head/tail window (`window`) and spill file (`spill`). It never
//! spawns, never blocks on anything but a buffered file write, and never prints.

pub mod binary;
pub mod sanitize;
pub mod spill;
pub mod window;

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::{Budget, KIB};
use sanitize::{Sanitizer, TextSink};
use spill::{Spill, SpillDir};
use window::{Share, Window};

/// Most bytes of one line held in memory; a longer line streams to the spill file and
/// only its clipped start is kept for the model.
const LINE_HOLD_BYTES: usize = 64 * KIB;

/// What the model sees of one stream, and the exact counts behind it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamStats {
    /// Bytes of sanitized text (or raw bytes, for a binary stream).
    pub total_bytes: u64,
    /// Lines of sanitized text (a last line without newline counts).
    pub total_lines: u64,
    /// Lines cut from the middle of the view.
    pub omitted_lines: u64,
    /// Bytes of those lines, newlines included.
    pub omitted_bytes: u64,
    /// Shown lines clipped at the line limit.
    pub clipped_lines: u64,
    /// The kind of binary data, when the stream was not text.
    pub binary: Option<String>,
    /// The file holding the whole (sanitized) stream, when anything was cut.
    pub full_output_path: Option<PathBuf>,
    /// Why the spill file could not be written, when it could not.
    pub spill_error: Option<String>,
    /// True if the spill file stops at the spill cap.
    #[serde(default)]
    pub spill_capped: bool,
}

/// One finished stream: its text for the model and its counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamOutput {
    /// The windowed text, with a marker line where lines were omitted.
    pub text: String,
    pub stats: StreamStats,
}

/// Where a stream is in binary detection.
#[derive(Debug)]
enum Kind {
    /// Collecting the first bytes.
    Sniffing(Vec<u8>),
    Text,
    Binary(&'static str),
}

/// The output pipeline of one stream.
#[derive(Debug)]
pub struct Capture {
    kind: Kind,
    sanitizer: Sanitizer,
    lines: Lines,
    raw_bytes: u64,
    /// Budget cut marker names the stream ("stdout").
    name: &'static str,
}

impl Capture {
    /// A capture whose spill file, if any, is `<dir>/<file_stem>.log` (`.bin` if binary).
    pub fn new(
        name: &'static str,
        budget: Budget,
        dir: Arc<SpillDir>,
        file_stem: String,
        spill_cap: u64,
    ) -> Capture {
        let spill = Spill::new(dir, format!("{file_stem}.log"), budget.bytes, spill_cap);
        Capture {
            kind: Kind::Sniffing(Vec::with_capacity(binary::SNIFF_BYTES)),
            sanitizer: Sanitizer::new(),
            lines: Lines {
                line: String::new(),
                cr_pending: false,
                overflow: None,
                clip_chars: budget.line_clip_chars,
                hold_bytes: LINE_HOLD_BYTES.max(budget.max_line_bytes()),
                window: Window::new(budget),
                spill,
            },
            raw_bytes: 0,
            name,
        }
    }

    /// Bytes read so far.
    pub fn raw_bytes(&self) -> u64 {
        self.raw_bytes
    }

    /// Lines completed so far (text streams).
    pub fn lines_so_far(&self) -> u64 {
        self.lines.window.total_lines()
    }

    /// Feeds the next chunk read from the stream.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.raw_bytes += bytes.len() as u64;
        match &mut self.kind {
            Kind::Text => self.sanitizer.feed(bytes, &mut self.lines),
            Kind::Binary(_) => self.lines.spill.write(bytes),
            Kind::Sniffing(sample) => {
                let room = binary::SNIFF_BYTES - sample.len();
                let (first, rest) = bytes.split_at(bytes.len().min(room));
                sample.extend_from_slice(first);
                if sample.len() >= binary::SNIFF_BYTES {
                    self.decide();
                    self.feed_decided(rest);
                }
            }
        }
    }

    fn feed_decided(&mut self, bytes: &[u8]) {
        match self.kind {
            Kind::Text => self.sanitizer.feed(bytes, &mut self.lines),
            Kind::Binary(_) => self.lines.spill.write(bytes),
            Kind::Sniffing(_) => {}
        }
    }

    /// Decides text or binary from the sample, and processes the sample accordingly.
    fn decide(&mut self) {
        let Kind::Sniffing(sample) = &mut self.kind else {
            return;
        };
        let sample = std::mem::take(sample);
        self.kind = Kind::Text;
        match binary::sniff(&sample) {
            Some(kind) => {
                self.kind = Kind::Binary(kind);
                self.lines
                    .spill
                    .rename(format!("{}.bin", self.lines.spill.stem()));
                self.lines.spill.write(&sample);
            }
            None => self.sanitizer.feed(&sample, &mut self.lines),
        }
    }

    /// The end of the stream has been read: flush what is pending. Idempotent.
    pub fn close(&mut self) {
        self.decide();
        if let Kind::Text = self.kind {
            self.sanitizer.finish(&mut self.lines);
            self.lines.end_of_stream();
        }
    }

    /// What this stream needs of the call's budget, `None` if it can't have it all.
    /// Final only after `close`.
    pub fn demand(&self) -> Option<Share> {
        match self.kind {
            Kind::Binary(_) => Some(Share { bytes: 0, lines: 0 }),
            _ => self.lines.window.demand(),
        }
    }

    /// Produces the model's view within `share`, writing the spill file if anything was cut.
    pub fn finish(mut self, share: Share) -> StreamOutput {
        self.close();
        let Lines {
            mut window, spill, ..
        } = self.lines;
        if let Kind::Binary(kind) = self.kind {
            let spilled = spill.finish(true);
            return StreamOutput {
                text: String::new(),
                stats: StreamStats {
                    total_bytes: self.raw_bytes,
                    binary: Some(kind.to_string()),
                    full_output_path: spilled.path,
                    spill_error: spilled.error,
                    spill_capped: spilled.capped,
                    ..StreamStats::default()
                },
            };
        }
        let view = window.view(share);
        let spilled = spill.finish(view.is_cut());
        let mut text = view.head;
        if view.omitted_lines > 0 {
            text.push_str(&omission_marker(
                self.name,
                view.omitted_lines,
                view.omitted_bytes,
                &spilled,
            ));
            text.push('\n');
        }
        text.push_str(&view.tail);
        // The stream's own last newline is not part of what the model needs to see.
        if text.ends_with('\n') {
            text.pop();
        }
        StreamOutput {
            text,
            stats: StreamStats {
                total_bytes: window.total_bytes(),
                total_lines: window.total_lines(),
                omitted_lines: view.omitted_lines,
                omitted_bytes: view.omitted_bytes,
                clipped_lines: view.clipped_lines,
                binary: None,
                full_output_path: spilled.path,
                spill_error: spilled.error,
                spill_capped: spilled.capped,
            },
        }
    }
}

/// The line that stands for what was cut from the middle of a stream.
fn omission_marker(name: &str, lines: u64, bytes: u64, spilled: &spill::SpillResult) -> String {
    let location = match (&spilled.path, &spilled.error) {
        (Some(path), None) => format!("full {name}: {}", path.display()),
        (_, Some(error)) => format!("full {name} not saved: {error}"),
        (None, None) => format!("full {name} not saved"),
    };
    format!("[… {lines} lines ({bytes} bytes) omitted; {location} …]")
}

/// The text clipped lines end with, standing for the rest of the line.
pub fn clip_marker(more_chars: usize) -> String {
    format!(" [… {more_chars} more chars]")
}

/// A line too long to hold: its clipped start and what was already spilled.
#[derive(Debug)]
struct Overflow {
    shown: String,
    chars: usize,
    bytes: u64,
}

/// Line assembly: gives `\r` and backspace their meaning, clips long lines, and hands
/// each finished line to the window and the spill file.
#[derive(Debug)]
struct Lines {
    /// The current line, not yet written anywhere (a `\r` may still erase it).
    line: String,
    /// A `\r` was seen; the next text overwrites the line unless a `\n` comes first.
    cr_pending: bool,
    overflow: Option<Overflow>,
    clip_chars: usize,
    hold_bytes: usize,
    window: Window,
    spill: Spill,
}

impl Lines {
    /// Ends the current line; `newline` says whether a `\n` ended it.
    fn end_line(&mut self, newline: bool) {
        let (shown_owned, chars, bytes) = match self.overflow.take() {
            Some(overflow) => {
                let chars = overflow.chars + self.line.chars().count();
                (
                    Some(overflow.shown),
                    chars,
                    overflow.bytes + self.line.len() as u64,
                )
            }
            None => {
                // A line of at most `clip_chars` bytes has at most that many chars.
                let chars = if self.line.len() > self.clip_chars {
                    self.line.chars().count()
                } else {
                    0
                };
                let shown = (chars > self.clip_chars)
                    .then(|| clip(&self.line, self.clip_chars).to_string());
                (shown, chars, self.line.len() as u64)
            }
        };
        let clipped = shown_owned.is_some();
        let shown_owned = shown_owned.map(|mut shown| {
            shown.push_str(&clip_marker(chars - self.clip_chars.min(chars)));
            shown
        });
        let shown = shown_owned.as_deref().unwrap_or(&self.line);
        self.window.push(shown, bytes + u64::from(newline), clipped);
        if newline {
            self.line.push('\n');
        }
        self.spill.write(self.line.as_bytes());
        self.line.clear();
        self.cr_pending = false;
    }

    /// The line outgrew what is held: keep its clipped start, spill the rest now.
    fn spill_long_line(&mut self) {
        let overflow = self.overflow.get_or_insert_with(|| Overflow {
            shown: clip(&self.line, self.clip_chars).to_string(),
            chars: 0,
            bytes: 0,
        });
        overflow.chars += self.line.chars().count();
        overflow.bytes += self.line.len() as u64;
        self.spill.write(self.line.as_bytes());
        self.line.clear();
    }

    fn end_of_stream(&mut self) {
        if !self.line.is_empty() || self.overflow.is_some() {
            self.end_line(false);
        }
    }
}

impl TextSink for Lines {
    fn text(&mut self, text: &str) {
        if self.cr_pending {
            self.cr_pending = false;
            if self.overflow.is_some() {
                // Part of the line is already in the spill file and cannot be taken back:
                // the carriage return ends it instead.
                self.end_line(false);
            } else {
                self.line.clear();
            }
        }
        self.line.push_str(text);
        if self.line.len() > self.hold_bytes {
            self.spill_long_line();
        }
    }

    fn newline(&mut self) {
        self.end_line(true);
    }

    fn carriage_return(&mut self) {
        self.cr_pending = true;
    }

    fn backspace(&mut self) {
        if !self.cr_pending {
            self.line.pop();
        }
    }
}

/// The first `max_chars` chars of `line`.
fn clip(line: &str, max_chars: usize) -> &str {
    match line.char_indices().nth(max_chars) {
        Some((end, _)) => &line[..end],
        None => line,
    }
}
