//! The subcommands that only look and print: `check` (the policy's decision on a command),
//! `config` (the effective settings), `schema` (the tool definitions) and `sandbox probe`.

use std::path::PathBuf;
use std::process::ExitCode;

use agent_bash_core::{Session, render};
use agent_bash_mcp::Format;
use clap::{Args, ValueEnum};

use crate::print;
use crate::session_args::{SessionArgs, root_or_cwd, settings, structured_flag};

#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
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
pub(crate) struct ConfigArgs {
    #[command(flatten)]
    session: SessionArgs,
}

#[derive(Args, Debug)]
pub(crate) struct SchemaArgs {
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

pub(crate) fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
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

/// `agent-bash sandbox probe`: the kernel's features, then each mode's gaps.
pub(crate) fn probe() -> anyhow::Result<ExitCode> {
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

pub(crate) fn show_config(args: ConfigArgs) -> anyhow::Result<ExitCode> {
    let (_, settings) = args.session.load(Vec::new())?;
    print(&settings.explain())?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn schema(args: &SchemaArgs) -> anyhow::Result<ExitCode> {
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
