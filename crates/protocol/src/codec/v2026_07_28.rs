//! The Tasks extension wire (`io.modelcontextprotocol/tasks`, SEP-2663) that ships beside
//! the 2026-07-28 protocol.
//!
//! Differences from 2025-11-25 that live here: the task fields are flat in the
//! `CreateTaskResult` (`resultType: "task"`), durations are `ttlMs` / `pollIntervalMs`,
//! `tasks/get` returns a `DetailedTask` with the result, error or outstanding input
//! requests inlined by status, and a tool error is a `completed` task whose result has
//! `isError: true`. Every result carries `resultType`.

use serde_json::{json, Map, Value};

use super::fields::{self, Spelling};
use crate::task::TaskView;

/// The extension's identifier, as declared in capabilities.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";
/// `resultType` of ordinary results.
pub const RESULT_COMPLETE: &str = "complete";
/// `resultType` of a `CreateTaskResult`.
pub const RESULT_TASK: &str = "task";
/// `resultType` of an MRTR round that needs input before the request can proceed.
pub const RESULT_INPUT_REQUIRED: &str = "input_required";

/// What `tasks/get` inlines besides the task fields.
#[derive(Debug, Clone, PartialEq)]
pub enum Detail {
    /// Nothing (working, cancelled).
    None,
    /// The outstanding input requests by key (input_required).
    InputRequests(Map<String, Value>),
    /// The request's result (completed, tool errors included).
    Result(Value),
    /// The request's JSON-RPC error (failed).
    Error(Value),
}

/// How this wire spells the task fields: `ttlMs` may be left out, a `null` status
/// message reads as none, and a zero poll interval is not sent.
const SPELLING: Spelling = Spelling {
    ttl: "ttlMs",
    poll_interval: "pollIntervalMs",
    ttl_required: false,
    null_message_is_absent: true,
    omit_zero_poll_interval: true,
};

/// The task fields on this wire. Absent optional fields are omitted, never `null`
/// (except `ttlMs`, which is `null` for unlimited retention).
pub fn task_fields(view: &TaskView) -> Map<String, Value> {
    fields::render(view, view.status, &SPELLING)
}

/// A flat `CreateTaskResult`.
pub fn create_task_result(view: &TaskView) -> Value {
    let mut m = task_fields(view);
    m.insert("resultType".into(), json!(RESULT_TASK));
    Value::Object(m)
}

/// The `DetailedTask` result of `tasks/get`.
pub fn detailed_task(view: &TaskView, detail: Detail) -> Value {
    let mut m = task_fields(view);
    m.insert("resultType".into(), json!(RESULT_COMPLETE));
    match detail {
        Detail::None => {}
        Detail::InputRequests(r) => {
            m.insert("inputRequests".into(), Value::Object(r));
        }
        Detail::Result(r) => {
            m.insert("result".into(), r);
        }
        Detail::Error(e) => {
            m.insert("error".into(), e);
        }
    }
    Value::Object(m)
}

/// The empty acknowledgement of `tasks/update` and `tasks/cancel`.
pub fn ack() -> Value {
    json!({ "resultType": RESULT_COMPLETE })
}

/// Adds `resultType: "complete"` to an ordinary result (kept if already set).
pub fn complete(mut result: Value) -> Value {
    if let Some(o) = result.as_object_mut() {
        o.entry("resultType").or_insert(json!(RESULT_COMPLETE));
    }
    result
}

/// The methods whose 2026-07-28 results are a `CacheableResult`, which must carry
/// `ttlMs` and `cacheScope` (clients such as the official TypeScript SDK v2 reject the
/// result without them).
pub const CACHEABLE_METHODS: [&str; 6] = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// Makes `result` a complete `CacheableResult`: adds `resultType: "complete"` and the
/// cache hints `ttlMs: 0` (stale at once: tool lists change, e.g. when a gateway's
/// upstream does) and `cacheScope: "private"` (a result may depend on who asks, so no
/// shared cache may hand it to another authorization context), keeping any already set.
pub fn cacheable(result: Value) -> Value {
    let mut result = complete(result);
    if let Some(o) = result.as_object_mut() {
        o.entry("ttlMs").or_insert(json!(0));
        o.entry("cacheScope").or_insert(json!("private"));
    }
    result
}

/// An MRTR `InputRequiredResult`: the request cannot proceed until the client answers
/// `input_requests` and retries with `inputResponses`.
pub fn input_required_result(input_requests: Map<String, Value>) -> Value {
    json!({ "resultType": RESULT_INPUT_REQUIRED, "inputRequests": input_requests })
}

