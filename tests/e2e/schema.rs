//! `agent-bash schema`: the tool definitions for harnesses that call functions directly.

use serde_json::Value;

use crate::support::agent_bash;

fn schema(format: &str, root: &str) -> Value {
    let run = agent_bash(&["schema", "--format", format, "--root", root]);
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
    assert_eq!(bash["outputSchema"]["type"], "object");
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
}

#[test]
fn an_unknown_format_is_a_usage_error() {
    let run = agent_bash(&["schema", "--format", "xml"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("invalid value 'xml'"), "{}", run.stderr);
    assert!(
        run.stderr.contains("anthropic"),
        "names the choices: {}",
        run.stderr
    );
}
