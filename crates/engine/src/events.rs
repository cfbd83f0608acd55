//! Events the engine publishes. The server subscribes to send notifications and to
//! release `tasks/result` waiters; nothing sleeps in a polling loop.

use mcp_tasks_store::TaskRecord;
use serde_json::Value;
use std::sync::Arc;

use crate::context::{LogMessage, Progress};
use mcp_tasks_protocol::TaskId;

/// One thing that happened to a task.
#[derive(Debug, Clone)]
pub enum TaskEvent {
    /// The task's record changed (status or status message); carries the new record.
    Changed(Arc<TaskRecord>),
    /// The running work reported progress.
    Progress {
        /// The task.
        task: TaskId,
        /// The session that created the task.
        session: Option<String>,
        /// The original request's `_meta.progressToken`, when it asked for progress
        /// notifications.
        token: Option<Value>,
        /// The progress report.
        progress: Progress,
    },
}

/// A log message of a task's work (`notifications/message` to the session that created
/// the task, related to it), handed to the [`LogRouter`] the moment the work logs it.
#[derive(Debug, Clone)]
pub struct TaskLog {
    /// The session that created the task.
    pub session: Option<String>,
    /// The task.
    pub task: TaskId,
    /// The message.
    pub message: LogMessage,
}

/// Delivers task log messages; given by the server at start ([`crate::EngineHooks::log_router`]).
/// Called synchronously in the logging work, so a message is queued before anything the
/// work does next (its result included), and a chatty tool cannot make the event
/// channel lag. It must not block.
pub type LogRouter = std::sync::Arc<dyn Fn(TaskLog) + Send + Sync>;
