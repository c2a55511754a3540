//! The session: a root directory, a config, and everything its calls leave behind (spill
//! files, process groups still running). Dropping it kills every process it started.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use std::time::Duration;

use crate::audit;
use crate::collect::{self, DetachReason, Limits, Progress};
use crate::config::{Config, KIB, OnTimeout, SecretsMode};
use crate::error::Error;
use crate::jobs::{self, JobList, JobOutput, Jobs};
use crate::outcome::{self, Outcome};
use crate::output::Capture;
use crate::output::redact::{self, Secrets};
use crate::output::spill::SpillDir;
use crate::policy::{self, Approval, Decision, Policy, Verdict};
use crate::request::{self, Call, Request};
use crate::spawn::{self, GroupGuard, Plan};

/// Commands longer than this reach bash through a script file, not `-c`: Linux refuses a
/// single argument over 128 KiB (MAX_ARG_STRLEN), and the environment shares the space.
const LONGEST_ARGUMENT_BYTES: usize = 64 * KIB;

/// One agent's shell context. Cheap to share behind an `Arc`; calls may run concurrently.
#[derive(Debug)]
pub struct Session {
    root: PathBuf,
    config: Config,
    bash: PathBuf,
    env: Vec<(String, String)>,
    /// Inherited variables commands do not get (`env.remove`, and secrets in `remove` mode).
    env_remove: Vec<String>,
    /// What is redacted from every stream of every call and job.
    secrets: Arc<Secrets>,
    policy: Policy,
    audit: AuditLog,
    spill_dir: Arc<SpillDir>,
    calls: AtomicU64,
    /// Process groups whose shell exited while some of their processes ran on, when they
    /// could not become jobs.
    leftovers: Mutex<Vec<GroupGuard>>,
    jobs: Jobs,
}

/// Whether calls are recorded, and where.
#[derive(Debug)]
enum AuditLog {
    Off,
    At(PathBuf),
    /// `audit.jsonl` in the session's output directory (created with the first line).
    InSessionDir,
}

/// A finished call, with the raw signal number for callers that mimic a shell's status.
#[derive(Clone, Debug)]
pub struct Finished {
    pub outcome: Outcome,
    pub raw_signal: Option<i32>,
}

