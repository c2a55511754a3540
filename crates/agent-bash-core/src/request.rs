//! Request stage: a wire `Request` becomes a validated `Call` (cwd resolved, timeout clamped).
//!
//! Pure apart from `stat`ing the cwd. Everything that can be refused before a process is
//! spawned is refused here, with an error that says what to fix.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::{Config, SandboxMode};
use crate::error::Error;

/// A description is a label of a few words: what is kept of a longer one.
const MAX_DESCRIPTION_CHARS: usize = 200;

/// One command as a caller asks for it (the MCP `bash` tool's arguments, the CLI's flags).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Request {
    /// The shell code, run as `bash -c COMMAND`.
    pub command: String,
    /// Working directory: relative to the session root, or absolute. Default: the root.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Seconds before the process tree is stopped. Default and maximum come from `Config`.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Start the command as a background job and return at once.
    #[serde(default)]
    pub background: bool,
    /// What the command is for, in a few words (the model's own label). Never run: it is
    /// written to the audit log, and shown in the job list and in progress reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A stricter sandbox than the settings' for this call (a looser one is refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxMode>,
    /// `Some(false)`: no network for this call, whatever the settings say (`Some(true)` is
    /// refused when the settings turn the network off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
}

impl Request {
    /// A request for `command` with every option at its default.
    pub fn new(command: impl Into<String>) -> Request {
        Request {
            command: command.into(),
            ..Request::default()
        }
    }

    /// Sets the working directory.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Request {
        self.cwd = Some(cwd.into());
        self
    }

    /// Sets the timeout in seconds.
    pub fn timeout_secs(mut self, secs: u64) -> Request {
        self.timeout_secs = Some(secs);
        self
    }

    /// Starts the command as a background job: the call returns at once, its outcome's
    /// `job_id` names the job, and `Session::job_output` reads it (see its example).
    pub fn background(mut self) -> Request {
        self.background = true;
        self
    }

    /// Runs the call under `mode` (at least as strict as the settings' mode).
    pub fn sandbox(mut self, mode: SandboxMode) -> Request {
        self.sandbox = Some(mode);
        self
    }

    /// Runs the call without network access.
    pub fn no_network(mut self) -> Request {
        self.network = Some(false);
        self
    }

    /// Says what the command is for (see [`Request::description`]).
    pub fn description(mut self, description: impl Into<String>) -> Request {
        self.description = Some(description.into());
        self
    }
}

/// A request that passed validation: what the rest of the pipeline runs.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub(crate) command: String,
    /// Absolute, existing directory.
    pub(crate) cwd: PathBuf,
    pub(crate) timeout: Duration,
    /// The timeout the request asked for, when it was over the maximum and got clamped.
    pub(crate) timeout_clamped_from: Option<u64>,
    /// The request named its timeout (a background job is held only to one it named).
    pub(crate) timeout_named: bool,
    /// Start as a background job.
    pub(crate) background: bool,
    /// What the command is for, as the caller said (trimmed, at most
    /// `MAX_DESCRIPTION_CHARS`; a blank one is none).
    pub(crate) description: Option<String>,
    /// The sandbox mode and network the call asked for (`None`: the settings').
    pub(crate) sandbox: (Option<SandboxMode>, Option<bool>),
}

/// Checks a request against the config and resolves it relative to the session `root`.
///
/// # Errors
/// `EmptyCommand`, `CommandTooLong`, `NulInCommand`, `Timeout` (zero) and `Cwd` (missing or
/// not a directory).
pub(crate) fn validate(request: &Request, root: &Path, config: &Config) -> Result<Call, Error> {
    if request.command.trim().is_empty() {
        return Err(Error::EmptyCommand);
    }
    if request.command.len() > config.max_command_bytes {
        return Err(Error::CommandTooLong {
            len: request.command.len(),
            max: config.max_command_bytes,
        });
    }
    if let Some(offset) = memchr::memchr(0, request.command.as_bytes()) {
        return Err(Error::NulInCommand { offset });
    }
    let (timeout, timeout_clamped_from) = match request.timeout_secs {
        None => (config.default_timeout, None),
        Some(0) => return Err(Error::Timeout { got: 0 }),
        Some(secs) if Duration::from_secs(secs) > config.max_timeout => {
            (config.max_timeout, Some(secs))
        }
        Some(secs) => (Duration::from_secs(secs), None),
    };
    let cwd = match &request.cwd {
        None => root.to_path_buf(),
        Some(dir) => root.join(dir),
    };
    match std::fs::metadata(&cwd) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(Error::Cwd {
                path: cwd,
                reason: "is not a directory".into(),
            });
        }
        Err(err) => {
            return Err(Error::Cwd {
                path: cwd,
                reason: err.to_string(),
            });
        }
    }
    Ok(Call {
        command: request.command.clone(),
        cwd,
        timeout,
        timeout_clamped_from,
        timeout_named: request.timeout_secs.is_some(),
        background: request.background,
        description: request
            .description
            .as_deref()
            .map(|text| crate::clip(text.trim(), MAX_DESCRIPTION_CHARS))
            .filter(|text| !text.is_empty())
            .map(str::to_string),
        sandbox: (request.sandbox, request.network),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_err(request: Request, expected: &str) {
        let root = std::env::temp_dir();
        let err = match validate(&request, &root, &Config::default()) {
            Ok(call) => panic!("expected an error, got {call:?}"),
            Err(err) => err.to_string(),
        };
        assert!(
            err.contains(expected),
            "{err:?} does not contain {expected:?}"
        );
    }

    #[test]
    fn refuses_what_cannot_run() {
        check_err(Request::new("   \n"), "empty");
        check_err(
            Request::new("x".repeat(1024 * 1024 + 1)),
            "over the maximum of 1048576",
        );
        check_err(Request::new("echo a\0b"), "NUL byte at offset 6");
        check_err(Request::new("true").timeout_secs(0), "at least 1");
        check_err(
            Request::new("true").cwd("/nonexistent/dir"),
            "No such file or directory",
        );
        check_err(
            Request::new("true").cwd("/etc/hostname"),
            "is not a directory",
        );
    }

    #[test]
    fn resolves_cwd_and_clamps_timeout() -> Result<(), Error> {
        let root = tempfile::tempdir().map_err(|e| Error::config("test", e.to_string()))?;
        std::fs::create_dir(root.path().join("sub"))
            .map_err(|e| Error::config("t", e.to_string()))?;
        let call = validate(
            &Request::new("true").cwd("sub").timeout_secs(99_999),
            root.path(),
            &Config::default(),
        )?;
        assert_eq!(call.cwd, root.path().join("sub"));
        assert_eq!(call.timeout, Duration::from_secs(3600));
        assert_eq!(call.timeout_clamped_from, Some(99_999));
        let call = validate(
            &Request::new("true").cwd("/tmp"),
            root.path(),
            &Config::default(),
        )?;
        assert_eq!(call.cwd, PathBuf::from("/tmp"));
        assert_eq!(call.timeout, Duration::from_secs(120));
        Ok(())
    }
}
