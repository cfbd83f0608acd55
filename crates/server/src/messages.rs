//! Server-to-client notifications built in more than one place (a synchronous call's
//! stream, the event router).

use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::jsonrpc;
use mcp_tasks_protocol::methods::NOTIF_PROGRESS;
use mcp_tasks_protocol::TaskId;
use serde_json::{json, Value};

/// A `notifications/message` message; for a task, with the related-task `_meta`.
pub(crate) fn log_notification(
    message: &mcp_tasks_engine::LogMessage,
    task: Option<&TaskId>,
) -> Value {
    let mut params = json!({ "level": message.level, "data": message.data });
    if let Some(logger) = &message.logger {
        params["logger"] = json!(logger);
    }
    if let Some(task) = task {
        params["_meta"] = v2025_11_25::related_task(task.as_str());
    }
    jsonrpc::notification(mcp_tasks_protocol::methods::NOTIF_MESSAGE, params)
}

/// A `notifications/progress` message.
pub(crate) fn progress_notification(token: &Value, p: &mcp_tasks_engine::Progress) -> Value {
    let mut params = json!({ "progressToken": token, "progress": p.progress });
    if let Some(t) = p.total {
        params["total"] = json!(t);
    }
    if let Some(m) = &p.message {
        params["message"] = json!(m);
    }
    jsonrpc::notification(NOTIF_PROGRESS, params)
}

/// The params of an input request as sent: with related-task `_meta`.
pub(crate) fn params_for(task: &TaskId, params: &Value) -> Value {
    let mut params = params.clone();
    if !params.is_object() {
        params = json!({});
    }
    let related = v2025_11_25::related_task(task.as_str());
    match params.get_mut("_meta").and_then(Value::as_object_mut) {
        Some(meta) => {
            if let Some(obj) = related.as_object() {
                meta.extend(obj.clone());
            }
        }
        None => params["_meta"] = related,
    }
    params
}
