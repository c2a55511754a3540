//! The spill file, where everything the model does not see is kept.
//!
//! Output is held in memory until it outgrows the budget (then the file is opened and the
//! rest streams into it) or the call ends; at the end the file is written only if something
//! was cut. So a call whose output fits touches no disk. Writes are synchronous on purpose:
//! they are large, buffered, and on the hot path a thread hop would cost more than the write.
//!
//! A failure to write is recorded and reported in the result; it never fails the call.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::{
    DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Buffered writes to the file, in bytes.
const WRITE_BUFFER_BYTES: usize = 256 * 1024;

/// Session directories whose contents were last changed longer ago than this are removed
/// when a session starts.
pub(crate) const SESSION_DIR_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);

/// How many dropped files' paths a session remembers: far more than the jobs whose reads
/// could name them (finished jobs are evicted past `keep_finished_jobs`).
const DROPPED_REMEMBERED: usize = 1024;

/// The prefix of every session directory's name in the base.
const SESSION_PREFIX: &str = "session-";

/// The per-user base directory of the session directories, when no `output.spill_dir` is
/// set: `$XDG_RUNTIME_DIR/agent-bash` when that variable holds an absolute path to a
/// directory of this user's (`su` can leave another user's there), else
/// `agent-bash-<uid>` in the system temp dir.
pub(crate) fn default_base() -> PathBuf {
    let uid = rustix::process::geteuid().as_raw();
    let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .filter(|dir| {
            std::fs::symlink_metadata(dir).is_ok_and(|meta| meta.is_dir() && meta.uid() == uid)
        });
    match runtime_dir {
        Some(dir) => dir.join("agent-bash"),
        None => std::env::temp_dir().join(format!("agent-bash-{uid}")),
    }
}

