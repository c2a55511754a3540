//! The tool definitions' tests: the schemas against the argument parser and the results,
//! the description's figures, and each API's form.

use agent_bash_core::{JobList, JobOutput, OnTimeout, Outcome};

use super::bash::{bash_description, bash_input_schema};
use super::*;
use crate::args;
use crate::reply::{LEFT_OUT, TEXT_FIELD};

#[test]
fn the_input_schema_lists_exactly_the_arguments_the_parser_takes() {
    let schema = bash_input_schema(&Config::default());
    let properties = schema["properties"].as_object().map(|p| {
        let mut names: Vec<&str> = p.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    });
    let mut accepted = args::BASH_ARGUMENTS.to_vec();
    accepted.sort_unstable();
    assert_eq!(properties, Some(accepted));
    assert_eq!(schema["required"], json!(["command"]));
}

fn structured() -> Config {
    let mut config = Config::default();
    config.mcp.structured = true;
    config
}

/// The output schema of each tool, by name.
fn output_schemas(config: &Config) -> Vec<(String, Option<Value>)> {
    all(Path::new("/srv/project"), config)
        .into_iter()
        .map(|tool| {
            let schema = tool.output_schema.map(|s| Value::Object((*s).clone()));
            (tool.name.to_string(), schema)
        })
        .collect()
}

#[test]
fn output_schemas_are_declared_only_for_structured_results() {
    for (name, schema) in output_schemas(&Config::default()) {
        assert_eq!(schema, None, "{name}");
    }
    for (name, schema) in output_schemas(&structured()) {
        assert!(schema.is_some(), "{name}");
    }
}

/// A result of each tool, in the order of `all`, as JSON.
fn examples() -> Vec<Value> {
    let info = agent_bash_core::JobInfo {
        job_id: 1,
        command: "sleep 9".into(),
        description: Some("wait a while".into()),
        cwd: "/srv/project".into(),
        pid: Some(7),
        origin: agent_bash_core::JobOrigin::Background,
        status: agent_bash_core::JobStatus::Running,
        exit_code: None,
        signal: None,
        runtime_ms: 5,
        timed_out: false,
        stdout_bytes: 0,
        stderr_bytes: 0,
        stdout_path: "/o".into(),
        stderr_path: "/e".into(),
    };
    let job = JobOutput {
        job: info.clone(),
        stdout: String::new(),
        stderr: String::new(),
        stdout_stats: Default::default(),
        stderr_stats: Default::default(),
        pattern: None,
        pattern_matched: None,
        waited_ms: 0,
        notes: Vec::new(),
    };
    [
        serde_json::to_value(Outcome::default()),
        serde_json::to_value(&job),
        serde_json::to_value(&job),
        serde_json::to_value(JobList { jobs: vec![info] }),
    ]
    .into_iter()
    .map(|example| example.unwrap_or_else(|err| panic!("{err}")))
    .collect()
}

#[test]
fn each_output_schema_is_flat_and_describes_every_field_with_its_type() {
    let examples = examples();
    for ((name, schema), example) in output_schemas(&structured()).into_iter().zip(examples) {
        let schema = schema.unwrap_or_default();
        let text = serde_json::to_string(&schema).unwrap_or_default();
        for nested in ["$defs", "$ref", "$schema", "anyOf", "oneOf"] {
            assert!(!text.contains(nested), "{name}: {nested} in {text}");
        }
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"][0], TEXT_FIELD, "{name}");
        assert_eq!(schema["properties"][TEXT_FIELD]["type"], "string");
        let properties = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let fields = example.as_object().cloned().unwrap_or_default();
        assert!(!fields.is_empty(), "{name}");
        for (field, value) in &fields {
            if LEFT_OUT.contains(&field.as_str()) {
                assert!(properties.get(field).is_none(), "{name}: {field}");
                continue;
            }
            let types = &properties
                .get(field)
                .unwrap_or_else(|| panic!("{name}: {field} is missing from {text}"))["type"];
            let kind = match value {
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Number(_) => "integer",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
            };
            let allowed = types == kind
                || types
                    .as_array()
                    .is_some_and(|t| t.contains(&Value::from(kind)));
            assert!(allowed, "{name}: {field} = {value} is not {types}");
        }
        // Every field but `text` and an optional refusal is one the result has.
        for field in properties.keys() {
            assert!(
                fields.contains_key(field) || [TEXT_FIELD, "refused"].contains(&field.as_str()),
                "{name}: {field}"
            );
        }
    }
    let bash = &output_schemas(&structured())[0].1;
    let bash = bash.clone().unwrap_or_default();
    assert_eq!(bash["properties"]["job"]["type"], json!(["object", "null"]));
    assert_eq!(
        bash["properties"]["exit_code"]["type"],
        json!(["integer", "null"])
    );
    assert_eq!(bash["properties"]["notes"]["type"], "array");
}

