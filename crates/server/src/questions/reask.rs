//! A question asked again after its answer was refused (it did not fit the form): the
//! same input request, its message led by what was wrong, under a fresh request id. A
//! 2025-11-25 response cannot carry an error back to whoever answered, so asking again
//! is how they learn what to fix. Used by tasks' questions (`in_task`) and by
//! client-hosted tasks (`client_hosted`), which is why it is a module of its own.

use mcp_tasks_protocol::jsonrpc::{self, RequestId};
use mcp_tasks_protocol::TaskId;
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::messages::params_for;
use crate::questions::Questions;
use crate::session::Session;

/// Prefix of the id of a question asked again after a refused answer: the attempt
/// number keeps every request id of a session unique, as JSON-RPC asks.
pub(crate) const RETRY_PREFIX: &str = "mcp-tasks-retry-";

/// Attempts of questions asked again, for their ids.
static RETRIES: AtomicU64 = AtomicU64::new(1);

/// The id of a question asked again (`mcp-tasks-retry-<n>:<task>:<key>`).
pub(crate) fn retry_request_id(task: &TaskId, key: &str) -> RequestId {
    let n = RETRIES.fetch_add(1, Ordering::Relaxed);
    RequestId::String(format!("{RETRY_PREFIX}{n}:{task}:{key}"))
}

/// Sends input request `key` of `task` to the client once more, with `problem` (why
/// its last answer was refused) in front of the question's message.
pub(crate) async fn ask_again(
    questions: &Arc<Questions>,
    session: &Arc<Session>,
    task: &TaskId,
    key: &str,
    problem: &str,
) {
    let record = match questions.engine.get(task, &session.caller()).await {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!(task_id = %task, key, error = %e, "cannot ask again: task gone");
            return;
        }
    };
    let Some(request) = record
        .input_requests
        .get(key)
        .filter(|r| r.is_outstanding())
    else {
        return;
    };
    let mut params = if questions.sessions.relates_to_task(task) {
        params_for(task, &request.params)
    } else {
        request.params.clone()
    };
    let message = params["message"].as_str().unwrap_or_default().to_string();
    params["message"] = json!(format!("{problem}\n\n{message}"));
    let message = jsonrpc::request(&retry_request_id(task, key), &request.method, params);
    if !session.send_for_task(task, message) {
        // Nothing to carry it now: the next delivery (a new tasks/result) asks again.
        session.release_delivery(task, key);
    }
}