/// Why `base` (as `lstat` sees it) is not safe to keep this user's files in, if it is not.
fn unsafe_base(meta: &std::fs::Metadata) -> Option<String> {
    let uid = rustix::process::geteuid().as_raw();
    if meta.file_type().is_symlink() {
        return Some("it is a symbolic link, which is never followed".into());
    }
    if !meta.is_dir() {
        return Some("it is not a directory".into());
    }
    if meta.uid() != uid {
        return Some(format!(
            "it is owned by uid {}, not by this user (uid {uid})",
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o022 != 0 {
        return Some(format!(
            "it is writable by its group or by others (mode {mode:o}); `chmod 700` it"
        ));
    }
    None
}

/// A kept file of the session, as the session cap sees it.
#[derive(Debug)]
pub(crate) struct Kept {
    path: Mutex<PathBuf>,
    /// Bytes written to it so far.
    size: AtomicU64,
    /// Set when the file was dropped for the session cap: its writer stops.
    dropped: AtomicBool,
}

impl Kept {
    fn dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }
}

/// The session's output directory, created on first use, inside a base directory that
/// belongs to this user alone.
#[derive(Debug)]
pub struct SpillDir {
    parent: PathBuf,
    dir: Mutex<Option<PathBuf>>,
    /// Most bytes the session's files may hold together.
    cap: u64,
    /// Bytes the session's files hold, as written.
    total: AtomicU64,
    /// The session's files not dropped, oldest first.
    files: Mutex<Vec<Arc<Kept>>>,
    /// The paths of the files dropped last (`DROPPED_REMEMBERED` at most), for the reads
    /// of jobs whose files they were.
    dropped: Mutex<std::collections::VecDeque<PathBuf>>,
}

impl SpillDir {
    /// A directory to be created under `parent` when the first spill file is written, with
    /// no cap on the session's files together.
    pub fn new(parent: PathBuf) -> Arc<SpillDir> {
        SpillDir::capped(parent, u64::MAX)
    }

    /// As `new`, with the session's files capped at `cap` bytes together: past it, the
    /// oldest files are dropped (each left holding a line that says so).
    pub fn capped(parent: PathBuf, cap: u64) -> Arc<SpillDir> {
        Arc::new(SpillDir {
            parent,
            dir: Mutex::new(None),
            cap,
            total: AtomicU64::new(0),
            files: Mutex::new(Vec::new()),
            dropped: Mutex::new(std::collections::VecDeque::new()),
        })
    }

    /// Where the session's directory is (or will be) created.
    pub(crate) fn parent(&self) -> &Path {
        &self.parent
    }

    /// Why the base directory cannot be used, if it exists and cannot: a symbolic link, not
    /// a directory, another user's, or writable by others. A base that does not exist yet
    /// is fine (it is created on first use, mode 0700).
    ///
    /// # Errors
    /// The reason, with what to do.
    pub fn check_base(&self) -> Result<(), String> {
        // A base that cannot be looked at cannot be created either: the spill files then
        // say why they were not saved, and the call goes on.
        match std::fs::symlink_metadata(&self.parent) {
            Ok(meta) => unsafe_base(&meta).map_or(Ok(()), |reason| Err(self.refusal(&reason))),
            Err(_) => Ok(()),
        }
    }

    fn refusal(&self, reason: &str) -> String {
        format!(
            "refusing the output directory {}: {reason}; remove it, or set output.spill_dir \
             to a directory that only you own and can write",
            self.parent.display()
        )
    }

    /// Creates the base (mode 0700) if it is missing, and checks it.
    pub(crate) fn ensure_base(&self) -> Result<(), String> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.parent)
            .map_err(|err| {
                format!(
                    "cannot create the output directory {}: {err}",
                    self.parent.display()
                )
            })?;
        self.check_base()
    }

    /// Whether the directory was made, then removed (by a person, or a cleaner of the
    /// temp directory).
    pub(crate) fn was_removed(&self) -> bool {
        crate::lock(&self.dir)
            .as_ref()
            .is_some_and(|made| !std::fs::symlink_metadata(made).is_ok_and(|meta| meta.is_dir()))
    }

    /// The directory, created now if it was not yet.
    ///
    /// # Errors
    /// The reason, as text, if it could not be created; a later call tries again (the
    /// base may have been mended meanwhile).
    pub fn path(&self) -> Result<PathBuf, String> {
        let mut dir = crate::lock(&self.dir);
        // One removed from under the session (by a person, or a cleaner of the temp
        // directory) is made again, under a fresh name.
        if let Some(made) = &*dir
            && std::fs::symlink_metadata(made).is_ok_and(|meta| meta.is_dir())
        {
            return Ok(made.clone());
        }
        self.ensure_base()?;
        // A fresh name, created with mkdir (mode 0700): nothing there is followed.
        let made = tempfile::Builder::new()
            .prefix(SESSION_PREFIX)
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(&self.parent)
            .map(tempfile::TempDir::keep)
            .map_err(|err| {
                format!(
                    "cannot create the output directory in {}: {err}",
                    self.parent.display()
                )
            })?;
        Ok(dir.insert(made).clone())
    }

    /// Creates the new file `name` in the session's directory, mode 0600 (never an existing
    /// file, never through a symbolic link).
    ///
    /// # Errors
    /// Why it could not be created.
    pub(crate) fn create(&self, name: &str) -> Result<(PathBuf, File), String> {
        let path = self.path()?.join(name);
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map(|file| (path.clone(), file))
            .map_err(|err| {
                let hint = crate::error::descriptor_hint(&err);
                format!("cannot create {}: {err}{hint}", path.display())
            })
    }

    /// Creates the new file `name`, counted under the session cap.
    fn create_kept(&self, name: &str) -> Result<(PathBuf, File, Arc<Kept>), String> {
        let (path, file) = self.create(name)?;
        let kept = Arc::new(Kept {
            path: Mutex::new(path.clone()),
            size: AtomicU64::new(0),
            dropped: AtomicBool::new(false),
        });
        crate::lock(&self.files).push(kept.clone());
        Ok((path, file, kept))
    }

    /// Counts `bytes` more written to `kept`; past the cap, drops the oldest other files
    /// until the session is under it again (or nothing else is left to drop).
    fn account(&self, kept: &Kept, bytes: u64) {
        kept.size.fetch_add(bytes, Ordering::AcqRel);
        let total = self.total.fetch_add(bytes, Ordering::AcqRel) + bytes;
        if total <= self.cap {
            return;
        }
        let mut files = crate::lock(&self.files);
        for other in files.iter() {
            if self.total.load(Ordering::Acquire) <= self.cap {
                break;
            }
            if std::ptr::eq(Arc::as_ptr(other), kept) || other.dropped() {
                continue;
            }
            let path = crate::lock(&other.path).clone();
            let note = dropped_note(self.cap);
            let emptied = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&path)
                .and_then(|mut file| file.write_all(note.as_bytes()));
            other.dropped.store(true, Ordering::Release);
            if emptied.is_ok() {
                let size = other.size.swap(note.len() as u64, Ordering::AcqRel);
                self.total.fetch_sub(size, Ordering::AcqRel);
                self.total.fetch_add(note.len() as u64, Ordering::AcqRel);
            }
            let mut dropped = crate::lock(&self.dropped);
            if dropped.len() == DROPPED_REMEMBERED {
                dropped.pop_front();
            }
            dropped.push_back(path);
        }
        // A long session drops thousands of files: their entries go, so that the list
        // (and this walk) stays as long as the files still kept.
        files.retain(|other| !other.dropped());
    }

    /// True if the file at `path` was dropped for the session cap (one of the last
    /// `DROPPED_REMEMBERED` dropped).
    pub(crate) fn was_dropped(&self, path: &Path) -> bool {
        crate::lock(&self.dropped)
            .iter()
            .any(|dropped| dropped == path)
    }

    /// What a file dropped for the session cap is said to be.
    pub(crate) fn dropped_problem(&self) -> String {
        dropped_note(self.cap)
            .trim()
            .trim_start_matches("[agent-bash: this file ")
            .trim_end_matches(']')
            .to_string()
    }

    /// Removes the session directories in the base whose contents were last changed more
    /// than `max_age` ago. Best effort: nothing here fails, symbolic links are never
    /// followed, and a base that is not safe to use is left alone.
    pub(crate) fn clean_old(&self, max_age: Duration) {
        if self.check_base().is_err() {
            return;
        }
        let Ok(entries) = std::fs::read_dir(&self.parent) else {
            return;
        };
        let now = SystemTime::now();
        let old = |meta: &std::fs::Metadata| {
            meta.modified()
                .ok()
                .and_then(|time| now.duration_since(time).ok())
                .is_some_and(|age| age > max_age)
        };
        for entry in entries.flatten() {
            if !entry
                .file_name()
                .to_string_lossy()
                .starts_with(SESSION_PREFIX)
            {
                continue;
            }
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if !meta.is_dir() || !old(&meta) {
                continue;
            }
            // A job may still write to a file whose directory has not changed for days.
            let fresh_inside = std::fs::read_dir(&path).is_ok_and(|files| {
                files
                    .flatten()
                    .any(|file| file.metadata().map_or(true, |meta| !old(&meta)))
            });
            if !fresh_inside {
                // Does not follow symbolic links inside (std's remove_dir_all is safe).
                let _ = std::fs::remove_dir_all(&path);
            }
        }
    }
}

