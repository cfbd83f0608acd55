//! # mcp-tasks
//!
//! Durable [MCP Tasks](https://modelcontextprotocol.io) for Rust servers. Write a tool
//! as an async function with typed arguments; declare once whether it may run as a
//! task; serve it over stdio or Streamable HTTP. Clients speaking either task wire
//! generation (2025-11-25 `params.task` with `tasks/get|result|list|cancel`, or the
//! `io.modelcontextprotocol/tasks` extension with `tasks/update` and `DetailedTask`)
//! get the same tool, and you never look at which one they speak.
//!
//! ## The task model in one page
//!
//! A plain `tools/call` holds the request open until the tool returns. A **task**
//! turns the call into a record the server keeps: the client gets a task id at once,
//! then polls (`tasks/get`), collects the result (`tasks/result`), or cancels
//! (`tasks/cancel`) later, from another connection, or after the server restarted.
//!
//! ```text
//!              ┌──────────────── input_required ◄──┐ (the tool asked the user)
//!              ▼                                   │
//!   create ─► working ───────────────────────────────┴─► completed | failed | cancelled
//! ```
//!
//! - **Who decides?** The tool declares [`TaskSupport`]: `Forbidden` (plain calls only,
//!   the default), `Optional` (the client chooses), `Required` (tasks only).
//! - **What the tool sees:** one [`TaskContext`], whether it runs as a task or as a
//!   plain call: [`TaskContext::set_status_message`] (shown by `tasks/get`),
//!   [`TaskContext::report_progress`], [`TaskContext::log`] (`notifications/message`
//!   at the level the client set), [`TaskContext::cancelled`] /
//!   [`TaskContext::is_cancelled`], [`TaskContext::task_id`], and questions to the user
//!   ([`TaskContext::elicit`], [`TaskContext::create_message`]) which put the task in
//!   `input_required` until answered (in a plain call they go to the client on the
//!   call's own stream and the call waits).
//! - **Durability:** the record is stored before the client hears of it. With a
//!   SQLite or PostgreSQL store a task survives a crash: finished results are kept
//!   until their TTL; work that was running when the process died is failed with a
//!   message saying so, never left `working`. Tools marked
//!   [`Tool::resumable`] are re-run by another replica instead.
//! - **External jobs:** a tool whose work runs elsewhere (a warehouse query, a CI
//!   build) starts it and returns a small JSON state; the server polls the job when
//!   the client reads the task and cancels it on `tasks/cancel`. No process holds such
//!   a task, so it survives restarts and any replica can answer for it. See
//!   [`ExternalJob`] and [`Tool::external`].
//! - **Security:** task ids are 128-bit random; a task is visible only to the
//!   principal that created it (the bearer token's subject over HTTP); quotas, a
//!   maximum TTL and audit events are in [`EngineConfig`] and [`ServerConfig`].
//!
//! ## A task tool in a few lines
//!
//! ```no_run
//! use mcp_tasks::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Count {
//!     /// How far to count.
//!     n: u32,
//! }
//!
//! async fn count(args: Count, ctx: TaskContext) -> String {
//!     for i in 1..=args.n {
//!         if ctx.is_cancelled() {
//!             return format!("stopped at {i}");
//!         }
//!         ctx.set_status_message(format!("{i} of {}", args.n)).await;
//!         tokio::time::sleep(std::time::Duration::from_millis(100)).await;
//!     }
//!     format!("counted to {}", args.n)
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), BuildError> {
//!     Server::builder()
//!         .name("counter")
//!         .store_url("sqlite://./tasks.db")
//!         .tool(Tool::from_fn("count", "Counts slowly.", count).task_support(TaskSupport::Optional))
//!         .build()
//!         .await?
//!         .serve_stdio()
//!         .await
//! }
//! ```
//!
//! Why a builder and not an attribute macro: a builder is plain Rust, so the compiler,
//! rust-analyzer and rustdoc see everything; the argument type already carries the
//! schema (through `schemars`), and the one remaining decision, task support, is one
//! method call. A macro would add a proc-macro crate to every build and hide the
//! generated code for no extra safety.
//!
//! ## What this crate offers
//!
//! A chosen set, not the four crates underneath it (as rmcp curates its root):
//!
//! - **at the root**, what a tool author and a server operator name: the [`Server`],
//!   its [`ServerBuilder`] and settings ([`ServerConfig`], [`EngineConfig`],
//!   [`HttpLimits`], [`TaskTools`]); a [`Tool`] and its typed API ([`Json`],
//!   [`Structured`], [`NoArgs`], [`ToolResult`], [`IntoToolResult`],
//!   [`ProtocolError`]); the [`TaskContext`] a tool is handed, with its questions
//!   ([`AskClient`], [`ElicitAs`], [`Ask`], [`DeadlineOutcome`]), steps and retries
//!   ([`StepError`], [`Retry`], [`RetryPolicy`]); external jobs ([`ExternalJob`],
//!   [`JobPoll`], [`JobError`]); and the errors ([`BuildError`], [`InputError`],
//!   [`RegistryError`], [`EngineError`]);
//! - [`prelude`]: what a tool usually needs, in one `use`;
//! - [`store`]: the stores to choose from and the [`store::TaskStore`] trait a server
//!   takes;
//! - [`auth`] and [`approvals`]: what an operator configures in [`ServerConfig`].
//!
//! Lower-level work (assembling an engine by hand, implementing a `TaskStore`, a
//! transport of your own) depends on the layers directly: `mcp-tasks-server`,
//! `mcp-tasks-engine`, `mcp-tasks-store`, `mcp-tasks-protocol`
//! (`examples/embedded-server` and `examples/custom-store` do).
//!
//! Your arguments types derive `schemars::JsonSchema`, so add `schemars = "1"` (and
//! `serde`) to your own `Cargo.toml`; the derive macros refer to those crates by name.
#![deny(missing_docs)]

// The server and its settings.
pub use mcp_tasks_engine::EngineConfig;
pub use mcp_tasks_protocol::Secret;
pub use mcp_tasks_server::http_limits::HttpLimits;
pub use mcp_tasks_server::{
    shutdown_signal, BuildError, RetrySettings, Server, ServerBuilder, ServerConfig, TaskTools,
};

// Tools and their results.
pub use mcp_tasks_protocol::{LoggingLevel, RpcError, TaskId};
pub use mcp_tasks_server::registry::ToolHandler;
pub use mcp_tasks_server::{
    IntoToolResult, Json, NoArgs, Preflight, ProtocolError, RegistryError, Structured, TaskSupport,
    Tool, ToolFuture, ToolRegistry, ToolResult,
};

// What running work holds: the context, its questions, steps and retries.
pub use mcp_tasks_engine::{
    Ask, DeadlineOutcome, EngineError, InputError, Retry, RetryPolicy, RetryRequested, StepError,
    TaskContext,
};
pub use mcp_tasks_server::{AskClient, ElicitAction, ElicitAs, ElicitResponse, Elicited};

// External jobs.
pub use mcp_tasks_server::{ExternalJob, JobError, JobPoll};

/// Everything a tool author usually needs: `use mcp_tasks::prelude::*;`.
pub mod prelude {
    pub use crate::{
        AskClient, BuildError, ElicitAction, ElicitAs, ElicitResponse, Elicited, ExternalJob,
        InputError, JobError, JobPoll, Json, LoggingLevel, NoArgs, ProtocolError, Retry, Server,
        StepError, Structured, TaskContext, TaskSupport, Tool, ToolResult,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// Where tasks are kept: the stores to choose from, for
/// [`ServerBuilder::store`](crate::ServerBuilder::store) (or name one by URL with
/// [`ServerBuilder::store_url`](crate::ServerBuilder::store_url)).
///
/// A store of your own implements [`TaskStore`](crate::store::TaskStore) from
/// `mcp-tasks-store`, which also has the record types its methods take
/// (`examples/custom-store`).
pub mod store {
    pub use mcp_tasks_store::{open, MemoryStore, StoreError, TaskStore};

    #[cfg(feature = "postgres")]
    pub use mcp_tasks_store::PgStore;
    #[cfg(feature = "sqlite")]
    pub use mcp_tasks_store::SqliteStore;
}

/// Who may call: bearer tokens for [`ServerConfig::auth`](crate::ServerConfig::auth).
/// A task is visible only to the principal that created it.
pub mod auth {
    #[cfg(feature = "jwt")]
    pub use mcp_tasks_server::auth::JwtVerifier;
    pub use mcp_tasks_server::auth::{AuthError, AuthMode, Authenticator, StaticTokens};
}

/// Calls held for people's approval before they run: the rules of
/// [`ServerBuilder::approvals`](crate::ServerBuilder::approvals) (docs/approvals.md).
pub mod approvals {
    pub use mcp_tasks_server::approvals::{ApprovalRule, Approvals, Condition, OnTimeout};
}

mod surface;
