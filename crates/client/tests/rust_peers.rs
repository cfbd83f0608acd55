//! The client against task servers written with other Rust MCP libraries, built from
//! `tests/interop/rmcp-server` (rmcp 3.11, Tasks extension wire only) and
//! `tests/interop/tower-mcp-server` (tower-mcp 0.25, both wires at one URL). Each
//! serves the same three tools: `slow_steps` (status messages `step I of N`),
//! `ask_name` (an elicitation mid-task) and `until_cancelled`.
//!
//! `tests/interop/run.sh` builds the servers and points `MCP_TASKS_INTEROP_RMCP_SERVER`
//! and `MCP_TASKS_INTEROP_TOWER_MCP_SERVER` at the binaries; without them each test
//! prints a notice and passes (the plain `cargo test --workspace` runs before the
//! peers are built). Each test starts its own server on a free loopback port.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_testkit::peers::{PeerServer, RustPeer, RMCP, TOWER_MCP};

use futures::StreamExt;
use mcp_tasks_client::{
    input, Client, ClientError, InputRequest, Target, TaskOptions, TaskStatus, TaskUpdate, Wire,
    WirePreference,
};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long any one task may take before the test fails.
const LIMIT: Duration = Duration::from_secs(30);

/// A client on `wire` whose elicitation handler answers `{name: "Ada"}` and records
/// every question it got.
async fn connect(
    server: &PeerServer,
    wire: WirePreference,
) -> (Client, Arc<Mutex<Vec<InputRequest>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&asked);
    let client = Client::builder()
        .wire(wire)
        .on_elicitation(move |q| {
            log.lock().unwrap().push(q.clone());
            async move { Ok(input::accept(json!({"name": "Ada"}))) }
        })
        .connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    (client, asked)
}

/// `slow_steps` runs as a task whose status messages count the steps, and completes
/// with its text.
async fn slow_task_reports_its_steps(peer: RustPeer, wire: WirePreference, expect: Wire) {
    let Some(server) = peer.start() else { return };
    let (client, _) = connect(&server, wire).await;
    assert_eq!(client.wire(), expect, "{}", peer.name);
    let mut task = client
        .call_tool_as_task(
            "slow_steps",
            json!({"steps": 3, "step_ms": 1500}),
            TaskOptions::default(),
        )
        .await
        .unwrap();
    let id = task.task_id().cloned().expect("the call became a task");
    let mut updates = task.updates();
    let seen = tokio::spawn(async move {
        let mut messages = Vec::new();
        let mut statuses = Vec::new();
        while let Some(u) = updates.next().await {
            if let TaskUpdate::Status(t) = u {
                statuses.push(t.status);
                messages.extend(t.status_message);
            }
        }
        (statuses, messages)
    });
    let outcome = tokio::time::timeout(LIMIT, task.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status(), TaskStatus::Completed, "{outcome:?}");
    assert_eq!(outcome.text().as_deref(), Some("done 3 steps"));
    let (statuses, messages) = seen.await.unwrap();
    assert_eq!(statuses.first(), Some(&TaskStatus::Working));
    assert_eq!(statuses.last(), Some(&TaskStatus::Completed));
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("step ") && m.ends_with(" of 3")),
        "status messages: {messages:?}"
    );
    assert_eq!(client.get(&id).await.unwrap().status, TaskStatus::Completed);
    client.close().await;
}

/// `ask_name` asks its question mid-task; the handler answers once and the tool greets
/// the answer.
async fn input_request_is_answered(peer: RustPeer, wire: WirePreference, expect: Wire) {
    let Some(server) = peer.start() else { return };
    let (client, asked) = connect(&server, wire).await;
    assert_eq!(client.wire(), expect, "{}", peer.name);
    let task = client
        .call_tool_as_task("ask_name", json!({}), TaskOptions::default())
        .await
        .unwrap();
    let id = task.task_id().cloned().expect("the call became a task");
    let outcome = tokio::time::timeout(LIMIT, task.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.text().as_deref(), Some("hello Ada"), "{outcome:?}");
    assert_eq!(outcome.status(), TaskStatus::Completed);
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "one question, one handler call: {asked:?}");
    assert_eq!(asked[0].message(), Some("What is your name?"));
    assert_eq!(asked[0].task_id.as_ref(), Some(&id));
    client.close().await;
}

