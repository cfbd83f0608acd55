//! Engine events to sessions: task status changes (with the input requests they
//! carry), progress, and task log messages, each to the session that created the task.

use mcp_tasks_engine::{TaskEvent, TaskLog};
use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::jsonrpc;
use mcp_tasks_protocol::methods::NOTIF_TASK_STATUS;
use std::sync::{Arc, Weak};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::messages::{log_notification, progress_notification};
use crate::questions::Questions;
use crate::session::Session;
use crate::sessions::Sessions;

/// Hands each engine event to [`deliver_event`] until shutdown, the channel closes or
/// the server (which holds `questions`) is gone. Missed events (a slow router) are logged.
pub(crate) async fn route_events(
    questions: Weak<Questions>,
    mut events: broadcast::Receiver<TaskEvent>,
    shutdown: CancellationToken,
) {
    loop {
        let event = tokio::select! {
            _ = shutdown.cancelled() => return,
            e = events.recv() => e,
        };
        let event = match event {
            Ok(e) => e,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(
                    missed,
                    "notification router lagged; some status notifications were not sent"
                );
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(questions) = questions.upgrade() else {
            return;
        };
        deliver_event(&questions, event);
    }
}

/// The session a task event is for, if this process holds it.
fn session_of(sessions: &Sessions, session: Option<&String>) -> Option<Arc<Session>> {
    session.and_then(|id| sessions.get(id))
}

/// A status change becomes `notifications/tasks/status` (and delivers the input
/// requests it carries); progress becomes `notifications/progress`.
fn deliver_event(questions: &Arc<Questions>, event: TaskEvent) {
    match event {
        TaskEvent::Changed(record) => {
            // Creation is answered by CreateTaskResult itself; notify changes only.
            if record.version == 0 {
                return;
            }
            let Some(session) = session_of(&questions.sessions, record.session.as_ref()) else {
                return;
            };
            // A task the client asked for (`task` in its tools/call); not one a plain
            // call became (its call, or `task_wait`, reports on it).
            if session.speaks_tasks() && record.request.field("task").is_some() {
                let view = questions.engine.view(&record);
                session.send(jsonrpc::notification(
                    NOTIF_TASK_STATUS,
                    v2025_11_25::status_notification_params(&view),
                ));
                crate::questions::in_task::deliver(questions, &session, &record);
            }
        }
        TaskEvent::Progress {
            session,
            token: Some(token),
            progress,
            ..
        } => {
            if let Some(session) = session_of(&questions.sessions, session.as_ref()) {
                session.send(progress_notification(&token, &progress));
            }
        }
        // Nobody asked for notifications of this progress (the task board reads it).
        TaskEvent::Progress { token: None, .. } => {}
    }
}

/// A task's log message becomes `notifications/message`, at or above the session's
/// level, on the task's `tasks/result` stream when one is open. Called in the logging
/// work itself (the engine's log router), so it only queues.
pub(crate) fn deliver_log(sessions: &Sessions, log: TaskLog) {
    if let Some(session) = session_of(sessions, log.session.as_ref()) {
        if session.wants_log(log.message.level) {
            let related = sessions.relates_to_task(&log.task).then_some(&log.task);
            session.send_for_task(&log.task, log_notification(&log.message, related));
        }
    }
}
