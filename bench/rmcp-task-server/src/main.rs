//! `rmcp-task-server`: the same demo tool as `mcp-tasks serve --demo` (`slow_compute
//! {seconds, label}`), served by rmcp 3.11 over Streamable HTTP with rmcp's own task
//! support (`TaskManager`, the `io.modelcontextprotocol/tasks` extension wire).
//!
//! It exists so `mcp-tasks bench --compare-rmcp PATH` can measure both servers in one
//! run. Usage: `rmcp-task-server [--listen 127.0.0.1:0]`; it prints
//! `rmcp-task-server: listening on http://ADDR/mcp` on stderr once it accepts
//! connections, and stops on Ctrl-C or SIGTERM.
//!
//! Behaviour: a `tools/call` of `slow_compute` from a client that declared the tasks
//! extension (at `initialize`, in `capabilities.extensions`) becomes a task whose work
//! sleeps `seconds` and then returns a text result; without the extension the call runs
//! inline. Tasks keep rmcp's in-memory `TaskManager` with a one-hour ttl (ours defaults
//! to one hour as well), shared by all sessions. Sessions use rmcp's default
//! configuration (session mode, SSE replies); sockets have Nagle's algorithm off.

use axum::serve::ListenerExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, GetTaskParams, GetTaskResult, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Task retention: one hour, like `mcp-tasks serve`'s default ttl.
const TASK_TTL_MS: u64 = 3_600_000;
/// Suggested polling interval, like `mcp-tasks serve`'s default.
const POLL_INTERVAL_MS: u64 = 1_000;

/// One handler per session; all share the task manager.
#[derive(Clone)]
struct TaskServer {
    tasks: TaskManager,
    tools: Arc<Vec<Tool>>,
}

fn slow_compute_tool() -> Tool {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "seconds": { "type": "number", "minimum": 0, "maximum": 86400 },
            "label": { "type": "string" }
        },
        "required": ["seconds"]
    });
    let schema: JsonObject = match schema {
        serde_json::Value::Object(m) => m,
        _ => JsonObject::new(),
    };
    Tool::new(
        "slow_compute",
        "Works for `seconds` seconds, then returns a summary. Honours cancellation.",
        schema,
    )
}

/// Reads `seconds` (clamped to a day) and `label` from the call's arguments.
fn parse_args(request: &CallToolRequestParams) -> Result<(f64, String), ErrorData> {
    let args = request.arguments.clone().unwrap_or_default();
    let seconds = args
        .get("seconds")
        .and_then(serde_json::Value::as_f64)
        .ok_or_else(|| ErrorData::invalid_params("'seconds' (a number) is required", None))?;
    let label = args
        .get("label")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("job")
        .to_string();
    Ok((seconds.clamp(0.0, 86400.0), label))
}

fn finished(label: &str, seconds: f64) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(format!(
        "slow_compute '{label}' finished after {seconds} s"
    ))])
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
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "slow_compute" {
            return Err(ErrorData::invalid_params(
                format!("unknown tool '{}'", request.name),
                None,
            ));
        }
        let (seconds, label) = parse_args(&request)?;
        let as_task = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        if !as_task {
            if seconds > 0.0 {
                tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
            }
            return Ok(CallToolResponse::Complete(finished(&label, seconds)));
        }
        let options = TaskOptions::new()
            .with_ttl_ms(TASK_TTL_MS)
            .with_poll_interval_ms(POLL_INTERVAL_MS);
        let task = self.tasks.spawn(options, move |ctx| {
            Box::pin(async move {
                // Like ours, `seconds: 0` finishes at once, without a timer.
                if seconds > 0.0 {
                    tokio::select! {
                        _ = ctx.cancelled() => return Err(TaskExit::Cancelled),
                        _ = tokio::time::sleep(Duration::from_secs_f64(seconds)) => {}
                    }
                }
                Ok(finished(&label, seconds))
            })
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
                println!("usage: rmcp-task-server [--listen ADDR]  (default 127.0.0.1:0)");
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
        tools: Arc::new(vec![slow_compute_tool()]),
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
        "rmcp-task-server: listening on http://{}/mcp",
        listener.local_addr()?
    );
    // rmcp answers in SSE: the response head, the event and the stream's end go out in
    // separate writes, which Nagle's algorithm would hold back for the client's delayed
    // ACK (about 40 ms per request). Any real deployment turns Nagle off.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
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
