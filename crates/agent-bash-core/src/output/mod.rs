//! Output stage: raw bytes of one stream in, the model's view and the spill file out.
//!
//! `Capture` is fed chunks as they are read and never holds more than a few budgets:
//! binary sniffing (`binary`) → sanitizing (`sanitize`) → line assembly (`assemble`: `\r`,
//! backspace) → secret redaction (`redact`) → line output (`lines`: clipping) → head/tail
//! window (`window`) and spill file (`spill`). A binary stream goes from the sniffer
//! through its own redactor to the spill file. Redaction comes after every stage that can
//! join bytes: a colour code, a control byte, a NUL or a backspace inside a secret is gone
//! before the redactor looks. It never spawns, never blocks on anything but a buffered file
//! write, and never prints.

mod assemble;
pub(crate) mod binary;
mod lines;
mod printed;
pub(crate) mod redact;
pub(crate) mod sanitize;
pub(crate) mod spill;
pub(crate) mod window;

pub use binary::BinaryKind;

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::{Budget, KIB};
use assemble::{Assembly, Joined};
use lines::Lines;
use redact::{Redactor, Secrets};
use sanitize::Sanitizer;
use spill::{Spill, SpillDir};
use window::{Share, Window};

/// Most bytes of one line held in memory; a longer line streams to the spill file and
/// only its clipped start is kept for the model.
const LINE_HOLD_BYTES: usize = 64 * KIB;

/// One of a command's two output streams.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    /// Standard output (file descriptor 1).
    Stdout,
    /// Standard error (file descriptor 2).
    Stderr,
}

impl Stream {
    /// `stdout` or `stderr`.
    pub fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }

    /// 0 for stdout, 1 for stderr: a stream's place in a pair.
    pub(crate) fn index(self) -> usize {
        match self {
            Stream::Stdout => 0,
            Stream::Stderr => 1,
        }
    }
}

impl std::fmt::Display for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What the model sees of one stream, and the exact counts behind it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    pub binary: Option<BinaryKind>,
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

/// What a stream turned out to be.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StreamKind {
    /// Nothing read yet (or not enough to tell).
    #[default]
    Undecided,
    Text,
    /// Binary data of this kind (`png`, `data`, …).
    Binary(BinaryKind),
}

/// Where a stream is in binary detection.
#[derive(Debug)]
enum Kind {
    /// Collecting the first bytes.
    Sniffing(Vec<u8>),
    Text,
    Binary(BinaryKind),
}

/// The output pipeline of one stream.
#[derive(Debug)]
pub struct Capture {
    kind: Kind,
    /// `None` when there is nothing to redact. Once the stream is known to be binary, it
    /// redacts the raw bytes on their way to the spill file.
    redactor: Option<Redactor>,
    sanitizer: Sanitizer,
    assembly: Assembly,
    lines: Lines,
    /// Bytes read.
    raw_bytes: u64,
    /// Bytes written to a binary stream's file (after redaction).
    binary_bytes: u64,
    /// Budget cut marker names the stream ("stdout").
    name: &'static str,
}

impl Capture {
    /// A capture whose spill file, if any, is `<dir>/<file_stem>.log` (`.bin` if binary).
    pub fn new(
        stream: Stream,
        budget: Budget,
        dir: Arc<SpillDir>,
        file_stem: String,
        spill_cap: u64,
    ) -> Capture {
        let spill = Spill::new(dir, format!("{file_stem}.log"), budget.bytes, spill_cap);
        let hold_bytes = LINE_HOLD_BYTES.max(budget.max_line_bytes());
        Capture {
            kind: Kind::Sniffing(Vec::with_capacity(binary::SNIFF_BYTES)),
            redactor: None,
            sanitizer: Sanitizer::new(),
            assembly: Assembly::new(hold_bytes),
            lines: Lines {
                line: String::new(),
                overflow: None,
                clip_chars: budget.line_clip_chars,
                hold_bytes,
                newlines: Vec::new(),
                window: Window::new(budget),
                spill,
            },
            raw_bytes: 0,
            binary_bytes: 0,
            name: stream.name(),
        }
    }

