//! The spill file, where everything the model does not see is kept.
//!
//! Output is held in memory until it outgrows the budget (then the file is opened and the
//! rest streams into it) or the call ends; at the end the file is written only if something
//! was cut. So a call whose output fits touches no disk. Writes are synchronous on purpose:
//! they are large, buffered, and on the hot path a thread hop would cost more than the write.
//!
//! A failure to write is recorded and reported in the result; it never fails the call.
//!
//! Here: `SpillDir`, the session's directory (its per-user base, new files, the session cap,
//! the clean-up of old sessions); one stream's `Spill` is in `file`.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{
    DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

mod file;

pub(crate) use file::Spill;
pub(crate) use file::SpillResult;

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
