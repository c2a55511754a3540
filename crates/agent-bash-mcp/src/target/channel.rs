//! The channel to a target: one long-lived `ssh`, `docker exec`, `podman exec` or
//! `kubectl exec` whose stdin and stdout carry MCP to agent-bash running there.
//!
//! The channel's first words are a POSIX `sh` script (`start_script`). It checks the target's
//! machine, finds agent-bash in a per-user cache (`~/.cache/agent-bash/<sha256>/`, mode 0700,
//! owned by the user, no symlinks), asks for the file when it is missing or differs, checks
//! its SHA-256 before running it, asks for its settings (over the channel, never in an
//! argument), then becomes it. The script asks for each piece and reads exactly its length
//! before this side writes the next: busybox's `head -c` reads past its count, so nothing
//! unasked may be in the pipe. Its lines to this side start with
//! `agent-bash-target:`; anything else a login script prints before them is skipped. So a
//! session costs one connection, copy included, and every call after that is a request on it.

use std::process::Stdio;
use std::time::Duration;

use agent_bash_core::Target;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::payload::Payload;
use super::stderr::Tail;

/// The prefix of the start script's lines.
const SAID: &str = "agent-bash-target: ";

/// Most bytes of other text (a login banner) skipped before the script's first line.
const MAX_PREAMBLE: usize = 64 * 1024;

/// What agent-bash on the target is started with, besides the script's checks.
#[derive(Clone, Debug)]
pub(crate) struct Start {
    /// The settings it runs with, as a TOML file's text (written into its cache directory).
    pub(crate) settings: String,
    /// The first id of its jobs and terminals.
    pub(crate) first_id: u64,
}

/// A started channel: agent-bash's MCP on the far side of `stdin`/`stdout`.
pub(crate) struct Channel {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: BufReader<ChildStdout>,
    pub(crate) stderr: Tail,
}

/// The program and arguments that run `script` with `sh -c` on `target`.
pub(crate) fn argv(target: &Target, ssh_command: &[String], script: &str) -> Vec<String> {
    let mut argv: Vec<String> = Vec::new();
    match target {
        Target::Local => {
            argv.extend(["sh", "-c", script].map(String::from));
        }
        Target::Ssh { user, host, port } => {
            argv.extend(ssh_command.iter().cloned());
            // No terminal, no escape character, no password prompt (it would wait on a
            // terminal nobody watches), and a dead peer found within 30 s.
            argv.extend(
                [
                    "-T",
                    "-e",
                    "none",
                    "-o",
                    "BatchMode=yes",
                    "-o",
                    "ConnectTimeout=15",
                    "-o",
                    "ServerAliveInterval=10",
                    "-o",
                    "ServerAliveCountMax=3",
                ]
                .map(String::from),
            );
            if let Some(port) = port {
                argv.extend(["-p".into(), port.to_string()]);
            }
            if let Some(user) = user {
                argv.extend(["-l".into(), user.clone()]);
            }
            argv.extend(["--".into(), host.clone()]);
            // ssh hands the remote user's shell one string: the script, quoted for it.
            let quoted: String =
                shlex::try_quote(script).map_or_else(|_| script.into(), Into::into);
            argv.push(format!("sh -c {quoted}"));
        }
        Target::Docker { container } | Target::Podman { container } => {
            let engine = if matches!(target, Target::Docker { .. }) {
                "docker"
            } else {
                "podman"
            };
            argv.extend([engine, "exec", "-i", container, "sh", "-c", script].map(String::from));
        }
        Target::Kubernetes {
            namespace,
            pod,
            container,
        } => {
            argv.extend(["kubectl", "exec", "-i"].map(String::from));
            if let Some(namespace) = namespace {
                argv.extend(["-n".into(), namespace.clone()]);
            }
            argv.push(pod.clone());
            if let Some(container) = container {
                argv.extend(["-c".into(), container.clone()]);
            }
            argv.extend(["--", "sh", "-c", script].map(String::from));
        }
    }
    argv
}

