//! The result of one call: every field a caller may need, as plain data.
//!
//! A non-zero exit, a signal, a timeout, a cut are all *data* here. `render` prints it.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::collect::Captured;
use crate::collect::JobOrigin;
use crate::config::Budget;
use crate::exit;
use crate::output::{Stream, StreamOutput, StreamStats, window};
use crate::policy::Refusal;
use crate::procs::ProcessInfo;
use crate::request::Call;

/// Everything about one finished call. `render::text` is what the model reads;
/// `serde_json` gives the structured form (the MCP `structuredContent`).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The command as the request gave it.
    pub command: String,
    /// The directory the command ran in.
    pub cwd: PathBuf,
    /// The shell's exit code; `None` when a signal killed it, it runs on as a job, its status
    /// was lost (`Note::StatusLost`), or the policy refused the command.
    pub exit_code: Option<i32>,
    /// The signal that killed the shell (`SIGKILL`), if one did.
    pub signal: Option<String>,
    /// The deadline (`timeout_secs`) passed while the shell ran: its tree was stopped or,
    /// when `job_id` is set, it went on as a background job.
    pub timed_out: bool,
    /// The caller's cancellation token stopped the command (`Session::run_with_cancel`).
    pub cancelled: bool,
    /// The timeout the call ran under, in seconds (after clamping to `Config::max_timeout`).
    pub timeout_secs: u64,
    /// Milliseconds from the shell's start until the call was over (its output read, or
    /// handed over to a job); 0 for a refused call.
    pub duration_ms: u64,
    /// stdout as the model sees it (windowed, sanitized).
    pub stdout: String,
    /// stderr as the model sees it (windowed, sanitized).
    pub stderr: String,
    /// The counts behind `stdout`: totals, what was cut, and the file with all of it.
    pub stdout_stats: StreamStats,
    /// The counts behind `stderr`: totals, what was cut, and the file with all of it.
    pub stderr_stats: StreamStats,
    /// Processes of the command still alive after its shell exited.
    pub left_running: Vec<ProcessInfo>,
    /// What the exit status usually means, when it is easy to misread.
    pub exit_hint: Option<String>,
    /// A sandboxed command failed on a write or a connection the sandbox refused: which,
    /// and the setting that would allow it.
    #[serde(default)]
    pub sandbox_hint: Option<String>,
    /// Things the caller should know (a clamped timeout, a spill file that failed, jobs
    /// that ended since the previous call…); `render` words them.
    pub notes: Vec<Note>,
    /// The background job the command became (started with `background`, still running
    /// at its timeout, or processes it left running), if it became one.
    pub job_id: Option<u64>,
    /// That job as it was when the call returned; `Some` exactly when `job_id` is.
    pub job: Option<JobInfo>,
    /// Why the policy refused the command, when it did (nothing was run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<Refusal>,
}

