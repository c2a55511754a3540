//! The session: a root directory, a config, and everything its calls leave behind (spill
//! files, process groups still running). Dropping it kills every process it started.

mod pipeline;
pub(crate) mod terminal;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::collect::{Hooks, Progress};
use crate::config::{Config, SecretsMode, ShellSnapshot};
use crate::error::Error;
use crate::jobs::{JobList, JobOutput, Jobs};
use crate::lock;
use crate::outcome::{Note, Outcome};
use crate::output::Stream;
use crate::output::redact::{self, Secrets};
use crate::output::spill::SpillDir;
use crate::plan::Environment;
use crate::policy::{Approver, NoApprover, Policy, Verdict};
use crate::process::group::GroupGuard;
use crate::process::stop::{self, StopTimes};
use crate::request::Request;
use crate::sandbox::{self, SandboxMode, Sandboxing};
use crate::snapshot::{Capture, Shell};
use crate::terminal_answer::TerminalAnswer;
use crate::{audit, exit};
use terminal::{TerminalInput, TerminalOpen, TerminalWait, Terminals};

/// One agent's shell context. Cheap to share behind an `Arc`; calls may run concurrently.
#[derive(Debug)]
pub struct Session {
    pub(crate) root: PathBuf,
    pub(crate) config: Config,
    bash: PathBuf,
    env: Vec<(String, String)>,
    /// Inherited variables commands do not get (`env.remove`, and secrets in `remove` mode).
    env_remove: Vec<String>,
    /// What is redacted from every stream of every call and job.
    pub(crate) secrets: Arc<Secrets>,
    pub(crate) policy: Policy,
    audit: AuditLog,
    pub(crate) spill_dir: Arc<SpillDir>,
    /// Calls started so far (a call's number names its files).
    pub(crate) calls: AtomicU64,
    /// Process groups whose shell exited while some of their processes ran on, when they
    /// could not become jobs.
    pub(crate) leftovers: Mutex<Vec<Arc<GroupGuard>>>,
    pub(crate) jobs: Jobs,
    /// The kernel sandbox, set up by the first call that needs it (at once when the
    /// settings confine every call).
    sandboxing: OnceLock<Sandboxing>,
    /// The sandbox of calls that are only supervised.
    supervising: OnceLock<Sandboxing>,
    /// Terminal sessions (`terminal_open`…), closed with the session.
    terminals: Terminals,
    /// The commands a suggestion stopped once (`first_suggestion`).
    suggested: Suggested,
    /// What the next result says once: why the default sandbox is off, or what this kernel
    /// leaves of it unenforced; why there is no shell snapshot.
    notices: Mutex<Vec<Note>>,
    /// The user's shell, when `shell.snapshot` is `rc`.
    pub(crate) shell: Shell,
    /// The windows of time during which confined commands of the session ran: a settings
    /// file changed inside one is not trusted by a later session. Last, so that its window
    /// closes once the jobs and terminals are gone.
    windows: sandbox::Windows,
}

/// The commands a suggestion stopped, by their keyed hash.
#[derive(Debug, Default)]
struct Suggested {
    keys: std::hash::RandomState,
    seen: Mutex<std::collections::HashSet<u64>>,
}

/// Whether calls are recorded, and where.
#[derive(Debug)]
pub(crate) enum AuditLog {
    Off,
    At(PathBuf),
    /// `audit.jsonl` in the base directory of the session directories (created with the
    /// first line, mode 0600), shared by the user's sessions.
    InBase,
}

/// A finished call, with the raw signal number for callers that mimic a shell's status.
#[derive(Clone, Debug)]
pub struct Finished {
    /// The call's outcome, as `Session::run` returns it.
    pub outcome: Outcome,
    /// The number of the signal that killed the shell (9 for `SIGKILL`); `None` when it
    /// exited, has no status yet (a job), or was not run. See `Outcome::shell_status`.
    pub raw_signal: Option<i32>,
}

