//! The `agent-bash` binary: the CLI and the MCP server over the engine. The only place that
//! prints (and, for `mcp`, stdout belongs to the protocol: logs go to stderr).

mod http;
mod run;
mod term;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use std::sync::Arc;

use agent_bash_core::settings::{Settings, Sources};
use agent_bash_core::{Session, render};
use agent_bash_mcp::Format;
use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};

use run::{RunArgs, TOOL_FAILURE};

#[derive(Parser, Debug)]
#[command(
    name = "agent-bash",
    version,
    about = "The bash tool for LLM coding agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one command through the pipeline and print what the model would see.
    ///
    /// The command is the words after the flags (`agent-bash run -- make test`), or is read
    /// from stdin (`agent-bash run -`) or a file (`--file FILE`), up to max_command_bytes
    /// (1 MiB; one argument can hold at most 128 KiB). Either way, the command's own stdin
    /// is /dev/null, as for every command agent-bash runs: a program that would wait for
    /// input gets end-of-file at once.
    #[command(after_help = run::EXIT_STATUS)]
    Run(RunArgs),
    /// Serve the tools over MCP on stdin/stdout, for an agent that starts this as a server.
    ///
    /// Runs until the client closes stdin or a SIGTERM/SIGINT arrives, then kills every
    /// process it started.
    Mcp(McpArgs),
    /// Print the tool definitions, for harnesses that call functions directly.
    Schema(SchemaArgs),
    /// Print the effective configuration, and for each value the layer it came from.
    ///
    /// Layers, later ones winning: defaults, ~/.config/agent-bash/config.toml,
    /// <root>/.agent-bash.toml, --config FILE, AGENT_BASH_* variables, flags.
    Config(ConfigArgs),
    /// The kernel sandbox: `agent-bash sandbox probe` shows what this kernel enforces.
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// Show what the policy decides for a command, without running anything.
    ///
    /// Prints each simple command found (through pipelines, lists, substitutions, `bash -c`,
    /// `eval`, wrappers such as `sudo` or `xargs`), the decision on it and the rule that
    /// decided, then the overall decision. Exits 0 for allow, 1 for ask, 2 for deny, 3 for
    /// suggest (the host has a tool for it: `policy.host`, docs/suggest.md).
    Check(CheckArgs),
    /// Drive a terminal session by hand, as the terminal tools do for a model.
    ///
    /// Opens a terminal running COMMAND (default: an interactive bash), prints its first
    /// screen, then types each line of stdin followed by Enter (a line `\k NAME…` presses
    /// the named keys, such as `\k Esc` or `\k Ctrl-C`) and prints each answer, until
    /// stdin or the program ends. Then closes the terminal.
    Term(term::TermArgs),
}

#[derive(Subcommand, Debug)]
enum SandboxCommand {
    /// Print what this kernel enforces (Landlock, seccomp, namespaces, a pids cgroup) and,
    /// for each mode, what it would leave unenforced.
    Probe,
}

/// The sandbox of every call: the flags of `run` and `mcp` (settings `sandbox.mode` and
/// `sandbox.network`).
#[derive(Args, Debug)]
pub(crate) struct SandboxArgs {
    /// Confine commands with the kernel sandbox: `off`, `workspace-write` (write only the
    /// root, temp dirs and caches) or `read-only`.
    #[arg(long, value_name = "MODE", value_parser = ["off", "workspace-write", "read-only"])]
    sandbox: Option<String>,
    /// No network for commands (only Unix sockets).
    #[arg(long)]
    no_network: bool,
}

impl SandboxArgs {
    /// The flags as settings values.
    pub(crate) fn flags(&self) -> Vec<(String, toml::Value)> {
        let mut flags: Vec<(String, toml::Value)> = self
            .sandbox
            .iter()
            .map(|mode| flag("sandbox.mode", mode.as_str()))
            .collect();
        if self.no_network {
            flags.push(flag("sandbox.network", false));
        }
        flags
    }
}

