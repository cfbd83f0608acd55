//! # mcp-tasks-server
//!
//! An MCP server speaking both task wires (2025-11-25 sessions with `params.task`, and
//! the 2026-07-28 Tasks extension) on top of the [`mcp_tasks_engine::Engine`]. It knows
//! nothing of SQL. [`Server`] is the one server type: build it with [`Server::builder`]
//! (or [`Server::from_parts`]) and serve it over stdio, HTTP, or your own axum app.
//!
//! | module | what it owns |
//! |---|---|
//! | [`builder`] | [`ServerBuilder`]: tools, store and settings collected before start; [`BuildError`] |
//! | `serve` | running a [`Server`]: `from_parts`, `serve_stdio`, `serve_http`, `router`, the shutdown signal |
//! | [`server`] | [`Server`] and [`ServerConfig`]: the shared state (engine, tools, sessions, outgoing requests) |
//! | `start` | what starting a server wires into the engine: external pollers, the reader, resumable tools, log routing, the idle-session sweep |
//! | `handle` | one incoming JSON-RPC message: routing to the wire that owns its method |
//! | `messages` | notifications built from engine events (status, progress, log lines) |
//! | `routing` | engine events to the sessions that should see them |
//! | `outgoing` | requests this server sends to clients and the answers it waits for |
//! | [`session`] | [`Session`]: negotiated version, client capabilities, outbound stream, in-flight calls |
//! | [`registry`] | [`ToolRegistry`]: tools, their input schemas, task support and handlers |
//! | [`typed`] | typed tool functions: arguments from JSON, results into tool results |
//! | [`ask`] | [`AskClient`]: elicitation, sampling and roots asked of the client from a tool |
//! | [`elicit`] | typed elicitation: a Rust type as a requested schema, the answer parsed back |
//! | [`external`] | tools whose work runs elsewhere and is polled ([`ExternalJob`]) |
//! | `tool_call` | the one tool-call path both wires share: lookup, panic capture, cancellation |
//! | `task_start` | creating a task for a tool call and launching its work |
//! | `task_input` | questions a running task asks its client, on either wire |
//! | `sync_input` | questions asked during a plain (non-task) call, on the call's own stream |
//! | `client_task` | client-hosted tasks: a request the client answers as a task |
//! | [`wire`] | one folder per wire generation with the same file name for the same method: `v2025_11_25` and [`wire::v2026_07_28`] |
//! | [`passthrough`] | [`Passthrough`]: methods we do not answer (resources, prompts) handed on, e.g. to a gateway's upstreams |
//! | [`error_map`] | engine errors and task failures to JSON-RPC errors, in one place |
//! | [`mcp_reader`] | the engine's `WireReader`: progress tokens and `isError`, read for it |
//! | [`auth`] | bearer tokens: static table or JWT (JWKS), the subject tasks are bound to |
//! | [`metrics`] | Prometheus metrics: tasks by tool and outcome, durations, requests, sessions |
//! | [`telemetry`] | spans for traces: one per MCP request after OpenTelemetry's MCP conventions, trace context from `_meta` |
//! | [`http_limits`] | HTTP connection limits and timeouts ([`http_limits::HttpLimits`]) |
//! | [`transport`] | stdio and Streamable HTTP (our own hyper accept loop under an axum router) |
#![deny(missing_docs)]

pub mod ask;
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
pub mod metrics;
mod outgoing;
pub mod passthrough;
mod reask;
pub mod registry;
mod routing;
mod serve;
pub mod server;
pub mod session;
mod start;
mod sync_input;
mod task_input;
mod task_start;
pub mod telemetry;
mod tool_call;
pub mod transport;
pub mod typed;
pub mod wire;

pub use ask::{AskClient, ElicitAction, ElicitResponse};
pub use builder::{BuildError, ServerBuilder};
pub use elicit::{ElicitAs, Elicited};
pub use external::{ExternalJob, JobError, JobPoll};
pub use passthrough::Passthrough;
pub use registry::{
    Preflight, RegistryError, TaskSupport, Tool, ToolFuture, ToolRegistry, ToolResult,
};
pub use serve::shutdown_signal;
pub use server::{Server, ServerConfig};
pub use session::Session;
pub use typed::{IntoToolResult, Json, NoArgs, ProtocolError, Structured, ToolFn};
