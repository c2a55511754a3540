//! The `agent-bash` binary: the CLI face of the engine. The only place that prints.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use agent_bash_core::{Budget, CancellationToken, Config, Request, Session, render};
use anyhow::Context;
use clap::{Args, Parser, Subcommand};

/// Exit status when agent-bash itself fails (bad arguments, no bash), as `env` and
/// `timeout` do: distinct from any status the command's shell would give.
const TOOL_FAILURE: u8 = 125;

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
    /// Exits with the command's exit status (128 + N when a signal N killed it).
    Run(RunArgs),
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Session root: relative cwds resolve against it. Default: the current directory.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Working directory, relative to the root or absolute.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Seconds before the process tree is stopped (default 120, at most 3600).
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// Print the structured result as JSON instead of the model's text.
    #[arg(long)]
    json: bool,
    /// Most bytes of output text the model sees for the call.
    #[arg(long, value_name = "BYTES")]
    budget_bytes: Option<usize>,
    /// Most lines of output text the model sees for the call.
    #[arg(long, value_name = "LINES")]
    budget_lines: Option<usize>,
    /// Share of the budget given to the head of a cut stream, in percent.
    #[arg(long, value_name = "PERCENT")]
    head_percent: Option<usize>,
    /// Lines longer than this many chars are clipped.
    #[arg(long, value_name = "CHARS")]
    line_clip: Option<usize>,
    /// The shell code to run (several words are joined with spaces).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    command: Vec<String>,
}

fn main() -> ExitCode {
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
        Command::Run(args) => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            runtime.block_on(run(args))
        }
    }
}

async fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let mut config = Config::default();
    let defaults = Budget::default();
    config.budget = Budget {
        bytes: args.budget_bytes.unwrap_or(defaults.bytes),
        lines: args.budget_lines.unwrap_or(defaults.lines),
        head_percent: args.head_percent.unwrap_or(defaults.head_percent),
        line_clip_chars: args.line_clip.unwrap_or(defaults.line_clip_chars),
    };
    let root = match args.root {
        Some(root) => root,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let session = Session::new(&root, config)?;
    let request = Request {
        command: args.command.join(" "),
        cwd: args.cwd,
        timeout_secs: args.timeout,
    };

    // Ctrl-C or SIGTERM stops the command's tree and still prints what it printed.
    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        if let Ok(mut term) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            on_signal.cancel();
        }
    });
    let finished = session.run_with_cancel(request, &cancel).await?;
    let outcome = &finished.outcome;
    let printed = if args.json {
        render::json(outcome)
    } else {
        render::text(outcome)
    };
    let mut stdout = std::io::stdout().lock();
    if let Err(err) = writeln!(stdout, "{printed}").and_then(|()| stdout.flush()) {
        // A closed pipe (`agent-bash run … | head`) is the reader's choice, not a failure.
        if err.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(err).context("cannot write to stdout");
        }
    }
    let status = outcome.shell_status(finished.raw_signal);
    Ok(ExitCode::from(u8::try_from(status & 0xff).unwrap_or(1)))
}
