//! `tools/list`: every tool with its input schema and `execution.taskSupport`, and the
//! task tools for a client that speaks no tasks (which is then not promised any
//! tool's `outputSchema`: see `task_tools::listed`).

use mcp_tasks_protocol::RpcError;
use serde_json::{json, Value};
use std::sync::Arc;

use crate::server::Server;
use crate::session::Session;

pub(super) fn handle(server: &Server, session: &Arc<Session>) -> Result<Value, RpcError> {
    let offered = super::tools_call::task_tools_offered(server, session);
    let mut tools = crate::tools::task_tools::listed(server, offered);
    if offered {
        tools.extend(crate::tools::task_tools::definitions(server));
    }
    Ok(json!({ "tools": tools }))
}
