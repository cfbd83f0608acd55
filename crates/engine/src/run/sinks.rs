//! The context running work holds ([`TaskContext`]) for a task, and where what it
//! reports goes: progress becomes an event naming the task (and, when its request
//! asked for progress, the token of the creating session); log messages go to the
//! router given at start. The context hands both to its host ([`TaskHost::progress`],
//! [`TaskHost::log`]), which sends them with [`progress`] and [`log`].

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::TaskRecord;
use serde_json::Value;
use std::sync::{Arc, Weak};
use tokio_util::sync::CancellationToken;

use crate::context::plumbing::TaskRoute;
use crate::context::{LogMessage, Progress, TaskContext, TaskHost};
use crate::events::{TaskEvent, TaskLog};
use crate::run::core::Core;
use crate::steps::StepLog;

/// The context work of `record` runs with: `host` answers its status messages and
/// input requests, and takes its progress reports and log messages, addressed to
/// where the task's go.
pub(crate) fn task_context(
    core: &Arc<Core>,
    host: Weak<dyn TaskHost>,
    record: &TaskRecord,
    client_capabilities: Arc<Value>,
    cancel: CancellationToken,
    steps: Arc<StepLog>,
) -> TaskContext {
    let route = TaskRoute {
        session: record.session.clone(),
        token: core.reader().progress_token(&record.request.to_value()),
    };
    TaskContext::for_task(
        record.id.clone(),
        host,
        cancel,
        route,
        client_capabilities,
        core.reader(),
        core.config.people_answer_questions,
        steps,
    )
}

/// Publishes a progress report of task `id`'s work: an event naming the task (the
/// task board shows it) with the creating session and the request's progress token.
pub(crate) fn progress(
    core: &Core,
    id: &TaskId,
    session: Option<&str>,
    token: Option<&Value>,
    progress: Progress,
) {
    let _ = core.events.send(TaskEvent::Progress {
        task: id.clone(),
        session: session.map(str::to_string),
        token: token.cloned(),
        progress,
    });
}

/// Hands a log message of task `id`'s work to the router the server registered, if
/// any.
pub(crate) fn log(core: &Core, id: &TaskId, session: Option<&str>, message: LogMessage) {
    if let Some(route_log) = core.log_router() {
        route_log(TaskLog {
            session: session.map(str::to_string),
            task: id.clone(),
            message,
        });
    }
}
