//! # mcp-tasks-protocol
//!
//! Pure data for the Model Context Protocol as mcp-tasks speaks it. Nothing here does I/O,
//! so every other layer (engine, server, client) can share one definition of the wire.
//!
//! | module | what it holds |
//! |---|---|
//! | [`jsonrpc`] | JSON-RPC 2.0 envelopes, [`jsonrpc::RequestId`], [`jsonrpc::RpcError`], parsing that tells -32700 from -32600 |
//! | [`error_code`] | every numeric error code as a named constant |
//! | [`logging`] | [`LoggingLevel`], the severities of `logging/setLevel` and `notifications/message` |
//! | [`version`] | protocol versions we speak and how a version is negotiated |
//! | [`methods`] | method names and the params/results of the methods we serve |
//! | [`task`] | generation-neutral task types: [`task::TaskId`], [`task::TaskStatus`], [`task::TaskView`] |
//! | [`tool`] | [`TaskSupport`], a tool's `execution.taskSupport`, for server and client alike |
//! | [`secret`] | [`Secret`], the one redaction type (prints `***`), and [`secret::redact_url`] for database URLs |
//! | [`answer`] | answers to elicitation forms checked against the form's `requestedSchema`, naming the field by its title |
//! | [`codec`] | per-generation rendering of tasks (`ttl` vs `ttlMs` lives only there) |
#![deny(missing_docs)]

pub mod answer;
pub mod codec;
pub mod error_code;
pub mod jsonrpc;
pub mod logging;
pub mod methods;
pub mod secret;
pub mod task;
pub mod tool;
pub mod version;

pub use jsonrpc::{Incoming, RequestId, RpcError};
pub use logging::LoggingLevel;
pub use secret::Secret;
pub use task::{TaskId, TaskStatus, TaskView};
pub use tool::TaskSupport;