/// Where a session is rooted and which settings it reads: the flags of every command that
/// loads settings.
#[derive(Args, Debug, Default)]
pub(crate) struct SessionArgs {
    /// Session root: commands start there, relative cwds resolve against it, and its
    /// .agent-bash.toml is read. Default: the current directory.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// A settings file read after the user and project files (see `agent-bash config`).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Read the root's .agent-bash.toml in full, as if the root were in `[trust] roots`
    /// (without it, an untrusted project file may only tighten settings).
    #[arg(long)]
    trust_project: bool,
    /// `rc`: each command starts with what your interactive bash rc defines (functions,
    /// aliases, options, exported variables), captured once (setting `shell.snapshot`).
    #[arg(long, value_name = "WHAT", value_parser = ["off", "rc"])]
    shell_snapshot: Option<String>,
}

impl SessionArgs {
    /// The root, and its layered settings with `flags` as the last layer.
    pub(crate) fn load(
        self,
        mut flags: Vec<(String, toml::Value)>,
    ) -> anyhow::Result<(PathBuf, Settings)> {
        if let Some(snapshot) = &self.shell_snapshot {
            flags.push(flag("shell.snapshot", snapshot.as_str()));
        }
        let root = root_or_cwd(self.root)?;
        let settings = settings(&root, self.config, self.trust_project, flags)?;
        Ok((root, settings))
    }

    /// As `load`, for the far side of a target (`mcp --serve-target`): the settings come
    /// from the session that started it (`--config`), not from a user file here, and it
    /// runs its commands here whatever they say.
    pub(crate) fn load_as_target(
        self,
        mut flags: Vec<(String, toml::Value)>,
    ) -> anyhow::Result<(PathBuf, Settings)> {
        let root = root_or_cwd(self.root)?;
        flags.push(flag("target", "local"));
        let config_file = self.config.clone();
        let sources = Sources {
            config_file: self.config,
            no_user_file: true,
            // Not the target's AGENT_BASH_* variables either: the session that started
            // this one decided its settings, and reads its results by them.
            env: Vec::new(),
            flags,
            state_dir: agent_bash_core::sandbox::state_dir(),
            ..Sources::default()
        };
        let loaded = agent_bash_core::settings::load(&root, &sources);
        // The file was written for this start alone, in the private cache (it may hold
        // `env.set` values): gone once read.
        if let Some(file) = config_file {
            let _ = std::fs::remove_file(file);
        }
        let mut settings = loaded?;
        for ignored in &settings.ignored {
            tracing::warn!("{ignored}");
        }
        settings.config.supervisor =
            Some(std::env::current_exe().context("cannot find this program's own path")?);
        Ok((root, settings))
    }
}

#[derive(Args, Debug)]
struct CheckArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Print `{"decision", "segments": [{"argv", "decision", "rule"}], "reason", "rule"}`.
    #[arg(long)]
    json: bool,
    /// The shell code to check (several words are joined with spaces).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    command: Vec<String>,
}

#[derive(Args, Debug)]
struct ConfigArgs {
    #[command(flatten)]
    session: SessionArgs,
}