/// `until_cancelled` ends `cancelled` after `tasks/cancel`.
async fn cancel_ends_the_task(peer: RustPeer, wire: WirePreference, expect: Wire) {
    let Some(server) = peer.start() else { return };
    let (client, _) = connect(&server, wire).await;
    assert_eq!(client.wire(), expect, "{}", peer.name);
    let task = client
        .call_tool_as_task("until_cancelled", json!({}), TaskOptions::default())
        .await
        .unwrap();
    let id = task.task_id().cloned().expect("the call became a task");
    // Both peers cancel cooperatively: the acknowledgement may still show `working`.
    let after = task.cancel().await.unwrap();
    assert!(
        matches!(after.status, TaskStatus::Working | TaskStatus::Cancelled),
        "{after:?}"
    );
    let outcome = tokio::time::timeout(LIMIT, task.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status(), TaskStatus::Cancelled, "{outcome:?}");
    assert_eq!(client.get(&id).await.unwrap().status, TaskStatus::Cancelled);
    client.close().await;
}

// ---------------------------------------------------------------- rmcp (extension only)

#[tokio::test]
async fn rmcp_auto_picks_the_extension_wire() {
    let Some(server) = RMCP.start() else { return };
    let (client, _) = connect(&server, WirePreference::Auto).await;
    assert_eq!(client.wire(), Wire::V2026_07_28);
    assert!(client.supports_tasks());
    let names: Vec<String> = client
        .tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["slow_steps", "ask_name", "until_cancelled"]);
    client.close().await;
}

/// rmcp 3.11 has tasks only as the extension: on 2025-11-25 it advertises no
/// `capabilities.tasks` and ignores `params.task`, and the client says so rather than
/// pretending a task ran.
#[tokio::test]
async fn rmcp_has_no_tasks_on_the_2025_wire() {
    let Some(server) = RMCP.start() else { return };
    let (client, _) = connect(&server, WirePreference::V2025_11_25).await;
    assert_eq!(client.wire(), Wire::V2025_11_25);
    assert!(!client.supports_tasks());
    let refused = client
        .call_tool_as_task("slow_steps", json!({"steps": 1}), TaskOptions::default())
        .await;
    assert!(
        matches!(refused, Err(ClientError::Unsupported(_))),
        "{:?}",
        refused.map(|t| t.task().cloned())
    );
    client.close().await;
}

#[tokio::test]
async fn rmcp_slow_task_reports_its_steps() {
    slow_task_reports_its_steps(RMCP, WirePreference::V2026_07_28, Wire::V2026_07_28).await;
}

#[tokio::test]
async fn rmcp_input_request_is_answered() {
    input_request_is_answered(RMCP, WirePreference::V2026_07_28, Wire::V2026_07_28).await;
}

#[tokio::test]
async fn rmcp_cancel_ends_the_task() {
    cancel_ends_the_task(RMCP, WirePreference::V2026_07_28, Wire::V2026_07_28).await;
}

// ---------------------------------------------------------------- tower-mcp (both wires)

#[tokio::test]
async fn tower_mcp_auto_picks_the_extension_wire() {
    let Some(server) = TOWER_MCP.start() else {
        return;
    };
    let (client, _) = connect(&server, WirePreference::Auto).await;
    assert_eq!(client.wire(), Wire::V2026_07_28);
    assert!(client.supports_tasks());
    client.close().await;
}

#[tokio::test]
async fn tower_mcp_slow_task_reports_its_steps_on_the_extension_wire() {
    slow_task_reports_its_steps(TOWER_MCP, WirePreference::V2026_07_28, Wire::V2026_07_28).await;
}

#[tokio::test]
async fn tower_mcp_input_request_is_answered_on_the_extension_wire() {
    input_request_is_answered(TOWER_MCP, WirePreference::V2026_07_28, Wire::V2026_07_28).await;
}

#[tokio::test]
async fn tower_mcp_cancel_ends_the_task_on_the_extension_wire() {
    cancel_ends_the_task(TOWER_MCP, WirePreference::V2026_07_28, Wire::V2026_07_28).await;
}

#[tokio::test]
async fn tower_mcp_slow_task_reports_its_steps_on_the_2025_wire() {
    slow_task_reports_its_steps(TOWER_MCP, WirePreference::V2025_11_25, Wire::V2025_11_25).await;
}

#[tokio::test]
async fn tower_mcp_cancel_ends_the_task_on_the_2025_wire() {
    cancel_ends_the_task(TOWER_MCP, WirePreference::V2025_11_25, Wire::V2025_11_25).await;
}
