//! The dispatcher: answers what the server sends on its own. Status and progress
//! notifications go to the handles following their task; input requests go to the
//! registered handlers, each id once (a repeated request gets the same answer again).
//!
//! Who listens for what is kept in [`Subscriptions`], which this module owns: task
//! handles and plain calls subscribe through it, and only the dispatcher reads it.
//! The dispatcher reaches the client's state through [`Dispatched`], so it does not
//! depend on [`crate::Client`].

use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::jsonrpc::RequestId;
use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::{RpcError, TaskId, TaskView};
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use tokio::sync::mpsc;

use crate::connection::Connection;
use crate::input::{Handlers, InputRequest};
use crate::log::ServerLog;
use crate::peer::{refusal, Inbound};
use crate::reply::ProgressParams;
use crate::wire::related_task;

/// One progress report of a task.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Work done so far.
    pub progress: f64,
    /// Total work, when known.
    pub total: Option<f64>,
    /// What is being done.
    pub message: Option<String>,
}

/// What the dispatcher tells a driver.
#[derive(Debug, Clone)]
pub(crate) enum WatchEvent {
    Status(TaskView),
    Progress(Progress),
    Input(InputRequest),
}

/// Sees the progress notifications of one plain call.
pub(crate) type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// Who listens for what the server sends on its own, and the answers already given
/// to its requests.
#[derive(Default)]
pub(crate) struct Subscriptions {
    /// Drivers of task handles, by task, for status, progress and input events.
    watchers: Mutex<HashMap<TaskId, Vec<mpsc::UnboundedSender<WatchEvent>>>>,
    /// Progress tokens of our task calls, by token text.
    progress: Mutex<HashMap<String, TaskId>>,
    /// Progress tokens of plain calls that follow progress
    /// ([`crate::Client::call_tool_with_progress`]), by token text, with who sees it.
    call_progress: Mutex<HashMap<String, ProgressSink>>,
    /// Input requests seen (2025-11-25), by id: `None` while the handler runs, then
    /// the response sent (re-sent if the server asks again).
    answers: Mutex<HashMap<String, Option<Value>>>,
}

impl Subscriptions {
    /// Registers a watcher of `task`'s events.
    pub(crate) fn watch(&self, task: &TaskId) -> mpsc::UnboundedReceiver<WatchEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.watchers
            .lock()
            .entry(task.clone())
            .or_default()
            .push(tx);
        rx
    }

    /// The watchers of `task`, to send an event to.
    pub(crate) fn notify(&self, task: &TaskId, event: &WatchEvent) {
        let mut w = self.watchers.lock();
        if let Some(list) = w.get_mut(task) {
            list.retain(|tx| tx.send(event.clone()).is_ok());
            if list.is_empty() {
                w.remove(task);
            }
        }
    }

    /// Routes the progress of `token` to `task`'s watchers.
    pub(crate) fn follow_progress(&self, token: &Value, task: TaskId) {
        self.progress.lock().insert(token.to_string(), task);
    }

    /// Forgets the progress token of a finished task.
    pub(crate) fn forget_progress(&self, token: &Value) {
        self.progress.lock().remove(&token.to_string());
    }

    /// The task a progress token belongs to.
    fn progress_task(&self, token: &Value) -> Option<TaskId> {
        self.progress.lock().get(&token.to_string()).cloned()
    }

    /// Routes the progress of `token` to `sink` until the returned guard is dropped
    /// (when the plain call ends, however it ends).
    pub(crate) fn follow_call_progress(
        &self,
        token: &Value,
        sink: ProgressSink,
    ) -> CallProgressGuard<'_> {
        self.call_progress.lock().insert(token.to_string(), sink);
        CallProgressGuard {
            subscriptions: self,
            token: token.to_string(),
        }
    }

    /// Who follows the progress of the plain call a token belongs to.
    fn call_progress(&self, token: &Value) -> Option<ProgressSink> {
        self.call_progress.lock().get(&token.to_string()).cloned()
    }
}

/// Forgets a plain call's progress token when the call ends, however it ends.
pub(crate) struct CallProgressGuard<'a> {
    subscriptions: &'a Subscriptions,
    token: String,
}

impl Drop for CallProgressGuard<'_> {
    fn drop(&mut self) {
        self.subscriptions.call_progress.lock().remove(&self.token);
    }
}

