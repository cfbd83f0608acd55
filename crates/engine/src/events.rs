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
    /// The running work reported progress for a request that carried a progress token.
    Progress {
        /// The session that created the task.
        session: Option<String>,
        /// The original request's `_meta.progressToken`.
        token: Value,
        /// The progress report.
        progress: Progress,
    },
}

/// A log message of a task's work (`notifications/message` to the session that created
/// the task, related to it). On a channel of its own ([`crate::Engine::subscribe_logs`]):
/// a chatty tool must not crowd status changes out of the event channel.
#[derive(Debug, Clone)]
pub struct TaskLog {
    /// The session that created the task.
    pub session: Option<String>,
    /// The task.
    pub task: TaskId,
    /// The message.
    pub message: LogMessage,
}
