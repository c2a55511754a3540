//! The user's shell, without their rc's side effects (`shell.snapshot = "rc"`).
//!
//! Every command is a fresh `bash -c` that reads no rc file: the same for everyone, and
//! blind to what the user's terminal has (nvm's `node`, pyenv's shims, `conda activate`, a
//! `PATH` set in `~/.bashrc`, `ll`). A snapshot runs the user's interactive bash (its rc) once,
//! with stdin closed, no terminal and a deadline, and writes what it defined into a file only
//! this user can read: its functions, aliases, `shopt` and `set` options (less those that
//! change how a script runs, such as `errexit`), and exported variables (less bash's own and
//! those the session sets, so the non-interactive environment wins). Each command's bash
//! sources it through `BASH_ENV` (which it then unsets, so scripts the command runs do not).
//!
//! The capture cannot hang a session (the deadline kills its process group), print into a
//! call (its output goes nowhere), or fail a call: a broken rc gives a note and no snapshot.
//! The values it exports are redacted like the session's own secrets, and the policy judges
//! a call to one of its aliases or functions by the body (`Definitions`).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime};

use crate::config::SecretsConfig;
use crate::output::redact;

/// The longest the user's rc may take.
pub(crate) const DEADLINE: Duration = Duration::from_secs(5);

/// The rc files an interactive bash reads (and those a `~/.bashrc` commonly sources); a
/// change to one of them makes the next call capture again.
const RC_FILES: [&str; 3] = [".bashrc", ".bash_aliases", ".profile"];
const SYSTEM_RC_FILES: [&str; 1] = ["/etc/bash.bashrc"];

/// The last line of a complete snapshot: an rc that exits never gets to write it.
const COMPLETE: &str = "# agent-bash: snapshot complete";

/// Runs in the user's interactive bash after its rc: writes the snapshot to `$1`, and for
/// this side the exported variables (`$1.env`), aliases (`$1.aliases`) and functions
/// (`$1.functions`), NUL-separated. `$2` is the names of variables the session sets itself;
/// `$1.start` the environment the rc started with (`NAME=value`, NUL-separated): a variable
/// the rc did not change is not written again.
const CAPTURE: &str = r#"
set +eu
out=$1 skip=" $2 "
declare -A __agent_bash_start
while IFS= read -r -d '' pair; do
  __agent_bash_start[${pair%%=*}]=${pair#*=}
done < "$out.start"
# The options a command's own bash starts with: only the rc's changes are written.
declare -A __agent_bash_default
while IFS= read -r line; do
  __agent_bash_default[$line]=1
done < <(BASH_ENV= "$BASH" -c 'shopt -p; set +o')
{
  printf '%s\n' '# agent-bash shell snapshot (shell.snapshot = "rc"): what your interactive bash rc defines.'
  declare -f
  alias -p
  printf '%s\n' 'shopt -s expand_aliases'
  while IFS= read -r line; do
    case $line in
      *' login_shell'|*' restricted_shell'|*' progcomp'|*' progcomp_alias'|*' checkwinsize'|*' histappend'|*' cmdhist'|*' lithist'|*' expand_aliases') ;;
      *) [[ ${__agent_bash_default[$line]} ]] || printf '%s\n' "$line" ;;
    esac
  done < <(shopt -p)
  while IFS= read -r line; do
    case $line in
      *' emacs'|*' vi'|*' history'|*' histexpand'|*' monitor'|*' errexit'|*' nounset'|*' xtrace'|*' verbose'|*' noexec'|*' onecmd'|*' ignoreeof'|*' interactive-comments'|*' posix'|*' privileged'|*' functrace'|*' errtrace'|*' keyword'|*' notify'|*' hashall'|*' braceexpand'|*' noclobber') ;;
      *) [[ ${__agent_bash_default[$line]} ]] || printf '%s\n' "$line" ;;
    esac
  done < <(set +o)
} > "$out"
# Defined after the functions were written: it is not one of the user's.
__agent_bash_kept() {
  case "$skip" in *" $1 "*) return 1 ;; esac
  # What the rc left as it found it, the command's environment has already.
  [[ ${__agent_bash_start[$1]+set} && ${__agent_bash_start[$1]} == "${!1}" ]] && return 1
  case $1 in
    BASH*|SHLVL|PWD|OLDPWD|_|SHELLOPTS|PS[0-9]|HIST*|COLUMNS|LINES|TERM|COMP_*|PROMPT_COMMAND|PIPESTATUS) return 1 ;;
  esac
  local flags
  flags=$(declare -p "$1" 2>/dev/null) || return 1
  flags=${flags#declare -}
  flags=${flags%% *}
  case $flags in *r*) return 1 ;; esac
}
{
  for name in $(compgen -e); do
    __agent_bash_kept "$name" && declare -p "$name"
  done
  printf '%s\n' 'unset BASH_ENV'
  printf '%s\n' '# agent-bash: snapshot complete'
} >> "$out"
for name in $(compgen -e); do
  __agent_bash_kept "$name" && printf '%s=%s\0' "$name" "${!name}"
