//! `tasks/get`: the task, flat in the result.

use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::methods::{parse_params, TaskIdParams, TASKS_GET};
use mcp_tasks_protocol::RpcError;
use serde_json::Value;
use std::sync::Arc;

use crate::error_map::to_rpc;
use crate::session::Session;
use crate::shared::Shared;

/// The task for its owner, and for whoever one of its questions is assigned to (by
/// principal or by group), as the board shows it to them.
pub(super) async fn handle(
    server: &Shared,
    session: &Arc<Session>,
    params: &Value,
) -> Result<Value, RpcError> {
    let p: TaskIdParams = parse_params(TASKS_GET, params)?;
    let record = server
        .engine()
        .get_for_person(&p.task_id, &session.caller())
        .await
        .map_err(to_rpc)?;
    let mut result = v2025_11_25::task_result(&server.engine().view(&record));
    crate::wire::add_related_meta(&mut result, &record);
    Ok(result)
}
