//! `interop-rmcp-server`: a task server written with rmcp 3.11 (the official Rust SDK),
//! for the interop matrix. Our client crate and the `mcp-tasks` CLI drive it over
//! Streamable HTTP; rmcp speaks tasks only as the `io.modelcontextprotocol/tasks`
//! extension (`TaskManager`), so this is a 2026-07-28-extension peer.
//!
//! Usage: `interop-rmcp-server [--listen 127.0.0.1:0]`; prints
//! `interop-rmcp-server: listening on http://ADDR/mcp` on stderr once it accepts
//! connections, and stops on Ctrl-C or SIGTERM.
//!
//! Tools (each a task for clients that declared the extension; without it they answer
//! "this tool needs the tasks extension"):
//! - `slow_steps {steps, step_ms}`: works `steps` steps of `step_ms` each, setting the
//!   task's status message to `step I of N` as it goes, then returns `done N steps`.
//! - `ask_name {}`: asks the client `What is your name?` (an `elicitation/create` input
//!   request, schema `{name: string}`) and returns `hello NAME` (or `no name (ACTION)`
//!   when the question was declined or cancelled).
//! - `until_cancelled {}`: runs until `tasks/cancel` arrives, then ends `cancelled`.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, GetTaskParams, GetTaskResult, InputRequest, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Task retention: ten minutes is plenty for a test run.
const TASK_TTL_MS: u64 = 600_000;
/// Suggested polling interval: short, so tests do not wait on it.
const POLL_INTERVAL_MS: u64 = 200;

/// One handler per session; all share the task manager.
#[derive(Clone)]
struct TaskServer {
    tasks: TaskManager,
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "slow_steps",
            "Works `steps` steps of `step_ms` milliseconds, reporting `step I of N`.",
            object(json!({
                "type": "object",
                "properties": {
                    "steps": { "type": "integer", "minimum": 1, "maximum": 100 },
                    "step_ms": { "type": "integer", "minimum": 0, "maximum": 10000 }
                }
            })),
        ),
        Tool::new(
            "ask_name",
            "Asks the client for a name mid-task and greets it.",
            object(json!({ "type": "object", "properties": {} })),
        ),
        Tool::new(
            "until_cancelled",
            "Runs until the task is cancelled.",
            object(json!({ "type": "object", "properties": {} })),
        ),
    ]
}

fn text(s: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s)])
}

fn int_arg(request: &CallToolRequestParams, name: &str, default: u64, max: u64) -> u64 {
    request
        .arguments
        .as_ref()
        .and_then(|a| a.get(name))
        .and_then(Value::as_u64)
        .unwrap_or(default)
        .min(max)
}

async fn slow_steps(
    ctx: TaskContext,
    steps: u64,
    step_ms: u64,
) -> Result<CallToolResult, TaskExit> {
    for i in 1..=steps {
        ctx.set_status_message(format!("step {i} of {steps}"));
        tokio::select! {
            _ = ctx.cancelled() => return Err(TaskExit::Cancelled),
            _ = tokio::time::sleep(Duration::from_millis(step_ms)) => {}
        }
    }
    Ok(text(format!("done {steps} steps")))
}

async fn ask_name(ctx: TaskContext) -> Result<CallToolResult, TaskExit> {
    let request: InputRequest = serde_json::from_value(json!({
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
    }))
    .map_err(|e| TaskExit::Error(ErrorData::internal_error(e.to_string(), None)))?;
    ctx.set_status_message("waiting for a name");
    let answer = ctx.request_input("name", request).await?;
    let action = answer.get("action").and_then(Value::as_str).unwrap_or("?");
    let name = answer
        .get("content")
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str);
    Ok(text(match (action, name) {
        ("accept", Some(name)) => format!("hello {name}"),
        _ => format!("no name ({action})"),
    }))
}

async fn until_cancelled(ctx: TaskContext) -> Result<CallToolResult, TaskExit> {
    ctx.set_status_message("running until cancelled");
    ctx.cancelled().await;
    Err(TaskExit::Cancelled)
}

impl ServerHandler for TaskServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !tools().iter().any(|t| t.name == name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool '{name}'"),
                None,
            ));
        }
        let as_task = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        if !as_task {
            return Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                ContentBlock::text(format!(
                    "'{name}' needs the io.modelcontextprotocol/tasks extension"
                )),
            ])));
        }
        let steps = int_arg(&request, "steps", 3, 100);
        let step_ms = int_arg(&request, "step_ms", 300, 10_000);
        let options = TaskOptions::new()
            .with_ttl_ms(TASK_TTL_MS)
            .with_poll_interval_ms(POLL_INTERVAL_MS);
        let task = self.tasks.spawn(options, move |ctx| match name.as_str() {
            "slow_steps" => Box::pin(slow_steps(ctx, steps, step_ms)),
            "ask_name" => Box::pin(ask_name(ctx)),
            _ => Box::pin(until_cancelled(ctx)),
        });
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }
}

fn listen_arg() -> Result<String, String> {
    let mut args = std::env::args().skip(1);
    let mut listen = "127.0.0.1:0".to_string();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => listen = args.next().ok_or("--listen needs an address")?,
            "-h" | "--help" => {
                println!("usage: interop-rmcp-server [--listen ADDR]  (default 127.0.0.1:0)");
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
    let stop = CancellationToken::new();
    let shared = TaskServer {
        tasks: TaskManager::new(),
    };
    let config = StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
    let service = StreamableHttpService::new(
        move || Ok(shared.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    eprintln!(
        "interop-rmcp-server: listening on http://{}/mcp",
        listener.local_addr()?
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
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
            stop.cancel();
        })
        .await?;
    Ok(())
}