done > "$out.env"
for name in "${!BASH_ALIASES[@]}"; do
  printf '%s\0%s\0' "$name" "${BASH_ALIASES[$name]}"
done > "$out.aliases"
for name in $(compgen -A function); do
  [ "$name" = __agent_bash_kept ] && continue
  printf '%s\0' "$name"
  declare -f "$name"
  printf '\0'
done > "$out.functions"
"#;

/// What a snapshot defines that the policy must see through: a call to an alias or a
/// function is judged by its body too.
#[derive(Clone, Debug, Default)]
pub(crate) struct Definitions {
    /// Alias name → its text.
    pub(crate) aliases: HashMap<String, String>,
    /// Function name → its definition (`declare -f`).
    pub(crate) functions: HashMap<String, String>,
}

/// A captured snapshot.
#[derive(Debug)]
pub(crate) struct Snapshot {
    /// The file each command sources (`BASH_ENV`).
    pub(crate) path: PathBuf,
    /// The variables it exports, by name (their values are redacted as secrets when their
    /// names look secret).
    pub(crate) exported: Vec<(String, String)>,
    pub(crate) definitions: Definitions,
    /// The rc files as they were: a change captures again.
    stamps: Vec<Stamp>,
}

type Stamp = (PathBuf, Option<(SystemTime, u64)>);

/// How to capture: the bash, where the file goes, the environment the rc starts with, and
/// the variables the session sets itself (left out of the snapshot).
#[derive(Clone, Debug)]
pub(crate) struct Capture {
    pub(crate) bash: PathBuf,
    pub(crate) dir: PathBuf,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) env_remove: Vec<String>,
    pub(crate) skip: Vec<String>,
}

