//! `tasks/cancel`: the task is `cancelled` before the reply; a terminal task is -32602.

use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::methods::{parse_params, TaskIdParams, TASKS_CANCEL};
use mcp_tasks_protocol::RpcError;
use serde_json::Value;
use std::sync::Arc;

use crate::error_map::to_rpc;
use crate::session::Session;
use crate::shared::Shared;

pub(super) async fn handle(
    server: &Shared,
    session: &Arc<Session>,
    params: &Value,
) -> Result<Value, RpcError> {
    let p: TaskIdParams = parse_params(TASKS_CANCEL, params)?;
    let record = server
        .engine()
        .cancel(&p.task_id, &session.caller())
        .await
        .map_err(to_rpc)?;
    Ok(v2025_11_25::task_result(&server.engine().view(&record)))
}
