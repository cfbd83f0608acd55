//! `tasks/cancel` on this wire: always an empty acknowledgement (idempotent).

use mcp_tasks_engine::EngineError;
use mcp_tasks_protocol::codec::v2026_07_28;
use mcp_tasks_protocol::methods::{parse_params, TaskIdParams, TASKS_CANCEL};
use mcp_tasks_protocol::RpcError;
use serde_json::Value;

use super::Request;
use crate::error_map::to_rpc;

/// `tasks/cancel`: an empty acknowledgement, also for a task that already ended.
pub(super) async fn handle(req: &Request<'_>, params: &Value) -> Result<Value, RpcError> {
    let p: TaskIdParams = parse_params(TASKS_CANCEL, params)?;
    match req.server.engine().cancel(&p.task_id, &req.caller).await {
        Ok(_) | Err(EngineError::AlreadyTerminal(_)) => Ok(v2026_07_28::ack()),
        Err(e) => Err(to_rpc(e)),
    }
}
