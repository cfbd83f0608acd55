//! The dispatcher: answers what the server sends on its own. Status and progress
//! notifications go to the handles following their task; input requests go to the
//! registered handlers, each id once (a repeated request gets the same answer again).

use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::jsonrpc::RequestId;
use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::RpcError;
use serde_json::{json, Value};
use std::sync::Weak;
use tokio::sync::mpsc;

use crate::client::{Client, Inner};
use crate::input::{related_task, InputRequest};
use crate::log::ServerLog;
use crate::peer::{refusal, Inbound};
use crate::task::{Progress, WatchEvent};

/// Runs until the connection goes away.
pub(crate) async fn run(inner: Weak<Inner>, mut inbound: mpsc::UnboundedReceiver<Inbound>) {
    while let Some(message) = inbound.recv().await {
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let client = Client { inner };
        match message {
            Inbound::Notification { method, params } => notification(&client, &method, &params),
            Inbound::Request { id, method, params } => request(&client, id, method, params).await,
        }
    }
}

fn notification(client: &Client, method: &str, params: &Value) {
    match method {
        m::NOTIF_TASK_STATUS => match v2025_11_25::parse_task(params) {
            Ok(view) => {
                let id = view.id.clone();
                client.inner.notify(&id, &WatchEvent::Status(view));
            }
            Err(e) => tracing::debug!(error = %e, "unreadable task status notification"),
        },
        m::NOTIF_PROGRESS => {
            let token = params.get("progressToken");
            let progress = || Progress {
                progress: params
                    .get("progress")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0),
                total: params.get("total").and_then(Value::as_f64),
                message: params
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            };
            if let Some(task) = token.and_then(|t| client.inner.progress_task(t)) {
                client
                    .inner
                    .notify(&task, &WatchEvent::Progress(progress()));
            } else if let Some(sink) = token.and_then(|t| client.inner.call_progress(t)) {
                sink(progress());
            } else if let Some(handler) = &client.inner.handlers.notification {
                handler(method, params);
            }
        }
        m::NOTIF_MESSAGE => {
            if let (Some(handler), Some(log)) = (
                client.inner.handlers.log.as_ref(),
                ServerLog::from_params(params),
            ) {
                handler(log);
            }
        }
        other => match &client.inner.handlers.notification {
            Some(handler) => handler(other, params),
            None => tracing::trace!(method = other, "notification ignored"),
        },
    }
}

async fn request(client: &Client, id: RequestId, method: String, params: Value) {
    if method == m::PING {
        client.respond(&id, Ok(json!({}))).await;
        return;
    }
    let Some(handler) = client.inner.handlers.for_method(&method).cloned() else {
        client.respond(&id, Err(refusal(&method))).await;
        return;
    };
    let key = serde_json::to_string(&id).unwrap_or_default();
    // Each id reaches the handler once: a repeat while it runs is dropped, a repeat
    // after it answered gets the same answer again (the first may have been lost).
    let previous = {
        let mut answers = client
            .inner
            .answers
            .lock()
            .unwrap_or_else(|p| p.into_inner());
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
            if let Err(e) = client.inner.transport.send_message(&message).await {
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
        client
            .inner
            .notify(task, &WatchEvent::Input(request.clone()));
    }
    let client = client.clone();
    tokio::spawn(async move {
        let result: Result<Value, RpcError> = handler(request).await;
        let message = client.respond(&id, result).await;
        client
            .inner
            .answers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, Some(message));
    });
}
