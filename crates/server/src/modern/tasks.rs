//! `tasks/get`, `tasks/update` and `tasks/cancel` on the extension wire.

use mcp_tasks_engine::{EngineError, Outcome, TaskRecord};
use mcp_tasks_protocol::codec::ext::{self, Detail};
use mcp_tasks_protocol::methods::{
    parse_params, TaskIdParams, TASKS_CANCEL, TASKS_GET, TASKS_UPDATE,
};
use mcp_tasks_protocol::{RpcError, TaskId, TaskStatus};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::Request;
use crate::error_map::to_rpc;

/// `tasks/get`: the task with its result, error or outstanding input requests inlined.
pub(super) async fn get(req: &Request<'_>, params: &Value) -> Result<Value, RpcError> {
    let p: TaskIdParams = parse_params(TASKS_GET, params)?;
    let record = req
        .server
        .engine()
        .get(&p.task_id, &req.caller)
        .await
        .map_err(to_rpc)?;
    Ok(ext::detailed_task(
        &req.server.engine().view(&record),
        detail(&record),
    ))
}

pub(super) fn detail(record: &TaskRecord) -> Detail {
    match (record.status, &record.outcome) {
        (TaskStatus::InputRequired, _) => {
            let requests: Map<String, Value> = record
                .input_requests
                .iter()
                .filter(|(_, r)| r.is_outstanding())
                .map(|(k, r)| (k.clone(), json!({ "method": r.method, "params": r.params })))
                .collect();
            Detail::InputRequests(requests)
        }
        (TaskStatus::Completed, Some(Outcome::Result { value })) => Detail::Result(value.clone()),
        (TaskStatus::Failed, Some(outcome)) if outcome.is_error() => {
            match crate::error_map::outcome_error(outcome) {
                Some(e) => {
                    let mut error = json!({ "code": e.code, "message": e.message });
                    if let Some(d) = e.data {
                        error["data"] = d;
                    }
                    Detail::Error(error)
                }
                None => Detail::None,
            }
        }
        _ => Detail::None,
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateParams {
    task_id: TaskId,
    #[serde(default)]
    input_responses: Map<String, Value>,
}

/// `tasks/update`: applies answers to outstanding input requests (each at most once;
/// unknown or answered keys are ignored), before acknowledging.
pub(super) async fn update(req: &Request<'_>, params: &Value) -> Result<Value, RpcError> {
    let p: UpdateParams = parse_params(TASKS_UPDATE, params)?;
    let engine = req.server.engine();
    engine.get(&p.task_id, &req.caller).await.map_err(to_rpc)?;
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
    Ok(ext::ack())
}

/// `tasks/cancel`: an empty acknowledgement, also for a task that already ended.
pub(super) async fn cancel(req: &Request<'_>, params: &Value) -> Result<Value, RpcError> {
    let p: TaskIdParams = parse_params(TASKS_CANCEL, params)?;
    match req.server.engine().cancel(&p.task_id, &req.caller).await {
        Ok(_) | Err(EngineError::AlreadyTerminal(_)) => Ok(ext::ack()),
        Err(e) => Err(to_rpc(e)),
    }
}