/// The `data` of a `-32021` error: the capability the client must declare.
pub fn required_extension_data() -> Value {
    json!({ "requiredCapabilities": { "extensions": { EXTENSION_ID: {} } } })
}

/// Whether client capabilities declare the extension.
pub fn declares_extension(client_capabilities: &Value) -> bool {
    client_capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION_ID))
        .is_some_and(|v| !v.is_null())
}

/// Reads a task on this wire (a flat `CreateTaskResult` or a `DetailedTask`, as a
/// client receives it) back into a neutral view. `tool_error` is set when an inlined
/// result carries `isError: true`.
///
/// # Errors
/// A message naming the missing or malformed field.
pub fn parse_task(v: &Value) -> Result<TaskView, String> {
    let mut view = fields::parse(v, &SPELLING)?;
    view.tool_error = v
        .get("result")
        .and_then(|r| r.get("isError"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(view)
}

/// Reads what a `DetailedTask` inlines besides the task fields.
pub fn parse_detail(v: &Value) -> Detail {
    if let Some(Value::Object(r)) = v.get("inputRequests") {
        Detail::InputRequests(r.clone())
    } else if let Some(r) = v.get("result") {
        Detail::Result(r.clone())
    } else if let Some(e) = v.get("error") {
        Detail::Error(e.clone())
    } else {
        Detail::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{TaskId, TaskStatus};
    use std::time::Duration;

    fn view() -> TaskView {
        let t = chrono::DateTime::from_timestamp_millis(1_764_066_600_000).expect("valid");
        TaskView {
            id: TaskId::from_string("t1"),
            status: TaskStatus::Working,
            status_message: None,
            created_at: t,
            last_updated_at: t,
            ttl: Some(Duration::from_secs(60)),
            poll_interval: Some(Duration::from_millis(500)),
            tool_error: false,
        }
    }

    #[test]
    fn cacheable_results_carry_the_cache_hints_and_keep_given_ones() {
        let v = cacheable(json!({"tools": []}));
        assert_eq!(v["resultType"], "complete");
        assert_eq!(v["ttlMs"], 0);
        assert_eq!(v["cacheScope"], "private");
        let given = cacheable(json!({"prompts": [], "ttlMs": 5000, "cacheScope": "public"}));
        assert_eq!(given["ttlMs"], 5000);
        assert_eq!(given["cacheScope"], "public");
    }

    #[test]
    fn create_result_is_flat_with_renamed_fields_and_nothing_else() {
        let v = create_task_result(&view());
        assert_eq!(v["resultType"], "task");
        assert_eq!(v["ttlMs"], 60000);
        assert_eq!(v["pollIntervalMs"], 500);
        for absent in [
            "task",
            "ttl",
            "pollInterval",
            "result",
            "error",
            "inputRequests",
            "requestState",
            "statusMessage",
        ] {
            assert!(v.get(absent).is_none(), "{absent} must be absent");
        }
    }

    #[test]
    fn parse_reads_back_what_is_rendered() {
        let mut w = view();
        w.status = TaskStatus::Completed;
        w.tool_error = true;
        w.status_message = Some("done".into());
        let v = detailed_task(&w, Detail::Result(json!({"content": [], "isError": true})));
        assert_eq!(parse_task(&v), Ok(w.clone()));
        assert!(matches!(parse_detail(&v), Detail::Result(r) if r["isError"] == true));
        let created = create_task_result(&view());
        assert_eq!(parse_task(&created), Ok(view()));
        assert_eq!(parse_detail(&created), Detail::None);
        let mut bad = created;
        bad["pollIntervalMs"] = json!("soon");
        assert!(parse_task(&bad).unwrap_err().contains("pollIntervalMs"));
    }

    #[test]
    fn a_tool_error_is_completed_on_this_wire() {
        let mut w = view();
        w.status = TaskStatus::Completed;
        w.tool_error = true;
        let v = detailed_task(&w, Detail::Result(json!({"content": [], "isError": true})));
        assert_eq!(v["status"], "completed");
        assert_eq!(v["result"]["isError"], true);
        assert_eq!(v["resultType"], "complete");
    }

    #[test]
    fn extension_declaration_is_read_from_capabilities() {
        assert!(declares_extension(
            &json!({"extensions": {EXTENSION_ID: {}}})
        ));
        assert!(!declares_extension(&json!({"extensions": {}})));
        assert!(!declares_extension(&json!({})));
        assert_eq!(complete(json!({"content": []}))["resultType"], "complete");
    }
}
