//! What a `tools/call` answers: the model's text (and an image block when the command printed
//! an image), plus, when structured results are on, the same text leading the result's fields.
//!
//! Text is the default because clients such as Claude Code, OpenCode and VS Code hand the
//! model `JSON.stringify(structuredContent)` whenever it is present and drop the text blocks:
//! a structured result would replace the designed view with a JSON dump. When structure is
//! asked for (`mcp.structured`), it begins with `text` so that such a client still shows the
//! view first, and leaves out what the text already says (`LEFT_OUT`).

use agent_bash_core::{Error, JobList, JobOutput, Outcome, TerminalAnswer, render};
use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{Map, Value};

/// Images larger than this stay in their file: a model gains little from a bigger one, and
/// base64 makes it a third larger again in the client's context.
pub(crate) const MAX_IMAGE_BYTES: u64 = 4 * 1024 * 1024;

/// The field of a structured result that holds the model's text; always its first.
pub(crate) const TEXT_FIELD: &str = "text";

/// Fields of the engine's results that a structured result leaves out: the streams (and a
/// terminal's screen and scrollback) are in the text already, and the command is the caller's own argument (up to 1 MiB). A client
/// that stringifies the structure would otherwise put them in the context twice.
pub(crate) const LEFT_OUT: [&str; 5] = ["command", "stdout", "stderr", "screen", "scrollback"];

/// How the server shapes its results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The model's text (and image) only: no `structuredContent`, no `outputSchema`.
    Text,
    /// The text, and `structuredContent` led by the same text.
    Structured,
}

impl Shape {
    pub(crate) fn new(structured: bool) -> Shape {
        if structured {
            Shape::Structured
        } else {
            Shape::Text
        }
    }

    /// A result of `text`, with `fields` as its structure when structure is on.
    fn result(self, text: String, fields: &impl Serialize, success: bool) -> CallToolResult {
        let structured = match self {
            Shape::Text => None,
            Shape::Structured => structured(&text, fields),
        };
        let content = vec![ContentBlock::text(text)];
        let mut result = if success {
            CallToolResult::success(content)
        } else {
            CallToolResult::error(content)
        };
        result.structured_content = structured;
        result
    }
}

/// `{"text": text, ...fields but LEFT_OUT}`, in that order (serde_json keeps insertion
/// order: the `preserve_order` feature).
fn structured(text: &str, fields: &impl Serialize) -> Option<Value> {
    let Ok(Value::Object(fields)) = serde_json::to_value(fields) else {
        return None;
    };
    let mut out = Map::with_capacity(fields.len() + 1);
    out.insert(TEXT_FIELD.into(), Value::String(text.into()));
    out.extend(
        fields
            .into_iter()
            .filter(|(name, _)| !LEFT_OUT.contains(&name.as_str())),
    );
    Some(Value::Object(out))
}

/// The answer for a command that ran: `isError` unless it exited 0 on its own.
pub(crate) async fn outcome(outcome: &Outcome, shape: Shape) -> CallToolResult {
    let mut result = shape.result(render::text(outcome), outcome, outcome.success());
    if let Some(image) = image(outcome).await {
        result.content.push(image);
    }
    result
}

/// The answer to `bash_output` or `bash_kill`: the job's new output and status. Reading
/// a job that failed is not an error of the read; `isError` is for reads that could not
/// be done (an unknown job, a bad pattern).
pub(crate) fn job_output(read: Result<JobOutput, Error>, shape: Shape) -> CallToolResult {
    match read {
        Ok(output) => shape.result(render::job_output(&output), &output, true),
        Err(err) => refusal(&err.to_string()),
    }
}

/// The answer of a terminal tool. A refusal, or a program that ended with a non-zero
/// status or a signal, is not an error of the call; `isError` is for calls that could not be
/// done (an unknown terminal, a bad key name or regex).
pub(crate) fn terminal(answer: Result<TerminalAnswer, Error>, shape: Shape) -> CallToolResult {
    match answer {
        Ok(answer) => shape.result(render::terminal(&answer), &answer, true),
        Err(err) => refusal(&err.to_string()),
    }
}

/// The answer to `bash_jobs`.
pub(crate) fn job_list(list: &JobList, shape: Shape) -> CallToolResult {
    shape.result(render::job_list(list), list, true)
}

/// The answer for a call that could not run: the reason, and what to fix. Text only in
/// either shape: clients check structure against the output schema only when `isError` is
/// false.
pub(crate) fn refusal(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("error: {message}"))])
}

/// stdout as an MCP image block, when it is a whole PNG, JPEG, GIF or WebP of a sensible size.
async fn image(outcome: &Outcome) -> Option<ContentBlock> {
    let stats = &outcome.stdout_stats;
    let mime = stats.binary?.image_mime()?;
    if stats.total_bytes > MAX_IMAGE_BYTES || stats.spill_capped {
        return None;
    }
    let bytes = tokio::fs::read(stats.full_output_path.as_ref()?)
        .await
        .ok()?;
    // The file is the stream as it was read; anything else means it changed since.
    if bytes.len() as u64 != stats.total_bytes {
        return None;
    }
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    Some(ContentBlock::image(data, mime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_structure_begins_with_the_text_and_leaves_out_what_it_says() {
        let outcome = Outcome {
            command: "echo hi".into(),
            stdout: "hi".into(),
            exit_code: Some(0),
            ..Outcome::default()
        };
        let text = render::text(&outcome);
        let result = Shape::Structured.result(text.clone(), &outcome, true);
        let value = result.structured_content.clone().unwrap_or_default();
        let fields: Vec<&str> = value
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(fields.first(), Some(&TEXT_FIELD), "{value}");
        assert_eq!(value[TEXT_FIELD], text.as_str());
        for name in LEFT_OUT {
            assert!(!fields.contains(&name), "{name} in {value}");
        }
        assert!(
            fields.contains(&"exit_code") && fields.contains(&"cwd"),
            "{value}"
        );
        // And on the wire, the first key of the serialized result's structure is the text.
        let wire = serde_json::to_string(&result).unwrap_or_default();
        let structure = wire.split_once("\"structuredContent\":{").map(|(_, s)| s);
        assert!(
            structure.is_some_and(|s| s.starts_with("\"text\":\"hi\\n[exit 0")),
            "{wire}"
        );
    }

    #[test]
    fn text_results_carry_no_structure() {
        let result = Shape::Text.result("hi".into(), &Outcome::default(), false);
        assert_eq!(result.structured_content, None);
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.content.len(), 1);
    }
}
