//! The output schemas of structured results: flat, led by the model's text, cheap for
//! clients to check each result against.

use rmcp::handler::server::tool::schema_for_output;
use rmcp::model::JsonObject;
use rmcp::schemars::JsonSchema;
use serde_json::{Value, json};

use super::object;
use crate::reply::{LEFT_OUT, TEXT_FIELD};

/// The output schema of a tool whose structured result is `T`'s fields led by the model's
/// text (`reply::Shape::Structured`): flat, each top-level field with its JSON type and its
/// doc, and no `$defs`, `$ref` or `$schema`, because clients check every result against it.
/// The official Python client (mcp 2.3.0) checks the schema against its metaschema once and
/// then each result; older ones (mcp 1.x) call `jsonschema.validate`, which does both on every
/// call. Measured with jsonschema 4.26 on `echo hi`'s result (benches/schema_cost.py):
///
/// | schema | bytes | `jsonschema.validate` (mcp 1.x, each call) | per call (mcp 2.3.0) |
/// |---|---|---|---|
/// | before: schemars' draft 2020-12, `$defs` and `$ref`s | 10484 | 48.2 ms | 0.57 ms |
/// | the same as draft-07 | 10569 | 10.1 ms | 0.55 ms |
/// | this one (flat, 2020-12 by default) | 805 | 6.7 ms | 0.10 ms |
/// | this one with `$schema` draft-07 | 857 | 1.7 ms | 0.10 ms |
///
/// Draft-07 would spare mcp 1.x clients 5 ms more, but 2020-12 is the dialect the MCP
/// specification makes the default and every client must support; a `$schema` naming another
/// is optional for clients to accept.
pub(super) fn output_schema<T: JsonSchema + 'static>() -> JsonObject {
    let full = schema_for_output::<T>();
    let defs = full.get("$defs").and_then(Value::as_object);
    let mut properties = JsonObject::new();
    properties.insert(
        TEXT_FIELD.into(),
        json!({"type": "string", "description": "What the model reads: the output and status in words."}),
    );
    let fields = full.get("properties").and_then(Value::as_object);
    for (name, field) in fields.into_iter().flatten() {
        if LEFT_OUT.contains(&name.as_str()) {
            continue;
        }
        let mut flat = JsonObject::new();
        if let Some(types) = json_types(field, defs) {
            flat.insert("type".into(), types);
        }
        properties.insert(name.clone(), Value::Object(flat));
    }
    let required = full.get("required").and_then(Value::as_array);
    let required: Vec<&str> = std::iter::once(TEXT_FIELD)
        .chain(required.into_iter().flatten().filter_map(Value::as_str))
        .filter(|name| !LEFT_OUT.contains(name))
        .collect();
    object(json!({
        "type": "object",
        "properties": properties,
        "required": required,
    }))
}

/// The JSON types a value of `schema` may have, as `type` writes them (`"object"`,
/// `["integer", "null"]`), through `$ref`s into `defs`, `anyOf` and `oneOf`; `None` when
/// some branch does not say.
fn json_types(schema: &Value, defs: Option<&JsonObject>) -> Option<Value> {
    let mut types = Vec::new();
    collect_types(schema, defs, &mut types, 0)?;
    match types.as_slice() {
        [one] => Some(Value::from(*one)),
        _ => Some(Value::from(types)),
    }
}

fn collect_types<'s>(
    schema: &'s Value,
    defs: Option<&'s JsonObject>,
    types: &mut Vec<&'s str>,
    depth: usize,
) -> Option<()> {
    let mut add = |name: &'s str| {
        if !types.contains(&name) {
            types.push(name);
        }
    };
    match schema.get("type") {
        Some(Value::String(name)) => add(name),
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).for_each(add),
        _ => {
            // A definition that refers to itself would loop; none is this deep.
            if depth > 8 {
                return None;
            }
            if let Some(name) = schema.get("$ref").and_then(Value::as_str) {
                let name = name.strip_prefix("#/$defs/")?;
                return collect_types(defs?.get(name)?, defs, types, depth + 1);
            }
            let branches = schema.get("anyOf").or_else(|| schema.get("oneOf"));
            for branch in branches?.as_array()? {
                collect_types(branch, defs, types, depth + 1)?;
            }
        }
    }
    Some(())
}
