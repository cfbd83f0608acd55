//! # mcp-tasks-engine
//!
//! Runs tasks. The engine owns the rules of a task's life and leaves wire formats to the
//! server and storage to a [`mcp_tasks_store::TaskStore`].
//!
//! | module | what it does |
//! |---|---|
//! | [`engine`] | [`Engine`]: create / get / list / cancel / wait for result; the one place transitions happen |
//! | [`context`] | [`TaskContext`] handed to running work: status messages, progress, cancellation |
//! | [`events`] | [`TaskEvent`]: the stream of changes the server turns into notifications |
//! | [`external`] | tasks waiting on a job in another system, polled when read ([`ExternalPoller`]) |
//! | [`input`] | input requests: a task asks the client (elicitation, sampling, roots) and waits |
//! | [`config`] | [`EngineConfig`] and the documented defaults |
//! | [`caller`] | [`Caller`]: who is asking, for owner binding |
//! | [`error`] | [`EngineError`] |
//! | [`reader`] | [`WireReader`]: what the engine asks the server about opaque requests and results |
//! | [`audit`] | audit events on the `mcp_tasks::audit` tracing target |
//!
//! Work is a future the engine spawns on tokio. Cancellation is cooperative (the work
//! awaits [`TaskContext::cancelled`]) and, after a grace period, forced (abort). On
//! start, tasks left running by a previous process are failed with a message saying so.
#![deny(missing_docs)]

pub mod audit;
pub mod caller;
pub mod config;
pub mod context;
pub mod engine;
pub mod error;
pub mod events;
pub mod external;
pub mod input;
pub mod leases;
mod quota;
pub mod reader;
mod replicas;
mod sweeper;

pub use caller::Caller;
pub use config::EngineConfig;
pub use context::{ClientRequester, LogMessage, LogSink, Progress, ProgressSink, TaskContext};
pub use engine::{CreateParams, Engine, ListResult, Work};
pub use error::EngineError;
pub use events::{LogRouter, TaskEvent, TaskLog};
pub use external::{ExternalPoller, JobPoll};
pub use input::{ElicitAction, ElicitResponse, InputError};
pub use mcp_tasks_store::{ExternalJob, Failure, InputRequest, Outcome, SessionRecord, TaskRecord};
pub use reader::WireReader;
