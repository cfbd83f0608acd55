//! The `count_to` server written with rmcp (its Streamable HTTP transport and handler
//! trait) and mcp-tasks-rmcp (the tasks: engine, store, `TaskContext`). Tools:
//! `count_to {n, delay_ms}` (a task when the client declares the Tasks extension; a
//! status line each step; asks "go on?" half-way) and a plain `echo {text}`.
//!
//! Usage: `example-rmcp-count-to [--listen ADDR] [--store URL]` (defaults
//! `127.0.0.1:8080`, `memory:`; `sqlite://./tasks.db` keeps tasks across restarts).
//! Prints `listening on http://ADDR/mcp` on stderr; stops on Ctrl-C or SIGTERM.

use mcp_tasks::prelude::*;
use mcp_tasks_rmcp::DurableTasks;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::{sync::Arc, time::Duration};

#[derive(Deserialize, JsonSchema)]
struct CountTo {
    /// How far to count.
    #[schemars(range(min = 1, max = 1000))]
    n: u64,
    /// Milliseconds between two numbers.
    #[serde(default)]
    #[schemars(range(max = 10000))]
    delay_ms: u64,
}

/// The half-way question.
#[derive(Deserialize, JsonSchema)]
struct GoOn {
    /// Count the rest?
    go_on: bool,
}

async fn count_to(args: CountTo, ctx: TaskContext) -> String {
    for i in 1..=args.n {
        ctx.set_status_message(format!("{i} of {}", args.n)).await;
        tokio::select! {
            _ = ctx.cancelled() => return format!("stopped at {i}"),
            _ = tokio::time::sleep(Duration::from_millis(args.delay_ms)) => {}
        }
        if i == args.n / 2 {
            let answer = ctx
                .elicit_as::<GoOn>(&format!("Counted to {i}. Go on?"))
                .await;
            if !matches!(answer, Ok(Elicited::Accepted(GoOn { go_on: true }))) {
                return format!("stopped at {i}, as asked");
            }
        }
    }
    format!("counted to {}", args.n)
}

#[derive(Deserialize, JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

async fn echo(args: Echo) -> String {
    args.text
}

fn flag(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == name);
    at.and_then(|i| args.get(i + 1))
        .map_or(default.into(), Clone::clone)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let count = Tool::from_fn("count_to", "Counts to n, asking half-way.", count_to);
    let server = Server::builder()
        .name("rmcp-count-to")
        .store_url(flag("--store", "memory:"))
        .tool(count.task_support(TaskSupport::Optional))
        .tool(Tool::from_fn("echo", "Sends the text back.", echo))
        .build()
        .await?;
    let tasks = DurableTasks::new(server.clone());
    let config = StreamableHttpServerConfig::default();
    let service = StreamableHttpService::new(
        move || Ok(tasks.clone()),
        Arc::new(LocalSessionManager::default()),
        config.with_cancellation_token(server.shutdown_token()),
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(flag("--listen", "127.0.0.1:8080")).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    let stop = async move {
        mcp_tasks::shutdown_signal().await;
        server.shutdown();
    };
    axum::serve(listener, app)
        .with_graceful_shutdown(stop)
        .await?;
    Ok(())
}
