//! Embeds mcp-tasks in a program: one tool that counts to a number slowly, reporting
//! progress and honouring cancellation, served over stdio with tasks kept in SQLite.
//!
//! Run: `cargo run -p example-embedded-server -- ./example.db` and talk MCP on stdin.

use anyhow::Result;
use mcp_tasks_engine::EngineConfig;
use mcp_tasks_server::transport::stdio;
use mcp_tasks_server::{Server, ServerConfig, TaskSupport, Tool, ToolRegistry, ToolResult};
use serde_json::{json, Value};
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<()> {
    let db = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "./example.db".into());

    let count_to = Tool::new(
        "count_to",
        "Counts to `n`, one number every 100 ms.",
        json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 1000}}, "required": ["n"]}),
        |args, ctx| {
            let n = args.get("n").and_then(Value::as_u64).unwrap_or(1);
            Box::pin(async move {
                for i in 1..=n {
                    tokio::select! {
                        _ = ctx.cancelled() => return Ok(ToolResult::error(format!("stopped at {i}")).into()),
                        _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                    }
                    ctx.report_progress(i as f64, Some(n as f64), None);
                    ctx.set_status_message(format!("{i} of {n}")).await;
                }
                Ok(ToolResult::text(format!("counted to {n}")).into())
            })
        },
    )?
    .task_support(TaskSupport::Optional);

    let mut tools = ToolRegistry::new();
    tools.register(count_to)?;

    let store = mcp_tasks_store::open(&format!("sqlite://{db}")).await?;
    let server = Server::start(
        store,
        EngineConfig::default(),
        tools,
        ServerConfig::default(),
        Vec::new(),
    )
    .await?;
    stdio::serve(
        server,
        tokio::io::stdin(),
        tokio::io::stdout(),
        std::future::pending(),
    )
    .await?;
    Ok(())
}
