//! One stream's spill file (`Spill`): held in memory until it outgrows its budget or the
//! call ends, then written to the session's directory, up to its cap.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;

use super::{Kept, SpillDir};

/// Buffered writes to the file, in bytes.
const WRITE_BUFFER_BYTES: usize = 256 * 1024;

/// Where a stream's output goes when the model cannot see all of it.
#[derive(Debug)]
pub(crate) struct Spill {
    dir: Arc<SpillDir>,
    file_name: String,
    /// Output not yet written, while no file is open.
    pending: Vec<u8>,
    /// Past this much pending output the file is opened.
    pending_limit: usize,
    file: Option<(PathBuf, BufWriter<File>)>,
    /// The open file, as the session cap counts it.
    kept: Option<Arc<Kept>>,
    /// The output is already in this file (a job's): nothing is written, the path is given.
    external: Option<PathBuf>,
    written: u64,
    cap: u64,
    /// Bytes not written because of the cap.
    over_cap: u64,
    error: Option<String>,
}

/// The spill file of a finished stream, if one was written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpillResult {
    pub path: Option<PathBuf>,
    /// Why the file could not be written, if it could not.
    pub error: Option<String>,
    /// True if the file was cut at the cap.
    pub capped: bool,
}

impl Spill {
    pub(crate) fn new(
        dir: Arc<SpillDir>,
        file_name: String,
        pending_limit: usize,
        cap: u64,
    ) -> Spill {
        Spill {
            dir,
            file_name,
            pending: Vec::new(),
            pending_limit,
            file: None,
            kept: None,
            external: None,
            written: 0,
            cap,
            over_cap: 0,
            error: None,
        }
    }

    /// A spill for output that is already kept in `path`: writes nothing, names `path`.
    pub(crate) fn external(path: PathBuf) -> Spill {
        let mut spill = Spill::new(SpillDir::new(PathBuf::new()), String::new(), 0, 0);
        spill.external = Some(path);
        spill
    }

    /// A spill that could not be kept: writes nothing, reports `error`.
    pub(crate) fn failed(error: String) -> Spill {
        let mut spill = Spill::new(SpillDir::new(PathBuf::new()), String::new(), 0, 0);
        spill.error = Some(error);
        spill
    }

    /// Creates the file now (even if nothing is written yet) and writes through from now
    /// on. Returns its path, or why it cannot be created.
    pub(crate) fn open_now(&mut self) -> Result<PathBuf, String> {
        self.pending_limit = 0;
        if self.file.is_none() && self.error.is_none() {
            self.open();
        }
        match (&self.file, &self.error) {
            (Some((path, _)), _) => Ok(path.clone()),
            (None, Some(error)) => Err(error.clone()),
            (None, None) => Err("the file was not opened".into()),
        }
    }

    /// What went wrong so far, if anything: why the file cannot be written, or that it
    /// stopped at the cap.
    pub(crate) fn problem(&self) -> Option<String> {
        if let Some(error) = &self.error {
            return Some(error.clone());
        }
        (self.over_cap > 0).then(|| {
            format!(
                "it stops at the spill cap of {} bytes; the rest is counted, not kept",
                self.cap
            )
        })
    }

    /// Pushes buffered output to the file, so that readers of the file see it.
    pub(crate) fn flush(&mut self) {
        if self.check_dropped() {
            return;
        }
        if let Some((path, file)) = &mut self.file
            && let Err(err) = file.flush()
        {
            let error = format!("cannot write {}: {err}", path.display());
            self.fail(error);
        }
    }

    /// The file name without its extension.
    pub(crate) fn stem(&self) -> &str {
        self.file_name
            .rsplit_once('.')
            .map_or(self.file_name.as_str(), |(stem, _)| stem)
    }

    /// Changes the file name; only before the file is opened.
    pub(crate) fn rename(&mut self, file_name: String) {
        if self.file.is_none() {
            self.file_name = file_name;
        }
    }

    /// Changes the file name, moving the file on disk if it is open already (writes go
    /// on through the open descriptor). If the move fails, the file keeps its name.
    pub(crate) fn move_to(&mut self, file_name: String) {
        match &mut self.file {
            None => self.file_name = file_name,
            Some((path, _)) => {
                let new_path = path.with_file_name(&file_name);
                if std::fs::rename(&*path, &new_path).is_ok() {
                    if let Some(kept) = &self.kept {
                        new_path.clone_into(&mut crate::lock(&kept.path));
                    }
                    *path = new_path;
                    self.file_name = file_name;
                }
            }
        }
    }

    /// Appends output.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        if self.error.is_some() || self.external.is_some() {
            return;
        }
        if self.file.is_none() {
            self.pending.extend_from_slice(bytes);
            if self.pending.len() > self.pending_limit {
                self.open();
            }
            return;
        }
        self.write_capped(bytes);
    }

    fn open(&mut self) {
        match self.dir.create_kept(&self.file_name) {
            Ok((path, file, kept)) => {
                self.file = Some((path, BufWriter::with_capacity(WRITE_BUFFER_BYTES, file)));
                self.kept = Some(kept);
                let pending = std::mem::take(&mut self.pending);
                self.write_capped(&pending);
            }
            Err(err) => self.fail(err),
        }
    }

    fn fail(&mut self, error: String) {
        self.error = Some(error);
        self.pending = Vec::new();
        // What is still buffered is discarded: written now, it could land past the note of
        // a file dropped for the session cap.
        if let Some((_, file)) = self.file.take() {
            let _ = file.into_parts();
        }
        self.kept = None;
    }

    /// Stops writing if the file was dropped for the session cap; true if it was.
    fn check_dropped(&mut self) -> bool {
        let dropped = self.kept.as_ref().is_some_and(|kept| kept.dropped());
        if dropped {
            self.fail(self.dir.dropped_problem());
        }
        dropped
    }

    fn write_capped(&mut self, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.written);
        let (keep, over) =
            bytes.split_at(bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX)));
        self.over_cap += over.len() as u64;
        if keep.is_empty() {
            return;
        }
        if self.check_dropped() {
            return;
        }
        if let Some((path, file)) = &mut self.file {
            if let Err(err) = file.write_all(keep) {
                let error = format!("cannot write {}: {err}", path.display());
                return self.fail(error);
            }
            self.written += keep.len() as u64;
            if let Some(kept) = &self.kept {
                self.dir.account(kept, keep.len() as u64);
            }
        }
    }

    /// Ends the stream: writes the file if `keep` (something was cut) or if it is already
    /// open, and says where it is.
    pub(crate) fn finish(mut self, keep: bool) -> SpillResult {
        if let Some(path) = self.external.take() {
            return SpillResult {
                path: Some(path),
                error: None,
                capped: false,
            };
        }
        if keep && self.file.is_none() && self.error.is_none() {
            self.open();
        }
        let capped = self.over_cap > 0;
        self.check_dropped();
        if let Some((path, mut file)) = self.file.take() {
            if capped {
                let note = format!(
                    "\n[agent-bash: this file stops at the spill cap of {} bytes; {} more bytes were not kept]\n",
                    self.cap, self.over_cap
                );
                let _ = file.write_all(note.as_bytes());
            }
            return match file.flush() {
                Ok(()) => SpillResult {
                    path: Some(path),
                    error: None,
                    capped,
                },
                Err(err) => SpillResult {
                    path: Some(path.clone()),
                    error: Some(format!("cannot write {}: {err}", path.display())),
                    capped,
                },
            };
        }
        SpillResult {
            path: None,
            error: self.error,
            capped,
        }
    }
}
