//! # mcp-tasks-client
//!
//! A Rust client for MCP servers that run tool calls as tasks. It connects over stdio
//! (spawning the server) or Streamable HTTP (with an optional bearer token), picks the
//! task wire the server speaks (the 2026-07-28 Tasks extension when `server/discover`
//! offers it, else 2025-11-25), and follows tasks to their end: status, progress,
//! questions answered by the handlers you register, and the result. A task created
//! earlier can be picked up again by id after a restart.
//!
//! ```no_run
//! use mcp_tasks_client::{input, Client, Target, TaskOptions};
//! use serde_json::json;
//!
//! # async fn demo() -> Result<(), mcp_tasks_client::ClientError> {
//! let client = Client::builder()
//!     .on_elicitation(|_question| async { Ok(input::accept(json!({"confirm": true}))) })
//!     .connect(&Target::Http("http://127.0.0.1:8080/mcp".into()))
//!     .await?;
//! let task = client
//!     .call_tool_as_task("slow_compute", json!({"seconds": 3}), TaskOptions::default())
//!     .await?;
//! println!("task {:?}", task.task_id());
//! let outcome = task.result().await?;
//! println!("{}", outcome.text().unwrap_or_default());
//! # Ok(()) }
//! ```
//!
//! | module | what it holds |
//! |---|---|
//! | [`client`] | [`Client`], [`ClientBuilder`], [`Target`]: connecting, tools, get, list, cancel, resume |
//! | [`task`] | [`TaskHandle`], its [`Updates`] stream and [`TaskOutcome`] |
//! | [`input`] | [`InputRequest`] and the handlers that answer elicitation, sampling, roots |
//! | [`tools`] | [`ToolInfo`] and [`TaskSupport`] |
//! | [`wire`] | [`Wire`] and [`WirePreference`]: which generation of the task wire |
//! | [`error`] | [`ClientError`], with the JSON-RPC code kept |
//! | [`log`] | log messages the server sends, and the handler that sees them |
//! | `builder` | [`ClientBuilder`]: the handlers and settings of a connection |
//! | `connect` | [`ClientBuilder::connect`]: transport, the handshake and wire choice |
//! | `task_calls` | the task methods of [`Client`] on either wire: create, get, list, cancel, result; plain tool calls |
//! | `dispatch` | what the server sends on its own: status and progress to handles, input requests to handlers; who subscribed to what |
//! | `connection` | a peer and its transport, and the one way to send a request and wait for its answer |
//! | `reply` | the typed shapes of what a server sends, and the one parse that names a malformed field |
//! | `peer` | requests waiting for answers and server-started messages, for either transport |
//! | `transport` | stdio (a spawned server) and Streamable HTTP; they only move messages |
//! | `sse` | an incremental `text/event-stream` reader |
#![deny(missing_docs)]

mod builder;
pub mod client;
mod connect;
mod connection;
mod dispatch;
pub mod error;
pub mod input;
pub mod log;
mod peer;
mod reply;
mod sse;
pub mod task;
mod task_calls;
pub mod tools;
mod transport;
pub mod wire;

pub use builder::ClientBuilder;
pub use client::{Client, ServerInfo, Target};
pub use error::ClientError;
pub use input::InputRequest;
pub use log::ServerLog;
pub use mcp_tasks_protocol::{LoggingLevel, RpcError, TaskId, TaskStatus, TaskView};
pub use task::{Progress, TaskHandle, TaskOptions, TaskOutcome, TaskUpdate, Updates};
pub use tools::{TaskSupport, ToolInfo};
pub use wire::{Wire, WirePreference};
