//! `subscriptions/listen` with `notifications.taskIds`: an SSE stream that first
//! acknowledges the subscription, then carries `notifications/tasks` with the full
//! `DetailedTask` of each subscribed task, now and whenever it changes.

use mcp_tasks_engine::{Engine, TaskEvent};
use mcp_tasks_protocol::codec::v2026_07_28;
use mcp_tasks_protocol::jsonrpc::{self, RequestId, RpcError};
use mcp_tasks_protocol::TaskId;
use serde_json::{json, Value};
use std::collections::HashSet;
use tokio::sync::{broadcast, mpsc};

use super::Request;
use crate::session::OUTBOUND_CAPACITY;

pub use mcp_tasks_protocol::codec::META_SUBSCRIPTION_ID;

/// Starts a subscription; the receiver yields the messages of its stream.
pub(super) async fn start(
    req: Request<'_>,
    id: &RequestId,
    params: &Value,
) -> Result<mpsc::Receiver<Value>, RpcError> {
    let ids: Vec<String> = params
        .get("notifications")
        .and_then(|n| n.get("taskIds"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    if !ids.is_empty() && !req.extension {
        return Err(super::missing_extension(
            "'subscriptions/listen' with taskIds",
        ));
    }
    let engine = req.server.engine().clone();
    // Subscribe before reading current states, so no change falls in between.
    let mut events = engine.subscribe();
    let mut accepted = Vec::new();
    let mut initial = Vec::new();
    for task in ids {
        if let Ok(record) = engine
            .get(&TaskId::from_string(task.clone()), &req.caller)
            .await
        {
            initial.push(notification(&engine, id, &record));
            accepted.push(task);
        }
    }
    let (tx, rx) = mpsc::channel(OUTBOUND_CAPACITY);
    let ack = jsonrpc::notification(
        "notifications/subscriptions/acknowledged",
        json!({ "_meta": { META_SUBSCRIPTION_ID: id }, "notifications": { "taskIds": accepted } }),
    );
    let _ = tx.send(ack).await;
    for n in initial {
        let _ = tx.send(n).await;
    }
    let watched: HashSet<String> = accepted.into_iter().collect();
    let id = id.clone();
    let caller = req.caller.clone();
    let shutdown = req.server.shutdown_token();
    tokio::spawn(async move {
        loop {
            let event = tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tx.closed() => return,
                e = events.recv() => e,
            };
            let records = match event {
                Ok(TaskEvent::Changed(r)) if watched.contains(r.id.as_str()) => vec![(*r).clone()],
                Ok(_) => continue,
                // Changes were missed: send every watched task as it is now instead.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let mut now = Vec::new();
                    for task in &watched {
                        if let Ok(r) = engine
                            .get(&TaskId::from_string(task.clone()), &caller)
                            .await
                        {
                            now.push(r);
                        }
                    }
                    now
                }
                Err(broadcast::error::RecvError::Closed) => return,
            };
            for record in records {
                if !caller.may_access(&record.owner) {
                    continue;
                }
                if tx.send(notification(&engine, &id, &record)).await.is_err() {
                    return;
                }
            }
        }
    });
    Ok(rx)
}

fn notification(
    engine: &Engine,
    subscription: &RequestId,
    record: &mcp_tasks_engine::TaskRecord,
) -> Value {
    let mut params =
        v2026_07_28::detailed_task(&engine.view(record), super::tasks_get::detail(record));
    if let Some(o) = params.as_object_mut() {
        o.remove("resultType");
    }
    params["_meta"] = json!({ META_SUBSCRIPTION_ID: subscription });
    jsonrpc::notification("notifications/tasks", params)
}
