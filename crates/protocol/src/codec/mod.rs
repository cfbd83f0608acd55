//! Per-generation rendering of tasks. Only the files in this module know how a field is
//! spelled on a given wire (`ttl` vs `ttlMs`), so the engine and store stay neutral.

mod fields;
pub mod v2025_11_25;
pub mod v2026_07_28;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;
use std::time::Duration;

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

/// A duration given in milliseconds as any non-negative JSON number: `500` and `500.0`
/// read alike, a fraction is cut to whole milliseconds (the wires' precision, so a task
/// read and rendered again is the same). The schemas of both wires type `ttl`/`ttlMs`
/// and `pollInterval`/`pollIntervalMs` as `number`, and real peers send floats (a Rust
/// server with the Tasks extension sends `"pollIntervalMs": 500.0`). `None` for
/// anything else (negative, not a number); a value past `u64::MAX` milliseconds
/// saturates.
pub fn millis_from_json(x: &Value) -> Option<Duration> {
    if let Some(whole) = x.as_u64() {
        return Some(Duration::from_millis(whole));
    }
    let ms = x.as_f64()?;
    if ms.is_nan() || ms < 0.0 {
        return None;
    }
    // `as` saturates at u64::MAX (and maps infinity there).
    Some(Duration::from_millis(ms.floor() as u64))
}

/// Deserializes an optional millisecond count from any non-negative JSON number, cut
/// to whole milliseconds (see [`millis_from_json`]).
pub(crate) fn deserialize_optional_millis<'de, D>(d: D) -> Result<Option<u64>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    use serde::Deserialize;
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(x) => millis_from_json(&x)
            .map(|d| Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)))
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "expected a non-negative number of milliseconds, got {x}"
                ))
            }),
    }
}

#[cfg(test)]
mod number_tests {
    use super::millis_from_json;
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn milliseconds_read_from_any_non_negative_number() {
        assert_eq!(
            millis_from_json(&json!(500)),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            millis_from_json(&json!(500.0)),
            Some(Duration::from_millis(500))
        );
        assert_eq!(millis_from_json(&json!(0.5)), Some(Duration::ZERO));
        assert_eq!(
            millis_from_json(&json!(1.9)),
            Some(Duration::from_millis(1))
        );
        assert_eq!(millis_from_json(&json!(-0.0)), Some(Duration::ZERO));
        assert_eq!(millis_from_json(&json!(0)), Some(Duration::ZERO));
        assert_eq!(
            millis_from_json(&json!(1e300)),
            Some(Duration::from_millis(u64::MAX))
        );
        assert_eq!(millis_from_json(&json!(-1)), None);
        assert_eq!(millis_from_json(&json!(-0.5)), None);
        assert_eq!(millis_from_json(&json!("500")), None);
        assert_eq!(millis_from_json(&json!(null)), None);
    }
}
