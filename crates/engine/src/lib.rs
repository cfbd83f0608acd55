//! # mcp-tasks-engine
//!
//! Runs tasks. The engine owns the rules of a task's life and leaves wire formats to the
//! server and storage to a [`mcp_tasks_store::TaskStore`].
//!
//! Three layers, each importing only the ones below it:
//!
//! - `engine/`: the facade. [`Engine`] and every public method of it, one file per
//!   concern (create, read, cancel, questions, board, sessions, external jobs).
//! - `maintenance/`: named background services (expiry sweeper, lease keeper, lease
//!   rescuer, change bridge), started by [`Engine::start`] and stopped by
//!   [`Engine::shutdown`], each counting its rounds in [`Activity`].
//! - `run/`: the components, which never import the two above: `core` (the store,
//!   settings, [`Clock`], events; the one place a status changes), the `executor`
//!   (what runs here), the one `job` type every task's work runs in (and the hand-over
//!   of a call that may still end inline), the `ledger` (the writes work makes),
//!   `questions` (questions and their answers), `external_jobs` (pollers), `replicas`
//!   (re-reads), `quota`, `sinks` and `span`.
//!
//! Beside them, the types the embedder sees: [`EngineConfig`], [`EngineHooks`] (what the
//! engine learns of its embedder, once, at start), [`TaskContext`] (what running work
//! holds), [`ResultReading`], [`Caller`], [`TaskEvent`], [`EngineError`], [`InputError`].
//! `docs/architecture.md` traces a task's life through these files.
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
mod ask;
mod audit;
pub mod caller;
pub mod clock;
pub mod config;
pub mod context;
mod cursor;
mod engine;
pub mod error;
pub mod events;
pub mod external;
pub mod hooks;
pub mod input;
mod maintenance;
pub mod reader;
pub mod retry;
mod run;
pub mod steps;

pub use activity::Activity;
pub use ask::Ask;
pub use caller::Caller;
pub use clock::Clock;
pub use config::EngineConfig;
pub use context::{
    ClientRequester, LogMessage, LogSink, Progress, ProgressSink, TaskContext, Work,
};
pub use engine::board::{Attempt, TaskFilter};
pub use engine::create::{Creation, ProvisionalTask, Settled};
pub use engine::drain::{DrainReport, DRAIN_FAILED_MESSAGE, DRAIN_WAITING_MESSAGE};
pub use engine::inbox::{Inbox, InboxItem, INBOX_SCAN_LIMIT};
pub use engine::{CreateParams, Engine, ListResult, RESTART_STATUS_MESSAGE};
pub use error::EngineError;
pub use events::{LogRouter, TaskEvent, TaskLog};
pub use external::{ExternalPoller, PolledJob, EXTERNAL_STARTED_MESSAGE};
pub use hooks::{EngineHooks, Resumer, Resumption, TransitionObserver};
pub use input::InputError;
pub use mcp_tasks_store::{
    Answerer, Assignment, DeadlineOutcome, Failure, InputRequest, Outcome, SessionRecord,
    StoreObserver, StoredJob, TaskRecord, TRACE_TARGET,
};
pub use reader::ResultReading;
pub use retry::{Retry, RetryPolicy, RetryRequested};
pub use run::rerun::LOST_RUNNER_MESSAGE;
pub use run::span::set_task_span_parent;
pub use steps::StepError;
