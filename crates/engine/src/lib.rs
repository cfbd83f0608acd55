//! # mcp-tasks-engine
//!
//! Runs tasks. The engine owns the rules of a task's life and leaves wire formats to the
//! server and storage to a [`mcp_tasks_store::TaskStore`].
//!
//! [`Engine`] is a facade over components that each own their state and reach each
//! other only through arguments, with `core` below all of them; no module depends on
//! `engine` except the ones that add methods to it (`sessions`, `external_tasks`,
//! `sweeper`):
//!
//! | module | what it owns |
//! |---|---|
//! | [`engine`] | [`Engine`]: the public API (create / get / list / cancel / wait / answer), wiring the components |
//! | `core` | the store, settings, runner id and event channel; every status change (`Core::apply`) and its event |
//! | `executor` | the work running here: cancellation tokens, abort handles, lease generations, quota slots, outcomes |
//! | `waiters` | work waiting here for answers to its input requests (in-process channels) |
//! | [`external`] | pollers of external jobs ([`ExternalPoller`]) and the rate limit of their polls |
//! | `external_tasks` | the engine's API for external jobs: register pollers, create such tasks, cancel expired jobs |
//! | [`leases`] | how a task taken over from a stopped process is re-run ([`leases::Resumer`]); renewal and takeover |
//! | `replicas` | re-reading tasks other processes changed (no state of its own) |
//! | `sweeper` | the expiry sweep and the heartbeat ([`Engine::run_sweeper`]) |
//! | `sessions` | 2025-11-25 sessions in the shared store (pass-throughs) |
//! | `cursor` | the opaque `tasks/list` cursor |
//! | `quota` | active-task counts per principal and in total |
//! | [`context`] | [`TaskContext`] handed to running work: status messages, progress, input, cancellation |
//! | [`input`] | [`InputError`]: why a question to the client got no answer (the questions themselves are the server's) |
//! | [`board`] | [`TaskFilter`]: what people's views read (every task for operators, newest first; a task's timeline) |
//! | [`activity`] | [`Activity`]: counters of background work (sweeps, heartbeats, polls) to wait on as signals |
//! | [`events`] | [`TaskEvent`]: the stream of changes the server turns into notifications |
//! | [`reader`] | [`WireReader`]: what the engine asks the server about opaque requests and results |
//! | [`config`] | [`EngineConfig`] and the documented defaults |
//! | [`caller`] | [`Caller`]: who is asking, for owner binding |
//! | [`error`] | [`EngineError`] |
//! | [`audit`] | audit events on the `mcp_tasks::audit` tracing target |
//! | `observability` | the store's timing observer, tasks counted by status, the span of a task's execution |
//!
//! Failures the engine decides are [`Failure`]s (cancelled, server restarted, lease
//! lost, input timed out, result too large, tool panicked, ...), never protocol codes:
//! each wire's error map in the server chooses the code.
//!
//! Work is a future the engine spawns on tokio. Cancellation is cooperative (the work
//! awaits [`TaskContext::cancelled`]) and, after a grace period, forced (abort). On
//! start, tasks left running by a previous process whose lease ran out are failed with a
//! message saying so (or re-run, for resumable tools).
#![deny(missing_docs)]

pub mod activity;
pub mod audit;
pub mod board;
pub mod caller;
pub mod config;
pub mod context;
mod core;
mod creation;
mod cursor;
pub mod deferred;
mod deferred_job;
pub mod engine;
pub mod error;
pub mod events;
mod executor;
pub mod external;
mod external_tasks;
pub mod input;
pub mod leases;
mod observability;
mod quota;
pub mod reader;
mod replicas;
mod sessions;
mod sweeper;
mod waiters;

pub use activity::Activity;
pub use board::TaskFilter;
pub use caller::Caller;
pub use config::EngineConfig;
pub use context::{ClientRequester, LogMessage, LogSink, Progress, ProgressSink, TaskContext};
pub use core::TransitionObserver;
pub use deferred::{DeferredTask, Settled};
pub use engine::{CreateParams, Engine, ListResult, Work};
pub use error::EngineError;
pub use events::{LogRouter, TaskEvent, TaskLog};
pub use external::{ExternalPoller, JobPoll};
pub use input::InputError;
pub use mcp_tasks_store::{
    ExternalJob, Failure, InputRequest, Outcome, SessionRecord, StoreObserver, TaskRecord,
    TRACE_TARGET,
};
pub use observability::set_task_span_parent;
pub use reader::WireReader;
