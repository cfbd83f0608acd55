//! External jobs: tasks whose work runs in another system (a long query in a query
//! engine, a batch job) rather than in a future of this process.
//!
//! A tool *starts* the job and hands the engine a small JSON state (a job id, a page
//! token); [`Engine::create_external`](crate::Engine::create_external) stores it with the task as an
//! [`StoredJob`](mcp_tasks_store::StoredJob). From then on no process holds the task: reading it
//! ([`Engine::get`](crate::Engine::get), [`Engine::wait_terminal`](crate::Engine::wait_terminal)) asks the registered [`ExternalPoller`]
//! how the job is doing, at most once per poll interval, and records what it says;
//! [`Engine::cancel`](crate::Engine::cancel) asks it to stop the job. Because everything needed lives in the
//! record, such tasks survive a restart (start-up recovery skips them) and any replica
//! can serve them (lease takeover skips them too), as long as every replica registers
//! the same kinds.

use async_trait::async_trait;
use mcp_tasks_store::Outcome;
use serde_json::Value;

/// Status message of a task once its external job started.
pub const EXTERNAL_STARTED_MESSAGE: &str =
    "started an external job; it is checked when the task is read";

/// What a poll of an external job found, at the JSON level the engine works at (the
/// server's typed `JobPoll<S, R>` is what a tool author returns; it becomes this).
#[derive(Debug, Clone, PartialEq)]
pub enum PolledJob {
    /// Still running. `state: Some(new)` replaces the stored job state (e.g. a new page
    /// token); `status_message` becomes the task's status message when `Some`. Nothing
    /// is written when both are `None` or equal to what is stored.
    Running {
        /// The job's new state, if it changed.
        state: Option<Value>,
        /// A new status message for the task.
        status_message: Option<String>,
    },
    /// Done: the outcome to record (`Outcome::Result { value: CallToolResult }` makes
    /// the task `completed`, or `failed` when it carries `isError`; `Outcome::Error`
    /// makes it `failed`). Subject to `max_result_bytes` like any result.
    Finished(Outcome),
}

/// Talks to the system that runs external jobs of one kind. Registered per kind with
/// [`Engine::register_external`](crate::Engine::register_external); every replica must register the same kinds, since any
/// of them may be the one that reads a task.
#[async_trait]
pub trait ExternalPoller: Send + Sync + 'static {
    /// Asks the external system how the job is doing.
    ///
    /// # Errors
    /// `Err(reason)`: could not find out this time (transient). The task stays as
    /// stored, a warning is logged, and a later read asks again.
    async fn poll(&self, state: &Value) -> Result<PolledJob, String>;

    /// Asks the external system to stop the job.
    ///
    /// # Errors
    /// `Err(reason)` is logged and put into the cancelled task's status message; the
    /// task is cancelled anyway (the client asked for it, and terminal is final).
    async fn cancel(&self, state: &Value) -> Result<(), String>;
}
