//! The audit log: one JSON line per call, appended as the call ends (a refused call as it
//! is refused). Each line is one `write` to a file opened with `O_APPEND`, so lines of
//! concurrent calls never interleave.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use crate::outcome::Outcome;

/// One line of the log.
#[derive(Debug, Serialize)]
pub(crate) struct Entry<'a> {
    /// When the call ended, UTC (`2026-11-23T10:04:05.123Z`).
    pub time: String,
    pub command: &'a str,
    /// What the caller said the command is for, if it said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
    pub cwd: &'a Path,
    /// `allow`, `suggest`, `ask` or `deny`: the policy's decision.
    pub decision: &'a str,
    /// The rule that decided, if one did.
    pub rule: Option<&'a str>,
    /// For `suggest`: the host's tool the result named instead of the command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    /// For `ask`: whether the user approved (`None` when nobody could be asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
    /// False if the call was refused (nothing ran).
    pub ran: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<&'a str>,
    pub timed_out: bool,
    pub duration_ms: u64,
    /// Bytes of output both streams gave (after redaction).
    pub output_bytes: u64,
    pub job_id: Option<u64>,
    /// Why agent-bash itself could not run the command (a failure of the tool, not of the
    /// command), when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// For a terminal session: its id, and what was done (`open`, `send`, `close`); the
    /// command is then the opening command, or what was typed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<&'static str>,
}

impl<'a> Entry<'a> {
    /// The entry of a finished (or refused) call.
    pub(crate) fn of(
        outcome: &'a Outcome,
        description: Option<&'a str>,
        decision: &'a str,
        rule: Option<&'a str>,
        approved: Option<bool>,
    ) -> Entry<'a> {
        Entry {
            time: utc_now(),
            command: &outcome.command,
            description,
            cwd: &outcome.cwd,
            decision,
            rule,
            tool: None,
            approved,
            ran: outcome.refused.is_none(),
            exit_code: outcome.exit_code,
            signal: outcome.signal.as_deref(),
            timed_out: outcome.timed_out,
            duration_ms: outcome.duration_ms,
            output_bytes: outcome.stdout_stats.total_bytes + outcome.stderr_stats.total_bytes,
            job_id: outcome.job_id,
            error: None,
            terminal: None,
            action: None,
        }
    }

    /// The entry of an action on terminal `id`: `command` is the opening command or what
    /// was typed (keys as `{Enter}`); `decision` is the policy's, or `unchecked` for input
    /// to a program other than a shell.
    pub(crate) fn terminal(
        id: u64,
        action: &'static str,
        command: &'a str,
        cwd: &'a Path,
        decision: &'a str,
        rule: Option<&'a str>,
        ran: bool,
    ) -> Entry<'a> {
        Entry {
            time: utc_now(),
            command,
            description: None,
            cwd,
            decision,
            rule,
            tool: None,
            approved: None,
            ran,
            exit_code: None,
            signal: None,
            timed_out: false,
            duration_ms: 0,
            output_bytes: 0,
            job_id: None,
            error: None,
            terminal: Some(id),
            action: Some(action),
        }
    }
}

/// Appends `entry` to the log at `path`, creating the file (mode 0600, and its directory)
/// if needed. A symbolic link in place of the file is not followed.
///
/// # Errors
/// Why the line could not be written.
pub(crate) fn append(path: &Path, entry: &Entry<'_>) -> Result<(), String> {
    let mut line = serde_json::to_vec(entry).map_err(|err| err.to_string())?;
    line.push(b'\n');
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    }
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
    };
    let written = open().and_then(|file| {
        let mut file = file;
        if file.metadata()?.len() + line.len() as u64 > ROTATE_BYTES {
            // The log of a machine that runs agents for months stays bounded: the full
            // file becomes `<name>.1` (the one before is replaced) and a new one begins.
            let mut old = path.as_os_str().to_owned();
            old.push(".1");
            std::fs::rename(path, &old)?;
            file = open()?;
        }
        file.write_all(&line)
    });
    written.map_err(|err| format!("cannot write {}: {err}", path.display()))
}

/// Past this size the log is moved aside (`append`): at most twice this is kept.
const ROTATE_BYTES: u64 = 64 << 20;

/// The default log file, in `base`, the base directory of the session directories.
pub(crate) fn default_path(base: &Path) -> PathBuf {
    base.join("audit.jsonl")
}

/// The current time as RFC 3339 UTC with milliseconds.
fn utc_now() -> String {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let (year, month, day) = civil_from_days(secs / 86_400);
    let rest = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_become_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_780), (2026, 11, 23));
        assert_eq!(civil_from_days(47_541), (2100, 3, 1));
    }

    #[test]
    fn a_full_log_is_moved_aside_and_a_new_one_begins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let cwd = dir.path();
        let entry = Entry::terminal(1, "send", "echo hi", cwd, "allow", None, true);
        append(&path, &entry).unwrap();
        // Grown to the limit (a sparse file: no disk spent).
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.set_len(ROTATE_BYTES).unwrap();
        append(&path, &entry).unwrap();
        let old = dir.path().join("audit.jsonl.1");
        assert_eq!(std::fs::metadata(&old).unwrap().len(), ROTATE_BYTES);
        let new = std::fs::read_to_string(&path).unwrap();
        assert_eq!(new.lines().count(), 1, "{new}");
        assert!(new.contains(r#""command":"echo hi""#), "{new}");
    }
}
