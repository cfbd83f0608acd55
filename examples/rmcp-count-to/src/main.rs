//! An rmcp server (its Streamable HTTP transport, its handler trait, a resource and a
//! prompt of its own) with durable tools added by mcp-tasks-rmcp: `count_to {n,
//! delay_ms}` (a task when the client declares the Tasks extension; a status line
//! each step; asks "go on?" half-way, as `elicitation/create` on 2025-11-25) and a
//! plain `echo {text}`.
//!
//! Usage: `example-rmcp-count-to [--listen ADDR] [--store URL]` (defaults
//! `127.0.0.1:8080`, `sqlite://./tasks.db`: tasks outlive a restart; `memory:` does
//! not keep them). Prints `listening on http://ADDR/mcp` on stderr; stops on Ctrl-C or
//! SIGTERM.

use mcp_tasks::prelude::*;
use mcp_tasks_rmcp::DurableTasks;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
    ListResourcesResult, PaginatedRequestParams, Prompt, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler};
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

/// The rmcp server as it was before durable tasks: one resource, one prompt.
#[derive(Clone)]
struct Counter;

const ABOUT: &str = "count://about";

impl ServerHandler for Counter {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "rmcp-count-to",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let about = Resource::new(ABOUT, "about");
        Ok(ListResourcesResult::with_all_items(vec![about]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != ABOUT {
            let message = format!("no resource {}; this server has {ABOUT}", request.uri);
            return Err(ErrorData::resource_not_found(message, None));
        }
        let text = ResourceContents::text("count_to counts, durably.", ABOUT);
        Ok(ReadResourceResult::new(vec![text]).into())
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompt = Prompt::new("count_to_ten", Some("Asks to count to ten."), None);
        Ok(ListPromptsResult::with_all_items(vec![prompt]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != "count_to_ten" {
            let message = format!("no prompt {}; this server has count_to_ten", request.name);
            return Err(ErrorData::invalid_params(message, None));
        }
        let ask = PromptMessage::new_text(Role::User, "Count to 10 with count_to.");
        Ok(GetPromptResult::new(vec![ask]).into())
    }
}

fn flag(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == name);
    at.and_then(|i| args.get(i + 1))
        .map_or(default.into(), Clone::clone)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `resumable`: a task cut off by a restart (or a crash) runs again as its next
    // attempt when the server starts, instead of failing; count_to is safe to repeat.
    let count = Tool::from_fn("count_to", "Counts to n, asking half-way.", count_to);
    let server = Server::builder()
        .store_url(flag("--store", "sqlite://./tasks.db"))
        .tool(count.task_support(TaskSupport::Optional).resumable())
        .tool(Tool::from_fn("echo", "Sends the text back.", echo))
        .build()
        .await?;
    let handler = DurableTasks::new(server.clone()).wrap(Counter);
    let config = StreamableHttpServerConfig::default();
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
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
