//! Unit tests of `task`.
use super::*;
use mcp_tasks_protocol::codec::RELATED_TASK_META;
use serde_json::json;

#[test]
fn outcome_text_and_status() {
    let o = TaskOutcome {
        task: None,
        result: Some(
            json!({"content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]}),
        ),
        error: None,
    };
    assert_eq!(o.text().as_deref(), Some("a\nb"));
    assert!(o.succeeded());
    let e = TaskOutcome {
        task: None,
        result: Some(json!({"content": [], "isError": true})),
        error: None,
    };
    assert!(e.is_tool_error());
    assert!(!e.succeeded());
    assert_eq!(e.text(), None);
}

#[test]
fn task_errors_are_told_from_refusals() {
    let tagged = RpcError::new(-32603, "boom")
        .with_data(json!({"_meta": {RELATED_TASK_META: {"taskId": "t"}}}));
    assert!(is_task_error(&tagged));
    assert!(!is_task_error(&RpcError::invalid_params("unknown task")));
}
