//! Every task message the 2025-11-25 codec emits, validated against a JSON Schema of the
//! spec's task messages (`tests/schema/tasks-2025-11-25.json`), plus golden output.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use chrono::TimeZone;
use mcp_tasks_protocol::codec::v2025_11_25 as codec;
use mcp_tasks_protocol::jsonrpc::RpcError;
use mcp_tasks_protocol::{TaskId, TaskStatus, TaskView};
use serde_json::{json, Value};
use std::time::Duration;

fn schema_for(def: &str) -> jsonschema::Validator {
    let doc: Value = serde_json::from_str(include_str!("schema/tasks-2025-11-25.json")).unwrap();
    let mut root = doc.clone();
    root["$ref"] = json!(format!("#/$defs/{def}"));
    jsonschema::options()
        .should_validate_formats(true)
        .build(&root)
        .unwrap()
}

fn assert_valid(def: &str, v: &Value) {
    let schema = schema_for(def);
    let errors: Vec<String> = schema
        .iter_errors(v)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{def} invalid: {errors:?}\n{v:#}");
}

fn assert_invalid(def: &str, v: &Value) {
    assert!(!schema_for(def).is_valid(v), "{def} should reject {v}");
}

fn views() -> Vec<TaskView> {
    let t = chrono::Utc
        .with_ymd_and_hms(2025, 11, 25, 10, 30, 0)
        .single()
        .unwrap();
    let base = TaskView {
        id: TaskId::from_string("786512e2-9e0d-44bd-8f29-789f320fe840"),
        status: TaskStatus::Working,
        status_message: None,
        created_at: t,
        last_updated_at: t + chrono::Duration::milliseconds(1500),
        ttl: Some(Duration::from_secs(60)),
        poll_interval: Some(Duration::from_secs(5)),
        tool_error: false,
    };
    let mut all = Vec::new();
    for status in TaskStatus::ALL {
        for (msg, ttl, tool_error) in [
            (None, Some(Duration::from_secs(60)), false),
            (Some("step 2"), None, true),
        ] {
            all.push(TaskView {
                status,
                status_message: msg.map(String::from),
                ttl,
                tool_error: tool_error && status == TaskStatus::Completed,
                ..base.clone()
            });
        }
    }
    all
}

#[test]
fn every_task_message_matches_the_schema() {
    for v in views() {
        assert_valid("Task", &codec::task(&v));
        assert_valid("CreateTaskResult", &codec::create_task_result(&v, None));
        assert_valid(
            "CreateTaskResult",
            &codec::create_task_result(&v, Some("started")),
        );
        assert_valid("GetTaskResult", &codec::task_result(&v));
        assert_valid("CancelTaskResult", &codec::task_result(&v));
        assert_valid(
            "TaskStatusNotificationParams",
            &codec::status_notification_params(&v),
        );
    }
    let all = views();
    assert_valid(
        "ListTasksResult",
        &codec::list_result(&all, Some("cursor-1")),
    );
    assert_valid("ListTasksResult", &codec::list_result(&[], None));
    let result = json!({"content": [{"type": "text", "text": "done"}], "isError": false});
    let tagged = codec::with_related_task(result, "786512e2");
    assert_valid("GetTaskPayloadResult", &tagged);
    assert_valid("CallToolResult", &tagged);
    let err = codec::error_with_related_task(RpcError::new(-32603, "boom"), "786512e2");
    assert_valid("RelatedTaskMeta", &err.data.unwrap()["_meta"]);
}

#[test]
fn the_schema_rejects_what_the_spec_forbids() {
    let good = codec::task(&views()[0]);
    for key in ["taskId", "status", "createdAt", "lastUpdatedAt", "ttl"] {
        let mut bad = good.clone();
        bad.as_object_mut().unwrap().remove(key);
        assert_invalid("Task", &bad);
    }
    let mut bad = good.clone();
    bad["ttl"] = json!(1.5);
    assert_invalid("Task", &bad);
    let mut bad = good.clone();
    bad["status"] = json!("done");
    assert_invalid("Task", &bad);
    let mut bad = good.clone();
    bad["createdAt"] = json!("yesterday");
    assert_invalid("Task", &bad);
    let mut bad = good;
    bad["statusMessage"] = Value::Null;
    assert_invalid("Task", &bad);
}

#[test]
fn golden_create_task_result() {
    let v = &views()[0];
    assert_eq!(
        codec::create_task_result(v, None),
        json!({"task": {
            "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
            "status": "working",
            "createdAt": "2025-11-25T10:30:00.000Z",
            "lastUpdatedAt": "2025-11-25T10:30:01.500Z",
            "ttl": 60000,
            "pollInterval": 5000
        }})
    );
}

#[test]
fn golden_failed_tool_error_notification() {
    let v = views().into_iter().find(|v| v.tool_error).unwrap();
    assert_eq!(
        codec::status_notification_params(&v),
        json!({
            "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
            "status": "failed",
            "statusMessage": "step 2",
            "createdAt": "2025-11-25T10:30:00.000Z",
            "lastUpdatedAt": "2025-11-25T10:30:01.500Z",
            "ttl": null,
            "pollInterval": 5000
        })
    );
}
