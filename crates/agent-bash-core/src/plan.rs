//! Plan stage: a validated `Call`, in the session's environment, becomes a `Plan`: exactly
//! what will be started (program, arguments, working directory, environment) and the limits
//! it runs under. Pure, but for writing a long command's script file.
//!
//! Confinement is decided here too (`sandbox::decide`, pure): a confined plan names the
//! supervisor that applies it, and `process::spawn::start` starts the shell under it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::{Config, KIB, OnTimeout, SandboxMode};
use crate::error::Error;
use crate::output::spill::SpillDir;
use crate::request::Call;
use crate::sandbox::launcher::Launcher;
use crate::sandbox::{Confinement, Sandboxing, decide};

/// Commands longer than this reach bash through a script file, not `-c`: Linux refuses a
/// single argument over 128 KiB (MAX_ARG_STRLEN), and the environment shares the space.
pub(crate) const LONGEST_ARGUMENT_BYTES: usize = 64 * KIB;

/// Everything needed to start one command, and the limits it runs under.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<OsString>,
    pub(crate) cwd: PathBuf,
    /// Removed from the inherited environment.
    pub(crate) env_remove: Vec<String>,
    /// Set over the inherited environment (after the removals).
    pub(crate) env: Vec<(String, String)>,
    /// A long command's script file; removed when the last owner drops it (the call, or
    /// the job the command became).
    pub(crate) script: Option<ScriptFile>,
    pub(crate) limits: Limits,
    /// The sandbox the command runs in, and the supervisor that applies it.
    pub(crate) confined: Option<Confined>,
}

/// A confined plan's sandbox.
#[derive(Debug)]
pub(crate) struct Confined {
    pub(crate) launcher: &'static Launcher,
    pub(crate) confinement: Confinement,
}

/// The time limits of one call, and what may become a background job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) timeout: Duration,
    pub(crate) stop: StopTimes,
    /// How long to keep reading after the shell exited (or a stop ended) while others
    /// hold its pipes.
    pub(crate) io_drain: Duration,
    /// Start as a background job: the call collects nothing.
    pub(crate) background: bool,
    /// At the deadline, hand the running command over to a job instead of stopping it.
    pub(crate) detach_on_timeout: bool,
    /// When the shell exits while processes it started run on, hand them over to a job
    /// instead of leaving them (listed) to the session's end.
    pub(crate) detach_leftovers: bool,
    /// A job started with a timeout is stopped at that age; one handed over at its
    /// timeout, or started without one, runs until killed.
    pub(crate) job_timeout: Option<Duration>,
}

impl Limits {
    /// The longest a call can take, whatever its command does (the tests hold calls to
    /// it; ARCHITECTURE.md states it).
    #[cfg(test)]
    pub(crate) fn bound(&self) -> Duration {
        self.timeout + self.stop.bound() + self.io_drain
    }
}

/// The times of a stop, from the configuration's kill grace (`process::stop` drives the
/// stop, and says how long one takes: `StopTimes::bound`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StopTimes {
    /// Between the first signal and SIGKILL.
    pub(crate) grace: Duration,
}

/// What plans are made in: the session's shell, environment and output directory.
#[derive(Debug)]
pub(crate) struct Environment<'a> {
    pub(crate) bash: &'a Path,
    pub(crate) env: &'a [(String, String)],
    pub(crate) env_remove: &'a [String],
    pub(crate) config: &'a Config,
    pub(crate) spill_dir: &'a SpillDir,
    /// Places left under the job limit as the call starts.
    pub(crate) jobs_free: usize,
    /// The session's sandbox, when something may confine the call.
    pub(crate) sandboxing: Option<&'a Sandboxing>,
}

/// The plan of call number `id`.
///
/// # Errors
/// `Error::Script` when a long command's script file cannot be written, `Error::Sandbox`
/// when the call asks for a looser sandbox than the settings or the kernel cannot enforce
/// a required one.
pub(crate) fn plan(call: &Call, id: u64, environment: &Environment<'_>) -> Result<Plan, Error> {
    let config = environment.config;
    let confined = confined(environment.sandboxing, call.sandbox)?;
    let (args, script) = if call.command.len() > LONGEST_ARGUMENT_BYTES {
        let script = ScriptFile::write(environment.spill_dir, id, &call.command)?;
        (vec![script.0.clone().into_os_string()], Some(script))
    } else {
        (vec!["-c".into(), call.command.clone().into()], None)
    };
    let jobs = environment.jobs_free > 0;
    Ok(Plan {
        program: environment.bash.to_path_buf(),
        args,
        cwd: call.cwd.clone(),
        env_remove: environment.env_remove.to_vec(),
        env: environment.env.to_vec(),
        script,
        limits: Limits {
            timeout: call.timeout,
            stop: StopTimes {
                grace: config.kill_grace,
            },
            io_drain: config.io_drain,
            background: call.background,
            detach_on_timeout: config.on_timeout == OnTimeout::Background && jobs,
            detach_leftovers: jobs,
            job_timeout: (call.background && call.timeout_named).then_some(call.timeout),
        },
        confined,
    })
}

