//! Long tools in hosts that speak no tasks, through the real binary: `mcp-tasks wrap` in
//! front of a server that knows nothing of the budget (here another mcp-tasks, run
//! with the budget off, as any plain MCP server behaves) answers a long plain call
//! with a handle before its budget ends, and the task tools reach the task: wait,
//! status, list, cancel; a question the client cannot show waits for `task_answer`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::rpc::Session;
use common::{spawn_listening, BIN};
use serde_json::{json, Value};

const RT: &str = "io.modelcontextprotocol/related-task";

/// `wrap --sync-budget 1s` on a free port, in front of a demo server that runs every
/// plain call inline (its own budget off).
fn wrapped() -> common::Server {
    spawn_listening(&[
        "wrap",
        "--listen",
        "127.0.0.1:0",
        "--database",
        "memory:",
        "--sync-budget",
        "1s",
        "--",
        BIN,
        "serve",
        "--stdio",
        "--demo",
        "--sync-budget",
        "0s",
        "--database",
        "memory:",
        "--log",
        "warn",
    ])
}

async fn call(s: &Session, name: &str, arguments: Value) -> Value {
    let r = s
        .rpc("tools/call", json!({"name": name, "arguments": arguments}))
        .await;
    r.get("result")
        .cloned()
        .unwrap_or_else(|| panic!("{name}: {r}"))
}

#[tokio::test]
async fn a_long_upstream_call_through_wrap_becomes_a_task_the_task_tools_reach() {
    let server = wrapped();
    let s = Session::open(&server.url).await;
    let tools = s.rpc("tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"slow_compute") && names.contains(&"task_wait"),
        "{names:?}"
    );

    // slow_compute has an outputSchema, which a client offered the task tools is not
    // shown: the handle is then no error, with the task's state as structured content
    // (the SDK clients accept it: tests/interop/hosts.*).
    let slow = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "slow_compute")
        .unwrap();
    assert!(slow.get("outputSchema").is_none(), "{slow}");
    let r = call(&s, "slow_compute", json!({"seconds": 4})).await;
    let id = r["_meta"][RT]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_string();
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["taskId"], id.as_str(), "{r}");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Not an error"),
        "{r}"
    );

    let listed = call(&s, "task_list", json!({})).await;
    assert!(
        listed["structuredContent"]["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["taskId"] == id.as_str()),
        "{listed}"
    );
    let mut done = Value::Null;
    for _ in 0..60 {
        let r = call(&s, "task_wait", json!({"taskId": id})).await;
        if r["_meta"][RT]["taskId"] == id.as_str() {
            done = r;
            break;
        }
        assert_eq!(r["structuredContent"]["status"], "working", "{r}");
    }
    assert_eq!(
        done["structuredContent"]["seconds"], 4.0,
        "the real result: {done}"
    );

    // A question the client cannot show (it declared no elicitation) waits for
    // task_answer; the task then completes.
    let r = call(&s, "confirm_delete", json!({"filename": "notes.txt"})).await;
    let id = r["_meta"][RT]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_string();
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("waiting for an answer"),
        "{r}"
    );
    let status = call(&s, "task_status", json!({"taskId": id})).await;
    let question = &status["structuredContent"]["questions"][0];
    assert_eq!(
        question["requestedSchema"]["properties"]["confirm"]["type"], "boolean",
        "{status}"
    );
    let key = question["key"].as_str().unwrap().to_string();
    let answered = call(
        &s,
        "task_answer",
        json!({"taskId": id, "answers": {key: {"confirm": true}}}),
    )
    .await;
    assert_eq!(answered["isError"], false, "{answered}");
    let done = call(&s, "task_wait", json!({"taskId": id})).await;
    assert_eq!(
        done["structuredContent"],
        json!({"filename": "notes.txt", "deleted": true}),
        "{done}"
    );

    // Cancelled through task_cancel.
    let r = call(&s, "slow_compute", json!({"seconds": 600})).await;
    let id = r["_meta"][RT]["taskId"].as_str().unwrap().to_string();
    let cancelled = call(&s, "task_cancel", json!({"taskId": id})).await;
    assert_eq!(
        cancelled["structuredContent"]["status"], "cancelled",
        "{cancelled}"
    );
}

#[test]
fn call_no_task_follows_the_task_a_long_plain_call_became() {
    let server = spawn_listening(&[
        "serve",
        "--demo",
        "--listen",
        "127.0.0.1:0",
        "--database",
        "memory:",
        "--sync-budget",
        "500ms",
    ]);
    for wire in ["2025-11-25", "2026-07-28"] {
        let out = std::process::Command::new(BIN)
            .args([
                "call",
                &server.url,
                "slow_compute",
                "--arg",
                "seconds=2",
                "--no-task",
                "--wire",
                wire,
            ])
            .env("MCP_TASKS_STATE_DIR", std::env::temp_dir())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{wire}: {stdout}\n{stderr}");
        assert!(
            stdout.contains("finished after 2 s"),
            "the real result ({wire}): {stdout}\n{stderr}"
        );
        assert!(
            stderr.contains("outlived the server's sync budget"),
            "{wire}: {stderr}"
        );
        assert!(
            !stdout.contains("Not an error"),
            "not the handle ({wire}): {stdout}"
        );
    }
}
