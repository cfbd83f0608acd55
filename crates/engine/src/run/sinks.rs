//! The context running work holds ([`TaskContext`]) and where what it reports goes:
//! progress becomes an event naming the task (and, when its request asked for
//! progress, the token of the creating session); log messages go to the router given
//! at start.

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::TaskRecord;
use serde_json::Value;
use std::sync::{Arc, Weak};
use tokio_util::sync::CancellationToken;

use crate::context::{LogSink, ProgressSink, TaskContext, TaskHost};
use crate::events::{TaskEvent, TaskLog};
use crate::run::core::Core;
use crate::steps::StepLog;

/// What a running task's progress reports and log messages are addressed with: one
/// allocation shared by both sinks of its context.
struct Route {
    task: TaskId,
    session: Option<String>,
    /// The request's progress token, when it asked for progress notifications (boxed:
    /// most requests ask for none, and a `Value` is large).
    token: Option<Box<Value>>,
    core: Weak<Core>,
}

/// Where a task's progress goes, and where its log messages go: its progress is an
/// event naming the task (the task board shows it) and, when its request asked for
/// progress, the token the creating session is sent; its log messages go to the
/// router the server registered, if any.
fn sinks(core: &Arc<Core>, record: &TaskRecord) -> (ProgressSink, LogSink) {
    let route = Arc::new(Route {
        task: record.id.clone(),
        session: record.session.clone(),
        token: core
            .reader()
            .progress_token(&record.request.to_value())
            .map(Box::new),
        core: Arc::downgrade(core),
    });
    let to_log = Arc::clone(&route);
    let progress: ProgressSink = Arc::new(move |progress| {
        if let Some(core) = route.core.upgrade() {
            let _ = core.events.send(TaskEvent::Progress {
                task: route.task.clone(),
                session: route.session.clone(),
                token: route.token.as_deref().cloned(),
                progress,
            });
        }
    });
    let log: LogSink = Arc::new(move |message| {
        let Some(route_log) = to_log.core.upgrade().and_then(|c| c.log_router().cloned()) else {
            return;
        };
        route_log(TaskLog {
            session: to_log.session.clone(),
            task: to_log.task.clone(),
            message,
        });
    });
    (progress, log)
}

/// The context work of `record` runs with: `host` answers its status messages and
/// input requests; progress and log messages go where the task's go.
pub(crate) fn task_context(
    core: &Arc<Core>,
    host: Weak<dyn TaskHost>,
    record: &TaskRecord,
    client_capabilities: Arc<Value>,
    cancel: CancellationToken,
    steps: Arc<StepLog>,
) -> TaskContext {
    let (progress, log) = sinks(core, record);
    TaskContext::for_task(
        record.id.clone(),
        host,
        cancel,
        Some(progress),
        client_capabilities,
        core.reader(),
        core.config.people_answer_questions,
        steps,
    )
    .with_log_sink(log)
}
