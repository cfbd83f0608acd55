//! Mounting inside an existing axum app: the app keeps its own routes (`/health`,
//! `/`), and the MCP endpoint with its tasks lives at `/mcp` beside them, sharing the
//! listener and the runtime. Pass the address to bind (default `127.0.0.1:3000`); the
//! bound address is printed on stdout.

use axum::routing::get;
use axum::Router;
use mcp_tasks::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Report {
    /// The report to render.
    name: String,
}

async fn render(args: Report, ctx: TaskContext) -> String {
    ctx.set_status_message(format!("rendering {}", args.name))
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    format!("report '{}' is ready", args.name)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    let mcp = Server::builder()
        .name("reports")
        .tool(
            Tool::from_fn("render_report", "Renders a report.", render)
                .task_support(TaskSupport::Optional),
        )
        .build()
        .await?;

    // The application you already have.
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .route("/", get(|| async { "the reports app; MCP is at /mcp" }))
        .merge(mcp.router("/mcp"));

    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            mcp_tasks::shutdown_signal().await;
            // Ends open MCP event streams so the graceful shutdown can finish.
            mcp.shutdown();
        })
        .await?;
    Ok(())
}