impl Session {
    /// A session rooted at `root` (an existing directory).
    ///
    /// # Errors
    /// `Root` if `root` is not a directory, `Config` for incoherent settings,
    /// `BashNotFound` if no bash can be found.
    pub fn new(root: impl AsRef<Path>, config: Config) -> Result<Session, Error> {
        config.validate()?;
        let root = std::path::absolute(root.as_ref()).map_err(|err| Error::Root {
            path: root.as_ref().to_path_buf(),
            reason: err.to_string(),
        })?;
        match std::fs::metadata(&root) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(Error::Root {
                    path: root,
                    reason: "is not a directory".into(),
                });
            }
            Err(err) => {
                return Err(Error::Root {
                    path: root,
                    reason: err.to_string(),
                });
            }
        }
        let bash = match &config.bash {
            Some(path) if path.is_file() => path.clone(),
            Some(path) => {
                return Err(Error::BashNotFound {
                    detail: format!("{} is not a file", path.display()),
                });
            }
            None => find_in_path("bash").ok_or_else(|| Error::BashNotFound {
                detail: format!(
                    "no `bash` in PATH ({}); install bash or set its path in the config",
                    std::env::var("PATH").unwrap_or_default()
                ),
            })?,
        };
        let failing = find_in_path("false")
            .map_or_else(|| "/bin/false".to_string(), |p| p.display().to_string());
        let spill_parent = config
            .spill_parent
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("agent-bash"));
        let (env_remove, secrets) = secret_environment(&config)?;
        let policy =
            Policy::new(&config.policy).map_err(|err| Error::config("policy", err.to_string()))?;
        let spill_dir = SpillDir::new(spill_parent);
        let audit = match (config.audit.enabled, &config.audit.path) {
            (false, _) => AuditLog::Off,
            (true, Some(path)) => AuditLog::At(root.join(path)),
            (true, None) => AuditLog::InSessionDir,
        };
        Ok(Session {
            root,
            env: crate::env::noninteractive(&failing)
                .into_iter()
                .map(|(name, value)| (name.to_string(), value))
                // The user's own settings win over the non-interactive defaults.
                .filter(|(name, _)| !config.env_set.iter().any(|(set, _)| set == name))
                .chain(config.env_set.iter().cloned())
                .collect(),
            env_remove,
            secrets: Arc::new(secrets),
            policy,
            audit,
            spill_dir,
            bash,
            config,
            calls: AtomicU64::new(0),
            leftovers: Mutex::new(Vec::new()),
            jobs: Jobs::default(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The policy's decision on `command`, with every simple command it found. Runs nothing.
    pub fn check(&self, command: &str) -> Verdict {
        self.policy.check(command)
    }

    /// Where calls are recorded, if anywhere (creates the session's output directory when
    /// the log is kept there).
    ///
    /// # Errors
    /// Why the session's output directory cannot be created.
    pub fn audit_path(&self) -> Result<Option<PathBuf>, String> {
        match &self.audit {
            AuditLog::Off => Ok(None),
            AuditLog::At(path) => Ok(Some(path.clone())),
            AuditLog::InSessionDir => Ok(Some(audit::default_path(&self.spill_dir.path()?))),
        }
    }

    /// Kills every background job and every process the session's commands left running
    /// (as dropping the session does). For servers that end while other owners still hold
    /// the session.
    pub fn kill_all(&self) {
        self.jobs.kill_all();
        let guards = std::mem::take(
            &mut *self
                .leftovers
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        drop(guards);
    }

    /// Ends the session's processes gently, for a server that is shutting down: every
    /// background job and every group left running gets SIGTERM, and what is left after the
    /// kill grace gets SIGKILL. Returns once nothing is left (bounded by the grace + 1 s).
    pub async fn stop_all(&self) {
        let grace = self.config.kill_grace;
        let give_up = tokio::time::Instant::now() + grace;
        for guard in self
            .leftovers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
        {
            guard.signal(rustix::process::Signal::TERM);
        }
        self.jobs.stop_all(grace).await;
        while tokio::time::Instant::now() < give_up && self.leftovers_alive() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.kill_all();
    }

    fn leftovers_alive(&self) -> bool {
        self.leftovers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .any(GroupGuard::alive)
    }

    /// Every background job of the session, oldest first.
    pub fn jobs(&self) -> JobList {
        self.jobs.list()
    }

    /// What job `id` printed since the previous read, after waiting up to `wait_secs` for
    /// new output, for a line matching `pattern` (a regex), or for the job's end.
    ///
    /// # Errors
    /// `UnknownJob`, `Pattern`, `Wait` (over `Config::max_wait`).
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
        self.jobs
            .output(
                id,
                Duration::from_secs(wait_secs),
                pattern,
                self.config.budget,
            )
            .await
    }

    /// Stops job `id`'s whole process tree (`signal`, default TERM, then SIGKILL after the
    /// grace) and returns its last output. A job that already ended answers with its status.
    ///
    /// # Errors
    /// `UnknownJob`, `Signal` (an unknown name).
    pub async fn kill_job(&self, id: u64, signal: Option<&str>) -> Result<JobOutput, Error> {
        let signal = signal.map_or(Ok(rustix::process::Signal::TERM), jobs::parse_signal)?;
        self.jobs
            .kill(id, signal, self.config.kill_grace, self.config.budget)
            .await
    }

    /// Runs one command to completion (or its deadline).
    ///
    /// # Errors
    /// Only failures of the tool: a bad request, or bash that cannot be started. A command
    /// that fails, times out or is killed is an `Ok` outcome.
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
    pub async fn run_with_cancel(
        &self,
        request: Request,
        cancel: &CancellationToken,
    ) -> Result<Finished, Error> {
        self.run_with(request, cancel, None).await
    }

    /// Runs one command as `run_with_cancel` does, and reports its progress (elapsed time,
    /// bytes, lines) on `progress` every `collect::PROGRESS_INTERVAL` while it runs.
    ///
    /// # Errors
    /// As `run`.
    pub async fn run_with(
        &self,
        request: Request,
        cancel: &CancellationToken,
        progress: Option<&tokio::sync::watch::Sender<Progress>>,
    ) -> Result<Finished, Error> {
        let call = request::validate(&request, &self.root, &self.config)?;
        let verdict = self.policy.check(&call.command);
        let approved = match (verdict.decision, request.approval) {
            (Decision::Allow, _) => None,
            (Decision::Ask, Approval::Approved) => Some(true),
            (Decision::Deny, _) | (Decision::Ask, _) => {
                return Ok(self.refuse(&call, &verdict, request.approval));
            }
        };
        let mut finished = self.run_allowed(call, request, cancel, progress).await?;
        self.record(&mut finished.outcome, &verdict, approved);
        Ok(finished)
    }

    /// A call the policy refused: nothing runs; the result says why and what would allow it.
    fn refuse(&self, call: &Call, verdict: &Verdict, approval: Approval) -> Finished {
        let mut outcome = Outcome {
            command: call.command.clone(),
            cwd: call.cwd.clone(),
            timeout_secs: call.timeout.as_secs(),
            refused: Some(policy::refusal(verdict, approval)),
            ..Outcome::default()
        };
        let approved = (approval == Approval::Declined).then_some(false);
        self.record(&mut outcome, verdict, approved);
        Finished {
            outcome,
            raw_signal: None,
        }
    }

    /// Appends the call to the audit log; a failure to is noted in the result.
    fn record(&self, outcome: &mut Outcome, verdict: &Verdict, approved: Option<bool>) {
        let path = match self.audit_path() {
            Ok(Some(path)) => path,
            Ok(None) => return,
            Err(error) => {
                let note = format!("the audit log could not be written: {error}");
                outcome.notes.push(note);
                return;
            }
        };
        let decision = policy::decision_name(verdict.decision);
        let entry = audit::Entry::of(outcome, decision, verdict.rule.as_deref(), approved);
        if let Err(error) = audit::append(&path, &entry) {
            outcome
                .notes
                .push(format!("the audit log could not be written: {error}"));
        }
    }

    async fn run_allowed(
        &self,
        call: Call,
        request: Request,
        cancel: &CancellationToken,
        progress: Option<&tokio::sync::watch::Sender<Progress>>,
    ) -> Result<Finished, Error> {
        let id = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let mut script = None;
        let args: Vec<OsString> = if call.command.len() > LONGEST_ARGUMENT_BYTES {
            let dir = self.spill_dir.path().map_err(|reason| Error::Script {
                path: self.root.clone(),
                source: std::io::Error::other(reason),
            })?;
            let path = dir.join(format!("{id:04}-command.sh"));
            std::fs::write(&path, &call.command).map_err(|source| Error::Script {
                path: path.clone(),
                source,
            })?;
            script = Some(ScriptFile(path.clone()));
            vec![path.into_os_string()]
        } else {
            vec!["-c".into(), call.command.clone().into()]
        };
        let plan = Plan {
            program: self.bash.clone(),
            args,
            cwd: call.cwd.clone(),
            env_remove: self.env_remove.clone(),
            env: self.env.clone(),
        };
        let max_jobs = self.config.max_jobs;
        // A background start takes its place first: it is refused rather than started.
        let reserved = if call.background {
            if max_jobs == 0 {
                return Err(Error::NoJobs);
            }
            let reservation = self
                .jobs
                .reserve(max_jobs)
                .ok_or(Error::JobLimit { running: max_jobs })?;
            Some(reservation)
        } else {
            None
        };
        let jobs_free = max_jobs.saturating_sub(self.jobs.running());
        let running = spawn::start(&plan)?;
        let budget = self.config.budget;
        let capture = |name: &'static str| {
            Capture::new(
                name,
                budget,
                self.spill_dir.clone(),
                format!("{id:04}-{name}"),
                self.config.spill_cap_bytes,
            )
            .redacting(&self.secrets)
        };
        let mut captured = if call.background {
            collect::started_in_background(running, capture("stdout"), capture("stderr"))
        } else {
            let limits = Limits {
                timeout: call.timeout,
                kill_grace: self.config.kill_grace,
                io_drain: self.config.io_drain,
                detach_on_timeout: self.config.on_timeout == OnTimeout::Background && jobs_free > 0,
                detach_leftovers: jobs_free > 0,
            };
            collect::wait(
                running,
                limits,
                cancel,
                progress,
                capture("stdout"),
                capture("stderr"),
            )
            .await
        };
        let mut notes = Vec::new();
        let mut job = None;
        if let Some(detached) = captured.detached.take() {
            // Other calls may have taken the last places since collect looked.
            match reserved.or_else(|| self.jobs.reserve(max_jobs)) {
                Some(reservation) => job = Some((reservation, detached)),
                None => {
                    let leftover = detached.reason == DetachReason::Leftover;
                    notes.push(not_a_job(max_jobs, leftover));
                    collect::undetach(&mut captured, detached).await;
                }
            }
        } else if captured.timed_out && self.config.on_timeout == OnTimeout::Background {
            notes.push(not_a_job(max_jobs, false));
        } else if !captured.left_running.is_empty() && max_jobs > 0 {
            notes.push(not_a_job(max_jobs, true));
        }
        let guard = std::mem::replace(&mut captured.guard, GroupGuard::none());
        let mut outcome;
        let raw_signal;
        match job {
            None => {
                (outcome, raw_signal) = outcome::assemble(&call, captured, &budget, false);
                if outcome.left_running.is_empty() {
                    drop(guard);
                } else {
                    self.leftovers
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .push(guard);
                }
            }
            Some((reservation, detached)) => {
                // The command goes on as a job: its captures go on writing into the job's
                // files, and the call shows a frozen copy of what they held.
                let job_id = reservation.id();
                let (stdout_view, stdout_file) =
                    captured.stdout.hand_over(&format!("job-{job_id}-stdout"));
                let (stderr_view, stderr_file) =
                    captured.stderr.hand_over(&format!("job-{job_id}-stderr"));
                let stdout = std::mem::replace(&mut captured.stdout, stdout_view);
                let stderr = std::mem::replace(&mut captured.stderr, stderr_view);
                let shell_running = detached.child.is_some();
                (outcome, raw_signal) = outcome::assemble(&call, captured, &budget, shell_running);
                match (stdout_file, stderr_file) {
                    (Ok(stdout_path), Ok(stderr_path)) => {
                        // A long command's script must outlive the job that still runs it;
                        // it stays in the session's output directory.
                        if let Some(script) = script.take() {
                            std::mem::forget(script);
                        }
                        let info = self.jobs.start(
                            reservation,
                            jobs::Start {
                                command: &call.command,
                                cwd: &call.cwd,
                                detached,
                                guard,
                                stdout,
                                stdout_path,
                                stderr,
                                stderr_path,
                                kill_grace: self.config.kill_grace,
                                // A job started with a timeout is held to it; one handed
                                // over at its timeout, or without one, runs until killed.
                                timeout: (call.background && request.timeout_secs.is_some())
                                    .then_some(call.timeout),
                            },
                        );
                        outcome.job_id = Some(job_id);
                        outcome.job = Some(info);
                    }
                    (Err(error), _) | (_, Err(error)) => {
                        // Without its files a job would run unseen: stop it instead.
                        drop(guard);
                        notes.push(format!(
                            "the command could not go on as a background job ({error}), so it was killed"
                        ));
                    }
                }
            }
        }
        drop(script);
        outcome.notes.extend(notes);
        outcome.notes.extend(self.jobs.take_notices());
        Ok(Finished {
            outcome,
            raw_signal,
        })
    }
}

/// Why a command (or the processes it `left` running) did not become a job.
fn not_a_job(max_jobs: usize, left: bool) -> String {
    let fate = if left {
        "these processes are not a job"
    } else {
        "the command was stopped instead of going on as a job"
    };
    match max_jobs {
        0 => format!("this session keeps no background jobs, so {fate}"),
        max => format!("{max} background jobs are running, the most allowed, so {fate}"),
    }
}

/// A long command's script file, removed when the call ends.
struct ScriptFile(PathBuf);

impl Drop for ScriptFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The first executable file called `name` in this process's PATH.
fn find_in_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// The inherited variables commands do not get, and the secrets to redact: those of the
/// inherited environment and of `env.set`. In `remove` mode, secret-named inherited
/// variables are not passed on, and their values are still redacted, in case a command
/// finds them elsewhere (a dotfile, another process's environment). `env.set` is an
/// explicit choice: passed on, and redacted.
fn secret_environment(config: &Config) -> Result<(Vec<String>, Secrets), Error> {
    use std::os::unix::ffi::OsStrExt as _;
    let inherited: Vec<(String, OsString)> = std::env::vars_os()
        .map(|(name, value)| (name.to_string_lossy().into_owned(), value))
        .collect();
    let mut remove = config.env_remove.clone();
    if config.secrets.mode == SecretsMode::Remove {
        remove.extend(
            inherited
                .iter()
                .map(|(name, _)| name)
                .filter(|name| redact::is_secret_name(name, &config.secrets))
                .filter(|name| !config.env_set.iter().any(|(set, _)| set == *name))
                .cloned(),
        );
    }
    // Removed variables count too: a command may still find their values elsewhere.
    let known = inherited
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()))
        .chain(
            config
                .env_set
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_bytes())),
        );
    Ok((remove, Secrets::new(known, &config.secrets)?))
}
