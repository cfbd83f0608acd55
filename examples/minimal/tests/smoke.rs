//! Runs the minimal example as a real process over stdio and drives it with the
//! mcp-tasks client: a task that completes, and one that is cancelled.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_client::{Client, Target, TaskOptions, TaskStatus};
use serde_json::json;

#[tokio::test]
async fn countdown_runs_as_a_task_and_can_be_cancelled() {
    let target = Target::Stdio {
        program: env!("CARGO_BIN_EXE_example-minimal").into(),
        args: vec![],
    };
    let client = Client::connect(&target).await.expect("connect");
    let tools = client.tools().await.unwrap();
    let countdown = tools
        .iter()
        .find(|t| t.name == "countdown")
        .expect("countdown listed");
    assert_eq!(countdown.input_schema["required"], json!(["from"]));

    let done = client
        .call_tool_as_task("countdown", json!({"from": 1}), TaskOptions::default())
        .await
        .unwrap();
    assert!(done.task_id().is_some(), "a task was created");
    let outcome = done.result().await.unwrap();
    assert_eq!(outcome.status(), TaskStatus::Completed);
    assert_eq!(outcome.text().as_deref(), Some("liftoff after 1 s"));

    let long = client
        .call_tool_as_task("countdown", json!({"from": 600}), TaskOptions::default())
        .await
        .unwrap();
    let id = long.task_id().cloned().unwrap();
    let view = client.cancel(&id).await.unwrap();
    assert_eq!(view.status, TaskStatus::Cancelled);

    let err = client
        .call_tool("countdown", json!({"from": "soon"}))
        .await
        .expect_err("a string is not a number of seconds");
    assert_eq!(err.code(), Some(-32602));
    client.close().await;
}