impl Drop for SpillDir {
    /// Removes the session's directory if nothing was left in it.
    fn drop(&mut self) {
        if let Ok(mut dir) = self.dir.lock()
            && let Some(path) = dir.take()
        {
            let _ = std::fs::remove_dir(path);
        }
    }
}

/// What a file dropped for the session cap holds instead of its output.
fn dropped_note(cap: u64) -> String {
    format!(
        "[agent-bash: this file was dropped: the session's files went over the session cap \
         of {cap} bytes (output.session_cap_bytes), and the oldest are dropped first]\n"
    )
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `bytes` bytes through a spill named `name` (opened at once) and finishes it.
    fn spill(dir: &Arc<SpillDir>, name: &str, bytes: usize) -> SpillResult {
        let mut spill = Spill::new(dir.clone(), name.into(), 0, u64::MAX);
        spill.write(&vec![b'x'; bytes]);
        spill.finish(true)
    }

    #[test]
    fn the_file_being_written_is_never_dropped_for_the_session_cap() {
        let dir = tempfile::tempdir().unwrap();
        let spills = SpillDir::capped(dir.path().join("base"), 1000);
        let first = spill(&spills, "first.log", 600);
        let second = spill(&spills, "second.log", 600);
        // Alone over the cap: the older file goes, this one is kept whole.
        let third = spill(&spills, "third.log", 1500);
        let read = |result: &SpillResult| std::fs::read(result.path.as_ref().unwrap()).unwrap();
        assert_eq!(third.error, None);
        assert_eq!(read(&third).len(), 1500);
        for dropped in [&first, &second] {
            let text = String::from_utf8(read(dropped)).unwrap();
            assert!(
                text.starts_with("[agent-bash: this file was dropped"),
                "{text}"
            );
            assert!(spills.was_dropped(dropped.path.as_ref().unwrap()));
        }
        assert!(!spills.was_dropped(third.path.as_ref().unwrap()));
    }

    #[test]
    fn a_long_session_keeps_entries_only_for_the_files_it_keeps() {
        let dir = tempfile::tempdir().unwrap();
        let spills = SpillDir::capped(dir.path().join("base"), 1000);
        let results: Vec<SpillResult> = (0..2000)
            .map(|n| spill(&spills, &format!("{n}.log"), 600))
            .collect();
        // One file of 600 bytes fits under the cap with the notes of the dropped ones.
        assert!(crate::lock(&spills.files).len() <= 2);
        assert_eq!(crate::lock(&spills.dropped).len(), DROPPED_REMEMBERED);
        let path = |n: usize| results[n].path.clone().unwrap();
        assert!(spills.was_dropped(&path(1998)));
        assert!(!spills.was_dropped(&path(1999)), "the last file is kept");
        assert!(
            !spills.was_dropped(&path(0)),
            "forgotten past the last {DROPPED_REMEMBERED}"
        );
    }

    #[test]
    fn a_writer_whose_file_was_dropped_stops_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let spills = SpillDir::capped(dir.path().join("base"), 1000);
        let mut old = Spill::new(spills.clone(), "old.log".into(), 0, u64::MAX);
        old.write(&[b'a'; 600]);
        old.flush();
        let path = spills.path().unwrap().join("old.log");
        let newer = spill(&spills, "newer.log", 600);
        assert_eq!(newer.error, None);
        assert!(spills.was_dropped(&path));
        old.write(&[b'b'; 100]);
        let problem = old.problem().unwrap_or_default();
        assert!(problem.contains("session cap of 1000 bytes"), "{problem}");
        let result = old.finish(true);
        assert_eq!(result.path, None);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, dropped_note(1000), "nothing written after the drop");
    }
}