/// Something the caller should know about a call or a job read, beside its output.
/// `render::note` words each one for the model.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Note {
    /// The request's timeout was over the maximum; the call ran with the maximum.
    TimeoutClamped {
        /// The timeout the request asked for, in seconds.
        asked_secs: u64,
        /// The timeout the call ran with (`Config::max_timeout`), in seconds.
        ran_secs: u64,
    },
    /// The shell's exit status could not be collected.
    StatusLost,
    /// A stream's whole output could not be saved to its file.
    SpillFailed {
        /// The stream whose file failed.
        stream: Stream,
        /// Why the file could not be written.
        error: String,
    },
    /// A stream's saved output stops at the spill cap (the rest was counted, not kept).
    SpillCapped {
        /// The stream whose file stops at the cap.
        stream: Stream,
    },
    /// The command (or the processes it left running) did not become a job: the session
    /// keeps no jobs (`max_jobs` 0), or as many run as it allows.
    NotAJob {
        /// `Config::max_jobs`; 0 when the session keeps no jobs.
        max_jobs: usize,
        /// True for processes the shell left running; false for a command stopped at its
        /// timeout instead of going on as a job.
        leftovers: bool,
    },
    /// The job's files could not be created, so the command was killed.
    JobFilesFailed {
        /// Why the files could not be created.
        error: String,
    },
    /// The audit log could not be written.
    AuditFailed {
        /// Why the line could not be appended (or the output directory created).
        error: String,
    },
    /// A background job ended since the previous result said so.
    JobEnded {
        /// The job as it ended.
        job: JobInfo,
    },
    /// More jobs ended than one result lists.
    MoreJobsEnded {
        /// How many ended jobs this result does not list (`Session::jobs` lists them).
        count: usize,
    },
    /// A job read waited for a pattern that no new line matched.
    PatternNotMatched {
        /// The pattern waited for.
        pattern: String,
        /// How long the read waited, in whole seconds.
        waited_secs: u64,
        /// True if the job had ended when the read returned: no later line will match.
        job_ended: bool,
    },
    /// `bash_kill` found the job already ended.
    AlreadyEnded,
    /// A problem with a job's file (a write error, the spill cap).
    JobFileProblem {
        /// The stream whose file it is.
        stream: Stream,
        /// What went wrong: a write error, or that the file stops at the spill cap.
        problem: String,
    },
    /// A job's file could not be completed at its end.
    JobFileIncomplete {
        /// The stream whose file it is.
        stream: Stream,
        /// Why the file could not be completed.
        error: String,
    },
    /// A job's output could not be read.
    JobReadFailed {
        /// Why the read failed.
        error: String,
    },
    /// The session runs without the user's shell snapshot (`shell.snapshot = "rc"`), or
    /// keeps an older one: the capture failed or was not taken.
    NoShellSnapshot {
        /// Why.
        problem: String,
    },
    /// The default sandbox is off for the session: this kernel cannot confine writes, or
    /// the program has no supervisor to apply it.
    SandboxOff {
        /// Why.
        reason: String,
    },
    /// The command needed the user's approval, nobody could be asked, and it ran under a
    /// stricter sandbox instead of being refused (`policy.unanswered = "confine"`).
    RanConfined {
        /// Why the policy wanted it approved.
        reason: String,
        /// What a person can do to have it run unconfined.
        hint: String,
    },
    /// The policy would have asked, but only about which files the command deletes or
    /// changes, and the sandbox confines its writes: it ran without asking.
    BoundedBySandbox {
        /// Why the policy would have asked.
        reason: String,
    },
    /// A confined command made something in git that git would run or follow outside
    /// the sandbox, where no mount could keep it; agent-bash moved it aside.
    MovedAside {
        /// What was moved, why, and where to.
        what: String,
    },
    /// The call ran sandboxed, but this kernel cannot enforce all of its mode.
    SandboxGaps {
        /// The sandbox mode (`workspace-write`, `read-only`, or `off` with the network off).
        mode: String,
        /// What is not enforced, and the kernel feature each needs.
        gaps: Vec<String>,
    },
}

impl Note {
    /// True if `other` is the same kind of note about the same stream (kept once).
    pub(crate) fn same_kind(&self, other: &Note) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.stream() == other.stream()
    }

    fn stream(&self) -> Option<Stream> {
        match self {
            Note::SpillFailed { stream, .. }
            | Note::SpillCapped { stream }
            | Note::JobFileProblem { stream, .. }
            | Note::JobFileIncomplete { stream, .. } => Some(*stream),
            _ => None,
        }
    }
}

impl Outcome {
    /// True if and only if the command succeeded: exit 0, no signal, no timeout, not
    /// cancelled. A command started as a background job has not failed (yet): it counts as
    /// a success until its shell has a status; one handed over at its timeout does not.
    pub fn success(&self) -> bool {
        let started_as_job =
            self.job_id.is_some() && self.exit_code.is_none() && self.signal.is_none();
        (self.exit_code == Some(0) || started_as_job) && !self.timed_out && !self.cancelled
    }

    /// The exit status as a process would report it: the code, or 128 + the signal number.
    pub fn shell_status(&self, raw_signal: Option<i32>) -> i32 {
        self.exit_code
            .or(raw_signal.map(|signal| 128 + signal))
            .unwrap_or(1)
    }
}

