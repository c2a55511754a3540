//! The engine's one error type: failures of the tool itself, never of the command.
//!
//! A command that exits non-zero, is killed, times out or prints too much is *data* in the
//! `Outcome`. These variants are for what stops the engine from running the command at all.

use std::path::PathBuf;

/// A failure of agent-bash itself (bad request, cannot spawn), with the context to fix it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No bash binary could be found.
    #[error("bash not found: {detail}")]
    BashNotFound {
        /// What was looked for: the configured path, or the `PATH` searched.
        detail: String,
    },
    /// The command is empty or whitespace.
    #[error("the command is empty: give the shell code to run")]
    EmptyCommand,
    /// The command is longer than the configured maximum.
    #[error("the command is {len} bytes, over the maximum of {max} bytes")]
    CommandTooLong {
        /// The command's length, in bytes.
        len: usize,
        /// `Config::max_command_bytes`.
        max: usize,
    },
    /// The command holds a NUL byte, which no shell argument can carry.
    #[error("the command contains a NUL byte at offset {offset}")]
    NulInCommand {
        /// The byte offset of the first NUL.
        offset: usize,
    },
    /// The working directory does not exist or is not a directory.
    #[error("cwd {path}: {reason}")]
    Cwd {
        /// The directory, resolved against the session root.
        path: PathBuf,
        /// Why it cannot be used: the I/O error, or `is not a directory`.
        reason: String,
    },
    /// The session root is not a usable directory.
    #[error("session root {path}: {reason}")]
    Root {
        /// The root, made absolute (as given, if that failed).
        path: PathBuf,
        /// Why it cannot be used: the I/O error, or `is not a directory`.
        reason: String,
    },
    /// A timeout of zero.
    #[error("timeout_secs must be at least 1 (got {got})")]
    Timeout {
        /// The timeout the request asked for, in seconds (0).
        got: u64,
    },
    /// A configuration value that cannot work.
    #[error("config: {key}: {reason}")]
    Config {
        /// What the error is about: a `Config` field or a setting's key (`budget bytes`,
        /// `timeout_secs`), or the environment variable or flag that set it.
        key: String,
        /// What is wrong, and (from `settings::load`) which layers set the values.
        reason: String,
    },
    /// A settings file that cannot be read or does not parse.
    #[error("config file {path}: {reason}")]
    ConfigFile {
        /// The file.
        path: PathBuf,
        /// The I/O error, or what is wrong and on which line (`line 3: unknown key …`).
        reason: String,
    },
    /// Spawning bash failed.
    #[error("cannot start {argv0}: {source}{}", descriptor_hint(source))]
    Spawn {
        /// The program that could not be started: the session's bash.
        argv0: PathBuf,
        /// The I/O error of the spawn.
        source: std::io::Error,
    },
    /// No job has this id.
    #[error("no job {id} in this session; {}", known_jobs(known))]
    UnknownJob {
        /// The id asked for.
        id: u64,
        /// The ids of the session's jobs, in ascending order.
        known: Vec<u64>,
    },
    /// The job ended and was evicted from the session's table.
    #[error(
        "job {id} ended and is no longer kept: the session keeps the last {keep} finished jobs (and every job whose end was not yet reported); its output files job-{id}-stdout and job-{id}-stderr stay in the session's spill directory until the spill cap removes them"
    )]
    EvictedJob {
        /// The id asked for.
        id: u64,
        /// `Config::keep_finished_jobs`.
        keep: usize,
    },
    /// As many jobs run (or are starting) as the configuration allows.
    #[error(
        "{max} background jobs are running or starting, the most allowed; stop one with bash_kill first"
    )]
    JobLimit {
        /// `Config::max_jobs`.
        max: usize,
    },
    /// The session keeps no background jobs.
    #[error(
        "this session keeps no background jobs (the one-shot CLI); run the command in the foreground"
    )]
    NoJobs,
    /// A job read's pattern is not a regular expression.
    #[error("pattern {pattern:?} is not a valid regex: {reason}")]
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// The regex parser's message.
        reason: String,
    },
    /// A job read's wait is out of range.
    #[error("wait_secs must be between 0 and {max} (got {got})")]
    Wait {
        /// The wait asked for, in seconds.
        got: u64,
        /// `Config::max_wait`, in seconds.
        max: u64,
    },
    /// An unknown signal name.
    #[error("unknown signal {name:?}; use TERM, INT, HUP, KILL, QUIT, USR1 or USR2")]
    Signal {
        /// The name as given.
        name: String,
    },
    /// The directory the session's files go in is not safe to use (a symbolic link,
    /// another user's, writable by others); the message names it, what is wrong and what
    /// to do.
    #[error("{reason}")]
    OutputDir {
        /// What is wrong, with the directory's path and what to do.
        reason: String,
    },
    /// A long command could not be written to its script file.
    #[error("cannot write the command's script file {path}: {source}")]
    Script {
        /// The script file, or `(the session's output directory)` when that directory could
        /// not be created.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The sandbox cannot confine the call as asked: a call that asks for less than the
    /// settings, a kernel that cannot enforce a required sandbox, a supervisor that failed.
    #[error("sandbox: {reason}")]
    Sandbox {
        /// What is wrong, and what would do.
        reason: String,
    },
    /// No terminal has this id.
    #[error("no terminal {id} in this session; {}", known_terminals(known))]
    UnknownTerminal {
        /// The id asked for.
        id: u64,
        /// The ids of the session's terminals, in ascending order.
        known: Vec<u64>,
    },
    /// As many terminals are open as the configuration allows.
    #[error("{max} terminals are open, the most allowed; close one with terminal_close first")]
    TerminalLimit {
        /// `TerminalConfig::max_sessions`.
        max: usize,
    },
    /// A key name `terminal_send` does not know.
    #[error("unknown key {name:?}; {known}")]
    Key {
        /// The name as given.
        name: String,
        /// The names it knows, in words.
        known: String,
    },
    /// A terminal size out of range.
    #[error("{what} must be between {min} and {max} (got {got})")]
    TerminalSize {
        /// `rows` or `cols`.
        what: &'static str,
        /// The value asked for.
        got: u64,
        /// The smallest allowed.
        min: u16,
        /// The largest allowed.
        max: u16,
    },
    /// The terminal could not be opened or written to.
    #[error("terminal: {reason}")]
    Terminal {
        /// What failed, with the I/O error.
        reason: String,
    },
}

