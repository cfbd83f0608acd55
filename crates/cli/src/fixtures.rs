//! `--conformance-fixtures`: exactly the tools the official conformance suite's Tasks
//! scenarios call, with the contracts they check.

use anyhow::Result;
use mcp_tasks_protocol::error_code::INTERNAL_ERROR;
use mcp_tasks_protocol::RpcError;
use mcp_tasks_server::{TaskSupport, Tool, ToolRegistry, ToolResult};
use serde_json::{json, Value};
use std::time::Duration;

/// Registers `greet`, `slow_compute`, `failing_job`, `protocol_error_job`,
/// `confirm_delete`, `multi_input` and `test_tool_with_task`.
pub fn register(registry: &mut ToolRegistry) -> Result<()> {
    registry.register(crate::demo::greet()?)?;
    registry.register(crate::demo::slow_compute()?)?;
    registry.register(crate::demo::failing_job()?)?;
    registry.register(protocol_error_job()?)?;
    registry.register(crate::demo_input::confirm_delete()?)?;
    registry.register(crate::demo_input::multi_input()?)?;
    registry.register(test_tool_with_task()?)?;
    Ok(())
}

/// Fails with a JSON-RPC error (not a tool error) after a short while: the task ends
/// `failed` with the error inlined.
fn protocol_error_job() -> Result<Tool> {
    Ok(Tool::new(
        "protocol_error_job",
        "Fails with a JSON-RPC internal error (-32603) after half a second. Task required.",
        json!({ "type": "object", "properties": {} }),
        |_args, ctx| {
            Box::pin(async move {
                tokio::select! {
                    _ = ctx.cancelled() => return Ok(ToolResult::error("protocol_error_job was cancelled")),
                    _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                }
                Err(RpcError::new(INTERNAL_ERROR, "protocol_error_job failed on purpose with a protocol error"))
            })
        },
    )?
    .task_support(TaskSupport::Required))
}

/// Asks the user's name before anything runs (an MRTR round on the extension wire),
/// then runs as a task that greets them.
fn test_tool_with_task() -> Result<Tool> {
    let schema = json!({
        "type": "object",
        "properties": { "name": { "type": "string", "title": "Your name" } },
        "required": ["name"]
    });
    Ok(Tool::new(
        "test_tool_with_task",
        "Asks for your name first, then greets you from a task.",
        json!({ "type": "object", "properties": {} }),
        |_args, ctx| {
            Box::pin(async move {
                let name = ctx
                    .answer("user_name")
                    .and_then(|a| a.get("content"))
                    .and_then(|c| c.get("name").or_else(|| c.get("user_name")))
                    .and_then(Value::as_str)
                    .unwrap_or("stranger")
                    .to_string();
                tokio::select! {
                    _ = ctx.cancelled() => return Ok(ToolResult::error("test_tool_with_task was cancelled")),
                    _ = tokio::time::sleep(Duration::from_millis(300)) => {}
                }
                Ok(ToolResult::text(format!("Hello, {name}! Your task is done.")))
            })
        },
    )?
    .ask_first("user_name", "What is your name?", schema)
    .task_support(TaskSupport::Required))
}