/// The script the channel starts with (see the module's comment).
pub(crate) fn start_script(payload: &Payload, start: &Start) -> String {
    format!(
        r#"say() {{ printf 'agent-bash-target: %s\n' "$*"; }}
arch=$(uname -m 2>/dev/null) || arch=unknown
[ "$arch" = {arch} ] || {{ say "arch $arch"; exit 0; }}
command -v sha256sum >/dev/null 2>&1 || {{ say "missing sha256sum"; exit 0; }}
umask 077
[ -n "${{XDG_CACHE_HOME:-}}${{HOME:-}}" ] || {{ say "no home directory for a private cache"; exit 0; }}
cache="${{XDG_CACHE_HOME:-$HOME/.cache}}/agent-bash"
dir="$cache/{hash}"
mkdir -p "$dir" 2>/dev/null || {{ say "cannot create $dir"; exit 0; }}
for d in "$cache" "$dir"; do
  if [ -L "$d" ] || [ ! -O "$d" ]; then say "unsafe $d is not a directory of this user's"; exit 0; fi
  chmod 700 "$d" || {{ say "unsafe $d"; exit 0; }}
done
bin="$dir/agent-bash"
check() {{ printf '%s  %s\n' {hash} "$bin" | sha256sum -c >/dev/null 2>&1; }}
if ! check; then
  part="$bin.part.$$"
  say "send {size}"
  head -c {size} > "$part" || {{ rm -f "$part"; say "cannot write $part"; exit 0; }}
  printf '%s  %s\n' {hash} "$part" | sha256sum -c >/dev/null 2>&1 || {{ rm -f "$part"; say "corrupt copy of agent-bash"; exit 0; }}
  chmod 700 "$part" && mv -f "$part" "$bin"
  check || {{ say "agent-bash at $bin changed under us"; exit 0; }}
fi
conf="$dir/settings.$$.toml"
say "settings {settings_size}"
head -c {settings_size} > "$conf" || {{ say "cannot write $conf"; exit 0; }}
say ready
exec "$bin" mcp --serve-target --first-id {first_id} --config "$conf"
"#,
        arch = payload.arch,
        hash = payload.sha256,
        size = payload.size,
        settings_size = start.settings.len(),
        first_id = start.first_id,
    )
}

/// Starts the channel to `target` and runs the start script, copying `payload` when the
/// target asks for it; returns once agent-bash runs there.
///
/// # Errors
/// Why agent-bash could not be started there, in words for the model: the engine's own
/// message (`ssh: connect to host … refused`, `No such container`) or the script's.
pub(crate) async fn open(
    target: &Target,
    ssh_command: &[String],
    payload: &Payload,
    start: &Start,
    deadline: Duration,
) -> Result<Channel, String> {
    let argv = argv(target, ssh_command, &start_script(payload, start));
    let Some((program, args)) = argv.split_first() else {
        return Err("no program to reach the target with".into());
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|err| format!("cannot run `{program}`: {err}"))?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(format!("`{program}` started without its pipes"));
    };
    let stderr = Tail::follow(stderr);
    let mut channel = Channel {
        child,
        stdin,
        stdout: BufReader::new(stdout),
        stderr,
    };
    // The copy gets its own time on top, at a floor of 1 MB/s (a debug build is 177 MB).
    let deadline = deadline + Duration::from_secs(payload.size / 1_000_000);
    match tokio::time::timeout(deadline, handshake(&mut channel, payload, &start.settings)).await {
        Ok(Ok(())) => Ok(channel),
        Ok(Err(why)) => Err(failed(&mut channel, program, &why).await),
        Err(_) => Err(failed(
            &mut channel,
            program,
            &format!("no answer within {} s", deadline.as_secs()),
        )
        .await),
    }
}

/// Reads the start script's lines until it says `ready`, sending the payload if asked.
async fn handshake(channel: &mut Channel, payload: &Payload, settings: &str) -> Result<(), String> {
    let mut skipped = 0usize;
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        // At most what is left of the preamble's allowance: an endless line cannot grow.
        let allowed = (MAX_PREAMBLE - skipped.min(MAX_PREAMBLE)) as u64 + 1;
        let read = (&mut channel.stdout)
            .take(allowed)
            .read_until(b'\n', &mut bytes)
            .await
            .map_err(|err| format!("cannot read from the target: {err}"))?;
        if read == 0 {
            return Err("the connection ended before agent-bash started there".into());
        }
        let line = String::from_utf8_lossy(&bytes);
        let Some(said) = line.trim_end().strip_prefix(SAID) else {
            skipped += read;
            if skipped > MAX_PREAMBLE {
                return Err("the target printed too much before agent-bash started".into());
            }
            continue;
        };
        match said.split_once(' ') {
            _ if said == "ready" => return Ok(()),
            Some(("send", _)) => send(channel, payload).await?,
            Some(("settings", _)) => write(channel, settings.as_bytes()).await?,
            Some(("arch", arch)) => {
                return Err(format!(
                    "the target is a {arch} machine and this agent-bash is built for {}: build \
                     agent-bash for {arch}-unknown-linux-musl and name it in the setting \
                     `target_binary`",
                    payload.arch
                ));
            }
            _ => return Err(said.to_string()),
        }
    }
}

