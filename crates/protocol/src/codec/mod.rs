//! Per-generation rendering of tasks. Only the files in this module know how a field is
//! spelled on a given wire (`ttl` vs `ttlMs`), so the engine and store stay neutral.

mod fields;
pub mod v2025_11_25;
pub mod v2026_07_28;

use chrono::{DateTime, SecondsFormat, Utc};

/// The `_meta` key that ties a message to a task.
pub const RELATED_TASK_META: &str = "io.modelcontextprotocol/related-task";
/// The optional `_meta` key of a `CreateTaskResult` carrying text a host may show its
/// model at once, while the task runs.
pub const MODEL_IMMEDIATE_RESPONSE_META: &str = "io.modelcontextprotocol/model-immediate-response";

/// `_meta` key of the protocol version of a 2026-07-28 stateless request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client capabilities of a 2026-07-28 stateless request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client info of a 2026-07-28 stateless request.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the server info in `server/discover`.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of the subscription a `notifications/tasks` message belongs to.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// ISO 8601 / RFC 3339 with milliseconds and a `Z`, the form every MCP SDK parses.
pub fn timestamp(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}