impl Capture {
    /// Runs the user's rc and writes the snapshot.
    ///
    /// # Errors
    /// Why there is no snapshot, in words for a note: the rc did not finish in time, exited
    /// before the snapshot, or the file could not be written.
    pub(crate) fn run(&self) -> Result<Snapshot, String> {
        let stamps = stamps();
        let path = self.dir.join("shell-snapshot.sh");
        let partial = self.dir.join("shell-snapshot.sh.new");
        // Created here, readable by this user only; the capture writes into it.
        fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&partial)
            .map_err(|err| format!("cannot write {}: {err}", partial.display()))?;
        let start = side_file(&partial, "start");
        let result = self
            .write_start(&start)
            .and_then(|()| self.capture(&partial));
        let _ = fs::remove_file(&start);
        let sides = ["env", "aliases", "functions"].map(|side| side_file(&partial, side));
        let read = result.and_then(|()| read_sides(&partial, &sides));
        for side in &sides {
            let _ = fs::remove_file(side);
        }
        let (exported, definitions) = match read {
            Ok(read) => read,
            Err(err) => {
                let _ = fs::remove_file(&partial);
                return Err(err);
            }
        };
        // A call in flight keeps reading the old file; the next one reads the new.
        fs::rename(&partial, &path)
            .map_err(|err| format!("cannot write {}: {err}", path.display()))?;
        Ok(Snapshot {
            path,
            exported,
            definitions,
            stamps,
        })
    }

    /// Writes the environment the rc starts with, as the capture reads it.
    fn write_start(&self, path: &Path) -> Result<(), String> {
        use std::io::Write as _;
        use std::os::unix::ffi::OsStrExt as _;
        let mut text = Vec::new();
        let inherited = std::env::vars_os()
            .filter(|(name, _)| {
                !self
                    .env_remove
                    .iter()
                    .any(|removed| removed.as_str() == name)
            })
            .filter(|(name, _)| !self.env.iter().any(|(set, _)| set.as_str() == name));
        for (name, value) in inherited {
            text.extend_from_slice(name.as_bytes());
            text.push(b'=');
            text.extend_from_slice(value.as_bytes());
            text.push(0);
        }
        for (name, value) in &self.env {
            text.extend_from_slice(format!("{name}={value}\0").as_bytes());
        }
        fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .and_then(|mut file| file.write_all(&text))
            .map_err(|err| format!("cannot write {}: {err}", path.display()))
    }

    /// Runs `bash -i -c CAPTURE` in a session of its own, stdin and stdout on /dev/null,
    /// until it exits or the deadline kills its process group.
    fn capture(&self, out: &Path) -> Result<(), String> {
        let mut command = Command::new(&self.bash);
        command
            .args(["-i", "-c", CAPTURE, "agent-bash-snapshot"])
            .arg(out)
            .arg(self.skip.join(" "))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for name in &self.env_remove {
            command.env_remove(name);
        }
        command.envs(self.env.iter().map(|(name, value)| (name, value)));
        // SAFETY: setsid is async-signal-safe; between fork and exec nothing else runs.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .map_err(|err| format!("cannot start {}: {err}", self.bash.display()))?;
        let deadline = Instant::now() + DEADLINE;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Ok(None) | Err(_) => {
                    // The child leads its own group: the rc's children go with it.
                    if let Ok(pid) = i32::try_from(child.id()) {
                        // SAFETY: a plain syscall on the group this child leads.
                        unsafe { libc::killpg(pid, libc::SIGKILL) };
                    }
                    let _ = child.wait();
                    return Err(format!(
                        "your bash rc did not finish within {} s (stdin closed, no terminal)",
                        DEADLINE.as_secs()
                    ));
                }
            }
        };
        let complete = fs::read(out)
            .map(|text| text.ends_with(format!("{COMPLETE}\n").as_bytes()))
            .unwrap_or(false);
        if !complete {
            let mut said = String::new();
            if let Some(mut stderr) = child.stderr.take() {
                let _ = stderr.by_ref().take(4096).read_to_string(&mut said);
            }
            let last = said.lines().rev().find(|line| !line.trim().is_empty());
            return Err(format!(
                "your bash rc ended before the snapshot was taken ({status}){}",
                last.map(|line| format!("; it said: {line}"))
                    .unwrap_or_default()
            ));
        }
        Ok(())
    }
}

impl Snapshot {
    /// Whether an rc file changed since the capture.
    fn is_stale(&self) -> bool {
        stamps() != self.stamps
    }
}

/// A session's snapshot: the one its commands source now, and how to capture it again.
#[derive(Debug)]
pub(crate) struct Shell {
    current: RwLock<Option<Arc<Snapshot>>>,
    capture: Option<Capture>,
    /// The secret-named variables the session's redaction knows (name, value): a capture
    /// again that exports another one is not taken, since nothing would redact it.
    known_secrets: HashSet<(String, String)>,
    secrets: SecretsConfig,
    /// One capture at a time.
    capturing: tokio::sync::Mutex<()>,
}

impl Shell {
    /// The session's shell: captured now when `capture` is given. Returns the variables the
    /// snapshot exports (the session redacts those with secret names) and, when there is
    /// no snapshot, why.
    pub(crate) fn start(
        capture: Option<Capture>,
        secrets: &SecretsConfig,
        mut known_secrets: HashSet<(String, String)>,
    ) -> (Shell, Vec<(String, String)>, Option<String>) {
        let (current, exported, problem) = match capture.as_ref().map(Capture::run) {
            None => (None, Vec::new(), None),
            Some(Ok(snapshot)) => {
                let exported = snapshot.exported.clone();
                (Some(Arc::new(snapshot)), exported, None)
            }
            Some(Err(problem)) => (None, Vec::new(), Some(problem)),
        };
        known_secrets.extend(
            exported
                .iter()
                .filter(|(name, _)| redact::is_secret_name(name, secrets))
                .cloned(),
        );
        let shell = Shell {
            current: RwLock::new(current),
            capture,
            known_secrets,
            secrets: secrets.clone(),
            capturing: tokio::sync::Mutex::new(()),
        };
        (shell, exported, problem)
    }