/// Copies the payload into the start script's `head -c`.
async fn send(channel: &mut Channel, payload: &Payload) -> Result<(), String> {
    tracing::info!(bytes = payload.size, path = %payload.path.display(), "copying agent-bash to the target");
    let file = tokio::fs::File::open(&payload.path)
        .await
        .map_err(|err| format!("cannot read {}: {err}", payload.path.display()))?;
    // Exactly the bytes hashed, even if the file grew since.
    tokio::io::copy(&mut file.take(payload.size), &mut channel.stdin)
        .await
        .map_err(|err| format!("copying agent-bash to the target failed: {err}"))?;
    channel
        .stdin
        .flush()
        .await
        .map_err(|err| format!("copying agent-bash to the target failed: {err}"))
}

/// Writes the settings into the start script's `head -c`. They go over the channel, never
/// on a command line: those are visible to every local user (`/proc/PID/cmdline`) and
/// kept in audit logs (Kubernetes records each exec's command).
async fn write(channel: &mut Channel, bytes: &[u8]) -> Result<(), String> {
    channel
        .stdin
        .write_all(bytes)
        .await
        .and(channel.stdin.flush().await)
        .map_err(|err| format!("sending the settings to the target failed: {err}"))
}

/// The error of a channel that did not start: `why`, and what the engine said on stderr.
/// The channel's program is stopped.
async fn failed(channel: &mut Channel, program: &str, why: &str) -> String {
    let _ = channel.child.start_kill();
    let _ = tokio::time::timeout(Duration::from_secs(2), channel.child.wait()).await;
    let said = channel.stderr.text().await;
    if said.is_empty() {
        why.to_string()
    } else {
        format!("{why}; `{program}` said: {said}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script() -> &'static str {
        "echo hi"
    }

    #[test]
    fn each_engine_gets_its_own_exec_with_the_script_as_one_argument() {
        let ssh = vec!["ssh".to_string(), "-F".into(), "/cfg".into()];
        let cases: [(&str, &[&str]); 6] = [
            (
                "ssh://me@box:2222",
                &[
                    "ssh",
                    "-F",
                    "/cfg",
                    "-T",
                    "-e",
                    "none",
                    "-o",
                    "BatchMode=yes",
                    "-o",
                    "ConnectTimeout=15",
                    "-o",
                    "ServerAliveInterval=10",
                    "-o",
                    "ServerAliveCountMax=3",
                    "-p",
                    "2222",
                    "-l",
                    "me",
                    "--",
                    "box",
                    "sh -c 'echo hi'",
                ],
            ),
            (
                "docker://app",
                &["docker", "exec", "-i", "app", "sh", "-c", "echo hi"],
            ),
            (
                "podman://app",
                &["podman", "exec", "-i", "app", "sh", "-c", "echo hi"],
            ),
            (
                "k8s://runner",
                &[
                    "kubectl", "exec", "-i", "runner", "--", "sh", "-c", "echo hi",
                ],
            ),
            (
                "k8s://ci/runner",
                &[
                    "kubectl", "exec", "-i", "-n", "ci", "runner", "--", "sh", "-c", "echo hi",
                ],
            ),
            (
                "k8s://ci/runner/main",
                &[
                    "kubectl", "exec", "-i", "-n", "ci", "runner", "-c", "main", "--", "sh", "-c",
                    "echo hi",
                ],
            ),
        ];
        for (uri, expected) in cases {
            let target = Target::parse(uri).unwrap();
            assert_eq!(argv(&target, &ssh, script()), expected, "{uri}");
        }
    }

    #[test]
    fn the_script_reaches_the_remote_shell_as_written() {
        // ssh joins its words into one string for the remote shell: the script must come
        // through that shell unchanged, quotes and `$` included.
        let target = Target::parse("ssh://h").unwrap();
        let tricky = "printf '%s\\n' \"$HOME\" 'it'\\''s' `x` $(y)";
        let remote = argv(&target, &["ssh".into()], tricky);
        let words = shlex::split(remote.last().unwrap()).unwrap();
        assert_eq!(words, ["sh", "-c", tricky]);
    }
}
