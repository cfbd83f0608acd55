//! `tools/list`: every tool with its input schema and `execution.taskSupport`, and the
//! task tools for a client that speaks no tasks (which is then not promised any
//! tool's `outputSchema`: see `task_tools::listed`).

use mcp_tasks_protocol::RpcError;
use serde_json::{json, Value};
use std::sync::Arc;

use crate::session::Session;
use crate::shared::Shared;

pub(super) fn handle(server: &Shared, session: &Arc<Session>) -> Result<Value, RpcError> {
    let offered = crate::calls::plan::task_tools_offered(
        server.config(),
        super::tools_call::wire_of(session),
    );
    let mut tools = crate::calls::task_tools::listed(server, offered);
    if offered {
        tools.extend(crate::calls::task_tools::definitions(server));
    }
    Ok(json!({ "tools": tools }))
}