impl Session {
    /// A session rooted at `root` (an existing directory).
    ///
    /// # Errors
    /// `Root` if `root` is not a directory, `Config` for incoherent settings,
    /// `BashNotFound` if no bash can be found.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use agent_bash_core::{Config, Error, Session};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let session = Session::new(dir.path(), Config::default())?;
    /// assert_eq!(session.root(), dir.path());
    ///
    /// let missing = Session::new(dir.path().join("missing"), Config::default());
    /// assert!(matches!(missing, Err(Error::Root { .. })));
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(root: impl AsRef<Path>, config: Config) -> Result<Session, Error> {
        config.validate()?;
        let root = session_root(root.as_ref())?;
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
            .unwrap_or_else(crate::output::spill::default_base);
        let env_remove = removed_variables(&config);
        let mut env: Vec<(String, String)> = crate::env::noninteractive(&failing)
            .into_iter()
            .map(|(name, value)| (name.to_string(), value))
            // The user's own settings win over the non-interactive defaults.
            .filter(|(name, _)| !config.env_set.iter().any(|(set, _)| set == name))
            .chain(config.env_set.iter().cloned())
            .collect();
        let spill_dir = SpillDir::capped(spill_parent, config.session_cap_bytes);
        let (shell, shell_problem, secrets) =
            start_shell(&config, &bash, &spill_dir, &env, &env_remove)?;
        if let Some(path) = shell.path() {
            env.push(("BASH_ENV".into(), path.display().to_string()));
        }
        let policy = Policy::new(&config.policy)
            .map_err(|err| Error::config("policy", err.to_string()))?
            .with_environment(shell_environment(&env, &env_remove, &config));
        spill_dir.clean_old(crate::output::spill::SESSION_DIR_MAX_AGE);
        let audit = match (config.audit.enabled, &config.audit.path) {
            (false, _) => AuditLog::Off,
            (true, Some(path)) => AuditLog::At(root.join(path)),
            (true, None) => AuditLog::InBase,
        };
        let first_id = config.first_id;
        let mut session = Session {
            root,
            env,
            env_remove,
            secrets: Arc::new(secrets),
            policy,
            audit,
            spill_dir,
            bash,
            config,
            calls: AtomicU64::new(0),
            leftovers: Mutex::new(Vec::new()),
            jobs: Jobs::numbered_from(first_id),
            sandboxing: OnceLock::new(),
            supervising: OnceLock::new(),
            terminals: Terminals::numbered_from(first_id),
            notices: Mutex::new(Vec::new()),
            suggested: Suggested::default(),
            shell,
            windows: sandbox::Windows::new(sandbox::state_dir()),
        };
        session.check_sandbox()?;
        if let Some(problem) = shell_problem {
            session.notice(Note::NoShellSnapshot { problem });
        }
        Ok(session)
    }

    /// A sandbox the settings ask for is checked as the session starts: a kernel that
    /// cannot enforce a required one, or a missing supervisor, fails the session rather
    /// than its calls. The default mode (not chosen) is used only where the kernel confines
    /// writes: else the session runs unconfined, and its first result says why.
    fn check_sandbox(&mut self) -> Result<(), Error> {
        let chosen = self.config.sandbox.mode_chosen;
        let checked = self.sandboxing((None, None)).and_then(|sandboxing| {
            let Some(sandboxing) = sandboxing else {
                return Ok(None);
            };
            let probe = sandboxing.probe((None, None))?;
            sandbox::decide(&sandboxing.config, (None, None), &sandboxing.places, probe)
        });
        if chosen || self.config.sandbox.mode == SandboxMode::Off {
            return checked.map(drop);
        }
        let off = match checked {
            Ok(Some(confinement)) if confinement.confines_writes() => {
                if !confinement.gaps.is_empty() {
                    self.notice(Note::SandboxGaps {
                        mode: confinement.mode.name().to_string(),
                        gaps: confinement.gaps,
                    });
                }
                return Ok(());
            }
            Ok(Some(confinement)) => format!(
                "this kernel cannot confine writes ({})",
                confinement.gaps.join("; ")
            ),
            Ok(None) => return Ok(()),
            Err(Error::Sandbox { reason }) => reason,
            Err(other) => return Err(other),
        };
        self.config.sandbox.mode = SandboxMode::Off;
        self.sandboxing = OnceLock::new();
        self.notice(Note::SandboxOff { reason: off });
        Ok(())
    }