/// What the dispatcher needs of the client it serves: the connection to answer on,
/// the handlers to ask, and the subscriptions to notify. The client's state
/// implements it; the dispatcher holds it weakly, so it stops with the client.
pub(crate) trait Dispatched: Send + Sync + 'static {
    /// The connection to answer on.
    fn connection(&self) -> &Connection;
    /// The handlers the caller registered.
    fn handlers(&self) -> &Handlers;
    /// Who listens for what.
    fn subscriptions(&self) -> &Subscriptions;
}

/// Runs until the connection goes away.
pub(crate) async fn run<S: Dispatched>(
    state: Weak<S>,
    mut inbound: mpsc::UnboundedReceiver<Inbound>,
) {
    while let Some(message) = inbound.recv().await {
        if let Inbound::Answer { waiter, result } = message {
            Inbound::deliver(waiter, result);
            continue;
        }
        let Some(state) = state.upgrade() else {
            return;
        };
        match message {
            Inbound::Notification { method, params } => notification(&*state, &method, &params),
            Inbound::Request { id, method, params } => request(state, id, method, params).await,
            Inbound::Answer { waiter, result } => Inbound::deliver(waiter, result),
        }
    }
}

fn notification(state: &impl Dispatched, method: &str, params: &Value) {
    let subscriptions = state.subscriptions();
    let handlers = state.handlers();
    match method {
        m::NOTIF_TASK_STATUS => match v2025_11_25::parse_task(params) {
            Ok(view) => {
                let id = view.id.clone();
                subscriptions.notify(&id, &WatchEvent::Status(view));
            }
            Err(e) => tracing::debug!(error = %e, "unreadable task status notification"),
        },
        m::NOTIF_PROGRESS => {
            // Unreadable params follow no token: they go to the catch-all handler.
            let p = ProgressParams::deserialize(params).unwrap_or_else(|e| {
                tracing::debug!(error = %e, "unreadable progress notification");
                ProgressParams::default()
            });
            let token = p.progress_token.as_ref();
            let progress = || Progress {
                progress: p.progress.unwrap_or(0.0),
                total: p.total,
                message: p.message.clone(),
            };
            if let Some(task) = token.and_then(|t| subscriptions.progress_task(t)) {
                subscriptions.notify(&task, &WatchEvent::Progress(progress()));
            } else if let Some(sink) = token.and_then(|t| subscriptions.call_progress(t)) {
                sink(progress());
            } else if let Some(handler) = &handlers.notification {
                handler(method, params);
            }
        }
        m::NOTIF_MESSAGE => {
            if let (Some(handler), Some(log)) =
                (handlers.log.as_ref(), ServerLog::from_params(params))
            {
                handler(log);
            }
        }
        other => match &handlers.notification {
            Some(handler) => handler(other, params),
            None => tracing::trace!(method = other, "notification ignored"),
        },
    }
}

async fn request<S: Dispatched>(state: Arc<S>, id: RequestId, method: String, params: Value) {
    if method == m::PING {
        state.connection().respond(&id, Ok(json!({}))).await;
        return;
    }
    let Some(handler) = state.handlers().for_method(&method).cloned() else {
        state.connection().respond(&id, Err(refusal(&method))).await;
        return;
    };
    let key = serde_json::to_string(&id).unwrap_or_default();
    // Each id reaches the handler once: a repeat while it runs is dropped, a repeat
    // after it answered gets the same answer again (the first may have been lost).
    let previous = {
        let mut answers = state.subscriptions().answers.lock();
        match answers.get(&key) {
            Some(a) => Some(a.clone()),
            None => {
                answers.insert(key.clone(), None);
                None
            }
        }
    };
    match previous {
        Some(Some(message)) => {
            if let Err(e) = state.connection().send_message(&message).await {
                tracing::debug!(error = %e, "could not re-send an answer");
            }
            return;
        }
        Some(None) => return,
        None => {}
    }
    let request = InputRequest {
        task_id: related_task(&params),
        method,
        params,
        key: key.clone(),
    };
    if let Some(task) = &request.task_id {
        state
            .subscriptions()
            .notify(task, &WatchEvent::Input(request.clone()));
    }
    tokio::spawn(async move {
        let result: Result<Value, RpcError> = handler(request).await;
        let message = state.connection().respond(&id, result).await;
        state
            .subscriptions()
            .answers
            .lock()
            .insert(key, Some(message));
    });
}
