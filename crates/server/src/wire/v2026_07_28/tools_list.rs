//! `tools/list` on this wire: every tool (and the task tools for a request that does
//! not declare the Tasks extension, which is then not promised any tool's
//! `outputSchema`: see `task_tools::listed`), in a complete `CacheableResult` (`ttlMs` and
//! `cacheScope` are required on it).

use mcp_tasks_protocol::codec::v2026_07_28;
use serde_json::{json, Value};

use crate::shared::Shared;

pub(super) fn handle(server: &Shared, extension: bool) -> Value {
    let offered = crate::calls::plan::task_tools_offered(
        server.config(),
        crate::calls::plan::Wire::Stateless { extension },
    );
    let mut tools = crate::calls::task_tools::listed(server, offered);
    if offered {
        tools.extend(crate::calls::task_tools::definitions(server));
    }
    v2026_07_28::cacheable(json!({ "tools": tools }))
}