    /// The sandbox an unanswered `ask` runs under: the session's places, at least
    /// `workspace-write`, no network, `.git` read-only, and all of it enforced by this
    /// kernel (`require`), or why there is none.
    pub(crate) fn unanswered_sandbox(
        &self,
        call: &crate::request::Call,
    ) -> Result<Sandboxing, Box<Note>> {
        let strict = (Some(SandboxMode::WorkspaceWrite), Some(false));
        let failed = |reason: String| {
            Box::new(Note::SandboxGaps {
                mode: "workspace-write, no network (to run an unanswered ask confined)".into(),
                gaps: vec![reason],
            })
        };
        let session = self
            .sandboxing(strict)
            .map_err(|err| failed(err.to_string()))?
            .ok_or_else(|| failed("no sandbox".into()))?;
        let mut sandboxing = session.clone();
        let config = &mut sandboxing.config;
        config.mode = config.mode.max(SandboxMode::WorkspaceWrite);
        config.mode_chosen = true;
        config.network = false;
        config.protect_git = true;
        config.require = true;
        let asked = (call.sandbox.0.map(|mode| mode.max(config.mode)), None);
        let probe = sandboxing
            .probe(asked)
            .map_err(|err| failed(err.to_string()))?;
        sandbox::decide(&sandboxing.config, asked, &sandboxing.places, probe).map_err(|err| {
            match err {
                Error::Sandbox { reason } => failed(reason),
                other => failed(other.to_string()),
            }
        })?;
        Ok(sandboxing)
    }

    /// Whether a call that asks for `asked` runs with its writes confined by the kernel
    /// (Landlock or a mount namespace).
    pub(crate) fn confines_writes(&self, asked: (Option<SandboxMode>, Option<bool>)) -> bool {
        let Ok(Some(sandboxing)) = self.sandboxing(asked) else {
            return false;
        };
        sandboxing
            .probe(asked)
            .and_then(|probe| sandbox::decide(&sandboxing.config, asked, &sandboxing.places, probe))
            .is_ok_and(|confinement| confinement.is_some_and(|c| c.confines_writes()))
    }

    /// Before a call that `confined` commands run: its window opens.
    pub(crate) fn confined_work_starts(&self, confined: bool) {
        if !confined {
            return;
        }
        let mut writable = vec![self.root.clone()];
        if let Some(sandboxing) = self.sandboxing.get() {
            writable.extend(sandboxing.places.extra.iter().cloned());
            writable.extend(sandboxing.config.writable.iter().cloned());
        }
        self.windows.open(&writable);
    }

    /// After a call: what confined commands made in git where no mount keeps it is moved
    /// aside (said in the notes returned); the window closes when no job or terminal runs.
    pub(crate) fn confined_work_may_end(&self) -> Vec<Note> {
        let moved = self
            .sandboxing
            .get()
            .and_then(|sandboxing| sandboxing.git.as_ref())
            .map(|git| git.check())
            .unwrap_or_default();
        if self.jobs.running() == 0 && self.terminals.open_count() == 0 {
            self.windows.close();
        }
        moved
            .into_iter()
            .map(|what| Note::MovedAside { what })
            .collect()
    }

    /// True the first time a suggestion stops `command` in this session; false once it did
    /// (the same text sent again runs). The texts are kept as hashes under a key of the
    /// session's, so a long command costs 8 bytes; two texts with the same hash are a 2^-64
    /// chance, and a suggestion that does not come is no harm.
    pub(crate) fn first_suggestion(&self, command: &str) -> bool {
        let hash = std::hash::BuildHasher::hash_one(&self.suggested.keys, command);
        lock(&self.suggested.seen).insert(hash)
    }

