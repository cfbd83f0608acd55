//! `tasks/result`: waits until the task is terminal, then returns exactly what the
//! original request returned (result or JSON-RPC error), tagged with related-task
//! `_meta`. Readable any number of times until the task expires.
//!
//! While it waits, the task's input requests travel on this call's stream (the
//! spec's approach); requests this session has not been sent yet (a client that
//! reconnected) are sent at once.

use mcp_tasks_engine::Outcome;
use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::error_code::INTERNAL_ERROR;
use mcp_tasks_protocol::methods::{parse_params, TaskIdParams, TASKS_RESULT};
use mcp_tasks_protocol::RpcError;
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;

use crate::error_map::to_rpc;
use crate::session::Session;
use crate::shared::Shared;

pub(super) async fn handle(
    server: &Shared,
    session: &Arc<Session>,
    params: &Value,
    stream: Option<mpsc::Sender<Value>>,
) -> Result<Value, RpcError> {
    let p: TaskIdParams = parse_params(TASKS_RESULT, params)?;
    if let Some(tx) = stream {
        session.open_result_stream(&p.task_id, tx);
    }
    let result = wait_and_reply(server, session, &p).await;
    session.close_result_stream(&p.task_id);
    result
}

async fn wait_and_reply(
    server: &Shared,
    session: &Arc<Session>,
    p: &TaskIdParams,
) -> Result<Value, RpcError> {
    let caller = session.caller();
    if let Ok(record) = server.engine().get(&p.task_id, &caller).await {
        crate::questions::in_task::deliver(server.questions(), session, &record);
    }
    let shutdown = server.shutdown_token();
    let record = tokio::select! {
        r = server.engine().wait_terminal(&p.task_id, &caller) => r.map_err(to_rpc)?,
        _ = shutdown.cancelled() => return Err(RpcError::new(INTERNAL_ERROR, "the server is shutting down; call tasks/result again after it restarts")),
    };
    let id = record.id.as_str();
    match record.outcome.map(|outcome| *outcome) {
        Some(Outcome::Result { value }) => Ok(v2025_11_25::with_related_task(value, id)),
        Some(failed) => Err(v2025_11_25::error_with_related_task(
            crate::error_map::outcome_error(&failed).unwrap_or_else(|| {
                RpcError::new(INTERNAL_ERROR, "the task failed without an error")
            }),
            id,
        )),
        None => Err(RpcError::new(
            INTERNAL_ERROR,
            "the task ended without a stored outcome",
        )),
    }
}
