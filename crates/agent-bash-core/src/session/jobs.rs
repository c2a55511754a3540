//! The session's background jobs, as a caller sees them: listed, read and killed.

use std::time::Duration;

use super::Session;
use crate::error::Error;
use crate::exit;
use crate::jobs::{JobList, JobOutput};
use crate::outcome::Note;
use crate::output::Stream;

impl Session {
    /// Every background job of the session, oldest first.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use agent_bash_core::{Config, JobOrigin, JobStatus, Request, Session};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let config = Config { spill_parent: Some(dir.path().into()), ..Config::default() };
    /// let session = Session::new(dir.path(), config)?;
    /// assert!(session.jobs().jobs.is_empty());
    ///
    /// session.run(Request::new("sleep 30").background()).await?;
    /// let list = session.jobs();
    /// assert_eq!(list.jobs.len(), 1);
    /// assert_eq!(list.jobs[0].status, JobStatus::Running);
    /// assert_eq!(list.jobs[0].origin, JobOrigin::Background);
    /// # Ok(())
    /// # }
    /// ```
    pub fn jobs(&self) -> JobList {
        self.jobs.evict(self.config.keep_finished_jobs);
        self.jobs.list()
    }

    /// What job `id` printed since the previous read, after waiting up to `wait_secs` for
    /// new output, for a line matching `pattern` (a regex), or for the job's end.
    ///
    /// # Errors
    /// `UnknownJob`, `Pattern`, `Wait` (over `Config::max_wait`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use agent_bash_core::{Config, JobStatus, Request, Session};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let config = Config { spill_parent: Some(dir.path().into()), ..Config::default() };
    /// let session = Session::new(dir.path(), config)?;
    /// let request = Request::new("echo starting; echo ready; sleep 30");
    /// let started = session.run(request.background()).await?;
    /// let id = started.job_id.ok_or("not a job")?;
    ///
    /// // Waits up to 10 s for a line matching the pattern, then reads what is new.
    /// let read = session.job_output(id, 10, Some("^ready$")).await?;
    /// assert_eq!(read.pattern_matched, Some(true));
    /// assert_eq!(read.stdout, "starting\nready");
    /// assert_eq!(read.job.status, JobStatus::Running);
    ///
    /// let killed = session.kill_job(id, None).await?;
    /// assert_eq!(killed.job.status, JobStatus::Killed);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn job_output(
        &self,
        id: u64,
        wait_secs: u64,
        pattern: Option<&str>,
    ) -> Result<JobOutput, Error> {
        let max = self.config.max_wait.as_secs();
        if wait_secs > max {
            return Err(Error::Wait {
                got: wait_secs,
                max,
            });
        }
        let mut read = self
            .jobs
            .output(
                id,
                Duration::from_secs(wait_secs),
                pattern,
                self.config.budget,
            )
            .await?;
        self.note_dropped(&mut read);
        Ok(read)
    }

    /// Says so in a job read when a job's file was dropped for the session cap.
    fn note_dropped(&self, read: &mut JobOutput) {
        let paths = [&read.job.stdout_path, &read.job.stderr_path];
        for (stream, path) in [Stream::Stdout, Stream::Stderr].into_iter().zip(paths) {
            if self.spill_dir.was_dropped(path) {
                let note = Note::JobFileProblem {
                    stream,
                    problem: self.spill_dir.dropped_problem(),
                };
                if !read.notes.contains(&note) {
                    read.notes.push(note);
                }
            }
        }
    }

    /// Stops job `id`'s whole process tree (`signal`, default TERM, then SIGKILL after the
    /// grace) and returns its last output. A job that already ended answers with its status.
    ///
    /// # Errors
    /// `UnknownJob`, `Signal` (an unknown name).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use agent_bash_core::{Config, JobStatus, Note, Request, Session};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let config = Config { spill_parent: Some(dir.path().into()), ..Config::default() };
    /// let session = Session::new(dir.path(), config)?;
    /// let started = session.run(Request::new("sleep 30").background()).await?;
    /// let id = started.job_id.ok_or("not a job")?;
    ///
    /// let killed = session.kill_job(id, Some("KILL")).await?;
    /// assert_eq!(killed.job.status, JobStatus::Killed);
    /// assert_eq!(killed.job.signal.as_deref(), Some("SIGKILL"));
    /// // A second kill answers with the job's final status.
    /// let again = session.kill_job(id, None).await?;
    /// assert!(again.notes.contains(&Note::AlreadyEnded));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn kill_job(&self, id: u64, signal: Option<&str>) -> Result<JobOutput, Error> {
        let signal = signal.map_or(Ok(rustix::process::Signal::TERM), exit::parse_signal)?;
        let mut read = self
            .jobs
            .kill(id, signal, self.stop_bound(), self.config.budget)
            .await?;
        self.note_dropped(&mut read);
        Ok(read)
    }
}
