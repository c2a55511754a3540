//! agent-bash's engine: run one bash command for an LLM agent, completely and within bounds.
//!
//! The pipeline (`session::pipeline::run`), one module per stage:
//!
//! ```text
//! Request ─validate─▶ Call ─check (one parse; ask → Approver)─▶ Verdict ─plan─▶ Plan
//!    ─spawn─▶ Running ─collect (Pump; output: redact → sanitize → window → spill)─▶ Captured
//!    ─assemble (or hand over to a job)─▶ Outcome ─record (audit)─▶ caller ─render─▶ model
//! ```
//!
//! A command that outlives its call (started with `background`, still running at its
//! timeout, or processes its shell left running) goes on as a background job: its streams
//! keep flowing through the same output stages into the job's files, driven by the same
//! `Pump` as a call, and the session reads, waits for, lists and kills jobs, and ends them
//! with itself.
//!
//! The public surface is what a library user needs: `Session` and its `Request`s, the
//! `Outcome` and job results with their `Note`s, `Config` and `settings` to load it, the
//! policy's types and an `Approver` to answer `ask`, and `render` for the model's text.
//!
//! A failing, killed or timed-out command is an `Ok(Outcome)`; `Err` is for failures of the
//! tool itself (a bad request, no bash).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), agent_bash_core::Error> {
//! use agent_bash_core::{Config, Request, Session, render};
//!
//! let session = Session::new(std::env::temp_dir(), Config::default())?;
//! let outcome = session.run(Request::new("echo hello; ls /nonexistent")).await?;
//! assert_eq!(outcome.stdout, "hello");
//! assert_eq!(outcome.exit_code, Some(2));
//! println!("{}", render::text(&outcome)); // hello, [stderr] ls: cannot access…, [exit 2 · 3 ms]
//! # Ok(())
//! # }
//! ```

#![deny(unreachable_pub)]
#![warn(missing_docs)]

mod audit;
mod collect;
mod config;
mod env;
mod error;
mod exit;
mod jobs;
mod outcome;
mod output;
mod plan;
mod policy;
mod process;
mod procs;
pub mod render;
mod request;
pub mod sandbox;
mod session;
pub mod settings;
mod snapshot;
mod spawn_raw;
mod target;
mod terminal_answer;

pub use collect::{PROGRESS_INTERVAL, Progress};
pub use config::{
    AuditConfig, Budget, Config, KIB, MIB, McpConfig, OnTimeout, SecretsConfig, SecretsMode,
    ShellSnapshot, TerminalConfig, TrustConfig, Unanswered,
};
pub use error::Error;
pub use jobs::{JobInfo, JobList, JobOrigin, JobOutput, JobStatus};
pub use outcome::{Note, Outcome};
pub use output::{BinaryKind, Stream, StreamStats};
pub use policy::{
    Allowance, Approval, Approver, Decision, Host, NoApprover, Policy, PolicySettings, Refusal,
    RuleSpec, Segment, Verdict, builtin_rules, builtin_suggestions, hosts,
};
pub use procs::ProcessInfo;
pub use request::Request;
pub use session::terminal::{
    DEFAULT_COLS, DEFAULT_ROWS, KEY_NAMES, OPEN_WAIT, PATTERN_WAIT, SEND_WAIT, SETTLE,
    TerminalInput, TerminalOpen, TerminalWait,
};
pub use session::{Finished, Session};
pub use target::Target;
pub use terminal_answer::{TerminalAnswer, TerminalNote, TerminalState, WaitEnd};
pub use tokio_util::sync::CancellationToken;

/// The output pipeline's parts, for the project's own benchmarks only: not a stable API.
#[doc(hidden)]
pub mod bench {
    pub use crate::output::Capture;
    pub use crate::output::redact::Secrets;
    pub use crate::output::spill::SpillDir;
    pub use crate::output::window::Share;
    pub use crate::process::pump::READ_CHUNK_BYTES;
}

/// Locks `mutex`, going on with its data if a panicking thread poisoned it (every value
/// the engine keeps under a lock stays valid between statements).
pub(crate) fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The first `max_chars` characters of `text` (all of it when shorter).
pub(crate) fn clip(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}
