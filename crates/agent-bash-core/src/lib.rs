//! agent-bash's engine: run one bash command for an LLM agent, completely and within bounds.
//!
//! The pipeline, one module per stage:
//!
//! ```text
//! Request ─request::validate─▶ Call ─(plan)─▶ Plan ─spawn::start─▶ Running
//!    ─collect::wait (output: sanitize → window → spill)─▶ Captured
//!    ─outcome::assemble─▶ Outcome ─render::{text, json}─▶ what the model reads
//! ```
//!
//! A command that outlives its call (started with `background`, still running at its
//! timeout, or processes its shell left running) goes on as a background job (`jobs`): its
//! streams keep flowing through the same output stages into the job's files, and the
//! session reads, waits for, lists and kills jobs, and ends them with itself.
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

pub mod audit;
pub mod collect;
pub mod config;
pub mod env;
pub mod error;
pub mod exit;
pub mod jobs;
pub mod outcome;
pub mod output;
pub mod policy;
pub mod procs;
pub mod render;
pub mod request;
pub mod session;
pub mod settings;
pub mod spawn;

pub use collect::Progress;
pub use config::{Budget, Config, OnTimeout, SecretsConfig, SecretsMode};
pub use error::Error;
pub use jobs::{JobInfo, JobList, JobOutput, JobStatus};
pub use outcome::Outcome;
pub use policy::{Approval, Decision, Verdict};
pub use request::Request;
pub use session::{Finished, Session};
pub use tokio_util::sync::CancellationToken;
