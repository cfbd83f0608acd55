//! `turul-task-server`: an MCP task server written with turul-mcp-server 0.4.5 and
//! turul-mcp-ext-tasks 0.1.5 (the `io.modelcontextprotocol/tasks` extension on the
//! 2026-07-28 wire), on whichever of turul's task stores the command line names.
//!
//! Usage: `turul-task-server [--listen 127.0.0.1:0] [--store memory|sqlite:PATH|postgres:URL]`.
//! It prints `turul-task-server: listening on http://ADDR/mcp` on stderr once it accepts
//! connections (the line the benchmark and the interop tests read), and stops on Ctrl-C
//! or SIGTERM.
//!
//! Tools, each written the way turul's own `examples/ext-tasks-server` writes them:
//! - `slow_compute {seconds, label}`: the benchmark's tool, as `mcp-tasks serve --demo`
//!   and `bench/rmcp-task-server` serve it: a task (when the client declared the
//!   extension) that sleeps `seconds` and answers a text; inline otherwise.
//! - `count_to {n, delay_ms}`: optional task support; counts to `n`, one step every
//!   `delay_ms`, and half-way asks a yes/no question (`keep_going`). turul's way to ask
//!   inside a task is the tool returning `McpError::InputRequired`: the task parks in
//!   `input_required`, `tasks/update` answers, and the runtime calls the tool again from
//!   the top with the answers; the tool's `requestState` (here, the step it reached)
//!   lets it skip what it already did. turul offers no way for a tool to set a task's
//!   status message (its runtime writes "executing tool" once), so each step's line is
//!   sent as a progress notification with a message, which turul delivers only to a
//!   plain call that asked for progress.
//! - `echo {text}`: synchronous, never a task.

use async_trait::async_trait;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use turul_mcp_ext_tasks::{InMemoryTaskStore, TaskStore};
use turul_mcp_protocol::elicitation::{
    ElicitAction, ElicitRequest, ElicitResultValue, ElicitationSchema, PrimitiveSchemaDefinition,
};
use turul_mcp_protocol::input_required::{InputRequest, InputRequests, InputResponse};
use turul_mcp_protocol::tools::{CallToolResult, ToolResult};
use turul_mcp_protocol::ToolSchema;
use turul_mcp_server::prelude::*;

/// The longest `slow_compute` may work, like ours: a day.
const MAX_SECONDS: f64 = 86_400.0;
/// The largest `count_to` accepts.
const MAX_COUNT: u64 = 10_000;
/// The longest pause between two counts.
const MAX_DELAY_MS: u64 = 60_000;
/// The key of `count_to`'s question among the task's input requests.
const QUESTION_KEY: &str = "keep_going";

/// Implements turul's per-tool metadata traits for a tool struct holding its schema.
macro_rules! tool_metadata {
    ($ty:ty, $name:literal, $description:literal) => {
        impl HasBaseMetadata for $ty {
            fn name(&self) -> &str {
                $name
            }
        }
        impl HasDescription for $ty {
            fn description(&self) -> Option<&str> {
                Some($description)
            }
        }
        impl HasInputSchema for $ty {
            fn input_schema(&self) -> &ToolSchema {
                &self.schema
            }
        }
        impl HasOutputSchema for $ty {}
        impl HasAnnotations for $ty {}
        impl HasToolMeta for $ty {}
        impl HasIcons for $ty {}
    };
}

fn schema(properties: Value, required: &[&str]) -> ToolSchema {
    let properties: HashMap<String, Value> = match properties {
        Value::Object(m) => m.into_iter().collect(),
        _ => HashMap::new(),
    };
    ToolSchema::object()
        .with_properties(properties)
        .with_required(required.iter().map(|s| s.to_string()).collect())
}

fn text(t: String) -> CallToolResult {
    CallToolResult::success(vec![ToolResult::text(t)])
}

/// The benchmark's tool.
struct SlowCompute {
    schema: ToolSchema,
}

tool_metadata!(
    SlowCompute,
    "slow_compute",
    "Works for `seconds` seconds, then returns a summary. Honours cancellation."
);