    /// Says `note` in the next result (one at a time).
    pub(crate) fn notice(&self, note: Note) {
        let mut notices = lock(&self.notices);
        if !notices.contains(&note) {
            notices.push(note);
        }
    }

    /// What the next result says of the session once: the default sandbox, the snapshot.
    pub(crate) fn take_sandbox_notice(&self) -> Vec<Note> {
        std::mem::take(&mut *lock(&self.notices))
    }

    /// The sandbox of a call that asks for `asked`, if anything confines it.
    ///
    /// # Errors
    /// `Error::Sandbox` when the sandbox cannot be set up (see `Sandboxing::new`).
    pub(crate) fn sandboxing(
        &self,
        asked: (Option<SandboxMode>, Option<bool>),
    ) -> Result<Option<&Sandboxing>, Error> {
        if !sandbox::wanted(&self.config.sandbox, asked) {
            return Ok(None);
        }
        if !sandbox::confines(&self.config.sandbox, asked) {
            // Supervision alone is best effort: without a supervisor, such a call is
            // spawned directly.
            if let Some(supervising) = self.supervising.get() {
                return Ok(Some(supervising));
            }
            let made = Sandboxing::supervising(&self.config).ok();
            return Ok(made.map(|made| self.supervising.get_or_init(|| made)));
        }
        if let Some(sandboxing) = self.sandboxing.get() {
            return Ok(Some(sandboxing));
        }
        // A failure is not kept: the next call tries again (a missing supervisor stays
        // missing; an output directory may be mended).
        let output = self
            .spill_dir
            .path()
            .map_err(|reason| Error::OutputDir { reason });
        let env = |name: &str| self.variable(name);
        // The output directory is made first: its base is among the files kept read-only.
        match output
            .and_then(|_| Sandboxing::new(&self.config, &self.root, &self.own_files(), &env))
        {
            Ok(sandboxing) => Ok(Some(self.sandboxing.get_or_init(|| sandboxing))),
            Err(Error::Sandbox { reason }) => Err(Error::Sandbox { reason }),
            Err(other) => Err(Error::Sandbox {
                reason: other.to_string(),
            }),
        }
    }

    /// The output directory and the files a confined call keeps read-only, made again when
    /// they were removed during the session (by a person, or a cleaner of the temp
    /// directory): every confined call's sandbox is built around them.
    ///
    /// # Errors
    /// `Error::OutputDir` if the directory cannot be made again.
    pub(crate) fn mend_own_files(&self) -> Result<(), Error> {
        if !self.spill_dir.was_removed() {
            return Ok(());
        }
        self.spill_dir
            .path()
            .map_err(|reason| Error::OutputDir { reason })?;
        self.own_files();
        Ok(())
    }

