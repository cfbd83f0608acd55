//! The 2025-11-25 "experimental tasks" wire (SEP-1686).
//!
//! A `Task` object carries `taskId`, `status`, optional `statusMessage`, `createdAt`,
//! `lastUpdatedAt`, `ttl` (milliseconds or `null` for unlimited) and optional
//! `pollInterval` (milliseconds). `tasks/get`, `tasks/cancel` and
//! `notifications/tasks/status` carry the task's fields flat; `CreateTaskResult` and
//! `tasks/list` nest them.
//!
//! A tool result with `isError: true` is shown as `failed` here (the 2025-11-25 rule),
//! while the engine records it as a completed task.

use serde::Deserialize;
use serde_json::{json, Value};
use std::time::Duration;

use super::fields::{self, Spelling};
use super::{MODEL_IMMEDIATE_RESPONSE_META, RELATED_TASK_META};
use crate::jsonrpc::RpcError;
use crate::task::{TaskStatus, TaskView};

/// The status this generation shows for a task.
pub fn wire_status(view: &TaskView) -> TaskStatus {
    if view.status == TaskStatus::Completed && view.tool_error {
        TaskStatus::Failed
    } else {
        view.status
    }
}

/// How this wire spells the task fields: `ttl` is always present, `null` for unlimited.
const SPELLING: Spelling = Spelling {
    ttl: "ttl",
    poll_interval: "pollInterval",
    ttl_required: true,
    null_message_is_absent: false,
    omit_zero_poll_interval: false,
};

/// The `Task` object.
pub fn task(view: &TaskView) -> Value {
    Value::Object(fields::render(view, wire_status(view), &SPELLING))
}

/// `CreateTaskResult`: `{task, _meta?}`. `immediate` fills the optional
/// model-immediate-response `_meta` entry.
pub fn create_task_result(view: &TaskView, immediate: Option<&str>) -> Value {
    let mut v = json!({ "task": task(view) });
    if let Some(text) = immediate {
        v["_meta"] = json!({ MODEL_IMMEDIATE_RESPONSE_META: text });
    }
    v
}

/// The result of `tasks/get` and `tasks/cancel`: the task's fields, flat.
pub fn task_result(view: &TaskView) -> Value {
    task(view)
}

/// The params of `notifications/tasks/status`: the full task, flat.
pub fn status_notification_params(view: &TaskView) -> Value {
    task(view)
}

/// The result of `tasks/list`.
pub fn list_result(views: &[TaskView], next_cursor: Option<&str>) -> Value {
    let mut v = json!({ "tasks": views.iter().map(task).collect::<Vec<_>>() });
    if let Some(c) = next_cursor {
        v["nextCursor"] = json!(c);
    }
    v
}

/// `_meta` value tying a message to a task.
pub fn related_task(task_id: &str) -> Value {
    json!({ RELATED_TASK_META: { "taskId": task_id } })
}

/// Adds the related-task entry to a result's `_meta`, keeping any `_meta` it had.
pub fn with_related_task(mut result: Value, task_id: &str) -> Value {
    if !result.is_object() {
        result = json!({});
    }
    let meta = result
        .as_object_mut()
        .map(|o| o.entry("_meta").or_insert_with(|| json!({})));
    if let Some(meta) = meta {
        if !meta.is_object() {
            *meta = json!({});
        }
        meta[RELATED_TASK_META] = json!({ "taskId": task_id });
    }
    result
}

/// Adds the related-task entry to the `data` of an error returned by `tasks/result`.
pub fn error_with_related_task(mut error: RpcError, task_id: &str) -> RpcError {
    let mut data = match error.data.take() {
        Some(Value::Object(m)) => Value::Object(m),
        Some(other) => json!({ "detail": other }),
        None => json!({}),
    };
    data["_meta"] = related_task(task_id);
    error.data = Some(data);
    error
}

/// The `task` member a client puts in request params to ask for a task.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct TaskMetadata {
    /// Requested time to keep the task, in milliseconds from creation. The schema types
    /// it `number`: `60000.0` reads as 60000 (fractions are cut to whole milliseconds).
    #[serde(default, deserialize_with = "super::deserialize_optional_millis")]
    pub ttl: Option<u64>,
}

impl TaskMetadata {
    /// The requested ttl as a duration.
    pub fn ttl(&self) -> Option<Duration> {
        self.ttl.map(Duration::from_millis)
    }
}

/// Reads `params.task`: `Ok(None)` when absent, the metadata when it is an object
/// (`{}` included).
///
/// `"task": null` is refused rather than read as "no task": the schema declares
/// `task?: TaskMetadata` (an optional object, never null), the official SDKs' own
/// validators reject null, and guessing would silently run a call synchronously that
/// its client meant as a task (and then wait on it for as long as it runs).
///
/// # Errors
/// `-32602` when `task` is not an object (`null` included) or `ttl` is not a
/// non-negative integer.
pub fn task_metadata(params: &Value) -> Result<Option<TaskMetadata>, RpcError> {
    match params.get("task") {
        None => Ok(None),
        Some(Value::Null) => Err(RpcError::invalid_params(
            "'task' must be an object like {} or {\"ttl\": 60000}, not null: leave 'task' out for a synchronous call",
        )),
        Some(v @ Value::Object(_)) => serde_json::from_value(v.clone()).map(Some).map_err(|e| {
            RpcError::invalid_params(format!(
                "'task' must be {{}} or {{\"ttl\": <milliseconds>}}: {e}"
            ))
        }),
        Some(other) => Err(RpcError::invalid_params(format!(
            "'task' must be an object like {{\"ttl\": 60000}}, got {}",
            crate::jsonrpc::kind(other)
        ))),
    }
}

