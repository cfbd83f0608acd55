//! The 2025-11-25 task codec.
//!
//! 1. The input as JSON (or a value built from it) through `task_metadata` and
//!    `parse_task`, as a `params`, as a `params.task` and as a `tasks/list` entry. A task
//!    that parses renders and parses back to itself (times cut to milliseconds).
//! 2. The input as a `TaskView` (via `arbitrary`): render → text → parse gives the view
//!    back as this wire shows it, through every renderer that carries a task.

#![no_main]

use arbitrary::Unstructured;
use chrono::{DateTime, Timelike, Utc};
use libfuzzer_sys::fuzz_target;
use mcp_tasks_fuzz::{arb_json, arb_view, json_from_bytes};
use mcp_tasks_protocol::codec::v2025_11_25 as codec;
use mcp_tasks_protocol::codec::RELATED_TASK_META;
use mcp_tasks_protocol::error_code::INVALID_PARAMS;
use mcp_tasks_protocol::jsonrpc::RpcError;
use mcp_tasks_protocol::task::{TaskStatus, TaskView};
use serde_json::{json, Value};

fn to_millis(t: DateTime<Utc>) -> DateTime<Utc> {
    let nanos = t.nanosecond() / 1_000_000 * 1_000_000;
    t.with_nanosecond(nanos).unwrap_or(t)
}

/// What a client reads back from this wire for `view`.
fn as_shown(view: &TaskView) -> TaskView {
    TaskView {
        status: codec::wire_status(view),
        tool_error: false,
        ..view.clone()
    }
}

fn through_text(v: &Value) -> Value {
    let text = serde_json::to_string(v).expect("a rendered task serializes");
    serde_json::from_str(&text).expect("a rendered task parses as JSON")
}

fn check_metadata(params: &Value) {
    match codec::task_metadata(params) {
        Ok(Some(meta)) => {
            let t = params.get("task").expect("metadata came from params.task");
            assert!(t.is_object());
            // Any non-negative number reads, cut to whole milliseconds.
            let expected = t
                .get("ttl")
                .filter(|v| !v.is_null())
                .and_then(mcp_tasks_protocol::codec::millis_from_json)
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
            assert_eq!(meta.ttl, expected);
            let _ = meta.ttl();
        }
        Ok(None) => assert!(params.get("task").is_none_or(Value::is_null)),
        Err(e) => assert_eq!(e.code, INVALID_PARAMS, "{e}"),
    }
}

fn check_parse(v: &Value) {
    let Ok(view) = codec::parse_task(v) else {
        return;
    };
    assert!(!view.tool_error);
    let expected = TaskView {
        created_at: to_millis(view.created_at),
        last_updated_at: to_millis(view.last_updated_at),
        ..view.clone()
    };
    let again = codec::parse_task(&through_text(&codec::task(&view)));
    assert_eq!(again, Ok(expected), "parse → render → parse changed {v}");
}

fn check_view(view: &TaskView, extra: &Value, immediate: Option<&str>) {
    let shown = as_shown(view);
    let renders = [
        codec::task(view),
        codec::task_result(view),
        codec::status_notification_params(view),
        codec::create_task_result(view, immediate)["task"].clone(),
    ];
    for r in renders {
        assert_eq!(
            codec::parse_task(&through_text(&r)),
            Ok(shown.clone()),
            "render → parse of {view:?} via {r}"
        );
    }
    let created = codec::create_task_result(view, immediate);
    match immediate {
        Some(text) => assert_eq!(
            created["_meta"]["io.modelcontextprotocol/model-immediate-response"],
            json!(text)
        ),
        None => assert!(created.get("_meta").is_none()),
    }
    let list = codec::list_result(std::slice::from_ref(view), immediate);
    assert_eq!(codec::parse_task(&list["tasks"][0]), Ok(shown));
    assert_eq!(list.get("nextCursor").and_then(Value::as_str), immediate);

    let id = view.id.as_str();
    let merged = codec::with_related_task(extra.clone(), id);
    assert_eq!(merged["_meta"][RELATED_TASK_META]["taskId"], json!(id));
    if let Some(m) = extra.get("_meta").and_then(Value::as_object) {
        for (k, v) in m.iter().filter(|(k, _)| *k != RELATED_TASK_META) {
            assert_eq!(&merged["_meta"][k], v, "with_related_task dropped _meta.{k}");
        }
    }
    let err = RpcError::new(-1, "x");
    let err = if extra.is_null() { err } else { err.with_data(extra.clone()) };
    let err = codec::error_with_related_task(err, id);
    let data = err.data.as_ref().expect("data is set");
    assert_eq!(data["_meta"][RELATED_TASK_META]["taskId"], json!(id));
    assert_eq!(codec::related_task(id)[RELATED_TASK_META]["taskId"], json!(id));
}

fuzz_target!(|data: &[u8]| {
    let value = json_from_bytes(data);
    check_metadata(&value);
    check_metadata(&json!({ "task": value }));
    check_parse(&value);
    if let Some(tasks) = value.get("tasks").and_then(Value::as_array) {
        tasks.iter().for_each(check_parse);
    }
    if let Some(task) = value.get("task") {
        check_parse(task);
    }

    let mut u = Unstructured::new(data);
    let Ok(view) = arb_view(&mut u) else {
        return;
    };
    let extra = arb_json(&mut u, 3).unwrap_or(Value::Null);
    let immediate: Option<String> = u.arbitrary().unwrap_or(None);
    check_view(&view, &extra, immediate.as_deref());
    for status in TaskStatus::ALL {
        let v = TaskView {
            status,
            ..view.clone()
        };
        assert_eq!(codec::parse_task(&codec::task(&v)), Ok(as_shown(&v)));
    }
});