    /// agent-bash's own files that no confined command may change: the project's settings
    /// file (read by the next session, trusted or not), the base of the session directories
    /// (other calls' spill and job files) and the audit log (made if missing, so that it
    /// can be kept read-only before it is first written).
    fn own_files(&self) -> Vec<PathBuf> {
        let mut own = vec![
            self.root.join(crate::settings::PROJECT_FILE),
            self.spill_dir.parent().to_path_buf(),
        ];
        if let Some(state) = sandbox::state_dir() {
            use std::os::unix::fs::DirBuilderExt as _;
            let made = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&state);
            if made.is_ok() {
                own.push(state);
            }
        }
        if let Ok(Some(audit)) = self.audit_path() {
            use std::os::unix::fs::OpenOptionsExt as _;
            let made = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(&audit);
            if made.is_ok() {
                own.push(audit);
            }
        }
        own
    }

    /// The value of the variable `name` in commands' environment.
    fn variable(&self, name: &str) -> Option<std::ffi::OsString> {
        if let Some((_, value)) = self.env.iter().rev().find(|(set, _)| set == name) {
            return Some(value.into());
        }
        if self.env_remove.iter().any(|removed| removed == name) {
            return None;
        }
        std::env::var_os(name)
    }

    /// The session's root directory, absolute: requests' relative `cwd`s start from it.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The configuration the session was made with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The policy's decision on `request`'s command, for a command that runs on a target
    /// rather than here: `None` when it may be sent (allowed, or approved through
    /// `approver`), else the outcome of its refusal, as `run_with` would answer it. Runs
    /// nothing; the cwd is not looked up (it is a path on the target).
    pub async fn judge(&self, request: &Request, approver: &impl Approver) -> Option<Outcome> {
        pipeline::judge(self, request, approver).await
    }

    /// The policy's decision on `command`, with every simple command it found. Runs
    /// nothing. (A call checks its command itself: this is for showing a decision.)
    ///
    /// ```
    /// # fn main() -> Result<(), agent_bash_core::Error> {
    /// use agent_bash_core::{Config, Decision, Session};
    ///
    /// let session = Session::new(std::env::temp_dir(), Config::default())?;
    /// let verdict = session.check("ls -l | wc -l");
    /// assert_eq!(verdict.decision, Decision::Allow);
    /// assert_eq!(verdict.segments.len(), 2);
    /// // A command word read from a variable cannot be checked: the policy asks.
    /// assert_eq!(session.check("X=echo; $X hi").decision, Decision::Ask);
    /// # Ok(())
    /// # }
    /// ```
    pub fn check(&self, command: &str) -> Verdict {
        let shell = self.shell.definitions();
        crate::policy::check(&self.policy, command, false, &shell.definitions)
    }

    /// The person's own settings file, where a refusal's hint says settings that would allow
    /// the command can go (`~/.config/agent-bash/config.toml` in most places).
    pub(crate) fn user_file(&self) -> String {
        crate::settings::default_user_file().map_or_else(
            || "the agent-bash user settings file".to_string(),
            |path| path.display().to_string(),
        )
    }

    /// Where calls are recorded, if anywhere (creates the base directory of the session
    /// directories when the log is kept there).
    ///
    /// # Errors
    /// Why the base directory cannot be created or used.
    pub fn audit_path(&self) -> Result<Option<PathBuf>, String> {
        match &self.audit {
            AuditLog::Off => Ok(None),
            AuditLog::At(path) => Ok(Some(path.clone())),
            AuditLog::InBase => {
                self.spill_dir.ensure_base()?;
                Ok(Some(audit::default_path(self.spill_dir.parent())))
            }
        }
    }

    /// Kills every background job and every process the session's commands left running
    /// (as dropping the session does). For servers that end while other owners still hold
    /// the session.
    pub fn kill_all(&self) {
        self.jobs.kill_all();
        self.terminals.kill_all();
        let guards = std::mem::take(&mut *lock(&self.leftovers));
        for guard in &guards {
            guard.signal(rustix::process::Signal::KILL);
        }
    }

    /// Ends the session's processes gently, for a server that is shutting down: every
    /// background job and every group left running gets SIGTERM, and what is left after the
    /// kill grace gets SIGKILL. Returns once nothing is left, within `stop_bound()`.
    pub async fn stop_all(&self) {
        let leftovers: Vec<Arc<GroupGuard>> = lock(&self.leftovers).clone();
        let groups: Vec<&GroupGuard> = leftovers.iter().map(Arc::as_ref).collect();
        let times = self.stop_times();
        tokio::join!(
            self.jobs.stop_all(self.stop_bound()),
            stop::stop_groups(&groups, rustix::process::Signal::TERM, times),
            self.terminals.stop_all(times, self.config.io_drain)
        );
        self.kill_all();
    }

    /// The longest a stop of a call's or a job's tree takes, from its first signal until
    /// its output is read: the kill grace, SIGKILL's settling, and the drain.
    pub fn stop_bound(&self) -> Duration {
        self.stop_times().bound() + self.config.io_drain
    }

    pub(crate) fn stop_times(&self) -> StopTimes {
        StopTimes {
            grace: self.config.kill_grace,
        }
    }

    /// The bash commands run in.
    pub(crate) fn bash(&self) -> &Path {
        &self.bash
    }

    /// Inherited variables commands do not get (`env.remove`, and secrets in `remove` mode).
    pub(crate) fn env_remove(&self) -> &[String] {
        &self.env_remove
    }

    /// What a call's plan is made in, now.
    pub(crate) fn environment(&self) -> Environment<'_> {
        Environment {
            bash: &self.bash,
            env: &self.env,
            env_remove: &self.env_remove,
            config: &self.config,
            spill_dir: &self.spill_dir,
            jobs_free: self.config.max_jobs.saturating_sub(self.jobs.running()),
            sandboxing: None,
        }
    }

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