#[derive(Args, Debug)]
struct McpArgs {
    #[command(flatten)]
    session: SessionArgs,
    #[command(flatten)]
    sandbox: SandboxArgs,
    /// Log debugging detail (every request and notification) to stderr.
    #[arg(long, short)]
    verbose: bool,
    /// Also append the log to this file.
    #[arg(long, value_name = "FILE")]
    log_file: Option<PathBuf>,
    /// Most background jobs running at once (default 16; 0: no jobs).
    #[arg(long, value_name = "N")]
    max_jobs: Option<usize>,
    /// What a timeout does to a command still running: it goes on as a background job
    /// (default), or its process tree is killed.
    #[arg(long, value_enum, value_name = "WHAT")]
    on_timeout: Option<TimeoutAction>,
    /// Results also carry structuredContent, led by the model's text, and the tools an
    /// outputSchema (setting `mcp.structured`). Off by default: many clients show the model
    /// the structure instead of the text.
    #[arg(long)]
    structured: bool,
    /// Run the commands there rather than here: `ssh://[user@]host[:port]`,
    /// `docker://CONTAINER`, `podman://CONTAINER`, `k8s://[NAMESPACE/]POD[/CONTAINER]` or
    /// `local` (setting `target`). agent-bash is copied there once, into a per-user cache.
    #[arg(long, value_name = "URI")]
    target: Option<String>,
    /// Serve as the far side of another agent-bash's target: its policy decided on each
    /// command already, and the user file here is not read (it starts this itself).
    #[arg(long, hide = true)]
    serve_target: bool,
    /// The first id of a job or terminal (with --serve-target).
    #[arg(long, hide = true, value_name = "N", requires = "serve_target")]
    first_id: Option<u64>,
    #[command(flatten)]
    http: http::HttpArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum TimeoutAction {
    /// The command goes on as a background job; the call returns what it printed so far.
    Background,
    /// The command's process tree is stopped (SIGTERM, then SIGKILL after 2 s).
    Kill,
}

#[derive(Args, Debug)]
struct SchemaArgs {
    /// The shape of the definitions.
    #[arg(long, value_enum, default_value_t = SchemaFormat::Mcp)]
    format: SchemaFormat,
    /// The root the description names. Default: the current directory.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Include the output schemas, as `agent-bash mcp --structured` lists them.
    #[arg(long)]
    structured: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SchemaFormat {
    /// `{"tools": [...]}`, as `tools/list` answers.
    Mcp,
    /// The `tools` array of OpenAI's Chat Completions API.
    Openai,
    /// The `tools` array of OpenAI's Responses API.
    OpenaiResponses,
    /// The `tools` array of Anthropic's Messages API.
    Anthropic,
    /// The `tools` array of the Gemini API (`functionDeclarations`).
    Gemini,
}

fn main() -> ExitCode {
    // A confined call re-executes this program as its supervisor: that must happen before
    // anything else (no thread, no runtime).
    agent_bash_core::sandbox::supervise_if_asked();
    match run_cli() {
        Ok(code) => code,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "agent-bash: error: {err:#}");
            ExitCode::from(TOOL_FAILURE)
        }
    }
}

fn run_cli() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => Ok(run::main(args)),
        Command::Mcp(args) => mcp(args),
        Command::Schema(args) => schema(&args),
        Command::Config(args) => show_config(args),
        Command::Check(args) => check(args),
        Command::Sandbox(SandboxCommand::Probe) => probe(),
        Command::Term(args) => term::main(args),
    }
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    use agent_bash_core::Decision;
    let (root, settings) = args.session.load(Vec::new())?;
    // The session's own policy: it reads command names from the environment its shell gets.
    let session = Session::new(root, settings.config)?;
    let verdict = session.check(&args.command.join(" "));
    if args.json {
        print(&serde_json::to_string_pretty(&verdict)?)?;
    } else {
        print(&render::verdict(&verdict))?;
    }
    Ok(ExitCode::from(match verdict.decision {
        Decision::Allow => 0,
        Decision::Ask => 1,
        Decision::Deny => 2,
        Decision::Suggest => 3,
    }))
}

/// Prints `text` and a newline on stdout. A closed pipe (`agent-bash … | head`) is the
/// reader's choice, not a failure.
pub(crate) fn print(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(err).context("cannot write to stdout")
        }
        _ => Ok(()),
    }
}

/// The session root a command names, or the current directory.
fn root_or_cwd(root: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match root {
        Some(root) => Ok(root),
        None => std::env::current_dir().context("cannot read the current directory"),
    }
}

/// The settings of a session at `root`, with `flags` as the last layer. `--trust-project`
/// is a layer of the user's, like every flag: it lists the root in `trust.roots`. What an
/// untrusted project file was not allowed to set is said on stderr, one line a key.
fn settings(
    root: &std::path::Path,
    config_file: Option<PathBuf>,
    trust_project: bool,
    mut flags: Vec<(String, toml::Value)>,
) -> anyhow::Result<Settings> {
    if trust_project {
        let root = root.display().to_string();
        flags.push(flag("trust.roots", toml::Value::Array(vec![root.into()])));
    }
    let sources = Sources {
        config_file,
        env: std::env::vars().collect(),
        flags,
        state_dir: agent_bash_core::sandbox::state_dir(),
        ..Sources::default()
    };
    let mut settings = agent_bash_core::settings::load(root, &sources)?;
    for ignored in &settings.ignored {
        eprintln!("agent-bash: {ignored}");
    }
    // This program supervises its own confined calls (`supervise_if_asked` in `main`).
    settings.config.supervisor =
        Some(std::env::current_exe().context("cannot find this program's own path")?);
    Ok(settings)
}

