//! The settings table: every setting's key, kind, doc line, and how it is read into and
//! shown from `Config`, in the order `agent-bash config` shows them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use toml::Value;

use super::keys::{Kind, Problem, Setting};
use super::values::{
    at_least_one, fallback, home_paths, int, name_of, pairs, path_or, policy_holds, seconds,
    shown_paths, strings,
};
use crate::config::{OnTimeout, SecretsMode, ShellSnapshot, Unanswered};
use crate::output::redact::{BUILTIN_PATTERNS, Secrets};
use crate::policy::decision_name;
use crate::sandbox::SandboxMode;
use crate::target::Target;
use agent_bash_policy::Decision;

const ON_TIMEOUT: &[(&str, OnTimeout)] = &[
    ("background", OnTimeout::Background),
    ("kill", OnTimeout::Kill),
];

const SECRETS_MODE: &[(&str, SecretsMode)] = &[
    ("redact", SecretsMode::Redact),
    ("remove", SecretsMode::Remove),
    ("pass", SecretsMode::Pass),
];

use Kind::{List, Scalar, Table as Entries};

/// Every setting, in the order `agent-bash config` shows them (and applies them: a check
/// that reads another field, like the policy's, comes after the fields it reads).
pub const SETTINGS: &[Setting] = &[
    Setting::new(
        "timeout_secs",
        Scalar,
        "timeout of a call that names none, in seconds (at least 1)",
        |c, v| seconds(v).map(|secs| c.default_timeout = secs),
        |c| int(c.default_timeout.as_secs()),
    )
    .checked_as(&["timeout"]),
    Setting::new(
        "max_timeout_secs",
        Scalar,
        "longest timeout a call may ask for, in seconds (longer ones are clamped)",
        |c, v| seconds(v).map(|secs| c.max_timeout = secs),
        |c| int(c.max_timeout.as_secs()),
    )
    .checked_as(&["timeout"]),
    Setting::new(
        "kill_grace_ms",
        Scalar,
        "time between SIGTERM and SIGKILL when a process tree is stopped, in milliseconds",
        |c, v| v.get().map(|ms| c.kill_grace = Duration::from_millis(ms)),
        |c| int(c.kill_grace.as_millis()),
    ),
    Setting::new(
        "on_timeout",
        Scalar,
        "what a timeout does to a running command: `background` or `kill`",
        |c, v| v.choose(ON_TIMEOUT).map(|action| c.on_timeout = action),
        |c| name_of(c.on_timeout, ON_TIMEOUT),
    ),
    Setting::new(
        "max_jobs",
        Scalar,
        "most background jobs running at once (0: the session keeps none)",
        |c, v| v.get().map(|max| c.max_jobs = max),
        |c| int(c.max_jobs),
    ),
    Setting::new(
        "keep_finished_jobs",
        Scalar,
        "finished jobs kept listed and readable (older ones are evicted once reported or read)",
        |c, v| v.get().map(|keep| c.keep_finished_jobs = keep),
        |c| int(c.keep_finished_jobs),
    ),
    Setting::new(
        "max_wait_secs",
        Scalar,
        "longest wait of a read of a job's output, in seconds",
        |c, v| v.get().map(|secs| c.max_wait = Duration::from_secs(secs)),
        |c| int(c.max_wait.as_secs()),
    ),
    Setting::new(
        "bash",
        Scalar,
        "the bash to run (by default the first `bash` on the PATH)",
        |c, v| v.get().map(|path| c.bash = Some(path)),
        |c| path_or(c.bash.as_ref(), String::new),
    )
    .computed(|| "the first `bash` on the PATH".into()),
    Setting::new(
        "max_command_bytes",
        Scalar,
        "longest command accepted, in bytes",
        |c, v| v.get().map(|bytes| c.max_command_bytes = bytes),
        |c| int(c.max_command_bytes),
    )
    .checked_as(&["max_command_bytes"]),
    Setting::new(
        "target",
        Scalar,
        "where commands run: `local`, `ssh://[user@]host[:port]`, `docker://CONTAINER`, `podman://CONTAINER` or `k8s://[NAMESPACE/]POD[/CONTAINER]`",
        |c, v| {
            let uri: String = v.get()?;
            c.target = Target::parse(&uri).map_err(Problem::new)?;
            Ok(())
        },
        |c| Value::String(c.target.to_string()),
    ),
    Setting::new(
        "target_binary",
        Scalar,
        "the static (musl) agent-bash copied to a target",
        |c, v| v.get().map(|path| c.target_binary = Some(path)),
        |c| path_or(c.target_binary.as_ref(), String::new),
    )
    .computed(|| "this program when it is static, else agent-bash-<arch>-unknown-linux-musl beside it or its cargo build".into()),
    Setting::new(
        "ssh_command",
        Scalar,
        "the OpenSSH client an `ssh://` target is reached through, with options (`ssh -F ~/.ssh/agents.conf`)",
        |c, v| {
            let line: String = v.get()?;
            c.ssh_command = shlex::split(&line)
                .filter(|words| !words.is_empty())
                .ok_or_else(|| Problem::new("must be a program and its options, quoted as in a shell"))?;
            Ok(())
        },
        |c| Value::String(shlex::try_join(c.ssh_command.iter().map(String::as_str)).unwrap_or_default()),
    ),
    Setting::new(
        "output.budget_bytes",
        Scalar,
        "most bytes of output (both streams) the model sees for one call",
        |c, v| v.get().map(|bytes| c.budget.bytes = bytes),
        |c| int(c.budget.bytes),
    )
    .checked_as(&["budget bytes"]),
    Setting::new(
        "output.budget_lines",
        Scalar,
        "most lines of output (both streams) the model sees for one call",
        |c, v| v.get().map(|lines| c.budget.lines = lines),
        |c| int(c.budget.lines),
    )
    .checked_as(&["budget lines"]),
    Setting::new(
        "output.head_percent",
        Scalar,
        "share of a cut stream's budget given to its head, in percent (at most 90)",
        |c, v| v.get().map(|percent| c.budget.head_percent = percent),
        |c| int(c.budget.head_percent),
    )
    .checked_as(&["head_percent", "budget bytes"]),
    Setting::new(
        "output.line_clip_chars",
        Scalar,
        "longer lines are clipped to this many chars (the spill file keeps them whole)",
        |c, v| v.get().map(|chars| c.budget.line_clip_chars = chars),
        |c| int(c.budget.line_clip_chars),
    )
    .checked_as(&["line_clip_chars", "budget bytes"]),
    Setting::new(
        "output.spill_cap_bytes",
        Scalar,
        "most bytes one stream's spill file may hold",
        |c, v| v.get().map(|bytes| c.spill_cap_bytes = bytes),
        |c| int(c.spill_cap_bytes),
    ),
    Setting::new(
        "output.session_cap_bytes",
        Scalar,
        "most bytes the files of one session may hold together; the oldest are dropped first",
        |c, v| v.get().map(|bytes| c.session_cap_bytes = bytes),
        |c| int(c.session_cap_bytes),
    ),
    Setting::new(
        "output.spill_dir",
        Scalar,
        "the directory (yours alone, mode 0700) the session's output directory is created in",
        |c, v| v.get().map(|dir| c.spill_parent = Some(dir)),
        |c| path_or(c.spill_parent.as_ref(), String::new),
    )
    .computed(|| {
        let dir = crate::output::spill::default_base();
        format!(
            "{} ($XDG_RUNTIME_DIR/agent-bash, else agent-bash-<uid> in the temporary directory)",
            dir.display()
        )
    }),
    Setting::new(
        "env.remove",
        List,
        "variables taken out of every command's environment",
        |c, v| v.get().map(|names| c.env_remove = names),
        |c| strings(&c.env_remove),
    ),
    Setting::new(
        "env.set",
        Entries,
        "variables set for every command, by name",
        |c, v| {
            v.get()
                .map(|vars: BTreeMap<_, _>| c.env_set = vars.into_iter().collect())
        },
        |c| pairs(&c.env_set),
    ),
    Setting::new(
        "shell.snapshot",
        Scalar,
        "`rc` starts each command with what your interactive bash rc defines (functions, aliases, options, exported variables: nvm, pyenv, conda, a PATH), captured once; `off` is a plain `bash -c`",
        |c, v| {
            v.choose(ShellSnapshot::NAMES)
                .map(|choice| c.shell_snapshot = choice)
        },
        |c| Value::String(c.shell_snapshot.name().into()),
    ),
    Setting::new(
        "secrets.mode",
        Scalar,
        "`redact` secrets in the output, `remove` secret variables too, or `pass`",
        |c, v| v.choose(SECRETS_MODE).map(|mode| c.secrets.mode = mode),
        |c| name_of(c.secrets.mode, SECRETS_MODE),
    ),
    Setting::new(
        "secrets.names",
        List,
        "more name shapes of secret variables (`*` wildcards, any case)",
        |c, v| v.get().map(|names| c.secrets.names = names),
        |c| strings(&c.secrets.names),
    ),
    Setting::new(
        "secrets.ignore_names",
        List,
        "name shapes of variables that are never secret",
        |c, v| v.get().map(|names| c.secrets.ignore_names = names),
        |c| strings(&c.secrets.ignore_names),
    ),
    Setting::new(
        "secrets.min_length",
        Scalar,
        "shorter values of secret variables are redacted only beside their name",
        |c, v| v.get().map(|length| c.secrets.min_length = length),
        |c| int(c.secrets.min_length),
    ),
    Setting::new(
        "secrets.patterns",
        Entries,
        "token patterns by name; a built-in name replaces that pattern (empty: off)",
        |c, v| {
            let patterns: BTreeMap<_, _> = v.get()?;
            c.secrets.patterns = patterns.into_iter().collect();
            // Compiled here, so that a bad pattern is reported against its layer.
            Secrets::new([], &c.secrets)
                .map(drop)
                .map_err(Problem::from)
        },
        |c| {
            let mut shown = pairs(&c.secrets.patterns);
            if let Value::Table(patterns) = &mut shown {
                for (name, pattern) in BUILTIN_PATTERNS {
                    let pattern = Value::String((*pattern).to_string());
                    patterns.entry(*name).or_insert(pattern);
                }
            }
            shown
        },
    ),
    Setting::new(
        "policy.default",
        Scalar,
        "the decision on a command no rule matches: `allow`, `ask` or `deny`",
        |c, v| fallback(v).map(|decision| c.policy.default = Some(decision)),
        |c| Value::String(decision_name(c.policy.default.unwrap_or(Decision::Allow)).into()),
    ),
    Setting::new(
        "policy.unknown",
        Scalar,
        "the decision on a command that cannot be read as plain commands",
        |c, v| fallback(v).map(|decision| c.policy.unknown = Some(decision)),
        |c| Value::String(decision_name(c.policy.unknown.unwrap_or(Decision::Ask)).into()),
    ),
    Setting::new(
        "policy.unanswered",
        Scalar,
        "an `ask` that nobody can answer: `confine` runs it under a stricter sandbox (no network, .git read-only) where the kernel fully enforces one, `refuse` refuses it",
        |c, v| {
            v.choose(Unanswered::NAMES)
                .map(|choice| c.unanswered = choice)
        },
        |c| Value::String(c.unanswered.name().into()),
    ),
    Setting::new(
        "policy.host",
        Scalar,
        "the harness running agent-bash, whose tools commands are pointed to (suggestions, docs/suggest.md): `claude-code`, `codex`, `gemini-cli`, `opencode` or `none`",
        |c, v| {
            c.policy.host = Some(v.get()?);
            policy_holds(c)
        },
        |c| Value::String(c.policy.host.clone().unwrap_or_else(|| "none".into())),
    ),
    Setting::new(
        "policy.host_tools",
        List,
        "more tools the harness has, by the names its model calls them: `suggest` rules naming one are on",
        |c, v| v.get().map(|tools| c.policy.host_tools = tools),
        |c| strings(&c.policy.host_tools),
    ),
    Setting::new(
        "policy.disable",
        List,
        "built-in policy rules and suggestions switched off, by name",
        |c, v| {
            c.policy.disable = v.get()?;
            policy_holds(c)
        },
        |c| strings(&c.policy.disable),
    ),
    Setting::new(
        "policy.rules",
        List,
        "the user's policy rules, `[[policy.rules]]` (their examples are checked)",
        |c, v| {
            c.policy.rules = v.get()?;
            policy_holds(c)
        },
        // None by default; the built-in rules are listed apart. (Rules a layer sets are
        // shown as it wrote them.)
        |_| Value::Array(Vec::new()),
    ),
    Setting::new(
        "audit.enabled",
        Scalar,
        "whether every call is recorded in the audit log",
        |c, v| v.get().map(|enabled| c.audit.enabled = enabled),
        |c| Value::Boolean(c.audit.enabled),
    ),
    Setting::new(
        "audit.path",
        Scalar,
        "the audit log's file",
        |c, v| v.get().map(|path: PathBuf| c.audit.path = Some(path)),
        |c| path_or(c.audit.path.as_ref(), String::new),
    )
    .computed(|| "audit.jsonl in output.spill_dir, the base of the session directories".into()),
    Setting::new(
        "mcp.structured",
        Scalar,
        "MCP results also carry structuredContent (led by the text) and tools an outputSchema",
        |c, v| v.get().map(|on| c.mcp.structured = on),
        |c| Value::Boolean(c.mcp.structured),
    ),
    Setting::new(
        "telemetry.export",
        Scalar,
        "where the MCP server's spans and metrics go: `off`, or `otlp` (OpenTelemetry over HTTP, to the collector the OTEL_EXPORTER_OTLP_* variables name)",
        |c, v| {
            v.choose(crate::config::TelemetryExport::NAMES)
                .map(|export| c.telemetry.export = export)
        },
        |c| Value::String(c.telemetry.export.name().into()),
    ),
    Setting::new(
        "telemetry.command_text",
        Scalar,
        "spans carry each command's text, not only its hash (a command may hold a secret that output redaction never sees)",
        |c, v| v.get().map(|on| c.telemetry.command_text = on),
        |c| Value::Boolean(c.telemetry.command_text),
    ),
    Setting::new(
        "sandbox.mode",
        Scalar,
        "kernel sandbox of every command: `off`, `workspace-write` or `read-only`",
        |c, v| {
            v.choose(SandboxMode::NAMES).map(|mode| {
                c.sandbox.mode = mode;
                c.sandbox.mode_chosen = true;
            })
        },
        |c| Value::String(c.sandbox.mode.name().into()),
    ),
    Setting::new(
        "sandbox.network",
        Scalar,
        "whether sandboxed commands may use the network (false also confines mode `off`)",
        |c, v| v.get().map(|on| c.sandbox.network = on),
        |c| Value::Boolean(c.sandbox.network),
    ),
    Setting::new(
        "sandbox.writable",
        List,
        "more paths `workspace-write` commands may write (absolute, or `~/`)",
        |c, v| home_paths(v).map(|paths| c.sandbox.writable = paths),
        |c| shown_paths(&c.sandbox.writable),
    ),
    Setting::new(
        "sandbox.sockets",
        List,
        "Unix sockets of servers outside (or directories of them) that sandboxed commands may still reach; the Docker socket gives the host away",
        |c, v| home_paths(v).map(|paths| c.sandbox.sockets = paths),
        |c| shown_paths(&c.sandbox.sockets),
    ),
    Setting::new(
        "sandbox.ssh_agent",
        Scalar,
        "sandboxed commands may reach the ssh agent ($SSH_AUTH_SOCK), so that git over ssh works",
        |c, v| v.get().map(|on| c.sandbox.ssh_agent = on),
        |c| Value::Boolean(c.sandbox.ssh_agent),
    ),
    Setting::new(
        "sandbox.protect_git",
        Scalar,
        "keep the project's `.git` read-only under `workspace-write` (needs a mount namespace)",
        |c, v| v.get().map(|on| c.sandbox.protect_git = on),
        |c| Value::Boolean(c.sandbox.protect_git),
    ),
    Setting::new(
        "sandbox.require",
        Scalar,
        "refuse a sandboxed call when the kernel cannot enforce all of its mode",
        |c, v| v.get().map(|on| c.sandbox.require = on),
        |c| Value::Boolean(c.sandbox.require),
    ),
    Setting::new(
        "sandbox.supervise_always",
        Scalar,
        "run every call under the supervisor, which finds daemons that leave the session (false: unconfined calls are spawned directly)",
        |c, v| v.get().map(|on| c.sandbox.supervise_always = on),
        |c| Value::Boolean(c.sandbox.supervise_always),
    ),
    Setting::new(
        "sandbox.limits.processes",
        Scalar,
        "most processes of a sandboxed command's tree at once",
        |c, v| at_least_one(v).map(|n| c.sandbox.limits.processes = n),
        |c| int(c.sandbox.limits.processes),
    ),
    Setting::new(
        "sandbox.limits.file_size_bytes",
        Scalar,
        "largest file a sandboxed process may write, in bytes",
        |c, v| at_least_one(v).map(|n| c.sandbox.limits.file_size_bytes = n),
        |c| int(c.sandbox.limits.file_size_bytes),
    ),
    Setting::new(
        "sandbox.limits.cpu_secs",
        Scalar,
        "most CPU seconds of one sandboxed process",
        |c, v| at_least_one(v).map(|n| c.sandbox.limits.cpu_secs = n),
        |c| int(c.sandbox.limits.cpu_secs),
    ),
    Setting::new(
        "sandbox.limits.open_files",
        Scalar,
        "most open files of one sandboxed process (only ever lowered)",
        |c, v| at_least_one(v).map(|n| c.sandbox.limits.open_files = n),
        |c| int(c.sandbox.limits.open_files),
    ),
    Setting::new(
        "terminal.max_sessions",
        Scalar,
        "most terminal sessions (terminal_open) open at once",
        |c, v| v.get().map(|max| c.terminal.max_sessions = max),
        |c| int(c.terminal.max_sessions),
    ),
    Setting::new(
        "terminal.idle_secs",
        Scalar,
        "a terminal nobody sent to or looked at for this many seconds is closed",
        |c, v| v.get().map(|secs| c.terminal.idle = Duration::from_secs(secs)),
        |c| int(c.terminal.idle.as_secs()),
    )
    .checked_as(&["terminal time"]),
    Setting::new(
        "terminal.max_age_secs",
        Scalar,
        "a terminal is closed at this age, in seconds (terminal_open's timeout_secs may ask for less)",
        |c, v| v.get().map(|secs| c.terminal.max_age = Duration::from_secs(secs)),
        |c| int(c.terminal.max_age.as_secs()),
    )
    .checked_as(&["terminal time"]),
    Setting::new(
        "terminal.rc_files",
        Scalar,
        "the default interactive bash of a terminal reads ~/.bashrc and the profile files",
        |c, v| v.get().map(|on| c.terminal.rc_files = on),
        |c| Value::Boolean(c.terminal.rc_files),
    ),
    Setting::new(
        "trust.roots",
        List,
        "project roots whose .agent-bash.toml is read in full (`*` wildcards, `~/`); others may only tighten",
        |c, v| v.get().map(|roots| c.trust.roots = roots),
        |c| strings(&c.trust.roots),
    ),
];

/// The setting of a dotted key.
pub(super) fn setting(key: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|setting| setting.key == key)
}
