//! # mcp-tasks-server
//!
//! An MCP server speaking both task wires (2025-11-25 sessions with `params.task`, and
//! the 2026-07-28 Tasks extension) on top of the [`mcp_tasks_engine::Engine`]. It knows
//! nothing of SQL. [`Server`] is the one server type: build it with [`Server::builder`]
//! (or [`Server::start`] with parts you assembled) and serve it over stdio, HTTP, or your own axum app.
//!
//! The crate is layered as the engine is: each layer imports only those below it, and
//! nothing imports the facade.
//!
//! | layer | module | what it owns |
//! |---|---|---|
//! | facade | [`server`] | [`Server`] and every `impl Server`: [`builder`] ([`ServerBuilder`], [`BuildError`]), `start` (what starting wires into the engine), `serve` (`serve_stdio`, `serve_http`, `router`), `handle`, `start_call` (run again); [`ServerConfig`] re-exported |
//! | transports | [`transport`] | stdio and Streamable HTTP (our own hyper accept loop under an axum router), `/healthz`, `/readyz`, `/metrics`; they take a server as `impl AsRef<Shared>` |
//! | wires | [`wire`] | one folder per wire generation with the same file name for the same method: `v2025_11_25` and [`wire::v2026_07_28`]; each `tools_call.rs` renders the call plan |
//! | call pipeline | `calls/` | what a `tools/call` becomes: `plan` (find, validate, approval gate, preflight, then one `CallPlan`), `call` (starting a tool inline or as a task), `plain`, `budget`, `heartbeat` (a plain call under the sync budget), [`task_tools`] (`task_wait`, ...) |
//! | shared state | [`shared`] | [`Shared`]: engine, tools, settings, sessions, questions, metrics, the task window's `durations`; `drain` ([`ShutdownSignals`], [`drain_signal`], [`drain_on`]) |
//! | settings | `config` | [`ServerConfig`] and its documented defaults |
//! | features | `questions/`, `notify/`, [`approvals`] | questions asked of the client and their answers ([`ask`], [`elicit`], `in_task`, `in_call`, `client_hosted`, `outgoing`, `reask`) behind one `Questions` handle; engine events to sessions (`routing`); calls that wait for people |
//! | tool authors | `tools/` | [`registry`] ([`ToolRegistry`]), [`typed`] tool functions, [`external`] tools polled elsewhere ([`ExternalJob`]), [`retry_settings`], who is offered the task tools ([`TaskTools`]) |
//! | bottom | [`session`], `sessions`, [`answers`], [`mcp_results`], `messages`, [`error_map`], [`passthrough`], [`http_limits`], `ops/` | one session; the session table; what an answer must look like; the engine's `ResultReading` for MCP (progress tokens, `isError`); notification messages; engine errors to JSON-RPC; methods handed on; HTTP limits; [`auth`], [`metrics`], [`telemetry`] |
//!
//! The modules that moved into a folder stay importable at their old paths
//! (`mcp_tasks_server::registry`, `::auth`, `::http_limits`, `::builder`, ...),
//! re-exported below.
#![deny(missing_docs)]

pub mod answers;
pub mod approvals;
mod calls;
mod config;
mod drain;
pub mod error_map;
pub mod http_limits;
pub mod mcp_results;
mod messages;
mod notify;
mod ops;
pub mod passthrough;
mod questions;
pub mod server;
pub mod session;
mod sessions;
pub mod shared;
mod tools;
pub mod transport;
pub mod wire;

pub use calls::task_tools;
pub use ops::{auth, metrics, telemetry};
pub use questions::{ask, elicit};
pub use server::builder;
pub use tools::retry_settings::RetrySettings;
pub use tools::{external, registry, retry_settings, typed};

pub use ask::{AskClient, ElicitAction, ElicitResponse};
pub use builder::{BuildError, ServerBuilder};
pub use drain::{drain_on, drain_signal, ShutdownSignals};
pub use elicit::{ElicitAs, Elicited};
pub use external::{ExternalJob, JobError, JobPoll};
pub use passthrough::Passthrough;
pub use registry::{
    Preflight, RegistryError, TaskSupport, Tool, ToolFuture, ToolRegistry, ToolResult,
};
pub use server::serve::shutdown_signal;
pub use server::{Server, ServerConfig, TaskTools};
pub use session::Session;
pub use shared::Shared;
pub use typed::{IntoToolResult, Json, NoArgs, ProtocolError, Structured, ToolFn};
