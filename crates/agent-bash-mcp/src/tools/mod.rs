//! The tool definitions: names, the descriptions the model reads, and the JSON schemas, in
//! MCP form and in the function-calling forms of the OpenAI and Anthropic APIs.
//!
//! Each family of tools is declared in its own file (`bash`, `jobs`, `terminal`); this one
//! lists them and turns them into the other APIs' forms.

mod bash;
mod jobs;
mod output_schema;
mod terminal;
#[cfg(test)]
mod tests;

use std::path::Path;
use std::sync::Arc;

use agent_bash_core::Config;
use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

/// The tools' names: part of the contract with every harness.
pub(crate) const BASH: &str = "bash";
pub(crate) const OUTPUT: &str = "bash_output";
pub(crate) const KILL: &str = "bash_kill";
pub(crate) const JOBS: &str = "bash_jobs";
pub(crate) const TERMINAL_OPEN: &str = "terminal_open";
pub(crate) const TERMINAL_SEND: &str = "terminal_send";
pub(crate) const TERMINAL_VIEW: &str = "terminal_view";
pub(crate) const TERMINAL_CLOSE: &str = "terminal_close";

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// Every tool this server offers, in MCP form. The output schemas are declared only when
/// results carry structure (`mcp.structured`): a client checks each result against a
/// declared schema and rejects one without `structuredContent`.
pub(crate) fn all(root: &Path, config: &Config) -> Vec<Tool> {
    let structured = config.mcp.structured;
    let with_output = |(tool, schema): (Tool, fn() -> JsonObject)| {
        if structured {
            tool.with_raw_output_schema(Arc::new(schema()))
        } else {
            tool
        }
    };
    let mut tools = vec![with_output(bash::bash_tool(root, config))];
    tools.extend(jobs::job_tools(config).map(&with_output));
    if config.terminal.max_sessions > 0 {
        tools.extend(terminal::terminal_tools(config).map(&with_output));
    }
    tools
}

/// The shapes in which `agent-bash schema` prints the tool definitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `{"tools": [...]}` as an MCP server lists them (`tools/list`).
    Mcp,
    /// The `tools` array of the OpenAI Chat Completions API (`{"type": "function", ...}`).
    Openai,
    /// The `tools` array of the OpenAI Responses API: function tools with the name, the
    /// description and `parameters` at the top level, and `strict: false` (strict mode asks
    /// for every property to be required, and most of ours are optional).
    OpenaiResponses,
    /// The `tools` array of the Anthropic Messages API (`input_schema`).
    Anthropic,
    /// The `tools` array of the Gemini API: one tool of `functionDeclarations`, whose
    /// `parameters` are in Gemini's `Schema` (a subset of OpenAPI 3.0: upper-case types, no
    /// `additionalProperties`); a tool without arguments has no `parameters`.
    Gemini,
}

/// The tool definitions in `format`, for harnesses that call functions directly. `root` and
/// `config` are those of the session that will run the calls: the descriptions and schemas
/// state its limits.
///
/// ```
/// use std::path::Path;
/// use agent_bash_core::Config;
/// use agent_bash_mcp::{Format, definitions};
///
/// let tools = definitions(Format::Openai, Path::new("/srv/project"), &Config::default());
/// assert_eq!(tools.as_array().map(Vec::len), Some(8));
/// assert_eq!(tools[0]["type"], "function");
/// assert_eq!(tools[0]["function"]["name"], "bash");
///
/// let mcp = definitions(Format::Mcp, Path::new("/srv/project"), &Config::default());
/// assert_eq!(mcp["tools"][3]["name"], "bash_jobs");
/// ```
pub fn definitions(format: Format, root: &Path, config: &Config) -> Value {
    let tools = all(root, config);
    match format {
        Format::Mcp => json!({ "tools": tools }),
        Format::Openai => Value::Array(
            tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": tool.name,
                            "description": tool.description,
                            "parameters": tool.input_schema,
                        }
                    })
                })
                .collect(),
        ),
        Format::OpenaiResponses => Value::Array(
            tools
                .iter()
                .map(|tool| {
                    json!({
                        "type": "function",
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.input_schema,
                        "strict": false,
                    })
                })
                .collect(),
        ),
        Format::Anthropic => Value::Array(
            tools
                .iter()
                .map(|tool| {
                    json!({
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.input_schema,
                    })
                })
                .collect(),
        ),
        Format::Gemini => {
            let declarations: Vec<Value> = tools
                .iter()
                .map(|tool| {
                    let mut declaration = json!({
                        "name": tool.name,
                        "description": tool.description,
                    });
                    let input = Value::Object((*tool.input_schema).clone());
                    let has_arguments = input["properties"]
                        .as_object()
                        .is_some_and(|properties| !properties.is_empty());
                    if has_arguments {
                        declaration["parameters"] = gemini_schema(&input);
                    }
                    declaration
                })
                .collect();
            json!([{ "functionDeclarations": declarations }])
        }
    }
}

/// The fields of Gemini's `Schema` object (its API reference); a JSON Schema keyword outside
/// them, such as `additionalProperties` or `$schema`, is refused there, so it is left out.
const GEMINI_SCHEMA_FIELDS: [&str; 20] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "pattern",
    "anyOf",
    "default",
];

/// A JSON Schema in Gemini's `Schema` shape: types in upper case (`["integer", "null"]`
/// becomes `INTEGER` with `nullable`), nested schemas converted alike, other keywords dropped.
fn gemini_schema(schema: &Value) -> Value {
    let Some(fields) = schema.as_object() else {
        return schema.clone();
    };
    let mut converted = serde_json::Map::new();
    for (key, value) in fields {
        if !GEMINI_SCHEMA_FIELDS.contains(&key.as_str()) {
            continue;
        }
        let value = match key.as_str() {
            "type" => {
                let names: Vec<&str> = match value {
                    Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
                    other => other.as_str().into_iter().collect(),
                };
                if names.contains(&"null") {
                    converted.insert("nullable".into(), Value::Bool(true));
                }
                let Some(name) = names.into_iter().find(|name| *name != "null") else {
                    continue;
                };
                Value::String(name.to_ascii_uppercase())
            }
            "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, property)| (name.clone(), gemini_schema(property)))
                    .collect(),
            ),
            "items" => gemini_schema(value),
            "anyOf" => Value::Array(
                value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(gemini_schema)
                    .collect(),
            ),
            _ => value.clone(),
        };
        converted.insert(key.clone(), value);
    }
    Value::Object(converted)
}