    /// The file commands source, if there is a snapshot.
    pub(crate) fn path(&self) -> Option<PathBuf> {
        read(&self.current)
            .as_ref()
            .map(|snapshot| snapshot.path.clone())
    }

    /// What the policy must see through: the snapshot's aliases and functions.
    pub(crate) fn definitions(&self) -> Arc<Snapshot> {
        read(&self.current)
            .clone()
            .unwrap_or_else(|| Arc::new(Snapshot::empty()))
    }

    /// Captures again when an rc file changed since the snapshot; `Some(why)` when that
    /// failed (the old snapshot stays) or was not taken.
    pub(crate) async fn refresh(&self) -> Option<String> {
        let capture = self.capture.clone()?;
        let stale = read(&self.current)
            .as_ref()
            .is_none_or(|snapshot| snapshot.is_stale());
        if !stale {
            return None;
        }
        let _one = self.capturing.lock().await;
        if read(&self.current)
            .as_ref()
            .is_some_and(|snapshot| !snapshot.is_stale())
        {
            return None;
        }
        let captured = tokio::task::spawn_blocking(move || capture.run())
            .await
            .unwrap_or_else(|err| Err(format!("the capture failed: {err}")));
        let snapshot = match captured {
            Ok(snapshot) => snapshot,
            Err(problem) => return Some(format!("{problem}; the earlier snapshot, if any, stays")),
        };
        let unknown = snapshot.exported.iter().find(|(name, value)| {
            redact::is_secret_name(name, &self.secrets)
                && !self.known_secrets.contains(&(name.clone(), value.clone()))
        });
        if let Some((name, _)) = unknown {
            return Some(format!(
                "your rc now exports {name}, a secret this session cannot redact yet: the \
                 changed snapshot is used from the next session"
            ));
        }
        *write(&self.current) = Some(Arc::new(snapshot));
        None
    }
}

impl Snapshot {
    fn empty() -> Snapshot {
        Snapshot {
            path: PathBuf::new(),
            exported: Vec::new(),
            definitions: Definitions::default(),
            stamps: Vec::new(),
        }
    }
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn side_file(out: &Path, side: &str) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".");
    name.push(side);
    PathBuf::from(name)
}

fn read_sides(
    out: &Path,
    [env, aliases, functions]: &[PathBuf; 3],
) -> Result<(Vec<(String, String)>, Definitions), String> {
    let fields = |path: &Path| -> Result<Vec<String>, String> {
        let bytes =
            fs::read(path).map_err(|err| format!("cannot read {}: {err}", out.display()))?;
        Ok(bytes
            .split(|b| *b == 0)
            .map(|field| String::from_utf8_lossy(field).into_owned())
            .collect())
    };
    let exported = fields(env)?
        .into_iter()
        .filter_map(|pair| {
            let (name, value) = pair.split_once('=')?;
            Some((name.to_owned(), value.to_owned()))
        })
        .collect();
    // An alias's trailing blank means something (the next word is expanded too); a
    // function's definition ends in a newline that does not.
    let pairs = |list: Vec<String>, trim: bool| -> HashMap<String, String> {
        list.chunks_exact(2)
            .map(|pair| {
                let value = if trim { pair[1].trim_end() } else { &pair[1] };
                (pair[0].clone(), value.to_owned())
            })
            .collect()
    };
    let definitions = Definitions {
        aliases: pairs(fields(aliases)?, false),
        functions: pairs(fields(functions)?, true),
    };
    Ok((exported, definitions))
}

/// The rc files' modification times and sizes (`None`: missing).
fn stamps() -> Vec<Stamp> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let user = home
        .iter()
        .flat_map(|home| RC_FILES.iter().map(move |name| home.join(name)));
    user.chain(SYSTEM_RC_FILES.iter().map(PathBuf::from))
        .map(|path| {
            let stamp = fs::metadata(&path)
                .ok()
                .and_then(|meta| Some((meta.modified().ok()?, meta.len())));
            (path, stamp)
        })
        .collect()
}
