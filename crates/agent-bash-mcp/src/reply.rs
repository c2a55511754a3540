//! What a `tools/call` answers: the model's text, the structured outcome, and an image block
//! when the command printed an image.

use agent_bash_core::{Error, JobList, JobOutput, Outcome, render};
use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock};

/// Images larger than this stay in their file: a model gains little from a bigger one, and
/// base64 makes it a third larger again in the client's context.
pub(crate) const MAX_IMAGE_BYTES: u64 = 4 * 1024 * 1024;

/// The answer for a command that ran: `isError` unless it exited 0 on its own.
pub(crate) async fn outcome(outcome: &Outcome) -> CallToolResult {
    let mut content = vec![ContentBlock::text(render::text(outcome))];
    if let Some(image) = image(outcome).await {
        content.push(image);
    }
    let mut result = if outcome.success() {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    result.structured_content = serde_json::to_value(outcome).ok();
    result
}

/// The answer to `bash_output` or `bash_kill`: the job's new output and status. Reading
/// a job that failed is not an error of the read; `isError` is for reads that could not
/// be done (an unknown job, a bad pattern).
pub(crate) fn job_output(read: Result<JobOutput, Error>) -> CallToolResult {
    match read {
        Ok(output) => {
            let mut result =
                CallToolResult::success(vec![ContentBlock::text(render::job_output(&output))]);
            result.structured_content = serde_json::to_value(&output).ok();
            result
        }
        Err(err) => refusal(&err.to_string()),
    }
}

/// The answer to `bash_jobs`.
pub(crate) fn job_list(list: &JobList) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(render::job_list(list))]);
    result.structured_content = serde_json::to_value(list).ok();
    result
}

/// The answer for a call that could not run: the reason, and what to fix.
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
