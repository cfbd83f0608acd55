//! The smallest task-capable MCP server: stdio, or HTTP at /mcp given an address.
use mcp_tasks::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Countdown {
    /// Seconds to count down from.
    #[schemars(range(max = 3600))]
    from: u64,
}

async fn countdown(args: Countdown, ctx: TaskContext) -> String {
    for left in (1..=args.from).rev() {
        ctx.set_status_message(format!("{left} s to go")).await;
        tokio::select! {
            _ = ctx.cancelled() => return format!("stopped with {left} s to go"),
            _ = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
        }
    }
    format!("liftoff after {} s", args.from)
}

#[tokio::main]
async fn main() -> Result<(), BuildError> {
    let tool = Tool::from_fn("countdown", "Counts down, one status a second.", countdown);
    let server = Server::builder()
        .tool(tool.task_support(TaskSupport::Optional))
        .build()
        .await?;
    match std::env::args().nth(1) {
        Some(addr) => server.serve_http(addr).await,
        None => server.serve_stdio().await,
    }
}