/// Starts the sandbox's launcher (`sandbox::start_launcher`) now, so that it probes the
/// kernel while the session is set up. Failing that, the session starts it when a call
/// first needs it, and says why it cannot.
pub(crate) fn start_launcher(config: &agent_bash_core::Config) {
    if let Err(err) = agent_bash_core::sandbox::start_launcher(config) {
        tracing::debug!("the sandbox's launcher did not start early: {err}");
    }
}

/// `agent-bash sandbox probe`: the kernel's features, then each mode's gaps.
fn probe() -> anyhow::Result<ExitCode> {
    use agent_bash_core::sandbox::{self, SandboxConfig, SandboxMode};
    // Before any thread: the probe forks.
    let probe = sandbox::probe();
    let mut text = probe.report();
    let modes = [
        (SandboxMode::WorkspaceWrite, true),
        (SandboxMode::WorkspaceWrite, false),
        (SandboxMode::ReadOnly, false),
    ];
    for (mode, network) in modes {
        let config = SandboxConfig {
            mode,
            network,
            ..SandboxConfig::default()
        };
        let gaps = sandbox::gaps_of(&config, &probe);
        let network = if network { "network on" } else { "network off" };
        text.push_str(&format!("\n{} ({network}): ", mode.name()));
        if gaps.is_empty() {
            text.push_str("fully enforced");
        } else {
            text.push_str("not enforced:");
            for gap in gaps {
                text.push_str(&format!("\n  - {gap}"));
            }
        }
    }
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn show_config(args: ConfigArgs) -> anyhow::Result<ExitCode> {
    let (_, settings) = args.session.load(Vec::new())?;
    print(&settings.explain())?;
    Ok(ExitCode::SUCCESS)
}

/// A flag's value as a settings value.
fn flag(key: &str, value: impl Into<toml::Value>) -> (String, toml::Value) {
    (key.to_string(), value.into())
}

/// `--structured` as a settings layer: on when given, the lower layers' value when not.
fn structured_flag(structured: bool) -> Vec<(String, toml::Value)> {
    structured
        .then(|| flag("mcp.structured", true))
        .into_iter()
        .collect()
}

fn int(value: impl TryInto<i64>) -> toml::Value {
    toml::Value::Integer(value.try_into().unwrap_or(i64::MAX))
}

fn schema(args: &SchemaArgs) -> anyhow::Result<ExitCode> {
    let root = std::path::absolute(root_or_cwd(args.root.clone())?)?;
    let format = match args.format {
        SchemaFormat::Mcp => Format::Mcp,
        SchemaFormat::Openai => Format::Openai,
        SchemaFormat::OpenaiResponses => Format::OpenaiResponses,
        SchemaFormat::Anthropic => Format::Anthropic,
        SchemaFormat::Gemini => Format::Gemini,
    };
    // The descriptions name the limits, so they follow the settings of that root.
    let flags = structured_flag(args.structured);
    let config = settings(&root, None, false, flags)?.config;
    let definitions = agent_bash_mcp::definitions(format, &root, &config);
    print(&serde_json::to_string_pretty(&definitions)?)?;
    Ok(ExitCode::SUCCESS)
}

/// A server's calls each take and give back a few buffers of 256 KiB (pipe reads, spill
/// writes). glibc serves such sizes from mmap at first, then raises its threshold after the
/// first is freed and serves them from the heap, whose freed pages it keeps: 16 calls at
/// once left the server 10 MiB larger for good. A fixed threshold keeps them mapped and
/// unmapped: over 30,000 calls, 16 at once, the RSS at the end went from 21.7 to 16.5 MiB
/// at the same calls per second. (musl's allocator gives large blocks back on its own.)
fn keep_large_buffers_out_of_the_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt(3) of a documented parameter, before any other thread runs.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

fn mcp(args: McpArgs) -> anyhow::Result<ExitCode> {
    let http = args.http.options()?;
    keep_large_buffers_out_of_the_heap();
    init_logging(args.verbose, args.log_file.as_deref())?;
    let mut flags = structured_flag(args.structured);
    flags.extend(args.sandbox.flags());
    if let Some(max_jobs) = args.max_jobs {
        flags.push(flag("max_jobs", int(max_jobs)));
    }
    if let Some(action) = args.on_timeout {
        let action = match action {
            TimeoutAction::Background => "background",
            TimeoutAction::Kill => "kill",
        };
        flags.push(flag("on_timeout", action));
    }
    if let Some(target) = args.target {
        flags.push(flag("target", target));
    }
    let (root, mut settings) = if args.serve_target {
        args.session.load_as_target(flags)?
    } else {
        args.session.load(flags)?
    };
    if args.serve_target {
        settings.config.caller_decides = true;
        settings.config.first_id = args.first_id.unwrap_or(1);
    }
    let far_settings = settings.for_target();
    if http.is_some() && !settings.config.target.is_local() {
        anyhow::bail!(
            "--http serves commands on this machine: run `agent-bash mcp --http` on the target \
             itself rather than with --target"
        );
    }
    if settings.config.sandbox.supervised() && settings.config.target.is_local() {
        start_launcher(&settings.config);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // OpenTelemetry, when the settings ask for it (not on a target's far side: the side that
    // started it reports the calls).
    let telemetry = (!args.serve_target)
        .then(|| agent_bash_mcp::Telemetry::start(&settings.config, runtime.handle()))
        .flatten();
    if let Some(options) = http {
        // One session per token, each with its own range of job and terminal ids.
        let sessions = (0..options.tokens.len() as u64)
            .map(|owner| {
                let mut config = settings.config.clone();
                config.first_id = owner * agent_bash_mcp::IDS_PER_OWNER + 1;
                Session::new(root.clone(), config).map(Arc::new)
            })
            .collect::<Result<Vec<_>, _>>()?;
        tracing::info!(root = %root.display(), tokens = sessions.len(), "serving MCP over HTTP");
        let served = runtime.block_on(async {
            let stop = stop_signal()?;
            agent_bash_mcp::serve_http(sessions, options, stop)
                .await
                .context("cannot serve HTTP")
        });
        // The last spans and metrics go out (a short bound) while the runtime still runs.
        if let Some(telemetry) = telemetry {
            telemetry.shutdown();
        }
        runtime.shutdown_timeout(std::time::Duration::from_millis(100));
        agent_bash_core::sandbox::stop_launcher();
        served?;
        return Ok(ExitCode::SUCCESS);
    }
    let session = Session::new(root, settings.config)?;
    tracing::info!(root = %session.root().display(), "serving MCP on stdio");
    let served = runtime.block_on(async {
        let stop = stop_signal()?;
        let (stdin, stdout) = agent_bash_mcp::rmcp::transport::io::stdio_pipes();
        agent_bash_mcp::Server::new(Arc::new(session))
            .with_target_settings(far_settings)
            .serve(stdin, stdout, stop)
            .await
            .map_err(anyhow::Error::from)
    });
    if let Some(telemetry) = telemetry {
        telemetry.shutdown();
    }
    // A blocking read of stdin (when it is not a pipe) must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    agent_bash_core::sandbox::stop_launcher();
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Completes at the first SIGTERM or SIGINT.
fn stop_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}

/// Logs to stderr (never stdout: it carries the protocol), and to `file` when given.
/// `RUST_LOG` overrides the levels.
fn init_logging(verbose: bool, file: Option<&std::path::Path>) -> anyhow::Result<()> {
    use tracing_subscriber::EnvFilter;
    use tracing_subscriber::fmt::writer::{BoxMakeWriter, MakeWriterExt};
    let default = if verbose {
        "debug"
    } else {
        "agent_bash=info,agent_bash_mcp=info,agent_bash_core=info,warn"
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let writer = match file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open the log file {}", path.display()))?;
            BoxMakeWriter::new(std::io::stderr.and(std::sync::Mutex::new(file)))
        }
        None => BoxMakeWriter::new(std::io::stderr),
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .init();
    Ok(())
}
