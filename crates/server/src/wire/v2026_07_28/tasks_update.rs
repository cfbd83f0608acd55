//! `tasks/update` on this wire: a client's answers to a task's input requests.

use mcp_tasks_engine::{EngineError, Outcome};
use mcp_tasks_protocol::codec::v2026_07_28;
use mcp_tasks_protocol::methods::{parse_params, TASKS_UPDATE};
use mcp_tasks_protocol::{RpcError, TaskId};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::Request;
use crate::error_map::to_rpc;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateParams {
    task_id: TaskId,
    #[serde(default)]
    input_responses: Map<String, Value>,
}

/// `tasks/update`: applies answers to outstanding input requests (each at most once;
/// unknown or answered keys are ignored), before acknowledging. An assignee of a
/// question (by principal or by group) may answer it on a task that is not theirs,
/// unless only people may answer it (an approval: the board, a link or Slack).
pub(super) async fn handle(req: &Request<'_>, params: &Value) -> Result<Value, RpcError> {
    let p: UpdateParams = parse_params(TASKS_UPDATE, params)?;
    let engine = req.server.engine();
    engine
        .get_for_person(&p.task_id, &req.caller)
        .await
        .map_err(to_rpc)?;
    for (key, answer) in p.input_responses {
        let outcome = Outcome::Result { value: answer };
        match engine
            .answer_input(&p.task_id, &key, outcome, &req.caller)
            .await
        {
            Ok(applied) => {
                tracing::debug!(task_id = %p.task_id, key, applied, "tasks/update answer")
            }
            Err(EngineError::NotFound) => return Err(to_rpc(EngineError::NotFound)),
            Err(e) => return Err(to_rpc(e)),
        }
    }
    Ok(v2026_07_28::ack())
}
