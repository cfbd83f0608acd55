//! `tools/list`: every tool with its input schema and `execution.taskSupport`.

use mcp_tasks_protocol::RpcError;
use serde_json::{json, Value};
use std::sync::Arc;

use crate::server::Server;
use crate::session::Session;

pub(super) fn handle(server: &Server, _session: &Arc<Session>) -> Result<Value, RpcError> {
    let tools: Vec<Value> = server.tools().iter().map(|t| t.definition()).collect();
    Ok(json!({ "tools": tools }))
}
