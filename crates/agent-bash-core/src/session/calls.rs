//! The session's calls: one command run through the pipeline (with a cancel, progress and
//! an approver, or without), judged for a target, and the processes calls leave running.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Finished, Session, pipeline};
use crate::collect::{Hooks, Progress};
use crate::error::Error;
use crate::lock;
use crate::outcome::Outcome;
use crate::policy::{Approver, NoApprover};
use crate::process::group::GroupGuard;
use crate::request::Request;

impl Session {
    /// The policy's decision on `request`'s command, for a command that runs on a target
    /// rather than here: `None` when it may be sent (allowed, or approved through
    /// `approver`), else the outcome of its refusal, as `run_with` would answer it. Runs
    /// nothing; the cwd is not looked up (it is a path on the target).
    pub async fn judge(&self, request: &Request, approver: &impl Approver) -> Option<Outcome> {
        pipeline::judge(self, request, approver).await
    }

    /// Runs one command to completion (or its deadline). An `ask` command is refused (no
    /// one is asked: see `run_with`).
    ///
    /// # Errors
    /// Only failures of the tool: a bad request, or bash that cannot be started. A command
    /// that fails, times out or is killed is an `Ok` outcome.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use agent_bash_core::{Config, Error, Request, Session};
    ///
    /// let dir = tempfile::tempdir()?;
    /// std::fs::create_dir(dir.path().join("src"))?;
    /// let config = Config { spill_parent: Some(dir.path().into()), ..Config::default() };
    /// let session = Session::new(dir.path(), config)?;
    ///
    /// let outcome = session.run(Request::new("basename \"$PWD\"; exit 3").cwd("src")).await?;
    /// assert_eq!((outcome.stdout.as_str(), outcome.exit_code), ("src", Some(3)));
    /// assert!(!outcome.success());
    ///
    /// // Still running at its timeout: it goes on as a background job (`Config::on_timeout`).
    /// let timed_out = session.run(Request::new("sleep 30").timeout_secs(1)).await?;
    /// assert!(timed_out.timed_out && timed_out.job_id.is_some());
    ///
    /// let empty = session.run(Request::new("  ")).await;
    /// assert!(matches!(empty, Err(Error::EmptyCommand)));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run(&self, request: Request) -> Result<Outcome, Error> {
        Ok(self
            .run_with_cancel(request, &CancellationToken::new())
            .await?
            .outcome)
    }

    /// Runs one command; cancelling `cancel` stops its process tree and returns what was
    /// captured so far. Dropping the future kills the tree too (without a result).
    ///
    /// # Errors
    /// As `run`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use agent_bash_core::{CancellationToken, Config, Request, Session};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let config = Config { spill_parent: Some(dir.path().into()), ..Config::default() };
    /// let session = Session::new(dir.path(), config)?;
    /// let cancel = CancellationToken::new();
    /// cancel.cancel(); // as a client's cancellation would, while the command runs
    ///
    /// let finished = session.run_with_cancel(Request::new("sleep 30"), &cancel).await?;
    /// assert!(finished.outcome.cancelled);
    /// assert_eq!(finished.outcome.exit_code, None);
    /// assert_eq!(finished.outcome.signal.as_deref(), Some("SIGTERM"));
    /// assert_eq!(finished.outcome.shell_status(finished.raw_signal), 128 + 15);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run_with_cancel(
        &self,
        request: Request,
        cancel: &CancellationToken,
    ) -> Result<Finished, Error> {
        self.run_with(request, cancel, None, &NoApprover).await
    }

    /// Runs one command as `run_with_cancel` does, reports its progress (elapsed time,
    /// bytes, lines) on `progress` every `PROGRESS_INTERVAL` while it runs, and asks
    /// `approver` when the policy wants the command approved.
    ///
    /// # Errors
    /// As `run`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use agent_bash_core::{Approval, Approver, CancellationToken, Config, Decision};
    /// use agent_bash_core::{NoApprover, Request, Session, Verdict};
    ///
    /// /// Approves every command it is asked about.
    /// struct Yes;
    /// impl Approver for Yes {
    ///     async fn approve(&self, _command: &str, _verdict: &Verdict) -> Approval {
    ///         Approval::Approved
    ///     }
    /// }
    ///
    /// let dir = tempfile::tempdir()?;
    /// let config = Config { spill_parent: Some(dir.path().into()), ..Config::default() };
    /// let session = Session::new(dir.path(), config)?;
    /// let cancel = CancellationToken::new();
    /// // Its command word comes from a variable: the policy asks.
    /// let ask = Request::new("X=echo; $X hi");
    ///
    /// let approved = session.run_with(ask.clone(), &cancel, None, &Yes).await?;
    /// assert_eq!(approved.outcome.stdout, "hi");
    ///
    /// let refused = session.run_with(ask, &cancel, None, &NoApprover).await?;
    /// assert_eq!(refused.outcome.refused.map(|r| r.decision), Some(Decision::Ask));
    /// assert_eq!(refused.outcome.exit_code, None); // nothing ran
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run_with(
        &self,
        request: Request,
        cancel: &CancellationToken,
        progress: Option<&tokio::sync::watch::Sender<Progress>>,
        approver: &impl Approver,
    ) -> Result<Finished, Error> {
        self.prune_leftovers();
        self.jobs.evict(self.config.keep_finished_jobs);
        pipeline::run(self, request, Hooks { cancel, progress }, approver).await
    }

    /// Keeps the guard of processes a call left running, so that they die with the
    /// session; the guards of groups that have ended since are let go of first.
    pub(crate) fn keep_leftovers(&self, guard: Arc<GroupGuard>) {
        self.prune_leftovers();
        lock(&self.leftovers).push(guard);
    }

    /// Lets go of the guards whose processes have all ended: each holds the two pipes of
    /// its tree's supervisor, and a long session leaves many such trees behind. A guard
    /// let go of is disarmed first (its group id is a pid, and pids are reused).
    fn prune_leftovers(&self) {
        let ended: Vec<Arc<GroupGuard>> = {
            let mut leftovers = lock(&self.leftovers);
            if leftovers.is_empty() {
                return;
            }
            let (ended, alive): (Vec<_>, Vec<_>) =
                leftovers.drain(..).partition(|guard| !guard.alive());
            *leftovers = alive;
            ended
        };
        for guard in ended {
            guard.disarm();
        }
    }
}
