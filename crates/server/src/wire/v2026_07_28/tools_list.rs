//! `tools/list` on this wire: every tool, in a complete `CacheableResult` (`ttlMs` and
//! `cacheScope` are required on it).

use mcp_tasks_protocol::codec::v2026_07_28;
use serde_json::{json, Value};

use crate::server::Server;

pub(super) fn handle(server: &Server) -> Value {
    let tools: Vec<Value> = server.tools().iter().map(|t| t.definition()).collect();
    v2026_07_28::cacheable(json!({ "tools": tools }))
}
