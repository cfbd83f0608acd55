//! Demo tools that ask the client for input in the middle of a task: elicitation
//! (one question, two at once) and sampling.

use anyhow::Result;
use futures::future::try_join;
use mcp_tasks_engine::{InputError, TaskContext};
use mcp_tasks_protocol::RpcError;
use mcp_tasks_server::{TaskSupport, Tool, ToolResult};
use serde_json::{json, Map, Value};

/// The three tools.
pub fn tools() -> Result<Vec<Tool>> {
    Ok(vec![
        confirm_delete()?,
        multi_input()?,
        summarize_with_model()?,
    ])
}

/// A failed input request becomes a tool error the model can read.
fn input_failed(tool: &str, e: &InputError) -> Value {
    ToolResult::error(format!("{tool}: {e}"))
}

pub(crate) fn confirm_delete() -> Result<Tool> {
    let schema = json!({
        "type": "object",
        "properties": { "filename": { "type": "string", "minLength": 1 } },
        "required": ["filename"]
    });
    Ok(Tool::new(
        "confirm_delete",
        "Asks the user to confirm deleting a file (one elicitation), then reports the decision. Deletes nothing.",
        schema,
        |args, ctx| Box::pin(run_confirm_delete(args, ctx)),
    )?
    .task_support(TaskSupport::Optional))
}

async fn run_confirm_delete(args: Map<String, Value>, ctx: TaskContext) -> Result<Value, RpcError> {
    let filename = args
        .get("filename")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    ctx.set_status_message(format!("waiting for confirmation to delete {filename}"))
        .await;
    let schema = json!({
        "type": "object",
        "properties": { "confirm": { "type": "boolean", "title": "Delete?", "description": format!("Delete {filename}?") } },
        "required": ["confirm"]
    });
    let answer = match ctx
        .elicit(&format!("Delete the file '{filename}'?"), schema)
        .await
    {
        Ok(a) => a,
        Err(e) => return Ok(input_failed("confirm_delete", &e)),
    };
    let confirmed = answer.accepted()
        && answer
            .content
            .as_ref()
            .and_then(|c| c.get("confirm"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
    let text = if confirmed {
        format!("Deleted {filename} (demo: nothing was really deleted)")
    } else {
        let action = format!("{:?}", answer.action).to_lowercase();
        format!("kept {filename}: deletion was not confirmed ({action})")
    };
    let mut result = ToolResult::text(text);
    result["structuredContent"] = json!({ "filename": filename, "deleted": confirmed });
    Ok(result)
}

pub(crate) fn multi_input() -> Result<Tool> {
    let schema = json!({ "type": "object", "properties": {} });
    Ok(Tool::new(
        "multi_input",
        "Asks two questions at once (two elicitations outstanding together) and combines the answers.",
        schema,
        |_args, ctx| {
            Box::pin(async move {
                let name = ctx.elicit(
                    "What is your name?",
                    json!({"type": "object", "properties": {"name": {"type": "string", "title": "Name"}}, "required": ["name"]}),
                );
                let colour = ctx.elicit(
                    "What is your favourite colour?",
                    json!({"type": "object", "properties": {"colour": {"type": "string", "title": "Colour", "enum": ["red", "green", "blue"]}}, "required": ["colour"]}),
                );
                let (name, colour) = match try_join(name, colour).await {
                    Ok(pair) => pair,
                    Err(e) => return Ok(input_failed("multi_input", &e)),
                };
                let field = |r: &mcp_tasks_engine::ElicitResponse, k: &str| {
                    r.content
                        .as_ref()
                        .and_then(|c| c.get(k))
                        .and_then(Value::as_str)
                        .unwrap_or("(no answer)")
                        .to_string()
                };
                let (n, c) = (field(&name, "name"), field(&colour, "colour"));
                let mut result = ToolResult::text(format!("{n} likes {c}"));
                result["structuredContent"] = json!({ "name": n, "colour": c });
                Ok(result)
            })
        },
    )?
    .task_support(TaskSupport::Optional))
}

fn summarize_with_model() -> Result<Tool> {
    let schema = json!({
        "type": "object",
        "properties": { "text": { "type": "string", "minLength": 1 } },
        "required": ["text"]
    });
    Ok(Tool::new(
        "summarize_with_model",
        "Asks the client's model to summarize `text` (one sampling request) and returns the summary.",
        schema,
        |args, ctx| {
            let text = args.get("text").and_then(Value::as_str).unwrap_or("").to_string();
            Box::pin(async move {
                let params = json!({
                    "messages": [{ "role": "user", "content": { "type": "text", "text": format!("Summarize in one sentence:\n\n{text}") } }],
                    "systemPrompt": "You write one-sentence summaries.",
                    "maxTokens": 200
                });
                let reply = match ctx.create_message(params).await {
                    Ok(r) => r,
                    Err(e) => return Ok(input_failed("summarize_with_model", &e)),
                };
                let summary = reply
                    .get("content")
                    .and_then(|c| c.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let model = reply.get("model").and_then(Value::as_str).unwrap_or("unknown").to_string();
                let mut result = ToolResult::text(format!("Summary: {summary}"));
                result["structuredContent"] = json!({ "summary": summary, "model": model });
                Ok(result)
            })
        },
    )?
    .task_support(TaskSupport::Optional))
}
