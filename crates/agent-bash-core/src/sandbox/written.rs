//! Files that decide what a later session does, which a confined command may create where
//! no read-only mount can cover them (a mount needs an existing file): the project's
//! settings file. The session watches it; a version that appeared or changed while confined
//! commands ran is recorded by its SHA-256 in the state directory (out of the sandbox's
//! reach), and the settings do not trust that version (`settings::trust`).

use std::io::Write as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest as _, Sha256};

/// The record's name in the state directory.
const RECORD: &str = "written-in-sandbox";

/// What tells one version of a file from another without reading it.
type Identity = Option<(u64, u64, i64, i64, u64)>;

fn identity(path: &Path) -> Identity {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((
        meta.ino(),
        meta.size(),
        meta.mtime_nsec(),
        meta.ctime_nsec(),
        meta.ctime().cast_unsigned(),
    ))
}

/// One watched file, and the version of it last seen.
#[derive(Debug)]
pub(crate) struct Watched {
    path: PathBuf,
    state: PathBuf,
    seen: Mutex<Identity>,
}

impl Watched {
    /// Watches `path`, recording confined writes to it in the state directory `state`.
    pub(crate) fn new(path: PathBuf, state: PathBuf) -> Watched {
        let seen = Mutex::new(identity(&path));
        Watched { path, state, seen }
    }

    /// Takes the file as it is now as the user's (no confined command ran since it was
    /// last seen).
    pub(crate) fn settle(&self) {
        *crate::lock(&self.seen) = identity(&self.path);
    }

    /// Records the file as written in the sandbox if it changed since it was last seen.
    pub(crate) fn check(&self) {
        let now = identity(&self.path);
        let mut seen = crate::lock(&self.seen);
        if *seen == now {
            return;
        }
        *seen = now;
        if let Ok(text) = std::fs::read(&self.path) {
            let _ = record(&self.state, &self.path, &text);
        }
    }
}

impl Drop for Watched {
    /// The session's last look: its jobs and terminals are gone by now.
    fn drop(&mut self) {
        self.check();
    }
}

fn digest(text: &[u8]) -> String {
    Sha256::digest(text)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn record(state: &Path, path: &Path, text: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(state)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(state.join(RECORD))?;
    writeln!(file, "{} {}", digest(text), path.display())
}

/// Whether the file at `path`, as it is now, was written by a confined command (its
/// content's digest is recorded in the state directory `state`).
pub(crate) fn written_in_sandbox(state: &Path, path: &Path) -> bool {
    let Ok(record) = std::fs::read_to_string(state.join(RECORD)) else {
        return false;
    };
    let Ok(text) = std::fs::read(path) else {
        return false;
    };
    let digest = digest(&text);
    record
        .lines()
        .any(|line| line.split(' ').next() == Some(digest.as_str()))
}

/// Where the record is kept, in `state`.
pub(crate) fn record_path(state: &Path) -> PathBuf {
    state.join(RECORD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_is_recorded_and_a_settled_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let file = dir.path().join(".agent-bash.toml");
        let watched = Watched::new(file.clone(), state.clone());
        std::fs::write(&file, "timeout_secs = 1\n").unwrap();
        // Changed by the user between calls: settled, not recorded.
        watched.settle();
        watched.check();
        assert!(!written_in_sandbox(&state, &file));
        // Changed while a confined command ran: recorded, for this content only.
        std::fs::write(&file, "[sandbox]\nmode = \"off\"\n").unwrap();
        watched.check();
        assert!(written_in_sandbox(&state, &file));
        std::fs::write(&file, "[sandbox]\nmode = \"off\" # reviewed\n").unwrap();
        assert!(!written_in_sandbox(&state, &file));
    }
}
