//! `tasks/get` on this wire: a `DetailedTask`, its result, error or outstanding input
//! requests inlined by status.

use mcp_tasks_engine::{Outcome, TaskRecord};
use mcp_tasks_protocol::codec::v2026_07_28::{self, Detail};
use mcp_tasks_protocol::methods::{parse_params, TaskIdParams, TASKS_GET};
use mcp_tasks_protocol::{RpcError, TaskStatus};
use serde_json::{json, Map, Value};

use super::Request;
use crate::error_map::to_rpc;

/// `tasks/get`: the task with its result, error or outstanding input requests inlined.
/// Besides its owner, whoever one of its questions is assigned to (by principal or by
/// group, as the board shows it to them) may read it.
pub(super) async fn handle(req: &Request<'_>, params: &Value) -> Result<Value, RpcError> {
    let p: TaskIdParams = parse_params(TASKS_GET, params)?;
    let record = req
        .server
        .engine()
        .get_for_person(&p.task_id, &req.caller)
        .await
        .map_err(to_rpc)?;
    let mut result =
        v2026_07_28::detailed_task(&req.server.engine().view(&record), detail(&record));
    crate::wire::add_related_meta(&mut result, &record);
    Ok(result)
}

pub(super) fn detail(record: &TaskRecord) -> Detail {
    match (record.status, record.outcome.as_deref()) {
        (TaskStatus::InputRequired, _) => {
            let requests: Map<String, Value> = record
                .input_requests
                .iter()
                // A question only people may answer (an approval) is not the client's
                // to answer: it is not listed (the status message says who decides).
                .filter(|(_, r)| {
                    r.is_outstanding() && !r.assignment.as_ref().is_some_and(|a| a.only)
                })
                .map(|(k, r)| (k.clone(), json!({ "method": r.method, "params": r.params })))
                .collect();
            Detail::InputRequests(requests)
        }
        // The inlined result is what the request would have returned on this wire, so it
        // is a complete `CallToolResult` with `resultType` (the ext-tasks client validates
        // it as one and fails the task without it).
        (TaskStatus::Completed, Some(Outcome::Result { value })) => {
            Detail::Result(v2026_07_28::complete(value.clone()))
        }
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
