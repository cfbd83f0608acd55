//! `tools/list`: every tool with its input schema and `execution.taskSupport`, and the
//! task tools for a client that speaks no tasks.

use mcp_tasks_protocol::RpcError;
use serde_json::{json, Value};
use std::sync::Arc;

use crate::server::Server;
use crate::session::Session;

pub(super) fn handle(server: &Server, session: &Arc<Session>) -> Result<Value, RpcError> {
    let mut tools: Vec<Value> = server.tools().iter().map(|t| t.definition()).collect();
    if super::tools_call::task_tools_offered(server, session) {
        tools.extend(crate::tools::task_tools::definitions(server));
    }
    Ok(json!({ "tools": tools }))
}