/// Assembles the outcome of a captured call: splits the budget between the streams, and
/// writes the spill files of what was cut.
///
/// `shell_running`: the shell goes on as a background job, so it has no status yet.
pub(crate) fn assemble(
    call: &Call,
    captured: Captured,
    budget: &Budget,
    shell_running: bool,
) -> (Outcome, Option<i32>) {
    let Captured {
        status,
        timed_out,
        cancelled,
        duration,
        stdout,
        stderr,
        left_running,
        ..
    } = captured;
    let (out_share, err_share) = window::allocate(budget, stdout.demand(), stderr.demand());
    let StreamOutput {
        text: stdout,
        stats: stdout_stats,
    } = stdout.finish(out_share);
    let StreamOutput {
        text: stderr,
        stats: stderr_stats,
    } = stderr.finish(err_share);
    let exit_code = status.and_then(|status| status.code());
    let raw_signal = status.and_then(|status| status.signal());
    let mut notes = Vec::new();
    if let Some(asked) = call.timeout_clamped_from {
        notes.push(Note::TimeoutClamped {
            asked_secs: asked,
            ran_secs: call.timeout.as_secs(),
        });
    }
    if status.is_none() && !shell_running {
        notes.push(Note::StatusLost);
    }
    for (stream, stats) in [
        (Stream::Stdout, &stdout_stats),
        (Stream::Stderr, &stderr_stats),
    ] {
        if let Some(error) = &stats.spill_error {
            notes.push(Note::SpillFailed {
                stream,
                error: error.clone(),
            });
        }
        if stats.spill_capped {
            notes.push(Note::SpillCapped { stream });
        }
    }
    let exit_hint = exit_code.and_then(|code| exit::explain(code, &call.command));
    let outcome = Outcome {
        command: call.command.clone(),
        cwd: call.cwd.clone(),
        exit_code,
        signal: raw_signal.map(exit::signal_name),
        timed_out,
        cancelled,
        timeout_secs: call.timeout.as_secs(),
        duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
        stdout,
        stderr,
        stdout_stats,
        stderr_stats,
        left_running,
        exit_hint,
        sandbox_hint: None,
        notes,
        job_id: None,
        job: None,
        refused: None,
    };
    (outcome, raw_signal)
}

/// Where a job is.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    /// Not ended yet: the shell or a process of its group is alive, or something still
    /// holds its output pipes open.
    Running,
    /// The shell exited on its own (`exit_code`).
    Exited,
    /// The shell was killed by `signal` (or, for leftover processes, `bash_kill` stopped them).
    Killed,
    /// The processes a shell left running have all ended (their exit codes are unknown).
    Ended,
}

/// What one job is, for listings and results.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobInfo {
    /// The job's id, unique in its session; ids count up from 1.
    pub job_id: u64,
    /// The command as the request gave it.
    pub command: String,
    /// What the caller said the command is for, if it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The directory the command ran in (absolute).
    pub cwd: PathBuf,
    /// The process group (the shell's pid, which may have exited for a `Leftover` job);
    /// `None` if it was not known when the job started.
    pub pid: Option<i32>,
    /// How it became a job.
    pub origin: JobOrigin,
    /// Whether it still runs, and how it ended.
    pub status: JobStatus,
    /// The shell's exit code, when `status` is `Exited`.
    pub exit_code: Option<i32>,
    /// The signal that ended it (`SIGTERM`), when `status` is `Killed` and the signal is known:
    /// the one that killed the shell, or the one the session sent.
    pub signal: Option<String>,
    /// Milliseconds since the command started, until now or its end.
    pub runtime_ms: u64,
    /// The job was stopped at the `timeout_secs` it was started with.
    #[serde(default)]
    pub timed_out: bool,
    /// Bytes in the job's stdout file so far.
    pub stdout_bytes: u64,
    /// Bytes in the job's stderr file so far.
    pub stderr_bytes: u64,
    /// The file that holds the job's whole stdout, from the command's start: sanitized text,
    /// or the raw bytes of binary output.
    pub stdout_path: PathBuf,
    /// The file that holds the job's whole stderr, as `stdout_path` does for stdout.
    pub stderr_path: PathBuf,
}
