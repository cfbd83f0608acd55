//! What this crate keeps out of its surface, checked by doctests (`cargo test -p
//! mcp-tasks --doc`): each `compile_fail` block names an internal through this crate
//! and must not compile; the block after it names the same item through the layer it
//! lives in and must compile, so a `compile_fail` fails because the path is closed,
//! not because the item is gone or the block is wrong (stable rustdoc does not check
//! the error codes; nightly does). `tests/surface.rs` lists what the surface does hold.
//!
//! The layers are not re-exported as modules:
//!
//! ```compile_fail,E0432
//! use mcp_tasks::engine::Engine;
//! ```
//! ```compile_fail,E0432
//! use mcp_tasks::server::Session;
//! ```
//! ```compile_fail,E0432
//! use mcp_tasks::protocol::TaskStatus;
//! ```
//! ```
//! use mcp_tasks_engine::Engine;
//! use mcp_tasks_protocol::TaskStatus;
//! use mcp_tasks_server::Session;
//! ```
//!
//! Store internals are neither at the root nor in [`crate::store`], which holds the
//! stores a server is given:
//!
//! ```compile_fail,E0432
//! use mcp_tasks::TaskRecord;
//! ```
//! ```compile_fail,E0432
//! use mcp_tasks::Outcome;
//! ```
//! ```compile_fail,E0432
//! use mcp_tasks::store::TaskRecord;
//! ```
//! ```compile_fail,E0432
//! use mcp_tasks::store::StoredJob;
//! ```
//! ```
//! use mcp_tasks::store::{MemoryStore, TaskStore};
//! use mcp_tasks_store::{Outcome, StoredJob, TaskRecord};
//! ```
//!
//! A tool is handed its [`TaskContext`](crate::TaskContext) and never builds one: the
//! constructors the server uses are in the engine's hidden plumbing module, not on the
//! type.
//!
//! ```compile_fail,E0599
//! let _ = mcp_tasks::TaskContext::detached;
//! ```
//! ```compile_fail,E0599
//! fn f(ctx: mcp_tasks::TaskContext) -> mcp_tasks::TaskContext {
//!     ctx.with_answers(Default::default())
//! }
//! ```
//! ```compile_fail,E0599
//! fn f(ctx: mcp_tasks::TaskContext, sink: mcp_tasks_engine::LogSink) -> mcp_tasks::TaskContext {
//!     ctx.with_log_sink(sink)
//! }
//! ```
//! ```compile_fail,E0599
//! fn f(
//!     ctx: mcp_tasks::TaskContext,
//!     requester: mcp_tasks_engine::ClientRequester,
//!     reader: std::sync::Arc<dyn mcp_tasks_engine::ResultReading>,
//! ) -> mcp_tasks::TaskContext {
//!     ctx.with_client_requests(requester, serde_json::Value::Null, reader)
//! }
//! ```
//! ```
//! use mcp_tasks_engine::context::plumbing::{with_answers, TaskContextParts};
//! fn f(
//!     sink: mcp_tasks_engine::LogSink,
//!     requester: mcp_tasks_engine::ClientRequester,
//!     reader: std::sync::Arc<dyn mcp_tasks_engine::ResultReading>,
//! ) -> mcp_tasks::TaskContext {
//!     let ctx = TaskContextParts::detached(Default::default(), None)
//!         .client_requests(requester, serde_json::Value::Null, reader)
//!         .log_sink(sink)
//!         .build();
//!     with_answers(ctx, Default::default())
//! }
//! ```
//!
//! The engine's own names for an external job's record and poll answer are not the
//! author-facing ones:
//!
//! ```compile_fail,E0107
//! // The facade's JobPoll is the server's typed JobPoll<S, R>, not the engine's enum.
//! fn f(poll: mcp_tasks::JobPoll) {}
//! ```
//! ```
//! fn f(_: mcp_tasks::JobPoll<u32, String>, _: mcp_tasks_engine::PolledJob) {}
//! ```
