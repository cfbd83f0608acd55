//! Shared helpers for the fuzz targets: building JSON values and task views from fuzzer
//! bytes, and comparing JSON values the way a JSON round trip can keep them.

use arbitrary::{Result, Unstructured};
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::task::{TaskId, TaskStatus, TaskView};
use serde_json::{Map, Number, Value};
use std::time::Duration;

/// 0000-01-01T00:00:00.000Z, the earliest instant RFC 3339 (four-digit years) can write.
pub const MIN_MILLIS: i64 = -62_167_219_200_000;
/// 9999-12-31T23:59:59.999Z, the latest.
pub const MAX_MILLIS: i64 = 253_402_300_799_999;

/// Strings that matter to the codecs, so that arbitrary values hit them often.
const INTERESTING: &[&str] = &[
    "task",
    "ttl",
    "taskId",
    "status",
    "statusMessage",
    "createdAt",
    "lastUpdatedAt",
    "pollInterval",
    "_meta",
    "progressToken",
    "extensions",
    "io.modelcontextprotocol/tasks",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/related-task",
    "resultType",
    "working",
    "input_required",
    "completed",
    "failed",
    "cancelled",
    "2025-11-25T10:30:00.000Z",
    "2026-07-28",
    "2025-11-25",
    "name",
    "arguments",
    "cursor",
    "requestId",
    "protocolVersion",
];

/// A string that is often one of the interesting keys and values.
pub fn arb_string(u: &mut Unstructured) -> Result<String> {
    if u.ratio(1u8, 2u8)? {
        Ok((*u.choose(INTERESTING)?).to_string())
    } else {
        u.arbitrary::<String>()
    }
}

/// An arbitrary JSON value at most `depth` levels deep.
pub fn arb_json(u: &mut Unstructured, depth: u32) -> Result<Value> {
    let leaf = depth == 0;
    let kind = u.int_in_range(0..=if leaf { 4u8 } else { 6u8 })?;
    Ok(match kind {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => match u.int_in_range(0..=2u8)? {
            0 => Value::Number(Number::from(u.arbitrary::<i64>()?)),
            1 => Value::Number(Number::from(u.arbitrary::<u64>()?)),
            _ => Number::from_f64(u.arbitrary::<f64>()?)
                .map(Value::Number)
                .unwrap_or(Value::Null),
        },
        3 | 4 => Value::String(arb_string(u)?),
        5 => {
            let n = u.int_in_range(0..=4u8)?;
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(arb_json(u, depth - 1)?);
            }
            Value::Array(items)
        }
        _ => {
            let n = u.int_in_range(0..=5u8)?;
            let mut m = Map::new();
            for _ in 0..n {
                let k = arb_string(u)?;
                m.insert(k, arb_json(u, depth - 1)?);
            }
            Value::Object(m)
        }
    })
}

/// The bytes as JSON when they are JSON, else a value built from them.
pub fn json_from_bytes(data: &[u8]) -> Value {
    match serde_json::from_slice(data) {
        Ok(v) => v,
        Err(_) => arb_json(&mut Unstructured::new(data), 4).unwrap_or(Value::Null),
    }
}

/// An instant with whole milliseconds in the range RFC 3339 can write.
pub fn arb_time(u: &mut Unstructured) -> Result<DateTime<Utc>> {
    let ms = u.int_in_range(MIN_MILLIS..=MAX_MILLIS)?;
    Ok(DateTime::from_timestamp_millis(ms).unwrap_or(DateTime::UNIX_EPOCH))
}

/// A task view with any id, status and message, millisecond times and durations.
pub fn arb_view(u: &mut Unstructured) -> Result<TaskView> {
    let id = arb_string(u)?;
    let status = *u.choose(&TaskStatus::ALL)?;
    let status_message = if u.arbitrary()? {
        Some(arb_string(u)?)
    } else {
        None
    };
    let created_at = arb_time(u)?;
    let last_updated_at = arb_time(u)?;
    let ttl = if u.arbitrary()? {
        Some(Duration::from_millis(u.arbitrary()?))
    } else {
        None
    };
    let poll_interval = if u.arbitrary()? {
        Some(Duration::from_millis(u.arbitrary()?))
    } else {
        None
    };
    Ok(TaskView {
        id: TaskId::from_string(id),
        status,
        status_message,
        created_at,
        last_updated_at,
        ttl,
        poll_interval,
        tool_error: u.arbitrary()?,
    })
}

/// Equality of JSON values where two floats count as equal when they differ by at most
/// one unit in the last place (serde_json's default float parser may be off by one ULP).
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x == y {
                return true;
            }
            match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) if x.is_f64() && y.is_f64() => {
                    p == q || p.to_bits().abs_diff(q.to_bits()) <= 1
                }
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x
                    .iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}
