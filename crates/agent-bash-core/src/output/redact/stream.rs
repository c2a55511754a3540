//! The redaction stage of one stream (`Redactor`): what no later byte can turn into a
//! secret passes on, redacted; the rest is held back (`redact`'s own doc says what).

use std::sync::Arc;

use memchr::memmem;

use super::{END, Secrets, is_block_body};

/// A line being written that ends with this many bytes of a secret value or more is taken
/// to be printing it (`Redactor::preview`).
const PARTIAL_MIN_BYTES: usize = 4;

/// The search for the end line of a private key block being dropped, across reads.
#[derive(Debug, Default)]
struct BlockEnd {
    /// The last bytes of the previous read (a `-----END` may begin there).
    tail: Vec<u8>,
    /// `-----END` was seen: the block ends with its line.
    end_seen: bool,
}

impl BlockEnd {
    /// Where, in `body`, the bytes after `-----END` begin, if it is there or begins in the
    /// previous read.
    fn find_end(&self, body: &[u8]) -> Option<usize> {
        let mut stitched = self.tail.clone();
        stitched.extend_from_slice(&body[..body.len().min(END.len())]);
        memmem::find(&stitched, END)
            .map(|at| (at + END.len()).saturating_sub(self.tail.len()))
            .or_else(|| memmem::find(body, END).map(|at| at + END.len()))
    }

    fn keep_tail(&mut self, bytes: &[u8]) {
        self.tail
            .extend_from_slice(&bytes[bytes.len().saturating_sub(END.len())..]);
        let excess = self.tail.len().saturating_sub(END.len() - 1);
        self.tail.drain(..excess);
    }
}

/// The redaction stage of one stream.
#[derive(Debug)]
pub(crate) struct Redactor {
    secrets: Arc<Secrets>,
    /// Bytes read but not yet passed on (after the first `passed`). Seen by the module's
    /// tests, which hold it to its bound.
    pub(super) pending: Vec<u8>,
    /// Bytes at the start of `pending` that the last call passed on.
    passed: usize,
    /// The start of a private key block too long to hold was replaced: the rest of the
    /// block is dropped as it comes, up to its end line.
    in_block: bool,
    /// Where the end line of that block is.
    block: BlockEnd,
    /// What the last call passed on.
    out: Vec<u8>,
}

impl Redactor {
    pub(crate) fn new(secrets: Arc<Secrets>) -> Redactor {
        Redactor {
            secrets,
            pending: Vec::new(),
            passed: 0,
            in_block: false,
            block: BlockEnd::default(),
            out: Vec::new(),
        }
    }

    /// Takes the next chunk; returns what can be passed on now, secrets replaced. Output
    /// without secrets is passed on without a copy.
    pub(crate) fn feed<'a>(&'a mut self, bytes: &'a [u8]) -> &'a [u8] {
        self.pending.drain(..std::mem::take(&mut self.passed));
        let bytes = match self.in_block {
            true => &bytes[self.drop_block(bytes)..],
            false => bytes,
        };
        if self.pending.is_empty() {
            let hold = self.secrets.hold_point(bytes);
            if !self.secrets.finds_before(bytes, hold) {
                self.pending.extend_from_slice(&bytes[hold..]);
                return &bytes[..hold];
            }
            self.out.clear();
            let (used, open_block) = self.secrets.replace(bytes, hold, &mut self.out);
            self.in_block = open_block;
            self.pending.extend_from_slice(&bytes[used..]);
            return &self.out;
        }
        self.pending.extend_from_slice(bytes);
        let hold = self.secrets.hold_point(&self.pending);
        if !self.secrets.finds_before(&self.pending, hold) {
            // Dropped from `pending` at the next call, once the caller is done with it.
            self.passed = hold;
            return &self.pending[..hold];
        }
        self.out.clear();
        let (used, open_block) = self.secrets.replace(&self.pending, hold, &mut self.out);
        self.in_block = open_block;
        self.pending.drain(..used);
        &self.out
    }

    /// Inside a private key block whose start was replaced: how many bytes of `bytes` are
    /// still the block (its body, up to the end of its `-----END …` line). Ends the block
    /// when they are not all of `bytes`.
    fn drop_block(&mut self, bytes: &[u8]) -> usize {
        let body = bytes
            .iter()
            .position(|&byte| !is_block_body(byte))
            .unwrap_or(bytes.len());
        let after_end = match self.block.end_seen {
            true => Some(0),
            false => self.block.find_end(&bytes[..body]),
        };
        let used = match after_end {
            Some(after) => {
                self.block.end_seen = true;
                memchr::memchr(b'\n', &bytes[after..body]).map_or(body, |at| after + at)
            }
            None => body,
        };
        self.in_block = used == bytes.len();
        if self.in_block {
            self.block.keep_tail(bytes);
        } else {
            self.block = BlockEnd::default();
        }
        used
    }

    /// The end of the stream: everything held back, secrets replaced.
    pub(crate) fn finish(&mut self) -> &[u8] {
        self.pending.drain(..std::mem::take(&mut self.passed));
        self.out.clear();
        let pending = std::mem::take(&mut self.pending);
        self.secrets.replace(&pending, pending.len(), &mut self.out);
        self.in_block = false;
        self.block = BlockEnd::default();
        &self.out
    }

    /// What `finish` would pass on, without ending the stream (for a call whose command
    /// goes on as a job: its result shows the line being written). A secret value that is
    /// only partly written yet is replaced too. `more`: text not yet fed, which follows
    /// what is held (the line an earlier stage is still assembling).
    pub(crate) fn preview(&self, more: &[u8]) -> Vec<u8> {
        let mut held = self.pending[self.passed..].to_vec();
        held.extend_from_slice(more);
        let mut out = self.secrets.redact(&held);
        let partial = self.secrets.values.iter().find_map(|(value, index)| {
            (PARTIAL_MIN_BYTES..value.len())
                .rev()
                .find(|&len| out.ends_with(&value[..len]))
                .map(|len| (len, *index))
        });
        if let Some((len, index)) = partial {
            out.truncate(out.len() - len);
            out.extend_from_slice(&self.secrets.labels[index]);
        }
        out
    }
}
