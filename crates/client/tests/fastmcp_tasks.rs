//! The client against a server written with FastMCP and `fastmcp-tasks` 4.1.4 (the
//! 2026-07-28 Tasks extension, SEP-2663, on a Docket `memory://` queue):
//! `tests/interop/fastmcp_tasks_server.py`, started per test on a free loopback port.
//!
//! Checks: `--wire auto` (the default) picks the extension; a task's status messages
//! arrive while it works; an input request (elicitation inside the task, answered with
//! `tasks/update`) reaches the handler once; cancel; a new client resumes a task by id.
//! Runs when `MCP_TASKS_INTEROP_FASTMCP_PYTHON` is set (`tests/interop/run.sh` sets
//! it), else prints a notice and passes.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use futures::StreamExt;
use mcp_tasks_client::{input, Client, Target, TaskOptions, TaskStatus, TaskUpdate, Updates, Wire};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_tasks_testkit::peers;

/// How long any one task here may take.
const LIMIT: Duration = Duration::from_secs(60);

/// Collects the status messages and statuses a task's updates carry, in order.
fn record(mut updates: Updates) -> tokio::task::JoinHandle<(Vec<String>, Vec<TaskStatus>)> {
    tokio::spawn(async move {
        let (mut messages, mut statuses) = (Vec::new(), Vec::new());
        while let Some(u) = updates.next().await {
            if let TaskUpdate::Status(t) = u {
                if let Some(m) = &t.status_message {
                    if messages.last() != Some(m) {
                        messages.push(m.clone());
                    }
                }
                if statuses.last() != Some(&t.status) {
                    statuses.push(t.status);
                }
            }
        }
        (messages, statuses)
    })
}

#[tokio::test]
async fn auto_picks_the_extension_and_a_task_reports_its_steps() {
    let Some(server) = peers::fastmcp_tasks() else {
        return;
    };
    let client = Client::connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    assert_eq!(
        client.wire(),
        Wire::V2026_07_28,
        "server/discover offers it"
    );
    assert!(client.supports_tasks());
    let info = client.server();
    assert_eq!(info.name.as_deref(), Some("fastmcp-tasks-interop"));

    let mut task = client
        .call_tool_as_task(
            "slow_steps",
            json!({"steps": 3, "step_ms": 600}),
            TaskOptions::default(),
        )
        .await
        .unwrap();
    let id = task.task_id().cloned().expect("the server made it a task");
    let seen = record(task.updates());
    let outcome = tokio::time::timeout(LIMIT, task.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status(), TaskStatus::Completed);
    assert_eq!(outcome.text().as_deref(), Some("done after 3 steps"));
    let (messages, statuses) = seen.await.unwrap();
    // Polled every 100 ms, 600 ms apart: each step's message is seen, in order.
    let steps: Vec<&String> = messages.iter().filter(|m| m.starts_with("step ")).collect();
    assert!(steps.len() >= 2, "status messages seen: {messages:?}");
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{messages:?}");
    assert_eq!(statuses.first(), Some(&TaskStatus::Working), "{statuses:?}");
    assert_eq!(
        statuses.last(),
        Some(&TaskStatus::Completed),
        "{statuses:?}"
    );
    assert_eq!(client.get(&id).await.unwrap().status, TaskStatus::Completed);
    client.close().await;
}

#[tokio::test]
async fn an_input_request_in_a_task_is_answered_by_the_handler() {
    let Some(server) = peers::fastmcp_tasks() else {
        return;
    };
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&asked);
    let client = Client::builder()
        .on_elicitation(move |q| {
            log.lock().unwrap().push(q.clone());
            async move {
                assert_eq!(
                    q.requested_schema().unwrap()["properties"]["name"]["type"],
                    "string"
                );
                Ok(input::accept(json!({"name": "Ada"})))
            }
        })
        .connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    let mut task = client
        .call_tool_as_task(
            "ask_name",
            json!({"greeting": "Hi"}),
            TaskOptions::default(),
        )
        .await
        .unwrap();
    let id = task.task_id().cloned().expect("a task");
    let seen = record(task.updates());
    let outcome = tokio::time::timeout(LIMIT, task.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.text().as_deref(), Some("Hi, Ada!"));
    let (_, statuses) = seen.await.unwrap();
    assert!(
        statuses.contains(&TaskStatus::InputRequired),
        "{statuses:?}"
    );
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "one question, one handler call");
    assert_eq!(asked[0].task_id.as_ref(), Some(&id));
    assert_eq!(asked[0].message(), Some("What is your name?"));

    // A declined question reaches the tool as such.
    let declining = Client::builder()
        .on_elicitation(|_| async { Ok(input::decline()) })
        .connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    let outcome = declining
        .call_tool_as_task("ask_name", json!({}), TaskOptions::default())
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert_eq!(outcome.text().as_deref(), Some("no name given"));
    client.close().await;
    declining.close().await;
}

#[tokio::test]
async fn cancel_ends_a_task_that_runs_until_cancelled() {
    let Some(server) = peers::fastmcp_tasks() else {
        return;
    };
    let client = Client::connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    let mut task = client
        .call_tool_as_task("run_until_cancelled", json!({}), TaskOptions::default())
        .await
        .unwrap();
    // Wait until it is seen ticking.
    let mut updates = task.updates();
    tokio::time::timeout(LIMIT, async {
        while let Some(u) = updates.next().await {
            if let TaskUpdate::Status(t) = u {
                if t.status_message.is_some_and(|m| m.starts_with("tick ")) {
                    return;
                }
            }
        }
        panic!("updates ended before a tick");
    })
    .await
    .unwrap();
    let after = task.cancel().await.unwrap();
    assert_eq!(after.status, TaskStatus::Cancelled);
    let outcome = tokio::time::timeout(LIMIT, task.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status(), TaskStatus::Cancelled);
    client.close().await;
}

#[tokio::test]
async fn a_new_client_resumes_a_task_by_id() {
    let Some(server) = peers::fastmcp_tasks() else {
        return;
    };
    let target = Target::Http(server.url.clone());
    let first = Client::connect(&target).await.unwrap();
    let task = first
        .call_tool_as_task(
            "slow_steps",
            json!({"steps": 2, "step_ms": 300}),
            TaskOptions::default(),
        )
        .await
        .unwrap();
    let id = task.task_id().cloned().unwrap();
    drop(task);
    first.close().await;

    // Stateless requests: no session to rejoin, the id is enough.
    let second = Client::connect(&target).await.unwrap();
    assert_eq!(second.wire(), Wire::V2026_07_28);
    let outcome = tokio::time::timeout(LIMIT, second.resume(&id).await.unwrap().result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.text().as_deref(), Some("done after 2 steps"));
    let unknown = second
        .get(&mcp_tasks_client::TaskId::from_string("no-such-task"))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Some(-32602), "{unknown}");
    second.close().await;
}
