//! Runs the example over stdio: the child's lines arrive as status messages and
//! progress, the result counts the steps, and cancelling stops the child.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::StreamExt;
use mcp_tasks_client::{Client, Target, TaskOptions, TaskStatus, TaskUpdate};
use serde_json::json;

fn target() -> Target {
    Target::Stdio {
        program: env!("CARGO_BIN_EXE_example-shell-status").into(),
        args: vec![],
    }
}

#[tokio::test]
async fn output_lines_become_status_and_progress() {
    let client = Client::connect(&target()).await.expect("connect");
    let mut handle = client
        .call_tool_as_task("build", json!({"steps": 4}), TaskOptions::default())
        .await
        .unwrap();
    let mut updates = handle.updates();
    let mut messages = Vec::new();
    let mut progress = Vec::new();
    while let Some(update) = updates.next().await {
        match update {
            TaskUpdate::Status(view) => {
                if let Some(m) = view.status_message {
                    messages.push(m);
                }
                if view.status.is_terminal() {
                    break;
                }
            }
            TaskUpdate::Progress(p) => progress.push(p.progress),
            _ => {}
        }
    }
    let outcome = handle.result().await.unwrap();
    assert_eq!(outcome.status(), TaskStatus::Completed);
    assert_eq!(outcome.text().as_deref(), Some("built in 4 steps"));
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("step ") && m.ends_with(" of 4")),
        "status messages came from the child's output: {messages:?}"
    );
    assert!(progress.contains(&4.0), "progress reached 4: {progress:?}");
    client.close().await;
}

#[tokio::test]
async fn cancelling_stops_the_child() {
    let client = Client::connect(&target()).await.expect("connect");
    let mut handle = client
        .call_tool_as_task("build", json!({"steps": 100}), TaskOptions::default())
        .await
        .unwrap();
    let id = handle.task_id().cloned().unwrap();
    // Cancel once the child runs: its first output line arrives as progress.
    let mut updates = handle.updates();
    loop {
        match updates.next().await {
            Some(TaskUpdate::Progress(_)) => break,
            Some(_) => {}
            None => panic!("the task's updates ended before the child printed a line"),
        }
    }
    drop(updates);
    let view = client.cancel(&id).await.unwrap();
    assert_eq!(view.status, TaskStatus::Cancelled);
    client.close().await;
}