/// Terminal sessions: programs that need a terminal, driven across calls.
impl Session {
    /// Opens a terminal running `open.command` (default: an interactive bash) once the
    /// policy allows it, and answers with its first screen (once the program waits for
    /// input, its output settles, or `terminal::OPEN_WAIT` passes). A refused command
    /// opens nothing: the answer's `refused` says why.
    ///
    /// # Errors
    /// `TerminalLimit`, `TerminalSize`, `Cwd`, `EmptyCommand` and the other request errors,
    /// `Terminal` or `Spawn` when it cannot be started.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use agent_bash_core::{Config, NoApprover, Session, TerminalInput, TerminalOpen};
    /// use agent_bash_core::{TerminalState, TerminalWait};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let config = Config { spill_parent: Some(dir.path().into()), ..Config::default() };
    /// let session = Session::new(dir.path(), config)?;
    /// let open = TerminalOpen { command: Some("python3 -q".into()), ..TerminalOpen::default() };
    /// let first = session.terminal_open(open, &NoApprover).await?;
    /// // On a busy machine the first answer may come before the prompt: wait for it.
    /// let prompt = TerminalWait { wait_secs: Some(30), wait_for: Some(">>>".into()) };
    /// let ready = session.terminal_view(first.id, prompt).await?;
    /// assert!(ready.screen.ends_with(">>>"), "{}", ready.screen);
    ///
    /// let answered = TerminalWait { wait_secs: Some(30), wait_for: Some("^42$".into()) };
    /// let text = Some("6 * 7\n".into());
    /// let input = TerminalInput { text, wait: answered, ..TerminalInput::default() };
    /// let answer = session.terminal_send(first.id, input, &NoApprover).await?;
    /// // The wait ends on the answer's line, maybe before the next prompt is drawn.
    /// assert!(answer.screen.lines().any(|line| line == "42"), "{}", answer.screen);
    ///
    /// let closed = session.terminal_close(first.id).await?;
    /// assert_eq!(closed.state, TerminalState::Exited);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn terminal_open(
        &self,
        open: TerminalOpen,
        approver: &impl Approver,
    ) -> Result<TerminalAnswer, Error> {
        // A terminal runs under the session's sandbox: its window opens first, and closes
        // at a later call once no terminal is open (which also looks at git).
        self.confined_work_starts(self.confines_writes((None, None)));
        self.terminals.open(self, open, approver).await
    }

    /// Types `input` into terminal `id` (its text as is, a newline as Enter, then its named
    /// keys) and answers once the wait is over: `wait_for` matched, the program waits for
    /// input or ended, the terminal was quiet for `terminal::SETTLE` (without `wait_for`),
    /// or `wait_secs` passed. At a shell prompt, the lines it completes go through the
    /// policy first; a refused line types nothing.
    ///
    /// # Errors
    /// `UnknownTerminal`, `Key`, `Pattern`, `Wait`, `Terminal` (the write failed).
    pub async fn terminal_send(
        &self,
        id: u64,
        input: TerminalInput,
        approver: &impl Approver,
    ) -> Result<TerminalAnswer, Error> {
        self.terminals.send(self, id, input, approver).await
    }

    /// Terminal `id`'s screen and new scrollback, after waiting as `wait` says (by default
    /// not at all), typing nothing.
    ///
    /// # Errors
    /// `UnknownTerminal`, `Pattern`, `Wait`.
    pub async fn terminal_view(
        &self,
        id: u64,
        wait: TerminalWait,
    ) -> Result<TerminalAnswer, Error> {
        self.terminals.view(self, id, wait).await
    }

    /// Ends terminal `id` (hang-up, then SIGTERM and SIGKILL for its whole process tree)
    /// and answers with its last screen.
    ///
    /// # Errors
    /// `UnknownTerminal`.
    pub async fn terminal_close(&self, id: u64) -> Result<TerminalAnswer, Error> {
        self.terminals.close(self, id).await
    }
}

