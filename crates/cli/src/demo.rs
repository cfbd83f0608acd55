//! The `--demo` tools: small, predictable tools for trying the server and for the
//! interoperability tests.

use anyhow::Result;
use mcp_tasks_engine::TaskContext;
use mcp_tasks_protocol::RpcError;
use mcp_tasks_server::{TaskSupport, Tool, ToolRegistry, ToolResult};
use serde_json::{json, Map, Value};
use std::time::Duration;

/// Registers `slow_compute`, `greet`, `failing_job`, and the human-in-the-loop tools
/// `confirm_delete`, `multi_input` and `summarize_with_model`.
pub fn register(registry: &mut ToolRegistry) -> Result<()> {
    registry.register(slow_compute()?)?;
    registry.register(greet()?)?;
    registry.register(failing_job()?)?;
    for tool in crate::demo_input::tools()? {
        registry.register(tool)?;
    }
    Ok(())
}

/// Most progress steps of one `slow_compute` run.
const MAX_STEPS: u64 = 100;

pub(crate) fn slow_compute() -> Result<Tool> {
    let schema = json!({
        "type": "object",
        "properties": {
            "seconds": { "type": "number", "minimum": 0, "maximum": 86400, "description": "How long to work (fractions allowed; 0 returns at once)" },
            "label": { "type": "string", "description": "A label echoed in the result" }
        },
        "required": ["seconds"],
        "additionalProperties": false
    });
    Ok(Tool::new(
        "slow_compute",
        "Works for `seconds` seconds, reporting progress and status, then returns a summary. Honours cancellation.",
        schema,
        |args, ctx| Box::pin(run_slow_compute(args, ctx)),
    )?
    .title("Slow computation")
    .task_support(TaskSupport::Optional))
}

async fn run_slow_compute(args: Map<String, Value>, ctx: TaskContext) -> Result<Value, RpcError> {
    let seconds = args.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
    let label = args
        .get("label")
        .and_then(Value::as_str)
        .unwrap_or("job")
        .to_string();
    let total = Duration::from_secs_f64(seconds.clamp(0.0, 86400.0));
    // A step every 250 ms, but never more than MAX_STEPS: a long run must not wake up
    // (and write a status message) several times a second for hours, which would make
    // every idle task cost CPU and store writes.
    let steps = ((seconds * 4.0).ceil().max(0.0) as u64).min(MAX_STEPS);
    if steps > 0 {
        let step = total / steps as u32;
        for i in 1..=steps {
            tokio::select! {
                _ = ctx.cancelled() => {
                    return Ok(ToolResult::error(format!("slow_compute '{label}' was cancelled")));
                }
                _ = tokio::time::sleep(step) => {}
            }
            let pct = i * 100 / steps;
            ctx.report_progress(
                i as f64,
                Some(steps as f64),
                Some(format!("{label}: {pct}%")),
            );
            if i % 4 == 0 || i == steps {
                ctx.set_status_message(format!("{label}: {pct}% done"))
                    .await;
            }
        }
    }
    let mut result = ToolResult::text(format!("slow_compute '{label}' finished after {seconds} s"));
    result["structuredContent"] = json!({ "label": label, "seconds": seconds });
    Ok(result)
}

pub(crate) fn greet() -> Result<Tool> {
    let schema = json!({
        "type": "object",
        "properties": { "name": { "type": "string", "minLength": 1 } },
        "required": ["name"],
        "additionalProperties": false
    });
    Ok(Tool::new(
        "greet",
        "Says hello. Synchronous only.",
        schema,
        |args, _ctx| {
            let name = args
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("world")
                .to_string();
            Box::pin(async move { Ok(ToolResult::text(format!("Hello, {name}!"))) })
        },
    )?
    .task_support(TaskSupport::Forbidden))
}

pub(crate) fn failing_job() -> Result<Tool> {
    let schema = json!({ "type": "object", "properties": {}, "additionalProperties": false });
    Ok(Tool::new(
        "failing_job",
        "Runs for about a second, then reports a tool error. Task required.",
        schema,
        |_args, ctx| {
            Box::pin(async move {
                ctx.set_status_message("about to fail").await;
                tokio::select! {
                    _ = ctx.cancelled() => return Ok(ToolResult::error("failing_job was cancelled")),
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
                Ok(ToolResult::error("failing_job failed on purpose after 1 s"))
            })
        },
    )?
    .task_support(TaskSupport::Required))
}
