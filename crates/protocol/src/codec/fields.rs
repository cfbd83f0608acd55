//! The task fields both wire generations carry, rendered and read in one place. Where
//! the generations differ (the duration keys, `null` handling, a zero poll interval) the
//! calling codec says how through a [`Spelling`].

use serde_json::{json, Map, Value};
use std::time::Duration;

use super::timestamp;
use crate::task::{TaskId, TaskStatus, TaskView};

/// How one wire spells and treats the task fields on which the generations differ.
pub(super) struct Spelling {
    /// The key of the retention time in milliseconds (`null` for unlimited).
    pub ttl: &'static str,
    /// The key of the suggested poll interval in milliseconds.
    pub poll_interval: &'static str,
    /// Whether a task read from this wire must carry the ttl key.
    pub ttl_required: bool,
    /// Whether `statusMessage: null` reads as no message (otherwise it is malformed).
    pub null_message_is_absent: bool,
    /// Whether a zero poll interval is left out when rendering.
    pub omit_zero_poll_interval: bool,
}

/// The task fields of `view` with `status` as the wire shows it. Absent optional fields
/// are omitted; the ttl is `null` for unlimited retention.
pub(super) fn render(view: &TaskView, status: TaskStatus, wire: &Spelling) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("taskId".into(), json!(view.id.as_str()));
    m.insert("status".into(), json!(status.as_str()));
    if let Some(msg) = &view.status_message {
        m.insert("statusMessage".into(), json!(msg));
    }
    m.insert("createdAt".into(), json!(timestamp(&view.created_at)));
    m.insert(
        "lastUpdatedAt".into(),
        json!(timestamp(&view.last_updated_at)),
    );
    m.insert(
        wire.ttl.into(),
        match view.ttl {
            Some(d) => json!(millis(d)),
            None => Value::Null,
        },
    );
    let poll_interval = view
        .poll_interval
        .filter(|p| !(wire.omit_zero_poll_interval && p.is_zero()));
    if let Some(p) = poll_interval {
        m.insert(wire.poll_interval.into(), json!(millis(p)));
    }
    m
}

/// Reads the task fields of `v` back into a neutral view, with `tool_error` unset (the
/// wires tell a tool error apart differently, if at all).
///
/// # Errors
/// A message naming the missing or malformed field.
pub(super) fn parse(v: &Value, wire: &Spelling) -> Result<TaskView, String> {
    let field = |k: &str| v.get(k).ok_or_else(|| format!("task is missing '{k}'"));
    let text = |k: &str| -> Result<String, String> {
        field(k)?
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("task field '{k}' must be a string"))
    };
    let time = |k: &str| -> Result<chrono::DateTime<chrono::Utc>, String> {
        chrono::DateTime::parse_from_rfc3339(&text(k)?)
            .map(|t| t.with_timezone(&chrono::Utc))
            .map_err(|e| format!("task field '{k}' is not an ISO 8601 time: {e}"))
    };
    let ms = |x: &Value, k: &str| -> Result<Duration, String> {
        super::millis_from_json(x).ok_or_else(|| {
            format!("task field '{k}' must be a non-negative number of milliseconds, got {x}")
        })
    };
    let status: TaskStatus = text("status")?.parse().map_err(|e| format!("{e}"))?;
    Ok(TaskView {
        id: TaskId::from_string(text("taskId")?),
        status,
        status_message: match v.get("statusMessage") {
            None => None,
            Some(Value::Null) if wire.null_message_is_absent => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err("task field 'statusMessage' must be a string".into()),
        },
        created_at: time("createdAt")?,
        last_updated_at: time("lastUpdatedAt")?,
        ttl: match v.get(wire.ttl) {
            None if wire.ttl_required => return Err(format!("task is missing '{}'", wire.ttl)),
            None | Some(Value::Null) => None,
            Some(x) => Some(ms(x, wire.ttl)?),
        },
        poll_interval: v
            .get(wire.poll_interval)
            .map(|x| ms(x, wire.poll_interval))
            .transpose()?,
        tool_error: false,
    })
}

/// A duration in whole milliseconds, saturating.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::super::{v2025_11_25, v2026_07_28};
    use serde_json::{json, Value};

    fn wire_task(ttl: &str, poll: &str) -> Value {
        let now = "2025-11-25T10:30:00.000Z";
        json!({"taskId": "t", "status": "working", "createdAt": now, "lastUpdatedAt": now,
               ttl: 1000, poll: 0})
    }

    #[test]
    fn each_wire_keeps_its_own_rules() {
        let mut legacy = wire_task("ttl", "pollInterval");
        let mut modern = wire_task("ttlMs", "pollIntervalMs");
        let (a, b) = (
            v2025_11_25::parse_task(&legacy),
            v2026_07_28::parse_task(&modern),
        );
        assert_eq!(
            a.clone()
                .map(|v| v.poll_interval.is_some_and(|p| p.is_zero())),
            Ok(true)
        );
        assert_eq!(a.as_ref().map(|v| v.ttl), b.as_ref().map(|v| v.ttl));
        assert!(v2025_11_25::task(&a.unwrap()).get("pollInterval").is_some());
        assert!(v2026_07_28::task_fields(&b.unwrap())
            .get("pollIntervalMs")
            .is_none());

        legacy["statusMessage"] = Value::Null;
        modern["statusMessage"] = Value::Null;
        assert!(v2025_11_25::parse_task(&legacy)
            .unwrap_err()
            .contains("statusMessage"));
        assert_eq!(
            v2026_07_28::parse_task(&modern).map(|v| v.status_message),
            Ok(None)
        );

        legacy.as_object_mut().map(|o| o.remove("statusMessage"));
        modern.as_object_mut().map(|o| o.remove("statusMessage"));
        legacy.as_object_mut().map(|o| o.remove("ttl"));
        modern.as_object_mut().map(|o| o.remove("ttlMs"));
        assert_eq!(
            v2025_11_25::parse_task(&legacy),
            Err("task is missing 'ttl'".to_string())
        );
        assert_eq!(v2026_07_28::parse_task(&modern).map(|v| v.ttl), Ok(None));
    }
}