/// What confines a command that asks for `asked` in a session with `sandboxing` (calls and
/// terminals alike).
///
/// # Errors
/// `Error::Sandbox`, as `sandbox::decide`.
pub(crate) fn confined(
    sandboxing: Option<&Sandboxing>,
    asked: (Option<SandboxMode>, Option<bool>),
) -> Result<Option<Confined>, Error> {
    let Some(sandboxing) = sandboxing else {
        return Ok(None);
    };
    let decided = decide(
        &sandboxing.config,
        asked,
        &sandboxing.places,
        sandboxing.probe(asked)?,
    )?;
    Ok(decided.map(|confinement| Confined {
        launcher: sandboxing.launcher,
        confinement,
    }))
}

/// A long command's script file in the session's output directory, removed when dropped.
#[derive(Debug)]
pub(crate) struct ScriptFile(PathBuf);

impl ScriptFile {
    fn write(dir: &SpillDir, id: u64, command: &str) -> Result<ScriptFile, Error> {
        use std::io::Write as _;
        let (path, mut file) = dir
            .create(&format!("{id:04}-command.sh"))
            .map_err(|reason| Error::Script {
                path: dir.parent().to_path_buf(),
                source: std::io::Error::other(reason),
            })?;
        file.write_all(command.as_bytes())
            .map_err(|source| Error::Script {
                path: path.clone(),
                source,
            })?;
        Ok(ScriptFile(path))
    }
}

impl Drop for ScriptFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(command: &str, background: bool, timeout_named: bool) -> Call {
        Call {
            command: command.into(),
            cwd: PathBuf::from("/tmp"),
            timeout: Duration::from_secs(7),
            timeout_clamped_from: None,
            timeout_named,
            background,
            description: None,
            sandbox: (None, None),
        }
    }

    fn plan_of(call: &Call, jobs_free: usize, config: &Config, dir: &SpillDir) -> Plan {
        let bash = PathBuf::from("/bin/bash");
        let env = [("A".to_string(), "1".to_string())];
        let remove = ["SECRET".to_string()];
        let environment = Environment {
            bash: &bash,
            env: &env,
            env_remove: &remove,
            config,
            spill_dir: dir,
            jobs_free,
            sandboxing: None,
        };
        plan(call, 3, &environment).expect("a plan")
    }

    #[test]
    fn a_short_command_is_an_argument_and_a_long_one_a_script_removed_with_its_plan() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let spill = SpillDir::new(dir.path().to_path_buf());
        let config = Config::default();
        let short = plan_of(&call("echo hi", false, false), 1, &config, &spill);
        assert_eq!(short.program, PathBuf::from("/bin/bash"));
        assert_eq!(
            short.args,
            [OsString::from("-c"), OsString::from("echo hi")]
        );
        assert!(short.script.is_none());
        assert_eq!(short.env, [("A".to_string(), "1".to_string())]);
        assert_eq!(short.env_remove, ["SECRET"]);
        assert_eq!(short.cwd, PathBuf::from("/tmp"));

        let long_command = format!("echo {}", "x".repeat(LONGEST_ARGUMENT_BYTES));
        let long = plan_of(&call(&long_command, false, false), 1, &config, &spill);
        let [script] = long.args.as_slice() else {
            panic!("{:?}", long.args);
        };
        let script = PathBuf::from(script);
        assert!(script.ends_with("0003-command.sh"), "{}", script.display());
        assert_eq!(
            std::fs::read_to_string(&script).ok().as_deref(),
            Some(long_command.as_str())
        );
        drop(long);
        assert!(!script.exists(), "the script outlived its plan");
    }

    #[test]
    fn limits_follow_the_config_the_request_and_the_free_job_places() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let spill = SpillDir::new(dir.path().to_path_buf());
        let config = Config {
            kill_grace: Duration::from_millis(1500),
            io_drain: Duration::from_millis(300),
            ..Config::default()
        };
        let limits = plan_of(&call("true", false, true), 2, &config, &spill).limits;
        assert_eq!(limits.timeout, Duration::from_secs(7));
        assert_eq!(limits.stop.grace, Duration::from_millis(1500));
        assert_eq!(limits.io_drain, Duration::from_millis(300));
        assert!(limits.detach_on_timeout && limits.detach_leftovers && !limits.background);
        assert_eq!(
            limits.job_timeout, None,
            "only a background job keeps its timeout"
        );
        assert_eq!(
            limits.bound(),
            Duration::from_secs(7) + limits.stop.bound() + Duration::from_millis(300)
        );

        let full = plan_of(&call("true", false, true), 0, &config, &spill).limits;
        assert!(!full.detach_on_timeout && !full.detach_leftovers);
        let kill = Config {
            on_timeout: OnTimeout::Kill,
            ..config.clone()
        };
        let killed = plan_of(&call("true", false, true), 2, &kill, &spill).limits;
        assert!(!killed.detach_on_timeout && killed.detach_leftovers);

        let background = plan_of(&call("true", true, true), 2, &config, &spill).limits;
        assert!(background.background);
        assert_eq!(background.job_timeout, Some(Duration::from_secs(7)));
        let unbounded = plan_of(&call("true", true, false), 2, &config, &spill).limits;
        assert_eq!(unbounded.job_timeout, None);
    }
}
