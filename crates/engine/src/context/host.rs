//! The engine as a task's context sees it: one trait, so that the context depends on
//! nothing else of the engine.

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{DeadlineOutcome, InputRequest};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{LogMessage, Progress};
use crate::input::InputError;
use crate::retry::Retry;
use crate::steps::StepError;

/// What a task's context calls back into: the engine, seen only through this trait so
/// that the context depends on nothing else of it.
#[async_trait::async_trait]
pub(crate) trait TaskHost: Send + Sync {
    /// Stores a status message on the task (keeping its status).
    async fn set_message(&self, id: &TaskId, message: String);

    /// Stores an input request on the task and waits for its answer, or until the
    /// deadline (a wait from now, and what happens then) passes.
    async fn ask(
        &self,
        id: &TaskId,
        key: String,
        request: InputRequest,
        deadline: Option<(std::time::Duration, DeadlineOutcome)>,
        cancel: &CancellationToken,
    ) -> Result<Value, InputError>;

    /// Records a finished step in the task's journal (fenced by the lease this
    /// process holds).
    async fn record_step(
        &self,
        id: &TaskId,
        key: String,
        attempt: u32,
        output: Value,
    ) -> Result<(), StepError>;

    /// Runs the task again later, as `retry` asks, when its tool's policy allows
    /// another attempt after `attempt`: true when it will (the work's end is then not
    /// recorded), false when the end should be recorded as it is.
    async fn retry_later(&self, id: &TaskId, attempt: u32, retry: Retry) -> bool;

    /// Publishes a progress report of the work as the task's: an event naming it, for
    /// the creating `session` (and with the request's progress `token`, when it asked
    /// for progress notifications). Never waits.
    fn progress(
        &self,
        id: &TaskId,
        session: Option<&str>,
        token: Option<&Value>,
        progress: Progress,
    );

    /// Hands a log message of the work to the server's log router, as the task's
    /// (for the creating `session`). Never waits.
    fn log(&self, id: &TaskId, session: Option<&str>, message: LogMessage);

    /// Waits until the task is committed to the store: true then, false when it never
    /// will be (the call ended inline). A host whose tasks exist from the start says
    /// true at once.
    async fn created(&self) -> bool {
        true
    }
}
