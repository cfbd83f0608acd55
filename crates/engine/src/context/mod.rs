//! The handle running work uses to talk back: status messages, progress, cancellation,
//! questions and journaled steps. One [`TaskContext`] serves a task and a plain call.
//!
//! The context's parts, one file each:
//!
//! - this file: the [`TaskContext`] itself and what a tool reads and reports through it
//!   (its task, cancellation, status messages, progress, logs, preflight answers);
//! - `questions`: asking the client or people something and waiting for the answer;
//! - `journal`: journaled steps, the attempt number and retries;
//! - `sinks`: where progress and log messages go ([`Progress`], [`LogMessage`] and
//!   their sinks), and how a plain call's progress is kept steady;
//! - `host`: the engine as the context sees it (`TaskHost`), so the context depends on
//!   nothing else of it;
//! - `plumbing`: how the engine and the server build a context. Not for tool
//!   authors: a tool is handed its context and never builds one.

use mcp_tasks_protocol::{LoggingLevel, TaskId};
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, Weak};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use crate::reader::ResultReading;
use crate::steps::StepLog;

mod host;
mod journal;
#[doc(hidden)]
pub mod plumbing;
mod questions;
mod sinks;

pub(crate) use host::TaskHost;
pub use sinks::{ClientRequester, LogMessage, LogSink, Progress, ProgressSink, Work};

/// Handed to running work (a tool). Cheap to clone.
///
/// The same type serves a task and a plain synchronous call, so a tool is written once:
/// for a synchronous call [`TaskContext::task_id`] is `None` and status messages are sent
/// as progress messages.
///
/// Small, since every running tool's future holds one: what its clones share is one
/// allocation (`Shared`), beside the cancellation token and the preflight answers.
/// A task's progress reports and log messages go to its host (the engine) without a
/// sink of their own.
#[derive(Clone)]
pub struct TaskContext {
    shared: Arc<Shared>,
    cancel: CancellationToken,
    /// The preflight answers; `None` when there are none (most tools), which saves
    /// every running task an allocation.
    answers: Option<Arc<serde_json::Map<String, Value>>>,
}

/// What the clones of one context share: one allocation, which with the cancellation
/// token and the step log is all a running task's context costs.
pub(crate) struct Shared {
    task: Option<(TaskId, Weak<dyn TaskHost>)>,
    sinks: Sinks,
    client_capabilities: Arc<Value>,
    /// Checks an input request against `client_capabilities` (the wire knows what
    /// each request needs).
    reader: Arc<dyn ResultReading>,
    /// Whether a person may answer this task's questions (the engine's
    /// `people_answer_questions`): then a task may ask what its client did not declare
    /// it can answer, when the reader says a person could ([`ResultReading::people_may_answer`]).
    people_answer: bool,
    /// How a synchronous call reaches its client; `None` for tasks (they store their
    /// input requests) and for calls whose transport cannot carry requests.
    requester: Option<ClientRequester>,
    /// This attempt's journaled steps and retry request (see [`TaskContext::step`]);
    /// the engine keeps them apart from the rest to read the retry once the work has
    /// ended (work that drops its context early then leaves only them behind).
    steps: Arc<StepLog>,
}

/// Where a context's progress reports and log messages go.
enum Sinks {
    /// A plain call's, given by the server; without one, they are dropped.
    Given {
        progress: Option<ProgressSink>,
        log: Option<LogSink>,
    },
    /// A task's: to its host, as the task's (progress as an event naming it, logs to
    /// the creating session), with what addresses them: the creating session, and
    /// the request's progress token when it asked for progress (boxed: most ask for
    /// none, and a `Value` is large).
    Task {
        session: Option<String>,
        token: Option<Box<Value>>,
    },
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
    /// Sends a log message to the client (`notifications/message`; for a task, with
    /// the related-task `_meta`), if the client wants that `level` (`logging/setLevel`;
    /// `info` and above until it says). `data` is a string or any JSON value. Never
    /// waits and never fails: logs are advisory.
    pub fn log(&self, level: LoggingLevel, data: impl Into<Value>) {
        self.log_as(level, None, data);
    }

    /// [`TaskContext::log`] naming the `logger` (a component of the tool).
    pub fn log_as(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) {
        let message = || LogMessage {
            level,
            logger: logger.map(str::to_string),
            data: data.into(),
        };
        match &self.shared.sinks {
            Sinks::Given {
                log: Some(sink), ..
            } => sink(message()),
            Sinks::Given { log: None, .. } => {}
            Sinks::Task { session, .. } => {
                if let Some((id, host)) = self.task_host() {
                    host.log(id, session.as_deref(), message());
                }
            }
        }
    }

    /// The answer to preflight question `key` (an `ElicitResult`), if it was answered.
    pub fn answer(&self, key: &str) -> Option<&Value> {
        self.answers.as_deref()?.get(key)
    }

    /// The task this work runs as, or `None` for a synchronous call.
    pub fn task_id(&self) -> Option<&TaskId> {
        self.shared.task.as_ref().map(|(id, _)| id)
    }

    /// The task and its host, while the engine runs.
    fn task_host(&self) -> Option<(&TaskId, Arc<dyn TaskHost>)> {
        let (id, host) = self.shared.task.as_ref()?;
        Some((id, host.upgrade()?))
    }

    /// This attempt's steps (the engine keeps them for the work's end).
    pub(crate) fn steps(&self) -> &Arc<StepLog> {
        &self.shared.steps
    }

    /// Waits until this work's task is committed to the store: true then; false for a
    /// synchronous call, or a call that ended inline (before it needed a task).
    ///
    /// Why: work may start before its task is created (on the extension wire, a call
    /// runs for the server's `--task-after` window before it becomes a task), and what
    /// it does in that time is kept in memory and written with the creation: its
    /// status message, its [`steps`](TaskContext::step). Await this before something
    /// that should only happen once the task id is durable and handed to the client,
    /// such as telling an outside system about it, or to have every step written to
    /// the journal one by one.
    pub async fn task_created(&self) -> bool {
        let Some((_, host)) = &self.shared.task else {
            return false;
        };
        match host.upgrade() {
            Some(host) => host.created().await,
            None => false,
        }
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
    /// progress, as long as the tool reported no figures of its own with
    /// [`TaskContext::report_progress`] (whose messages then say each step; sending both
    /// would say it twice). A task that already ended ignores it.
    pub async fn set_status_message(&self, message: impl Into<String>) {
        let message = message.into();
        match &self.shared.task {
            Some((id, inner)) => {
                if let Some(host) = inner.upgrade() {
                    host.set_message(id, message).await;
                }
            }
            None => {
                if let Sinks::Given {
                    progress: Some(sink),
                    ..
                } = &self.shared.sinks
                {
                    // NaN: a status message, not figures (see `steady`).
                    sink(Progress {
                        progress: f64::NAN,
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
        let report = Progress {
            progress,
            total,
            message,
        };
        match &self.shared.sinks {
            Sinks::Given {
                progress: Some(sink),
                ..
            } => sink(report),
            Sinks::Given { progress: None, .. } => {}
            Sinks::Task { session, token } => {
                if let Some((id, host)) = self.task_host() {
                    host.progress(id, session.as_deref(), token.as_deref(), report);
                }
            }
        }
    }
}
