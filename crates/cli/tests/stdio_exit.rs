//! A stdio host is neither held nor misled (issue 43): when the host closes stdin while
//! a task waits for an answer, `serve --stdio` exits at once (a task that waits for an
//! answer cannot progress without its host, so the drain does not wait for it), and
//! the task stays `input_required` in the SQLite file for the next start; and `serve
//! --stdio` with approval rules refuses to start, since nobody could ever approve.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use chrono::Utc;
use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{SqliteStore, TaskStore};
use serde_json::{json, Value};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

mod common;

use common::BIN;

/// The drain timeout the server is given: a test that waited for it would time out.
const DRAIN: &str = "600s";
/// How long the server may take to exit once stdin closed: far below [`DRAIN`].
const EXIT_BOUND: Duration = Duration::from_secs(20);

#[tokio::test]
async fn closing_stdin_while_a_task_waits_for_an_answer_exits_at_once_and_keeps_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let mut child = Command::new(BIN)
        .args(["serve", "--stdio", "--demo", "--log", "warn"])
        .args(["--database", &db, "--drain-timeout", DRAIN])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start mcp-tasks");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Reads messages until the response with `id`.
    async fn response(
        lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
        id: i64,
    ) -> Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("the server answered in time")
                .unwrap()
                .expect("the server still runs");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id && v.get("method").is_none() {
                return v;
            }
        }
    }
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "stdio-exit", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "confirm_delete", "arguments": {"filename": "x"}, "task": {}}}),
    ] {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    stdin.flush().await.unwrap();
    assert_eq!(
        response(&mut lines, 1).await["result"]["protocolVersion"],
        "2025-11-25"
    );
    let created = response(&mut lines, 2).await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_string();
    // Until the task waits for its answer (the host never gives it).
    let mut status = String::new();
    for n in 3..200 {
        let get =
            json!({"jsonrpc": "2.0", "id": n, "method": "tasks/get", "params": {"taskId": id}});
        stdin
            .write_all(format!("{get}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
        status = response(&mut lines, n).await["result"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if status == "input_required" {
            break;
        }
    }
    assert_eq!(status, "input_required");

    // The host goes away.
    drop(stdin);
    let closed = Instant::now();
    let exit = tokio::time::timeout(EXIT_BOUND, child.wait())
        .await
        .unwrap_or_else(|_| panic!("the server held the host's exit for more than {EXIT_BOUND:?} (its drain timeout is {DRAIN})"))
        .unwrap();
    assert!(exit.success(), "{exit:?}");
    assert!(closed.elapsed() < EXIT_BOUND);

    // The task waits on in the file, for the next start.
    let store = SqliteStore::open(&db).await.unwrap();
    let record = store
        .get(&TaskId::from_string(&id), Utc::now())
        .await
        .unwrap()
        .expect("the task is still in the store");
    assert_eq!(record.status, TaskStatus::InputRequired, "{record:?}");
}

#[tokio::test]
async fn serve_stdio_with_approval_rules_refuses_to_start_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("rules.toml");
    std::fs::write(
        &config,
        "[[approval]]\ntool = \"deploy\"\napprovers = [\"alice\"]\n",
    )
    .unwrap();
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        Command::new(BIN)
            .args(["serve", "--stdio", "--demo", "--database", "memory:"])
            .args(["--config", config.to_str().unwrap()])
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("the server refused in time")
    .unwrap();
    assert!(!out.status.success(), "started: {out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for told in [
        "[[approval]] rules",
        "over --stdio nobody can approve",
        "Serve over HTTP",
        "or remove the [[approval]] rules",
    ] {
        assert!(stderr.contains(told), "'{told}' missing: {stderr}");
    }
}
