//! # mcp-tasks-server
//!
//! An MCP server speaking the 2025-11-25 task wire on top of the
//! [`mcp_tasks_engine::Engine`]. It knows nothing of SQL.
//!
//! | module | what it does |
//! |---|---|
//! | [`auth`] | bearer tokens: static table or JWT (JWKS), the subject tasks are bound to |
//! | [`registry`] | [`ToolRegistry`]: tools, their input schemas, task support and handlers |
//! | [`server`] | [`McpServer`]: shared state, session table, event routing to sessions |
//! | [`session`] | [`Session`]: negotiated version, client capabilities, outbound stream, in-flight calls |
//! | [`wire`] | one folder per wire generation, the same file name for the same method on both: `v2025_11_25` (sessions, `params.task`) and [`wire::v2026_07_28`] (stateless, the Tasks extension) |
//! | [`error_map`] | engine errors and task failures to JSON-RPC errors, in one place |
//! | [`mcp_reader`] | the engine's `WireReader`: progress tokens and `isError`, read for it |
//! | [`transport`] | stdio and Streamable HTTP (hyper connections under an axum router) |
#![deny(missing_docs)]

pub mod auth;
pub mod builder;
mod client_task;
pub mod elicit;
pub mod error_map;
pub mod external;
mod handle;
pub mod http_limits;
pub mod mcp_reader;
mod messages;
mod outgoing;
pub mod registry;
mod routing;
pub mod server;
pub mod session;
mod start;
mod sync_input;
mod task_input;
mod task_start;
mod tool_call;
pub mod transport;
pub mod typed;
pub mod wire;

pub use builder::{BuildError, Server, ServerBuilder};
pub use elicit::{ElicitAs, Elicited};
pub use external::{ExternalJob, JobError, JobPoll};
pub use registry::{
    Preflight, RegistryError, TaskSupport, Tool, ToolFuture, ToolRegistry, ToolResult,
};
pub use server::{McpServer, ServerConfig};
pub use session::Session;
pub use typed::{IntoToolResult, Json, NoArgs, ProtocolError, Structured, ToolFn};