#[async_trait]
impl McpTool for SlowCompute {
    async fn call(
        &self,
        args: Value,
        _session: Option<SessionContext>,
    ) -> McpResult<CallToolResult> {
        let seconds = args
            .get("seconds")
            .and_then(Value::as_f64)
            .ok_or_else(|| McpError::InvalidParameters("'seconds' (a number) is required".into()))?
            .clamp(0.0, MAX_SECONDS);
        let label = args.get("label").and_then(Value::as_str).unwrap_or("job");
        // Like ours, `seconds: 0` finishes at once, without a timer. Cancellation aborts
        // the worker (turul's runtime holds its abort handle).
        if seconds > 0.0 {
            tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
        }
        Ok(text(format!(
            "slow_compute '{label}' finished after {seconds} s"
        )))
    }
}

/// Counts with a question half-way.
struct CountTo {
    schema: ToolSchema,
}

tool_metadata!(
    CountTo,
    "count_to",
    "Counts to n, one step every delay_ms, and asks half-way whether to keep going."
);

/// The answer to `count_to`'s question: `Some(true)` to keep going, `Some(false)` when
/// declined or answered no, `None` when not answered yet.
fn keep_going(session: &SessionContext) -> Option<bool> {
    let responses = session.input_responses()?;
    Some(match responses.get(QUESTION_KEY)? {
        InputResponse::Elicit(r) => {
            matches!(r.action, ElicitAction::Accept)
                && matches!(
                    r.content.as_ref().and_then(|c| c.get(QUESTION_KEY)),
                    Some(ElicitResultValue::Boolean(true))
                )
        }
        _ => false,
    })
}

#[async_trait]
impl McpTool for CountTo {
    async fn call(
        &self,
        args: Value,
        session: Option<SessionContext>,
    ) -> McpResult<CallToolResult> {
        let n = args
            .get("n")
            .and_then(Value::as_u64)
            .ok_or_else(|| McpError::InvalidParameters("'n' (a whole number) is required".into()))?
            .min(MAX_COUNT);
        let delay = args
            .get("delay_ms")
            .and_then(Value::as_u64)
            .unwrap_or(100)
            .min(MAX_DELAY_MS);
        let half = n / 2;
        // turul runs the tool again from the top once the question is answered; the
        // request state it handed back says where the first run stopped.
        let answer = session.as_ref().and_then(keep_going);
        let resumed_at = session
            .as_ref()
            .and_then(SessionContext::mrtr_request_state)
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|_| answer.is_some());
        let mut step = resumed_at.unwrap_or(0);
        while step < n {
            if step == half && answer.is_none() {
                let question = ElicitationSchema::new()
                    .with_property(
                        QUESTION_KEY.to_string(),
                        PrimitiveSchemaDefinition::boolean(),
                    )
                    .with_required(vec![QUESTION_KEY.to_string()]);
                let mut requests = InputRequests::new();
                requests.insert(
                    QUESTION_KEY.to_string(),
                    InputRequest::Elicit(ElicitRequest::new_form(
                        format!("Reached {step} of {n}. Keep counting?"),
                        question,
                    )),
                );
                return Err(McpError::InputRequired {
                    input_requests: Some(requests),
                    request_state: Some(step.to_string()),
                });
            }
            if step == half && answer == Some(false) {
                return Ok(text(format!("stopped at {step} of {n}")));
            }
            if delay > 0 {
                tokio::time::sleep(Duration::from_millis(delay)).await;
            }
            step += 1;
            if let Some(s) = &session {
                s.notify_request_progress_with_message(
                    step as f64,
                    Some(n as f64),
                    format!("counted {step} of {n}"),
                )
                .await;
            }
        }
        Ok(text(format!("counted to {n}")))
    }
}

/// A plain synchronous tool.
struct Echo {
    schema: ToolSchema,
}

tool_metadata!(Echo, "echo", "Answers its text at once.");

#[async_trait]
impl McpTool for Echo {
    async fn call(
        &self,
        args: Value,
        _session: Option<SessionContext>,
    ) -> McpResult<CallToolResult> {
        let t = args.get("text").and_then(Value::as_str).unwrap_or_default();
        Ok(text(t.to_string()))
    }
}

/// Where tasks live.
enum Store {
    Memory,
    Sqlite(String),
    Postgres(String),
}

struct Options {
    listen: String,
    store: Store,
    /// Empty the PostgreSQL store's table first (the benchmark starts every run on an
    /// empty store; a SQLite run gets a new file instead).
    fresh: bool,
}

