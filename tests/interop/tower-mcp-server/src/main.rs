//! `interop-tower-mcp-server`: a task server written with tower-mcp 0.25, for the
//! interop matrix. Our client crate and the `mcp-tasks` CLI drive it over Streamable
//! HTTP on both task wires: tower-mcp's HTTP transport serves the 2025-11-25 session
//! lifecycle (`initialize`, `params.task`) and, with the `protocol-2026-07-28` feature
//! and `McpRouter::with_tasks`, the sessionless 2026-07-28 wire with the
//! `io.modelcontextprotocol/tasks` extension, at the same URL.
//!
//! Usage: `interop-tower-mcp-server [--listen 127.0.0.1:0]`; prints
//! `interop-tower-mcp-server: listening on http://ADDR/mcp` on stderr once it accepts
//! connections, and stops on Ctrl-C or SIGTERM.
//!
//! Tools (live task handlers, so task-only: `taskSupport: required`):
//! - `slow_steps {steps, step_ms}`: works `steps` steps of `step_ms` each, setting the
//!   task's status message to `step I of N` as it goes, then returns `done N steps`.
//! - `ask_name {}`: asks the client `What is your name?` (an `elicitation/create` input
//!   request, schema `{name: string}`) and returns `hello NAME` (or `no name (ACTION)`
//!   when the question was declined or cancelled).
//! - `until_cancelled {}`: runs until `tasks/cancel` arrives, then ends `cancelled`.

use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;
use tower_mcp::protocol::InputRequests;
use tower_mcp::schemars::JsonSchema;
use tower_mcp::{CallToolResult, HttpTransport, McpRouter, TaskContext, TaskOutcome, ToolBuilder};

/// Arguments of `slow_steps`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "tower_mcp::schemars")]
struct Steps {
    /// How many steps (1 to 100; default 3).
    steps: Option<u64>,
    /// Milliseconds per step (up to 10000; default 300).
    step_ms: Option<u64>,
}

/// Tools without arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "tower_mcp::schemars")]
struct NoArgs {}

fn router() -> McpRouter {
    let slow = ToolBuilder::new("slow_steps")
        .description("Works `steps` steps of `step_ms` milliseconds, reporting `step I of N`.")
        .live_task_handler(|task: TaskContext, input: Steps| async move {
            let steps = input.steps.unwrap_or(3).clamp(1, 100);
            let step_ms = input.step_ms.unwrap_or(300).min(10_000);
            for i in 1..=steps {
                task.working(format!("step {i} of {steps}")).await?;
                tokio::select! {
                    _ = task.cancelled() => return Ok(TaskOutcome::Cancelled { message: None }),
                    _ = tokio::time::sleep(Duration::from_millis(step_ms)) => {}
                }
            }
            Ok(TaskOutcome::Completed(CallToolResult::text(format!(
                "done {steps} steps"
            ))))
        })
        .build();
    let ask = ToolBuilder::new("ask_name")
        .description("Asks the client for a name mid-task and greets it.")
        .live_task_handler(|task: TaskContext, _input: NoArgs| async move {
            let requests: InputRequests = serde_json::from_value(json!({
                "name": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "What is your name?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": { "name": { "type": "string", "title": "Name" } },
                            "required": ["name"]
                        }
                    }
                }
            }))
            .map_err(|e| tower_mcp::Error::tool(format!("building the question: {e}")))?;
            let answers = task
                .require_input_with_message(requests, "waiting for a name")
                .await?;
            let answer = answers
                .get("name")
                .and_then(|a| serde_json::to_value(a).ok())
                .unwrap_or(Value::Null);
            let action = answer.get("action").and_then(Value::as_str).unwrap_or("?");
            let name = answer
                .get("content")
                .and_then(|c| c.get("name"))
                .and_then(Value::as_str);
            Ok(TaskOutcome::Completed(CallToolResult::text(
                match (action, name) {
                    ("accept", Some(name)) => format!("hello {name}"),
                    _ => format!("no name ({action})"),
                },
            )))
        })
        .build();
    let forever = ToolBuilder::new("until_cancelled")
        .description("Runs until the task is cancelled.")
        .live_task_handler(|task: TaskContext, _input: NoArgs| async move {
            task.working("running until cancelled").await?;
            task.cancelled().await;
            Ok(TaskOutcome::Cancelled { message: None })
        })
        .build();
    McpRouter::new()
        .server_info("interop-tower-mcp-server", env!("CARGO_PKG_VERSION"))
        .with_tasks()
        .tool(slow)
        .tool(ask)
        .tool(forever)
}

fn listen_arg() -> Result<String, String> {
    let mut args = std::env::args().skip(1);
    let mut listen = "127.0.0.1:0".to_string();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => listen = args.next().ok_or("--listen needs an address")?,
            "-h" | "--help" => {
                println!("usage: interop-tower-mcp-server [--listen ADDR]  (default 127.0.0.1:0)");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    Ok(listen)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listen = listen_arg()?;
    // HttpTransport::serve takes an address and does not say which port it bound, so
    // the listener is bound here and the transport's axum router served on it.
    let app = HttpTransport::new(router()).into_router_at("/mcp");
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    eprintln!(
        "interop-tower-mcp-server: listening on http://{}/mcp",
        listener.local_addr()?
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let term = async {
                match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(mut s) => {
                        s.recv().await;
                    }
                    Err(_) => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {},
                _ = term => {},
            }
        })
        .await?;
    Ok(())
}
