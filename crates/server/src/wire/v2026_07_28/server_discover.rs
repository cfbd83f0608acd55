//! `server/discover`: what a client learns without a session: versions, capabilities
//! (the Tasks extension) and the server's name.

use mcp_tasks_protocol::codec::v2026_07_28;
use mcp_tasks_protocol::version;
use serde_json::{json, Value};

use super::META_SERVER_INFO;
use crate::shared::Shared;

pub(super) fn handle(server: &Shared) -> Value {
    let config = server.config();
    let mut capabilities = json!({ "tools": {}, "extensions": { v2026_07_28::EXTENSION_ID: {} } });
    crate::passthrough::merge_capabilities(&mut capabilities, &server.passthrough_capabilities());
    v2026_07_28::cacheable(json!({
        "supportedVersions": version::STATELESS,
        "capabilities": capabilities,
        "_meta": { META_SERVER_INFO: { "name": config.name, "version": config.version } },
    }))
}
