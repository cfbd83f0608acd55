//! `tools/list` on this wire: every tool (and the task tools for a request that does
//! not declare the Tasks extension), in a complete `CacheableResult` (`ttlMs` and
//! `cacheScope` are required on it).

use mcp_tasks_protocol::codec::v2026_07_28;
use serde_json::{json, Value};

use crate::server::Server;

pub(super) fn handle(server: &Server, extension: bool) -> Value {
    let mut tools: Vec<Value> = server.tools().iter().map(|t| t.definition()).collect();
    if crate::tools::task_tools::offered(server.config().task_tools, extension) {
        tools.extend(crate::tools::task_tools::definitions(server));
    }
    v2026_07_28::cacheable(json!({ "tools": tools }))
}