/// Reads a `Task` object (as a client receives it) back into a neutral view. A
/// `failed` task reads as [`TaskStatus::Failed`]: this wire does not tell a tool error
/// from other failures.
///
/// # Errors
/// A message naming the missing or malformed field.
pub fn parse_task(v: &Value) -> Result<TaskView, String> {
    fields::parse(v, &SPELLING)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::TaskId;
    use chrono::TimeZone;

    fn view() -> TaskView {
        let t = chrono::Utc
            .with_ymd_and_hms(2025, 11, 25, 10, 30, 0)
            .single()
            .expect("valid date");
        TaskView {
            id: TaskId::from_string("abc"),
            status: TaskStatus::Working,
            status_message: Some("halfway".into()),
            created_at: t,
            last_updated_at: t,
            ttl: Some(Duration::from_secs(60)),
            poll_interval: Some(Duration::from_secs(1)),
            tool_error: false,
        }
    }

    proptest::proptest! {
        /// Rendering then parsing gives the same view back, for any field values.
        #[test]
        fn task_round_trips(
            id in "[0-9a-f]{32}",
            status in proptest::sample::select(TaskStatus::ALL.to_vec()),
            message in proptest::option::of(".{0,40}"),
            created_ms in 0i64..4_000_000_000_000,
            delta_ms in 0i64..1_000_000_000,
            ttl_ms in proptest::option::of(0u64..100_000_000_000),
            poll_ms in proptest::option::of(0u64..1_000_000),
        ) {
            let created = chrono::DateTime::from_timestamp_millis(created_ms).expect("in range");
            let view = TaskView {
                id: TaskId::from_string(id),
                status,
                status_message: message,
                created_at: created,
                last_updated_at: created + chrono::Duration::milliseconds(delta_ms),
                ttl: ttl_ms.map(Duration::from_millis),
                poll_interval: poll_ms.map(Duration::from_millis),
                tool_error: false,
            };
            let wire = task(&view);
            let text = serde_json::to_string(&wire).expect("serializes");
            let back: Value = serde_json::from_str(&text).expect("parses");
            proptest::prop_assert_eq!(parse_task(&back), Ok(view));
        }
    }

    #[test]
    fn parse_task_names_the_bad_field() {
        let mut v = task(&view());
        v["ttl"] = json!("soon");
        assert!(parse_task(&v).unwrap_err().contains("ttl"));
        v.as_object_mut().map(|o| o.remove("createdAt"));
        assert!(parse_task(&v).unwrap_err().contains("createdAt"));
    }

    #[test]
    fn task_has_the_2025_fields() {
        let v = task(&view());
        assert_eq!(v["taskId"], "abc");
        assert_eq!(v["status"], "working");
        assert_eq!(v["ttl"], 60000);
        assert_eq!(v["pollInterval"], 1000);
        assert_eq!(v["createdAt"], "2025-11-25T10:30:00.000Z");
        assert_eq!(v["statusMessage"], "halfway");
    }

    #[test]
    fn unlimited_ttl_is_null() {
        let mut w = view();
        w.ttl = None;
        assert!(task(&w)["ttl"].is_null());
        assert!(task(&w).as_object().is_some_and(|o| o.contains_key("ttl")));
    }

    #[test]
    fn tool_error_is_failed_on_this_wire() {
        let mut w = view();
        w.status = TaskStatus::Completed;
        w.tool_error = true;
        assert_eq!(task(&w)["status"], "failed");
    }

    #[test]
    fn related_task_is_merged_into_meta() {
        let r = with_related_task(json!({"content": [], "_meta": {"x": 1}}), "abc");
        assert_eq!(r["_meta"]["x"], 1);
        assert_eq!(r["_meta"][RELATED_TASK_META]["taskId"], "abc");
    }

    #[test]
    fn task_metadata_accepts_empty_and_ttl_and_rejects_junk() {
        assert_eq!(task_metadata(&json!({})).ok(), Some(None));
        assert_eq!(
            task_metadata(&json!({"task": {}})).ok(),
            Some(Some(TaskMetadata { ttl: None }))
        );
        assert_eq!(
            task_metadata(&json!({"task": {"ttl": 5}}))
                .ok()
                .flatten()
                .and_then(|m| m.ttl),
            Some(5)
        );
        assert!(task_metadata(&json!({"task": 3})).is_err());
        let null = task_metadata(&json!({"task": null})).unwrap_err();
        assert_eq!(null.code, crate::error_code::INVALID_PARAMS);
        assert!(null.message.contains("not null"), "{}", null.message);
        assert_eq!(task_metadata(&json!({"name": "x"})).ok(), Some(None));
        assert_eq!(
            task_metadata(&json!({"task": {"ttl": 60000.0}}))
                .ok()
                .flatten()
                .and_then(|m| m.ttl),
            Some(60000)
        );
        assert!(task_metadata(&json!({"task": {"ttl": -1}})).is_err());
        assert!(task_metadata(&json!({"task": {"ttl": "x"}})).is_err());
    }
}