/// `it has none`, or `its terminals are 1, 2`.
fn known_terminals(known: &[u64]) -> String {
    if known.is_empty() {
        return "it has none (terminal_open starts one)".into();
    }
    let ids: Vec<String> = known.iter().map(u64::to_string).collect();
    format!("its terminals are {}", ids.join(", "))
}

/// `it has none`, or `its jobs are 1, 2`.
fn known_jobs(known: &[u64]) -> String {
    if known.is_empty() {
        return "it has none".into();
    }
    let ids: Vec<String> = known.iter().map(u64::to_string).collect();
    format!("its jobs are {}", ids.join(", "))
}

impl Error {
    /// A stable name for the kind of failure (`cwd`, `bash_not_found`, `config_file`…), for
    /// programs that read it (`agent-bash run --json` prints it next to the message).
    pub fn kind(&self) -> &'static str {
        match self {
            Error::BashNotFound { .. } => "bash_not_found",
            Error::EmptyCommand => "empty_command",
            Error::CommandTooLong { .. } => "command_too_long",
            Error::NulInCommand { .. } => "nul_in_command",
            Error::Cwd { .. } => "cwd",
            Error::Root { .. } => "root",
            Error::Timeout { .. } => "timeout",
            Error::Config { .. } => "config",
            Error::ConfigFile { .. } => "config_file",
            Error::Spawn { .. } => "spawn",
            Error::UnknownJob { .. } => "unknown_job",
            Error::EvictedJob { .. } => "evicted_job",
            Error::JobLimit { .. } => "job_limit",
            Error::NoJobs => "no_jobs",
            Error::Pattern { .. } => "pattern",
            Error::Wait { .. } => "wait",
            Error::Signal { .. } => "signal",
            Error::Script { .. } => "script",
            Error::OutputDir { .. } => "output_dir",
            Error::Sandbox { .. } => "sandbox",
            Error::UnknownTerminal { .. } => "unknown_terminal",
            Error::TerminalLimit { .. } => "terminal_limit",
            Error::Key { .. } => "key",
            Error::TerminalSize { .. } => "terminal_size",
            Error::Terminal { .. } => "terminal",
        }
    }

    pub(crate) fn config(key: &str, reason: impl Into<String>) -> Error {
        Error::Config {
            key: key.to_string(),
            reason: reason.into(),
        }
    }
}

/// What to do about an error that says this process has no file descriptor left
/// (`EMFILE`); nothing for any other error.
pub(crate) fn descriptor_hint(err: &std::io::Error) -> String {
    if err.raw_os_error() != Some(libc::EMFILE) {
        return String::new();
    }
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    let limit = limit.map_or_else(|| "unlimited".to_string(), |limit| limit.to_string());
    format!(
        "; agent-bash has used all the file descriptors its limit allows ({limit}, `ulimit -n`): \
         retry with fewer calls or jobs at once, or raise the limit"
    )
}