#[test]
fn the_description_names_the_root_and_the_defaults() {
    let text = bash_description(Path::new("/srv/project"), &Config::default());
    for expected in [
        "/srv/project",
        "120 s",
        "3600 s",
        "50 KiB",
        "2000 lines",
        "25%",
    ] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }
    assert!(text.len() < 1300, "{} bytes", text.len());
    assert!(text.contains("goes on as a background job"), "{text}");
    assert!(text.contains("`bash_output`"), "{text}");
    let kill = Config {
        on_timeout: OnTimeout::Kill,
        ..Config::default()
    };
    let text = bash_description(Path::new("/srv/project"), &kill);
    assert!(
        text.contains("then the whole process tree is killed"),
        "{text}"
    );
    assert!(text.contains("`bash_output`"), "jobs still exist: {text}");
    let no_jobs = Config {
        max_jobs: 0,
        ..Config::default()
    };
    let text = bash_description(Path::new("/srv/project"), &no_jobs);
    assert!(
        text.contains("then the whole process tree is killed"),
        "{text}"
    );
    assert!(!text.contains("background"), "{text}");
}

#[test]
fn each_format_carries_the_same_schema() {
    let root = Path::new("/r");
    let config = Config::default();
    let mcp = definitions(Format::Mcp, root, &config);
    let openai = definitions(Format::Openai, root, &config);
    let anthropic = definitions(Format::Anthropic, root, &config);
    let input = &mcp["tools"][0]["inputSchema"];
    assert_eq!(mcp["tools"][0]["name"], "bash");
    assert!(mcp["tools"][0].get("outputSchema").is_none());
    let structured = definitions(Format::Mcp, root, &structured());
    assert!(structured["tools"][0]["outputSchema"].is_object());
    assert_eq!(&openai[0]["function"]["parameters"], input);
    assert_eq!(openai[0]["type"], "function");
    assert_eq!(&anthropic[0]["input_schema"], input);
    assert_eq!(anthropic[0]["name"], "bash");
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .map(|object| object.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

/// The Responses API's function tool (its reference, "Function"): `type: "function"`,
/// `name`, `description`, `parameters` and `strict` at the top level, nothing nested
/// under `function` as in Chat Completions.
#[test]
fn responses_tools_have_the_documented_function_shape() {
    let root = Path::new("/r");
    let mcp = definitions(Format::Mcp, root, &Config::default());
    let responses = definitions(Format::OpenaiResponses, root, &Config::default());
    let tools = responses.as_array().cloned().unwrap_or_default();
    assert_eq!(tools.len(), 8);
    for (tool, listed) in tools
        .iter()
        .zip(mcp["tools"].as_array().into_iter().flatten())
    {
        assert_eq!(
            keys(tool),
            ["description", "name", "parameters", "strict", "type"]
        );
        assert_eq!(tool["type"], "function");
        assert_eq!(tool["name"], listed["name"]);
        assert_eq!(tool["description"], listed["description"]);
        assert_eq!(tool["parameters"], listed["inputSchema"]);
        // Strict mode would need every property required and none is optional here.
        assert_eq!(tool["strict"], false);
    }
}

/// A Gemini `Schema`: only its documented fields, upper-case types from its `Type` enum,
/// `required` naming properties that exist, property names as the reference allows them.
fn assert_gemini_schema(schema: &Value, at: &str) {
    for key in keys(schema) {
        assert!(
            GEMINI_SCHEMA_FIELDS.contains(&key),
            "{at}: {key} is not a Schema field"
        );
    }
    let types = [
        "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL",
    ];
    let kind = schema["type"].as_str().unwrap_or_default();
    assert!(types.contains(&kind), "{at}: type {kind:?}");
    let properties = schema["properties"].as_object();
    for (name, property) in properties.into_iter().flatten() {
        let first = name.chars().next().unwrap_or('0');
        assert!(first.is_ascii_alphabetic() || first == '_', "{at}.{name}");
        assert!(name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        assert_gemini_schema(property, &format!("{at}.{name}"));
    }
    for required in schema["required"].as_array().into_iter().flatten() {
        let name = required.as_str().unwrap_or_default();
        assert!(
            properties.is_some_and(|p| p.contains_key(name)),
            "{at}: {name}"
        );
    }
}

/// Gemini's `tools` field (its reference, "Tool" and "FunctionDeclaration"): one tool with
/// `functionDeclarations`, each a `name` (letters, digits, `_.-:`, at most 64), a
/// `description` and `parameters` in Gemini's `Schema`, left out for a tool without
/// arguments. The conversion keeps what each argument is: its type, its description, its
/// bounds and whether it is required.
#[test]
fn gemini_declarations_have_the_documented_shape_and_the_same_arguments() {
    let root = Path::new("/r");
    let mcp = definitions(Format::Mcp, root, &Config::default());
    let gemini = definitions(Format::Gemini, root, &Config::default());
    assert_eq!(gemini.as_array().map(Vec::len), Some(1));
    assert_eq!(keys(&gemini[0]), ["functionDeclarations"]);
    let declarations = gemini[0]["functionDeclarations"].as_array().cloned();
    let declarations = declarations.unwrap_or_default();
    assert_eq!(declarations.len(), 8);
    for (declaration, listed) in declarations
        .iter()
        .zip(mcp["tools"].as_array().into_iter().flatten())
    {
        let name = declaration["name"].as_str().unwrap_or_default();
        assert_eq!(name, listed["name"]);
        assert!(!name.is_empty() && name.len() <= 64);
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-:".contains(c))
        );
        assert_eq!(declaration["description"], listed["description"]);
        let input = &listed["inputSchema"];
        let Some(parameters) = declaration.get("parameters") else {
            assert_eq!(input["properties"], json!({}), "{name} has arguments");
            assert_eq!(keys(declaration), ["description", "name"]);
            continue;
        };
        assert_eq!(keys(declaration), ["description", "name", "parameters"]);
        assert_gemini_schema(parameters, name);
        assert_eq!(parameters["type"], "OBJECT");
        assert_eq!(parameters["required"], input["required"]);
        assert_eq!(keys(&parameters["properties"]), keys(&input["properties"]));
        for (argument, property) in input["properties"].as_object().into_iter().flatten() {
            let converted = &parameters["properties"][argument];
            let kind = property["type"].as_str().map(str::to_ascii_uppercase);
            assert_eq!(
                converted["type"].as_str(),
                kind.as_deref(),
                "{name}.{argument}"
            );
            for field in ["description", "minimum", "maximum"] {
                assert_eq!(
                    converted.get(field),
                    property.get(field),
                    "{name}.{argument}"
                );
            }
        }
    }
}

#[test]
fn gemini_types_take_null_as_nullable_and_drop_unknown_keywords() {
    let schema = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "code": {"type": ["integer", "null"], "minimum": 0},
            "lines": {"type": "array", "items": {"type": "string"}},
        },
    });
    assert_eq!(
        gemini_schema(&schema),
        json!({
            "type": "OBJECT",
            "properties": {
                "code": {"type": "INTEGER", "nullable": true, "minimum": 0},
                "lines": {"type": "ARRAY", "items": {"type": "STRING"}},
            },
        })
    );
}