    /// Names the stream `name` in the marker of what was cut (`full scrollback: PATH`), in
    /// place of the stream's own name.
    pub fn named(mut self, name: &'static str) -> Capture {
        self.name = name;
        self
    }

    /// Replaces `secrets` in everything this capture passes on: the text once sanitized
    /// and assembled, the bytes of a binary stream as they are.
    pub fn redacting(mut self, secrets: &Arc<Secrets>) -> Capture {
        if !secrets.is_empty() {
            self.redactor = Some(Redactor::new(secrets.clone()));
        }
        self
    }

    /// Splits off what was captured so far, for a call whose command goes on as a
    /// background job. `self` goes on capturing into its file `<dir>/<file_stem>.log`
    /// (`.bin` if binary), created now with everything the stream gave so far and written
    /// through from now on, so the job's file is the whole stream. The returned capture is
    /// a frozen copy of the view so far (the line still being assembled included), naming
    /// that file as the full output; it is what the call's result shows.
    pub fn hand_over(&mut self, file_stem: &str) -> (Capture, Result<PathBuf, String>) {
        self.decide_early();
        let extension = match self.kind {
            Kind::Binary(_) => "bin",
            Kind::Sniffing(_) | Kind::Text => "log",
        };
        self.lines.spill.move_to(format!("{file_stem}.{extension}"));
        let path = self.lines.spill.open_now();
        self.lines.spill.flush();
        let spill = match &path {
            Ok(path) => Spill::external(path.clone()),
            Err(error) => Spill::failed(error.clone()),
        };
        // The copy goes on from the same point of the line being output, is given what
        // the assembly and the redactor still hold back (the rest of that line, redacted,
        // a secret begun on it included), and is closed.
        let held = match &self.redactor {
            Some(redactor) => redactor.preview(self.assembly.held().as_bytes()),
            None => self.assembly.held().as_bytes().to_vec(),
        };
        let lines = &self.lines;
        let mut frozen = Capture {
            kind: match self.kind {
                Kind::Binary(kind) => Kind::Binary(kind),
                Kind::Sniffing(_) | Kind::Text => Kind::Text,
            },
            redactor: None,
            sanitizer: Sanitizer::new(),
            assembly: Assembly::new(lines.hold_bytes),
            lines: Lines {
                line: lines.line.clone(),
                overflow: lines.overflow.clone(),
                clip_chars: lines.clip_chars,
                hold_bytes: lines.hold_bytes,
                newlines: Vec::new(),
                window: lines.window.clone(),
                spill,
            },
            raw_bytes: self.raw_bytes,
            binary_bytes: self.binary_bytes,
            name: self.name,
        };
        if let Kind::Text = frozen.kind {
            frozen.lines.text(&assemble::utf8(&held));
            frozen.close();
        }
        (frozen, path)
    }

    /// A capture that windows output already kept in the file `path` (a part of a job's
    /// file): it writes nothing and names `path` as the full output.
    /// `kind`: what the job's capture decided the stream is (a part from the middle of a
    /// stream must not be sniffed on its own).
    pub fn reading(stream: Stream, budget: Budget, path: PathBuf, kind: StreamKind) -> Capture {
        let mut capture = Capture::new(
            stream,
            budget,
            SpillDir::new(PathBuf::new()),
            String::new(),
            0,
        );
        capture.lines.spill = Spill::external(path);
        capture.kind = match kind {
            StreamKind::Undecided => capture.kind,
            StreamKind::Text => Kind::Text,
            StreamKind::Binary(kind) => Kind::Binary(kind),
        };
        capture
    }

    /// Makes everything fed so far (up to the line being assembled) visible in the file.
    /// Decides text or binary from what was read if the first KiB is not complete yet.
    pub fn flush(&mut self) {
        self.decide_early();
        self.lines.spill.flush();
    }

    /// Decides text or binary from the bytes read so far, if any: a job's first line must
    /// not wait for a thousand more bytes, but with nothing read yet (a background start)
    /// there is nothing to decide on.
    fn decide_early(&mut self) {
        if !matches!(&self.kind, Kind::Sniffing(sample) if sample.is_empty()) {
            self.decide_with(binary::sniff_partial);
        }
    }