/// The session root `root`, absolute, if it is a directory.
fn session_root(root: &Path) -> Result<PathBuf, Error> {
    let absolute = std::path::absolute(root).map_err(|err| Error::Root {
        path: root.to_path_buf(),
        reason: err.to_string(),
    })?;
    match std::fs::metadata(&absolute) {
        Ok(meta) if meta.is_dir() => Ok(absolute),
        Ok(_) => Err(Error::Root {
            path: absolute,
            reason: "is not a directory".into(),
        }),
        Err(err) => Err(Error::Root {
            path: absolute,
            reason: err.to_string(),
        }),
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
/// The variables a call's shell starts with, as the policy may read them: the inherited
/// environment without the removed variables, with the session's own set over it. Secret-named
/// variables are left out, so that no secret value appears in a verdict.
fn shell_environment(
    set: &[(String, String)],
    removed: &[String],
    config: &Config,
) -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, _)| !removed.contains(name) && !set.iter().any(|(set, _)| set == name))
        .chain(set.iter().cloned())
        .filter(|(name, _)| !redact::is_secret_name(name, &config.secrets))
        .collect()
}

fn removed_variables(config: &Config) -> Vec<String> {
    let mut remove = config.env_remove.clone();
    if config.secrets.mode == SecretsMode::Remove {
        remove.extend(
            std::env::vars_os()
                .map(|(name, _)| name.to_string_lossy().into_owned())
                .filter(|name| redact::is_secret_name(name, &config.secrets))
                .filter(|name| !config.env_set.iter().any(|(set, _)| set == name)),
        );
    }
    remove
}

/// The session's shell snapshot (captured now when `shell.snapshot` is `rc`), why there is
/// none, and the secrets to redact: those of the inherited environment, `env.set`, and the
/// snapshot's exported variables. Removed variables count too: a command may still find
/// their values elsewhere.
fn start_shell(
    config: &Config,
    bash: &Path,
    spill_dir: &SpillDir,
    env: &[(String, String)],
    env_remove: &[String],
) -> Result<(Shell, Option<String>, Secrets), Error> {
    use std::os::unix::ffi::OsStrExt as _;
    let inherited: Vec<(String, OsString)> = std::env::vars_os()
        .map(|(name, value)| (name.to_string_lossy().into_owned(), value))
        .collect();
    let capture = match config.shell_snapshot {
        ShellSnapshot::Off => Ok(None),
        ShellSnapshot::Rc => spill_dir.path().map(|dir| {
            Some(Capture {
                bash: bash.to_path_buf(),
                dir,
                env: env.to_vec(),
                env_remove: env_remove.to_vec(),
                skip: env
                    .iter()
                    .map(|(name, _)| name.clone())
                    .chain(env_remove.iter().cloned())
                    .collect(),
            })
        }),
    };
    let (capture, no_dir) = match capture {
        Ok(capture) => (capture, None),
        Err(problem) => (None, Some(problem)),
    };
    let known_secrets = inherited
        .iter()
        .filter(|(name, _)| redact::is_secret_name(name, &config.secrets))
        .map(|(name, value)| (name.clone(), value.to_string_lossy().into_owned()))
        .chain(config.env_set.iter().cloned())
        .collect();
    let (shell, exported, problem) = Shell::start(capture, &config.secrets, known_secrets);
    let known = inherited
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()))
        .chain(
            config
                .env_set
                .iter()
                .chain(&exported)
                .map(|(name, value)| (name.as_str(), value.as_bytes())),
        );
    let secrets = Secrets::new(known, &config.secrets)?;
    Ok((shell, problem.or(no_dir), secrets))
}