const USAGE: &str =
    "usage: turul-task-server [--listen ADDR] [--store memory|sqlite:PATH|postgres:URL]
  --listen  address to bind (default 127.0.0.1:0: a free port, printed on stderr)
  --store   turul-mcp-ext-tasks store: memory (default), sqlite:PATH (a file, created if
            missing) or postgres:URL (postgres://user@host/db)
  --fresh   with postgres: delete every task in turul's table (ext_tasks) first";

fn parse_store(s: &str) -> Result<Store, String> {
    if s == "memory" {
        Ok(Store::Memory)
    } else if let Some(path) = s.strip_prefix("sqlite:") {
        Ok(Store::Sqlite(path.to_string()))
    } else if s.starts_with("postgres://") || s.starts_with("postgresql://") {
        Ok(Store::Postgres(s.to_string()))
    } else if let Some(url) = s.strip_prefix("postgres:") {
        Ok(Store::Postgres(url.to_string()))
    } else {
        Err(format!(
            "unknown store '{s}': use memory, sqlite:PATH or postgres:URL"
        ))
    }
}

fn options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut o = Options {
        listen: "127.0.0.1:0".to_string(),
        store: Store::Memory,
        fresh: false,
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => o.listen = args.next().ok_or("--listen needs an address")?,
            "--store" => o.store = parse_store(&args.next().ok_or("--store needs a store")?)?,
            "--fresh" => o.fresh = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument '{other}'\n{USAGE}")),
        }
    }
    Ok(o)
}

async fn open(store: &Store, fresh: bool) -> Result<Arc<dyn TaskStore>, String> {
    Ok(match store {
        Store::Memory => Arc::new(InMemoryTaskStore::new()),
        Store::Sqlite(path) => Arc::new(
            turul_mcp_ext_tasks::v2026_07_28::sqlite::SqliteTaskStore::open(path)
                .await
                .map_err(|e| format!("open the SQLite task store {path}: {e}"))?,
        ),
        Store::Postgres(url) => {
            let pool = sqlx::PgPool::connect(url)
                .await
                .map_err(|e| format!("connect the PostgreSQL task store: {e}"))?;
            // Creates turul's table when missing.
            let store = turul_mcp_ext_tasks::v2026_07_28::postgres::PostgresTaskStore::from_pool(
                pool.clone(),
            )
            .await
            .map_err(|e| format!("prepare the PostgreSQL task store: {e}"))?;
            if fresh {
                sqlx::query("DELETE FROM ext_tasks")
                    .execute(&pool)
                    .await
                    .map_err(|e| format!("empty turul's ext_tasks table: {e}"))?;
            }
            Arc::new(store)
        }
    })
}

/// The address to bind. turul's server binds its configured address itself and takes
/// no listener, so port 0 is resolved here: a free port is found by binding it and
/// letting it go (another process could take it in between; the caller would see the
/// bind error and retry).
fn resolve(listen: &str) -> Result<SocketAddr, String> {
    let addr: SocketAddr = listen
        .parse()
        .map_err(|e| format!("--listen {listen}: {e}"))?;
    if addr.port() != 0 {
        return Ok(addr);
    }
    let probe = std::net::TcpListener::bind(addr)
        .map_err(|e| format!("find a free port on {addr}: {e}"))?;
    probe.local_addr().map_err(|e| e.to_string())
}

/// Prints the listening line once the port accepts connections (bounded: 30 s).
async fn announce(addr: SocketAddr) {
    for _ in 0..600 {
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            eprintln!("turul-task-server: listening on http://{addr}/mcp");
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!("turul-task-server: {addr} did not accept connections within 30 s");
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o = options()?;
    let addr = resolve(&o.listen)?;
    let store = open(&o.store, o.fresh).await?;
    let server = McpServer::builder()
        .name("turul-task-server")
        .version(env!("CARGO_PKG_VERSION"))
        .with_ext_tasks(store)
        .ext_task_tool(SlowCompute {
            schema: schema(
                json!({
                    "seconds": { "type": "number", "minimum": 0, "maximum": MAX_SECONDS },
                    "label": { "type": "string" }
                }),
                &["seconds"],
            ),
        })
        .ext_task_tool(CountTo {
            schema: schema(
                json!({
                    "n": { "type": "integer", "minimum": 1, "maximum": MAX_COUNT },
                    "delay_ms": { "type": "integer", "minimum": 0, "maximum": MAX_DELAY_MS }
                }),
                &["n"],
            ),
        })
        .tool(Echo {
            schema: schema(json!({ "text": { "type": "string" } }), &["text"]),
        })
        .bind_address(addr)
        .build()?;
    tokio::spawn(announce(addr));
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        r = server.run() => r?,
        _ = tokio::signal::ctrl_c() => {},
        _ = term => {},
    }
    Ok(())
}
