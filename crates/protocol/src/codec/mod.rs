//! Per-generation rendering of tasks. Only the files in this module know how a field is
//! spelled on a given wire (`ttl` vs `ttlMs`), so the engine and store stay neutral.

pub mod ext;
mod fields;
pub mod v2025_11_25;

use chrono::{DateTime, SecondsFormat, Utc};

/// The `_meta` key that ties a message to a task.
pub const RELATED_TASK_META: &str = "io.modelcontextprotocol/related-task";
/// The optional `_meta` key of a `CreateTaskResult` carrying text a host may show its
/// model at once, while the task runs.
pub const MODEL_IMMEDIATE_RESPONSE_META: &str = "io.modelcontextprotocol/model-immediate-response";

/// ISO 8601 / RFC 3339 with milliseconds and a `Z`, the form every MCP SDK parses.
pub fn timestamp(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}
