//! The handle running work uses to talk back: status messages, progress, cancellation.

use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::fmt;
use std::sync::{Arc, Weak};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use crate::engine::Inner;

/// One progress report (`notifications/progress`).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Work done so far; must increase between reports.
    pub progress: f64,
    /// Total work, when known.
    pub total: Option<f64>,
    /// A human-readable message.
    pub message: Option<String>,
}

/// Where progress reports go. The engine builds one for tasks (an event routed to the
/// owner's session); the server builds one for synchronous calls (the request's stream).
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// Handed to running work (a tool). Cheap to clone.
///
/// The same type serves a task and a plain synchronous call, so a tool is written once:
/// for a synchronous call [`TaskContext::task_id`] is `None` and status messages are sent
/// as progress messages.
#[derive(Clone)]
pub struct TaskContext {
    task: Option<(TaskId, Weak<Inner>)>,
    cancel: CancellationToken,
    progress: Option<ProgressSink>,
}

impl fmt::Debug for TaskContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskContext")
            .field("task_id", &self.task_id())
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl TaskContext {
    pub(crate) fn for_task(
        id: TaskId,
        inner: Weak<Inner>,
        cancel: CancellationToken,
        progress: Option<ProgressSink>,
    ) -> Self {
        TaskContext {
            task: Some((id, inner)),
            cancel,
            progress,
        }
    }

    /// A context for work that is not a task (a synchronous `tools/call`): cancelled
    /// through `cancel` (`notifications/cancelled`), progress to `progress`.
    pub fn detached(cancel: CancellationToken, progress: Option<ProgressSink>) -> Self {
        TaskContext {
            task: None,
            cancel,
            progress,
        }
    }

    /// The task this work runs as, or `None` for a synchronous call.
    pub fn task_id(&self) -> Option<&TaskId> {
        self.task.as_ref().map(|(id, _)| id)
    }

    /// Completes when the work has been asked to stop. Await it in a `select!` beside
    /// the real work; after the engine's grace period the work is aborted anyway.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.cancel.cancelled()
    }

    /// Whether the work has been asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The cancellation token itself, to hand to libraries that take one.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Sets the task's status message (visible in `tasks/get` and status notifications).
    /// For a synchronous call it is sent as a progress message when the request asked for
    /// progress. A task that already ended ignores it.
    pub async fn set_status_message(&self, message: impl Into<String>) {
        let message = message.into();
        match &self.task {
            Some((id, inner)) => {
                if let Some(inner) = inner.upgrade() {
                    inner.update_message(id, TaskStatus::Working, message).await;
                }
            }
            None => {
                if let Some(sink) = &self.progress {
                    sink(Progress {
                        progress: 0.0,
                        total: None,
                        message: Some(message),
                    });
                }
            }
        }
    }

    /// Reports progress, sent as `notifications/progress` when the request carried a
    /// progress token (for a task, for as long as the task lives).
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(sink) = &self.progress {
            sink(Progress {
                progress,
                total,
                message,
            });
        }
    }
}
