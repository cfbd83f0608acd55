//! # mcp-tasks-server
//!
//! An MCP server speaking both task wires (2025-11-25 sessions with `params.task`, and
//! the 2026-07-28 Tasks extension) on top of the [`mcp_tasks_engine::Engine`]. It knows
//! nothing of SQL. [`Server`] is the one server type: build it with [`Server::builder`]
//! (or [`Server::start`] with parts you assembled) and serve it over stdio, HTTP, or your own axum app.
//!
//! | module | what it owns |
//! |---|---|
//! | [`builder`] | [`ServerBuilder`]: tools, store and settings collected before start; [`BuildError`] |
//! | `serve` | running a [`Server`]: `serve_stdio`, `serve_http`, `router`, the shutdown signal |
//! | `drain` | stopping well: [`ShutdownSignals`] (a first Ctrl-C or SIGTERM drains the engine, a second stops at once), [`drain_signal`], [`drain_on`] |
//! | [`server`] | [`Server`] and [`ServerConfig`]: the shared state (engine, tools, sessions, outgoing requests) |
//! | `start` | what starting a server wires into the engine: external pollers, the reader, resumable tools, log routing, the idle-session sweep |
//! | [`session`] | [`Session`]: negotiated version, client capabilities, outbound stream, in-flight calls |
//! | `tools/` | tools and calling them: [`registry`] ([`ToolRegistry`]), [`typed`] tool functions, [`external`] tools polled elsewhere ([`ExternalJob`]), `call` (the one tool-call path both wires share: lookup, panic capture, cancellation, and starting a call as a task) |
//! | `questions/` | questions asked of the client and their answers: [`ask`] ([`AskClient`]: elicitation, sampling, roots), [`elicit`] (a Rust type as a requested schema), `in_task` (inside a task, on either wire), `in_call` (during a plain call, on its own stream), `client_hosted` (a request the client answers as a task), `outgoing` (the server's requests and the answers it waits for), `reask` (asking again after a refused answer) |
//! | `notify/` | notifications: `routing` (engine events to the sessions that should see them) and `messages` (status, progress, log lines) |
//! | `ops/` | operating a server: [`auth`] (bearer tokens: static table or JWT via JWKS), [`metrics`] (Prometheus), [`telemetry`] (one span per MCP request after OpenTelemetry's MCP conventions, trace context from `_meta`) |
//! | [`wire`] | one folder per wire generation with the same file name for the same method: `v2025_11_25` (which also takes one incoming message, `Server::handle`) and [`wire::v2026_07_28`] |
//! | [`passthrough`] | [`Passthrough`]: methods we do not answer (resources, prompts) handed on, e.g. to a gateway's upstreams |
//! | [`error_map`] | engine errors and task failures to JSON-RPC errors, in one place |
//! | [`mcp_reader`] | the engine's `WireReader`: progress tokens and `isError`, read for it |
//! | [`transport`] | stdio and Streamable HTTP (our own hyper accept loop under an axum router), with the HTTP connection limits ([`transport::limits`], also at [`http_limits`]) |
//!
//! The modules that moved into a feature folder stay importable at their old paths
//! (`mcp_tasks_server::registry`, `::auth`, `::http_limits`, ...), re-exported below.
#![deny(missing_docs)]

pub mod approvals;
pub mod builder;
mod drain;
pub mod error_map;
pub mod mcp_reader;
mod notify;
mod ops;
pub mod passthrough;
mod questions;
mod serve;
pub mod server;
pub mod session;
mod start;
mod tools;
pub mod transport;
pub mod wire;

pub use ops::{auth, metrics, telemetry};
pub use questions::{ask, elicit};
pub use tools::retry_settings::RetrySettings;
pub use tools::{external, registry, retry_settings, task_tools, typed};
pub use transport::limits as http_limits;

pub use ask::{AskClient, ElicitAction, ElicitResponse};
pub use builder::{BuildError, ServerBuilder};
pub use drain::{drain_on, drain_signal, ShutdownSignals};
pub use elicit::{ElicitAs, Elicited};
pub use external::{ExternalJob, JobError, JobPoll};
pub use passthrough::Passthrough;
pub use registry::{
    Preflight, RegistryError, TaskSupport, Tool, ToolFuture, ToolRegistry, ToolResult,
};
pub use serve::shutdown_signal;
pub use server::{Server, ServerConfig, TaskTools};
pub use session::Session;
pub use typed::{IntoToolResult, Json, NoArgs, ProtocolError, Structured, ToolFn};
