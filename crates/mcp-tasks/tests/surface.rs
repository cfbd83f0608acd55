//! The surface of `mcp-tasks`, listed: every name a tool author or a server operator
//! reaches through this crate, so that dropping one from the facade (or re-exporting a
//! different item under it) fails here. What is kept out is checked by the
//! `compile_fail` doctests in `src/surface.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::sync::Arc;

// The root, by what it is for: the server and its settings,
use mcp_tasks::{
    shutdown_signal, BuildError, EngineConfig, HttpLimits, RetrySettings, Secret, Server,
    ServerBuilder, ServerConfig, TaskTools,
};
// tools and their results,
use mcp_tasks::{
    IntoToolResult, Json, LoggingLevel, NoArgs, Preflight, ProtocolError, RegistryError, RpcError,
    Structured, TaskId, TaskSupport, Tool, ToolFuture, ToolHandler, ToolRegistry, ToolResult,
};
// the context and its questions, steps and retries,
use mcp_tasks::{
    Ask, AskClient, DeadlineOutcome, ElicitAction, ElicitAs, ElicitResponse, Elicited, EngineError,
    InputError, Retry, RetryPolicy, RetryRequested, StepError, TaskContext,
};
// external jobs.
use mcp_tasks::{ExternalJob, JobError, JobPoll};
// The curated modules.
use mcp_tasks::approvals::{ApprovalRule, Approvals, Condition, OnTimeout};
use mcp_tasks::auth::{AuthError, AuthMode, Authenticator, StaticTokens};
use mcp_tasks::store::{open, MemoryStore, StoreError, TaskStore};

/// The names behind features, on by default.
#[cfg(feature = "jwt")]
fn with_jwt(_: mcp_tasks::auth::JwtVerifier) {}
#[cfg(feature = "sqlite")]
fn with_sqlite(_: mcp_tasks::store::SqliteStore) {}
#[cfg(feature = "postgres")]
fn with_postgres(_: mcp_tasks::store::PgStore) {}

/// The facade's names are the layers' items, not look-alikes: each converts to the
/// layer's type with no conversion at all.
fn same_items(
    ctx: TaskContext,
    tool: Tool,
    result: ToolResult,
    store: Arc<dyn TaskStore>,
    config: EngineConfig,
) -> (
    mcp_tasks_engine::TaskContext,
    mcp_tasks_server::Tool,
    mcp_tasks_server::ToolResult,
    Arc<dyn mcp_tasks_store::TaskStore>,
    mcp_tasks_engine::EngineConfig,
) {
    (ctx, tool, result, store, config)
}

/// The prelude has what the examples and the guide's tools use.
mod prelude_has {
    use mcp_tasks::prelude::*;

    #[derive(Deserialize, Serialize, JsonSchema)]
    struct Args {
        n: u32,
    }

    async fn tool(args: Args, ctx: TaskContext) -> Result<Json<Args>, StepError> {
        let n = ctx.step("double", async move { args.n * 2 }).await?;
        if let Ok(Elicited::Accepted(Args { n: 0 })) = ctx.elicit_as::<Args>("zero?").await {
            ctx.log(LoggingLevel::Info, "zero");
        }
        Ok(Json(Args { n }))
    }

    async fn plain(_: NoArgs) -> Result<ToolResult, ProtocolError> {
        Ok(ToolResult::text("ok"))
    }

    pub(super) fn tools() -> Vec<Tool> {
        vec![
            Tool::from_fn("double", "Doubles.", tool).task_support(TaskSupport::Optional),
            Tool::from_fn("plain", "Says ok.", plain),
        ]
    }

    fn errors(_: BuildError, _: InputError, _: JobError, _: Retry, _: Server) {}
    fn questions(_: ElicitAction, _: ElicitResponse) {}
    fn external<J: ExternalJob>(_: JobPoll<J::State, J::Output>) {}
    fn structured<C: AskClient + ElicitAs>(_: Structured<Args>, _: &C) {}
}

#[tokio::test]
async fn a_server_is_built_from_the_surface_alone() {
    let store: Arc<dyn TaskStore> = open("memory:").await.unwrap();
    let server = Server::builder()
        .name("surface")
        .store(store)
        .engine_config(EngineConfig::default())
        .server_config(ServerConfig::default())
        .tools(prelude_has::tools())
        .build()
        .await
        .unwrap();
    let names: Vec<String> = server
        .tools()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().any(|n| n == "double") && names.iter().any(|n| n == "plain"));
    server.shutdown();
}

#[test]
fn a_tool_result_is_a_value_that_becomes_call_tool_result_json() {
    let result = ToolResult::error("the table is locked");
    assert!(result.is_error());
    let json = result.clone().into_tool_result().unwrap();
    assert_eq!(json, serde_json::Value::from(result));
    assert_eq!(json["isError"], true);
    assert_eq!(json["content"][0]["text"], "the table is locked");
}

/// Every name of the list, used once so that a change of what it is shows here.
type TheRest<'a> = (
    BuildError,
    InputError,
    JobError,
    Retry,
    StepError,
    ElicitAction,
    ElicitResponse,
    Elicited<NoArgs>,
    Structured<u32>,
    Json<u32>,
    JobPoll<u32, String>,
    LoggingLevel,
    ProtocolError,
    TaskSupport,
    ServerBuilder,
    HttpLimits,
    RetrySettings,
    Secret<Vec<u8>>,
    TaskTools,
    Preflight,
    RegistryError,
    RpcError,
    TaskId,
    ToolFuture,
    ToolHandler,
    ToolRegistry,
    Ask,
    DeadlineOutcome,
    EngineError,
    RetryPolicy,
    RetryRequested,
    MemoryStore,
    StoreError,
    ApprovalRule,
    Approvals,
    Condition,
    OnTimeout,
    AuthError,
    AuthMode,
    &'a dyn Authenticator,
    StaticTokens,
);

fn the_rest(_: TheRest<'_>) {
    let _ = shutdown_signal;
    let _ = <ToolResult as IntoToolResult>::output_schema;
    let _ = <TaskContext as ElicitAs>::elicit_as::<NoArgs>;
    let _ = <TaskContext as AskClient>::elicit;
}

/// An external job, named through the facade.
fn external<J: ExternalJob>(_: &J) {}
