//! `agent-bash schema`: the tool definitions for harnesses that call functions directly.

use serde_json::Value;

use crate::support::{agent_bash, agent_bash_env};

fn schema(format: &str, root: &str) -> Value {
    schema_with(&["--format", format, "--root", root])
}

fn schema_with(args: &[&str]) -> Value {
    let run = agent_bash(&[&["schema"], args].concat());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|err| panic!("{err}: {}", run.stdout))
}

#[test]
fn every_format_describes_bash_with_the_same_arguments() {
    let mcp = schema("mcp", "/srv/project");
    let bash = &mcp["tools"][0];
    assert_eq!(bash["name"], "bash");
    assert_eq!(
        bash["inputSchema"]["required"],
        serde_json::json!(["command"])
    );
    assert!(bash.get("outputSchema").is_none(), "text results: {bash}");
    let description = bash["description"].as_str().unwrap_or_default();
    assert!(description.contains("/srv/project"), "{description}");

    let openai = schema("openai", "/srv/project");
    assert_eq!(openai[0]["type"], "function");
    assert_eq!(openai[0]["function"]["name"], "bash");
    assert_eq!(openai[0]["function"]["parameters"], bash["inputSchema"]);

    let anthropic = schema("anthropic", "/srv/project");
    assert_eq!(anthropic[0]["name"], "bash");
    assert_eq!(anthropic[0]["input_schema"], bash["inputSchema"]);
    assert_eq!(anthropic[0]["description"], bash["description"]);

    let responses = schema("openai-responses", "/srv/project");
    assert_eq!(responses[0]["type"], "function");
    assert_eq!(responses[0]["name"], "bash");
    assert_eq!(responses[0]["parameters"], bash["inputSchema"]);

    let gemini = schema("gemini", "/srv/project");
    let declaration = &gemini[0]["functionDeclarations"][0];
    assert_eq!(declaration["name"], "bash");
    assert_eq!(declaration["description"], bash["description"]);
    assert_eq!(declaration["parameters"]["type"], "OBJECT");
    assert_eq!(
        declaration["parameters"]["properties"]["command"]["type"],
        "STRING"
    );
    assert_eq!(
        declaration["parameters"]["required"],
        bash["inputSchema"]["required"]
    );
}

#[test]
fn structured_definitions_carry_flat_output_schemas_led_by_the_text() {
    let mcp = schema_with(&["--structured", "--root", "/srv/project"]);
    let tools = mcp["tools"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "bash",
            "bash_output",
            "bash_kill",
            "bash_jobs",
            "terminal_open",
            "terminal_send",
            "terminal_view",
            "terminal_close"
        ]
    );
    for tool in &tools {
        let properties = &tool["outputSchema"]["properties"];
        let first = properties
            .as_object()
            .and_then(|p| p.keys().next().cloned());
        assert_eq!(first.as_deref(), Some("text"), "{tool}");
        assert!(tool["outputSchema"].get("$defs").is_none(), "{tool}");
    }
    assert_eq!(
        tools[0]["outputSchema"]["properties"]["exit_code"]["type"],
        serde_json::json!(["integer", "null"])
    );
    // The setting does what the flag does.
    let run = agent_bash_env(
        &["schema", "--root", "/srv/project"],
        &[("AGENT_BASH_MCP_STRUCTURED", "true")],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let from_env: Value = serde_json::from_str(&run.stdout).unwrap_or_default();
    assert_eq!(from_env, mcp);
}

#[test]
fn an_unknown_format_is_a_usage_error() {
    let run = agent_bash(&["schema", "--format", "xml"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("invalid value 'xml'"), "{}", run.stderr);
    assert!(
        run.stderr.contains("openai-responses") && run.stderr.contains("gemini"),
        "names the choices: {}",
        run.stderr
    );
}
