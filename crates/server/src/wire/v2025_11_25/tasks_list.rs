//! `tasks/list`: the caller's tasks, paged with opaque cursors.

use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::methods::{parse_params, ListParams, TASKS_LIST};
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
    let p: ListParams = parse_params(TASKS_LIST, params)?;
    let page = server
        .engine()
        .list(&session.caller(), p.cursor.as_deref())
        .await
        .map_err(to_rpc)?;
    let views: Vec<_> = page.tasks.iter().map(|r| server.engine().view(r)).collect();
    Ok(v2025_11_25::list_result(
        &views,
        page.next_cursor.as_deref(),
    ))
}