    /// Text or binary, once decided.
    pub fn kind(&self) -> StreamKind {
        match self.kind {
            Kind::Sniffing(_) => StreamKind::Undecided,
            Kind::Text => StreamKind::Text,
            Kind::Binary(kind) => StreamKind::Binary(kind),
        }
    }

    /// What went wrong with the file so far, if anything: a write error, or the cap.
    pub fn file_problem(&self) -> Option<String> {
        self.lines.spill.problem()
    }

    /// Ends a job's stream: flushes the pending line and closes the file.
    pub fn into_file(mut self) -> spill::SpillResult {
        self.close();
        self.lines.spill.finish(true)
    }

    /// Bytes read so far.
    pub fn raw_bytes(&self) -> u64 {
        self.raw_bytes
    }

    /// Lines completed so far (text streams; while the first KiB is still being sniffed,
    /// its line feeds).
    pub fn lines_so_far(&self) -> u64 {
        match &self.kind {
            Kind::Sniffing(sample) => memchr::memchr_iter(b'\n', sample).count() as u64,
            Kind::Text => self.lines.window.total_lines(),
            Kind::Binary(_) => 0,
        }
    }

    /// Feeds the next chunk read from the stream.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.raw_bytes += bytes.len() as u64;
        match &mut self.kind {
            Kind::Text => self.sanitize(bytes),
            Kind::Binary(_) => self.write_binary(bytes),
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
            Kind::Text => self.sanitize(bytes),
            Kind::Binary(_) => self.write_binary(bytes),
            Kind::Sniffing(_) => {}
        }
    }

    /// Text through the sanitizer, the assembly and the redactor; the complete lines are
    /// passed on at once.
    fn sanitize(&mut self, bytes: &[u8]) {
        let mut joined = Joined {
            assembly: &mut self.assembly,
            redactor: self.redactor.as_mut(),
            lines: &mut self.lines,
        };
        self.sanitizer.feed(bytes, &mut joined);
        joined.flush();
    }

    /// Raw bytes of a binary stream, redacted, to the spill file.
    fn write_binary(&mut self, bytes: &[u8]) {
        let redacted = match &mut self.redactor {
            Some(redactor) => redactor.feed(bytes),
            None => bytes,
        };
        self.binary_bytes += redacted.len() as u64;
        self.lines.spill.write(redacted);
    }

    /// Decides text or binary from the sample, and processes the sample accordingly.
    fn decide(&mut self) {
        self.decide_with(binary::sniff);
    }

    fn decide_with(&mut self, sniff: fn(&[u8]) -> Option<BinaryKind>) {
        let Kind::Sniffing(sample) = &mut self.kind else {
            return;
        };
        let sample = std::mem::take(sample);
        self.kind = Kind::Text;
        match sniff(&sample) {
            Some(kind) => {
                self.kind = Kind::Binary(kind);
                self.lines
                    .spill
                    .rename(format!("{}.bin", self.lines.spill.stem()));
                self.write_binary(&sample);
            }
            None => self.sanitize(&sample),
        }
    }

    /// The end of the stream has been read: flush what is pending. Idempotent.
    pub fn close(&mut self) {
        self.decide();
        match self.kind {
            Kind::Text => {
                let mut joined = Joined {
                    assembly: &mut self.assembly,
                    redactor: self.redactor.as_mut(),
                    lines: &mut self.lines,
                };
                self.sanitizer.finish(&mut joined);
                joined.finish();
            }
            Kind::Binary(_) => {
                if let Some(redactor) = &mut self.redactor {
                    let rest = redactor.finish();
                    self.binary_bytes += rest.len() as u64;
                    self.lines.spill.write(rest);
                }
            }
            Kind::Sniffing(_) => {}
        }
        // Idempotent: what was held is passed on once.
        self.redactor = None;
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
                    total_bytes: self.binary_bytes,
                    binary: Some(kind),
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
pub(crate) fn clip_marker(more_chars: usize) -> String {
    format!(" [… {more_chars} more chars]")
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::output::sanitize::tests::events;

    /// Runs `input` (cut into `chunks`) through both streams' captures as a call would,
    /// with `stderr_input` on stderr; returns the two outputs.
    fn capture_call(
        budget: Budget,
        stdout_input: &[u8],
        stderr_input: &[u8],
        chunks: &[usize],
        spill_dir: &Arc<SpillDir>,
    ) -> (StreamOutput, StreamOutput) {
        let mut captures = [
            (Stream::Stdout, stdout_input),
            (Stream::Stderr, stderr_input),
        ]
        .map(|(name, input)| {
            let mut capture = Capture::new(
                name,
                budget,
                spill_dir.clone(),
                format!("t-{name}"),
                u64::MAX,
            );
            let mut at = 0;
            let mut sizes = chunks.iter().cycle();
            while at < input.len() {
                let size = sizes.next().copied().unwrap_or(input.len()).max(1);
                let end = (at + size).min(input.len());
                capture.feed(&input[at..end]);
                at = end;
            }
            capture.close();
            capture
        });
        let [out, err] = &mut captures;
        let (out_share, err_share) = window::allocate(&budget, out.demand(), err.demand());
        let [out, err] = captures;
        (out.finish(out_share), err.finish(err_share))
    }

    /// The lines of the view, without the omission marker.
    fn shown_lines(text: &str) -> Vec<&str> {
        if text.is_empty() {
            return Vec::new();
        }
        text.split('\n')
            .filter(|line| !line.starts_with("[… "))
            .collect()
    }

    fn piece() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => "[a-z ]{0,30}\n".prop_map(String::into_bytes),
            1 => "[a-z]{0,3000}".prop_map(String::into_bytes),
            1 => Just(b"\x1b[1;31m".to_vec()),
            1 => Just(b"\x1b]0;title\x07".to_vec()),
            1 => Just(b"\r".to_vec()),
            1 => Just(b"\r\n".to_vec()),
            1 => Just(b"\x08".to_vec()),
            1 => Just(b"\xff\xe2\x9c".to_vec()),
            1 => Just("é✓日本\n".as_bytes().to_vec()),
            1 => proptest::collection::vec(any::<u8>(), 0..40),
        ]
    }

    fn stream() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(piece(), 0..120).prop_map(|pieces| pieces.concat())
    }

    fn budget() -> impl Strategy<Value = Budget> {
        (2048usize..40_000, 2usize..200, 0usize..=90, 1usize..300)
            .prop_map(|(bytes, lines, head_percent, line_clip_chars)| Budget {
                bytes,
                lines,
                head_percent,
                line_clip_chars,
            })
            .prop_filter("valid budget", |budget| budget.validate().is_ok())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn sanitizing_is_independent_of_chunking(input in proptest::collection::vec(any::<u8>(), 0..600), chunk in 1usize..64) {
            prop_assert_eq!(events(&input, chunk), events(&input, input.len().max(1)));
        }

        #[test]
        fn sanitizing_escape_heavy_input_is_independent_of_chunking(input in stream(), chunk in 1usize..64) {
            prop_assert_eq!(events(&input, chunk), events(&input, input.len().max(1)));
        }

        #[test]
        fn the_view_holds_its_invariants(
            budget in budget(),
            out_input in stream(),
            err_input in stream(),
            chunks in proptest::collection::vec(1usize..5000, 1..8),
        ) {
            let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
            let spill_dir = SpillDir::new(dir.path().to_path_buf());
            let (out_whole, err_whole) = capture_call(budget, &out_input, &err_input, &[usize::MAX], &spill_dir);
            // Files are created new, never over an existing one: the second run makes them
            // again at the same paths.
            for whole in [&out_whole, &err_whole] {
                if let Some(path) = &whole.stats.full_output_path {
                    std::fs::remove_file(path).map_err(|e| TestCaseError::fail(e.to_string()))?;
                }
            }
            let (out, err) = capture_call(budget, &out_input, &err_input, &chunks, &spill_dir);
            // Any chunking gives the same view.
            prop_assert_eq!(&out.text, &out_whole.text);
            prop_assert_eq!(&err.text, &err_whole.text);

            let mut shown_bytes = 0;
            let mut shown_count = 0;
            for (output, input) in [(&out, &out_input), (&err, &err_input)] {
                let mut lines = shown_lines(&output.text);
                if output.text.is_empty() && output.stats.total_lines > 0 && output.stats.binary.is_none() {
                    // One empty line: its text is empty, like no output at all.
                    lines.push("");
                }
                shown_bytes += lines.iter().map(|line| line.len() + 1).sum::<usize>();
                shown_count += lines.len();
                let stats = &output.stats;
                if stats.binary.is_some() {
                    continue;
                }
                // Counts add up.
                prop_assert_eq!(lines.len() as u64 + stats.omitted_lines, stats.total_lines);
                // The last line survives, and is the stream's last line.
                let full = String::from_utf8_lossy(input).into_owned();
                match &stats.full_output_path {
                    Some(path) => {
                        let spilled = std::fs::read_to_string(path).map_err(|e| TestCaseError::fail(e.to_string()))?;
                        prop_assert_eq!(spilled.len() as u64, stats.total_bytes, "the spill file is the whole stream");
                        let ends_with_newline = spilled.ends_with('\n');
                        let last = spilled.strip_suffix('\n').unwrap_or(&spilled).rsplit('\n').next().unwrap_or_default();
                        if stats.clipped_lines == 0 {
                            prop_assert_eq!(lines.last().copied().unwrap_or_default(), last, "input {:?}", full);
                            let newline_bytes = lines.len() as u64 - u64::from(!ends_with_newline);
                            let shown_original: u64 = lines.iter().map(|line| line.len() as u64).sum::<u64>() + newline_bytes;
                            prop_assert_eq!(shown_original + stats.omitted_bytes, stats.total_bytes);
                        } else {
                            let shown_last = lines.last().copied().unwrap_or_default();
                            let clipped_start = shown_last.split(" [… ").next().unwrap_or_default();
                            prop_assert!(last.starts_with(clipped_start), "last line {:?} vs shown {:?}", last, shown_last);
                        }
                    }
                    None => {
                        // Nothing was cut: the text is the whole stream, but maybe its final newline.
                        prop_assert_eq!(stats.omitted_lines, 0);
                        prop_assert_eq!(stats.clipped_lines, 0);
                        let text_bytes = output.text.len() as u64;
                        prop_assert!(stats.total_bytes == text_bytes || stats.total_bytes == text_bytes + 1);
                    }
                }
                // Whatever was cut is in the spill file.
                if stats.omitted_lines > 0 || stats.clipped_lines > 0 {
                    prop_assert!(stats.full_output_path.is_some());
                }
            }
            // The model's whole text stays within the budget plus the fixed overhead, with
            // the worst notes a result can carry.
            let paths: usize = [&out, &err]
                .iter()
                .filter_map(|o| o.stats.full_output_path.as_ref())
                .map(|p| p.as_os_str().len())
                .sum();
            let long = "n".repeat(5000);
            let outcome = crate::outcome::Outcome {
                stdout: out.text.clone(),
                stderr: err.text.clone(),
                stdout_stats: out.stats.clone(),
                stderr_stats: err.stats.clone(),
                timed_out: true,
                timeout_secs: 3600,
                duration_ms: u64::MAX,
                exit_code: Some(i32::MIN),
                exit_hint: crate::exit::explain(141, "x"),
                notes: vec![crate::outcome::Note::JobFilesFailed { error: long.clone() }; 6],
                left_running: (0..50).map(|pid| crate::procs::ProcessInfo { pid, command: long.clone() }).collect(),
                ..crate::outcome::Outcome::default()
            };
            let rendered = crate::render::text(&outcome);
            let bound = budget.bytes + crate::render::TEXT_OVERHEAD_BYTES + paths;
            prop_assert!(rendered.len() <= bound, "{} bytes rendered, bound {}", rendered.len(), bound);

            // Never over budget, for the whole call.
            prop_assert!(shown_bytes <= budget.bytes, "{} bytes shown, budget {}", shown_bytes, budget.bytes);
            prop_assert!(shown_count <= budget.lines, "{} lines shown, budget {}", shown_count, budget.lines);
        }
    }

    /// Feeds `input` in `chunks`, hands the capture over to a job after `split` bytes,
    /// feeds the rest; returns the frozen view and the job's whole file.
    fn hand_over_at(
        budget: Budget,
        input: &[u8],
        split: usize,
        chunks: &[usize],
        spill_dir: &Arc<SpillDir>,
        stem: &str,
    ) -> Result<(StreamOutput, Vec<u8>), TestCaseError> {
        let mut capture = Capture::new(
            Stream::Stdout,
            budget,
            spill_dir.clone(),
            format!("{stem}-call"),
            u64::MAX,
        );
        let mut sizes = chunks.iter().cycle();
        let mut feed = |capture: &mut Capture, part: &[u8]| {
            let mut at = 0;
            while at < part.len() {
                let size = sizes.next().copied().unwrap_or(part.len()).max(1);
                let end = (at + size).min(part.len());
                capture.feed(&part[at..end]);
                at = end;
            }
        };
        let split = split.min(input.len());
        feed(&mut capture, &input[..split]);
        let (mut frozen, path) = capture.hand_over(stem);
        let path = path.map_err(TestCaseError::fail)?;
        feed(&mut capture, &input[split..]);
        let result = capture.into_file();
        prop_assert_eq!(result.path.as_ref(), Some(&path));
        frozen.close();
        let share = frozen.demand().unwrap_or(Share {
            bytes: budget.bytes,
            lines: budget.lines,
        });
        let view = frozen.finish(share);
        let file = std::fs::read(&path).map_err(|e| TestCaseError::fail(e.to_string()))?;
        Ok((view, file))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        /// A command handed over to a job mid-stream (at its timeout, say) loses nothing:
        /// the job's file is the same whole stream whenever the hand-over came, and the
        /// call's frozen view keeps its invariants and names that file.
        #[test]
        fn handing_over_keeps_the_whole_stream_in_one_file(
            budget in budget(),
            input in stream(),
            split in 0usize..20_000,
            chunks in proptest::collection::vec(1usize..5000, 1..8),
        ) {
            let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
            let spill_dir = SpillDir::new(dir.path().to_path_buf());
            // A job decides text or binary on what it has at the hand-over (it cannot wait
            // for a full sample): compare streams for which that decision is the same.
            let decision = |end: usize| {
                let whole = &input[..input.len().min(binary::SNIFF_BYTES)];
                match end.min(input.len()) {
                    // Nothing read at the hand-over: the full sample decides, later.
                    0 => binary::sniff(whole),
                    end => binary::sniff_partial(&input[..end.min(binary::SNIFF_BYTES)]),
                }
            };
            prop_assume!(decision(split) == decision(input.len()));
            let (_, reference) = hand_over_at(budget, &input, input.len(), &[usize::MAX], &spill_dir, "whole")?;
            let (view, file) = hand_over_at(budget, &input, split, &chunks, &spill_dir, "split")?;
            prop_assert_eq!(String::from_utf8_lossy(&file), String::from_utf8_lossy(&reference));
            let stats = &view.stats;
            let file_name = if stats.binary.is_some() { "split.bin" } else { "split.log" };
            let names_the_file = stats.full_output_path.as_ref().is_some_and(|p| p.ends_with(file_name));
            prop_assert!(names_the_file, "{:?}", stats.full_output_path);
            if stats.binary.is_none() {
                let shown = shown_lines(&view.text);
                let shown = if view.text.is_empty() && stats.total_lines > 0 { 1 } else { shown.len() as u64 };
                prop_assert_eq!(shown + stats.omitted_lines, stats.total_lines);
                prop_assert!(view.text.len() <= budget.bytes + 300, "{} bytes", view.text.len());
            }
        }
    }

    fn redacting_capture(dir: &Arc<SpillDir>, budget: Budget) -> Capture {
        let config = crate::config::SecretsConfig::default();
        let env = [("DEPLOY_TOKEN", &b"tok-0123456789"[..])];
        let secrets = Arc::new(redact::Secrets::new(env, &config).unwrap());
        Capture::new(
            Stream::Stdout,
            budget,
            dir.clone(),
            "r-stdout".into(),
            u64::MAX,
        )
        .redacting(&secrets)
    }

    /// What a capture redacting `DEPLOY_TOKEN` makes of `input` read in `chunks`: the view
    /// and the spill file (the budget is small, so there is one).
    fn redacted_capture(
        input: &[u8],
        chunks: &[usize],
        dir: &Arc<SpillDir>,
        stem: &str,
    ) -> (String, String) {
        let budget = Budget {
            lines: 3,
            ..Budget::default()
        };
        let mut capture = redacting_capture(dir, budget);
        capture.lines.spill.move_to(format!("{stem}.log"));
        let mut at = 0;
        let mut sizes = chunks.iter().cycle();
        while at < input.len() {
            let end = (at + sizes.next().copied().unwrap_or(input.len()).max(1)).min(input.len());
            capture.feed(&input[at..end]);
            at = end;
        }
        capture.close();
        let out = capture.finish(Share {
            bytes: budget.bytes,
            lines: budget.lines,
        });
        let file = out
            .stats
            .full_output_path
            .as_ref()
            .map(|path| std::fs::read_to_string(path).unwrap_or_default())
            .unwrap_or_default();
        (out.text, file)
    }

    /// Bytes a terminal or the sanitizer drops, as commands print them inside a secret.
    fn control() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            Just(b"\x1b[01;31m\x1b[K".to_vec()),
            Just(b"\x1b[m".to_vec()),
            Just(b"\x1b]8;;file:///x\x1b\\".to_vec()),
            Just(b"\x1b]0;title\x07".to_vec()),
            Just(b"\x1bP1$r0m\x1b\\".to_vec()),
            Just("\u{9b}31m".as_bytes().to_vec()),
            Just(b"\x01".to_vec()),
            Just(b"\x7f".to_vec()),
            Just(b"\0".to_vec()),
            Just(b"Z\x08".to_vec()),
        ]
    }

    /// `tok-0123456789` with controls inside it.
    fn broken_secret() -> impl Strategy<Value = Vec<u8>> {
        (
            proptest::collection::vec(control(), 1..4),
            proptest::collection::vec(1usize..13, 1..4),
        )
            .prop_map(|(controls, cuts)| {
                let secret = b"tok-0123456789";
                let mut out = Vec::new();
                let mut at = 0;
                let mut cuts = cuts;
                cuts.sort_unstable();
                for (control, cut) in controls.iter().zip(cuts) {
                    out.extend_from_slice(&secret[at..cut.max(at)]);
                    out.extend_from_slice(control);
                    at = cut.max(at);
                }
                out.extend_from_slice(&secret[at..]);
                out
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        /// Controls inside a secret never rebuild it in the view or the file, and the
        /// result does not depend on how the stream was read.
        #[test]
        fn controls_inside_a_secret_never_rebuild_it_and_chunking_does_not_matter(
            words in proptest::collection::vec(
                prop_oneof![
                    3 => broken_secret(),
                    1 => Just(b"tok-0123456789".to_vec()),
                    2 => "[a-z ]{0,12}\n?".prop_map(String::into_bytes),
                    1 => control(),
                    1 => Just(b"\n".to_vec()),
                ],
                1..40,
            ),
            chunks in proptest::collection::vec(1usize..40, 1..6),
        ) {
            let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
            let spill_dir = SpillDir::new(dir.path().to_path_buf());
            // Text first: a NUL in the first KiB makes a stream binary, kept raw in its file.
            let input = [b"text\n".repeat(250), words.concat()].concat();
            let (whole_text, whole_file) = redacted_capture(&input, &[usize::MAX], &spill_dir, "whole");
            let (text, file) = redacted_capture(&input, &chunks, &spill_dir, "chunked");
            prop_assert_eq!(text.replace("chunked.log", "whole.log"), whole_text);
            prop_assert_eq!(&file, &whole_file);
            for shown in [&text, &file] {
                prop_assert!(!shown.contains("tok-0123456789"), "{:?} from {:?}", shown, String::from_utf8_lossy(&input));
                prop_assert!(!shown.contains("0123456789"), "{:?}", shown);
            }
        }
    }

    #[test]
    fn grep_colour_utf16_and_backspace_inside_a_secret_are_redacted_in_view_and_file() {
        let dir = tempfile::tempdir().unwrap();
        let spill_dir = SpillDir::new(dir.path().to_path_buf());
        let utf16: Vec<u8> = "key tok-0123456789\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let mut input = b"text first\n".repeat(100);
        input.extend_from_slice(b"./.env:1:DEPLOY=\x1b[01;31m\x1b[Ktok-\x1b[m\x1b[K0123456789\n");
        input.extend_from_slice(&utf16);
        input.extend_from_slice(b"tok-01234X\x08567\x7f89 ");
        input.extend_from_slice("\u{9b}1mdone\n".as_bytes());
        let (text, file) = redacted_capture(&input, &[7], &spill_dir, "grep");
        assert!(text.ends_with("[redacted:DEPLOY_TOKEN] done"), "{text}");
        assert!(
            file.contains("./.env:1:DEPLOY=[redacted:DEPLOY_TOKEN]\n"),
            "{file}"
        );
        assert!(file.contains("key [redacted:DEPLOY_TOKEN]\n"), "{file}");
        assert!(!file.contains("0123456789"), "{file}");
    }

    #[test]
    fn a_secret_split_across_reads_is_redacted_in_the_view_the_counts_and_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let spill_dir = SpillDir::new(dir.path().to_path_buf());
        let budget = Budget {
            lines: 4,
            ..Budget::default()
        };
        let mut capture = redacting_capture(&spill_dir, budget);
        let mut expected = String::new();
        for n in 0..10 {
            // Every secret arrives in two reads, split at a different byte each time.
            let line = format!("{n} key=tok-0123456789 end\n");
            let cut = 6 + n;
            capture.feed(&line.as_bytes()[..cut]);
            capture.feed(&line.as_bytes()[cut..]);
            expected.push_str(&format!("{n} key=[redacted:DEPLOY_TOKEN] end\n"));
        }
        capture.close();
        let share = capture.demand().unwrap_or(Share {
            bytes: 1000,
            lines: 4,
        });
        let out = capture.finish(share);
        assert!(!out.text.contains("tok-0"), "{}", out.text);
        assert!(
            out.text.ends_with("9 key=[redacted:DEPLOY_TOKEN] end"),
            "{}",
            out.text
        );
        assert_eq!(out.stats.total_bytes, expected.len() as u64);
        assert_eq!(out.stats.total_lines, 10);
        let path = out.stats.full_output_path.expect("spilled");
        let file = std::fs::read_to_string(path).unwrap();
        assert_eq!(file, expected);
    }

    #[test]
    fn a_hand_over_shows_the_held_line_redacted_and_the_job_file_gets_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let spill_dir = SpillDir::new(dir.path().to_path_buf());
        let mut capture = redacting_capture(&spill_dir, Budget::default());
        capture.feed(b"done\nPassword for tok-0123");
        let (frozen, path) = capture.hand_over("job-1-stdout");
        let view = frozen.finish(Share {
            bytes: 1000,
            lines: 10,
        });
        // The call shows the line being written, with the secret it has begun to print
        // replaced; the job's file gets the whole line once it is complete.
        assert_eq!(view.text, "done\nPassword for [redacted:DEPLOY_TOKEN]");
        capture.feed(b"456789 ok\n");
        capture.close();
        let path = path.unwrap();
        let _ = capture.into_file();
        let file = std::fs::read_to_string(path).unwrap();
        assert_eq!(file, "done\nPassword for [redacted:DEPLOY_TOKEN] ok\n");
    }

    #[test]
    fn one_empty_line_is_one_line_of_no_text() {
        let dir = tempfile::tempdir().unwrap();
        let (_, err) = capture_call(
            Budget::default(),
            b"",
            b"\r\n",
            &[1],
            &SpillDir::new(dir.path().to_path_buf()),
        );
        assert_eq!(
            (
                err.text.as_str(),
                err.stats.total_lines,
                err.stats.total_bytes
            ),
            ("", 1, 1)
        );
    }

    #[test]
    fn carriage_return_keeps_the_last_frame() {
        let dir = tempfile::tempdir().unwrap();
        let (out, _) = capture_call(
            Budget::default(),
            b"progress 50%\rprogress done\nabc\r\n",
            b"",
            &[3],
            &SpillDir::new(dir.path().to_path_buf()),
        );
        assert_eq!(out.text, "progress done\nabc");
        assert_eq!(out.stats.total_lines, 2);
    }
}
