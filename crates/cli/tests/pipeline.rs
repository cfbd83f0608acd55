//! The demo tool `pipeline` with the real binary on SQLite, over the Tasks extension
//! wire: its result and its ledger (`MCP_TASKS_DEMO_LEDGER`), and a `kill -9` in the
//! middle of a step after which the next start goes on from the journal (the steps
//! recorded before the kill never run again; only the one in flight may).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

mod common;

use common::{spawn_listening_with_env, Server};
use mcp_tasks_testkit::{eventually, WAIT};

/// Short enough that a restarted process takes the killed one's task over soon even
/// without a liveness check of its own.
const TEST_LEASE: &str = "1s";

fn start(db: &Path, ledger: &Path) -> Server {
    let database = format!("sqlite://{}", db.display());
    spawn_listening_with_env(
        &[
            "serve",
            "--demo",
            "--log",
            "warn",
            "--listen",
            "127.0.0.1:0",
            "--database",
            &database,
            "--lease-ttl",
            TEST_LEASE,
        ],
        &[("MCP_TASKS_DEMO_LEDGER", ledger.to_str().unwrap())],
    )
}

/// One stateless 2026-07-28 request declaring the tasks extension and elicitation.
async fn rpc(url: &str, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}},
            "elicitation": {"form": {}}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "pipeline-test", "version": "0"}
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let reply: Value = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(reply.get("error").is_none(), "{method}: {reply}");
    reply["result"].clone()
}

async fn start_pipeline(url: &str, args: Value) -> String {
    let r = rpc(
        url,
        "tools/call",
        json!({"name": "pipeline", "arguments": args}),
    )
    .await;
    assert_eq!(r["resultType"], "task", "{r}");
    r["taskId"].as_str().unwrap().to_string()
}

/// `tasks/get` until `done(task)` holds (bounded by `within`); the task then.
async fn wait_for(url: &str, id: &str, within: Duration, done: impl Fn(&Value) -> bool) -> Value {
    eventually(within, || async {
        let task = rpc(url, "tasks/get", json!({"taskId": id})).await;
        done(&task).then_some(task)
    })
    .await
}

/// The ledger's lines of task `id`, as (step, attempt).
fn ledger(path: &Path, id: &str) -> Vec<(u32, u32)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut parts = l.split(' ');
            (parts.next()? == id).then_some(())?;
            Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
        })
        .collect()
}

#[tokio::test]
async fn pipeline_runs_its_steps_asks_once_and_reports_them() {
    let dir = tempfile::tempdir().unwrap();
    let ledger_path = dir.path().join("ledger.txt");
    let server = start(&dir.path().join("tasks.db"), &ledger_path);
    let id = start_pipeline(
        &server.url,
        json!({"steps": 3, "step_seconds": 0, "ask_after": 2}),
    )
    .await;
    let asking = wait_for(&server.url, &id, WAIT, |t| t["status"] == "input_required").await;
    let (key, question) = asking["inputRequests"]
        .as_object()
        .and_then(|q| q.iter().next())
        .expect("one open question");
    assert_eq!(
        question["params"]["message"],
        "Approve the pipeline after step 2/3?"
    );
    rpc(
        &server.url,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"approve": true}}}}),
    )
    .await;
    let done = wait_for(&server.url, &id, WAIT, |t| t["status"] == "completed").await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"completed_steps": 3, "attempts": 1, "approved": true}),
        "{done}"
    );
    assert_eq!(ledger(&ledger_path, &id), vec![(1, 1), (2, 1), (3, 1)]);
}

#[tokio::test]
async fn a_pipeline_killed_mid_step_goes_on_from_its_journal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let ledger_path = dir.path().join("ledger.txt");
    let mut first = start(&db, &ledger_path);
    let id = start_pipeline(&first.url, json!({"steps": 4, "step_seconds": 1})).await;
    // Kill while step 2 runs: step 1 is recorded by then (its body ended).
    eventually(WAIT, || async {
        ledger(&ledger_path, &id).contains(&(2, 1))
    })
    .await;
    first.child.kill().unwrap(); // SIGKILL: no shutdown code runs
    first.child.wait().unwrap();

    let second = start(&db, &ledger_path);
    let done = wait_for(&second.url, &id, WAIT * 3, |t| {
        matches!(
            t["status"].as_str(),
            Some("completed" | "failed" | "cancelled")
        )
    })
    .await;
    let content = &done["result"]["structuredContent"];
    assert_eq!(content["completed_steps"], 4, "{done}");
    assert_eq!(content["attempts"], 2, "{done}");
    let lines = ledger(&ledger_path, &id);
    // Step 1 ran once; step 2 (in flight at the kill) at most twice; 3 and 4 once, in
    // the second attempt.
    let runs = |step: u32| lines.iter().filter(|(s, _)| *s == step).count();
    assert_eq!(runs(1), 1, "{lines:?}");
    assert!((1..=2).contains(&runs(2)), "{lines:?}");
    assert_eq!(runs(3), 1, "{lines:?}");
    assert_eq!(runs(4), 1, "{lines:?}");
    assert!(
        lines.contains(&(3, 2)) && lines.contains(&(4, 2)),
        "{lines:?}"
    );
}

/// A question first asked in a later attempt (the process died before reaching it) is
/// asked of the client that created the task, which declared elicitation. (A re-run
/// does not know the creating request's capabilities, which are not stored with the
/// task: it asks rather than refuses.)
#[tokio::test]
async fn a_pipeline_killed_before_its_question_asks_it_in_the_next_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let ledger_path = dir.path().join("ledger.txt");
    let mut first = start(&db, &ledger_path);
    let id = start_pipeline(
        &first.url,
        json!({"steps": 3, "step_seconds": 1, "ask_after": 2}),
    )
    .await;
    eventually(WAIT, || async {
        ledger(&ledger_path, &id).contains(&(1, 1))
    })
    .await;
    first.child.kill().unwrap(); // SIGKILL, during step 1
    first.child.wait().unwrap();

    let second = start(&db, &ledger_path);
    let asking = wait_for(&second.url, &id, WAIT * 3, |t| t["status"] != "working").await;
    assert_eq!(asking["status"], "input_required", "{asking}");
    let key = asking["inputRequests"]
        .as_object()
        .and_then(|q| q.keys().next().cloned())
        .expect("one open question");
    rpc(
        &second.url,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"approve": true}}}}),
    )
    .await;
    let done = wait_for(&second.url, &id, WAIT, |t| t["status"] == "completed").await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"completed_steps": 3, "attempts": 2, "approved": true}),
        "{done}"
    );
}
