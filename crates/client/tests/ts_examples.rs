//! The client against servers nobody here wrote: the TypeScript SDK's example servers
//! (`@modelcontextprotocol/sdk` 1.32.2), bound to 127.0.0.1 on a free port.
//!
//! - `simpleStreamableHttp.js`, tool `delay`: tasks, resume, cancel.
//! - `simpleTaskInteractive.js`, tools `confirm_delete` (elicitation) and `write_haiku`
//!   (sampling): questions delivered while `tasks/result` is held open.
//!
//! Both examples are HTTP-only. `tests/interop/run.sh` installs the SDK into
//! `target/interop/node` and runs this file; without that folder (or `node`) each test
//! prints a notice and passes, except under `CI`, where that is a failure.
//! Each test starts its own server: `simpleStreamableHttp.js` dies some seconds after
//! one of its tasks is cancelled, and both keep tasks per session.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use futures::StreamExt;
use mcp_tasks_client::{
    input, Client, ClientError, Target, TaskOptions, TaskOutcome, TaskStatus, TaskSupport,
    TaskUpdate, Wire,
};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SDK_VERSION: &str = "1.32.2";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The installed SDK's example server folder, or `None` (with a notice) when the
/// interop install is missing.
fn examples() -> Option<PathBuf> {
    let node = std::env::var_os("MCP_TASKS_INTEROP_NODE")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/interop/node"));
    let sdk = node.join("node_modules/@modelcontextprotocol/sdk");
    let version = std::fs::read_to_string(sdk.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["version"].as_str().map(str::to_string));
    let node_ok = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let problem = match (version.as_deref(), node_ok) {
        (_, false) => Some("node is not on PATH".to_string()),
        (None, _) => Some(format!("no TypeScript SDK under {}", node.display())),
        (Some(v), _) if v != SDK_VERSION => Some(format!(
            "TypeScript SDK {v} installed, {SDK_VERSION} expected"
        )),
        _ => None,
    };
    match problem {
        None => Some(sdk.join("dist/esm/examples/server")),
        Some(p) if std::env::var_os("CI").is_some() => {
            panic!("{p}: run tests/interop/run.sh, which installs it")
        }
        Some(p) => {
            eprintln!(
                "skipping TypeScript example server test: {p} (tests/interop/run.sh installs it)"
            );
            None
        }
    }
}

/// A running example server, killed when dropped.
struct TsServer {
    child: Child,
    url: String,
}

impl Drop for TsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `script` with its port variable set to 0, bound to 127.0.0.1.
fn start(dir: &Path, script: &str, port_var: &str) -> TsServer {
    let mut child = Command::new("node")
        .arg("-r")
        .arg(root().join("tests/interop/loopback.cjs"))
        .arg(dir.join(script))
        .env(port_var, "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start node");
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("{script} exited before listening"))
            .unwrap();
        if let Some(rest) = line.strip_prefix("loopback: listening on ") {
            break format!("{}/mcp", rest.trim());
        }
    };
    std::thread::spawn(move || for _ in lines {});
    TsServer { child, url }
}

fn target(s: &TsServer) -> Target {
    Target::Http(s.url.clone())
}

/// Calls `tool` as a task and waits for its outcome.
async fn run_task(client: &Client, tool: &str, args: Value) -> TaskOutcome {
    client
        .call_tool_as_task(tool, args, TaskOptions::default())
        .await
        .unwrap()
        .result()
        .await
        .unwrap()
}

#[tokio::test]
async fn delay_runs_as_a_task_with_status_updates() {
    let Some(dir) = examples() else { return };
    let server = start(&dir, "simpleStreamableHttp.js", "MCP_PORT");
    let client = Client::connect(&target(&server)).await.unwrap();
    assert_eq!(
        client.wire(),
        Wire::V2025_11_25,
        "no extension on this server"
    );
    assert!(client.supports_tasks());
    let tools = client.tools().await.unwrap();
    let delay = tools.iter().find(|t| t.name == "delay").unwrap();
    assert_eq!(delay.task_support, TaskSupport::Required);

    let mut task = client
        .call_tool_as_task("delay", json!({"duration": 1200}), TaskOptions::default())
        .await
        .unwrap();
    let id = task.task_id().cloned().unwrap();
    let mut updates = task.updates();
    let seen = tokio::spawn(async move {
        let mut statuses = Vec::new();
        while let Some(u) = updates.next().await {
            if let TaskUpdate::Status(t) = u {
                statuses.push(t.status);
            }
        }
        statuses
    });
    let outcome = tokio::time::timeout(Duration::from_secs(20), task.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status(), TaskStatus::Completed);
    assert!(outcome.succeeded());
    assert_eq!(outcome.text().as_deref(), Some("Completed 1200ms delay"));
    let statuses = seen.await.unwrap();
    assert_eq!(statuses.first(), Some(&TaskStatus::Working));
    assert_eq!(statuses.last(), Some(&TaskStatus::Completed));
    assert_eq!(client.get(&id).await.unwrap().status, TaskStatus::Completed);
    client.close().await;
}

#[tokio::test]
async fn a_detached_task_is_resumed_by_a_new_client_in_its_session() {
    let Some(dir) = examples() else { return };
    let server = start(&dir, "simpleStreamableHttp.js", "MCP_PORT");
    let first = Client::connect(&target(&server)).await.unwrap();
    let task = first
        .call_tool_as_task("delay", json!({"duration": 1500}), TaskOptions::default())
        .await
        .unwrap();
    let id = task.task_id().cloned().unwrap();
    drop(task);
    let session = first.detach().await.expect("an HTTP session");

    // A new client (as after a restart) rejoins the session and follows the task.
    let second = Client::builder()
        .resume_session(session.clone())
        .connect(&target(&server))
        .await
        .unwrap();
    assert_eq!(second.session_id().as_deref(), Some(session.as_str()));
    let outcome = tokio::time::timeout(
        Duration::from_secs(20),
        second.resume(&id).await.unwrap().result(),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(outcome.text().as_deref(), Some("Completed 1500ms delay"));

    // Outside the session the task is unknown, with the server's code kept.
    let stranger = Client::connect(&target(&server)).await.unwrap();
    let err = stranger.get(&id).await.unwrap_err();
    assert_eq!(err.code(), Some(-32602), "{err}");
    second.close().await;
    stranger.close().await;
}

#[tokio::test]
async fn cancel_ends_a_running_delay_task() {
    let Some(dir) = examples() else { return };
    let server = start(&dir, "simpleStreamableHttp.js", "MCP_PORT");
    let client = Client::connect(&target(&server)).await.unwrap();
    let task = client
        .call_tool_as_task(
            "delay",
            json!({"duration": 60_000}),
            TaskOptions::default().ttl(Duration::from_secs(120)),
        )
        .await
        .unwrap();
    let after = task.cancel().await.unwrap();
    assert_eq!(after.status, TaskStatus::Cancelled);
    let outcome = tokio::time::timeout(Duration::from_secs(20), task.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status(), TaskStatus::Cancelled);
    client.close().await;
}

#[tokio::test]
async fn elicitation_during_a_task_reaches_the_handler_once() {
    let Some(dir) = examples() else { return };
    let server = start(&dir, "simpleTaskInteractive.js", "PORT");
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&asked);
    let client = Client::builder()
        .on_elicitation(move |q| {
            log.lock().unwrap().push(q.clone());
            async move {
                assert_eq!(
                    q.requested_schema().unwrap()["properties"]["confirm"]["type"],
                    "boolean"
                );
                Ok(input::accept(json!({"confirm": true})))
            }
        })
        .connect(&target(&server))
        .await
        .unwrap();
    let task = client
        .call_tool_as_task(
            "confirm_delete",
            json!({"filename": "notes.txt"}),
            TaskOptions::default(),
        )
        .await
        .unwrap();
    let id = task.task_id().cloned().unwrap();
    // This server does not advertise tasks/cancel: the client says so instead of trying.
    assert!(matches!(
        task.cancel().await,
        Err(ClientError::Unsupported(_))
    ));
    let outcome = tokio::time::timeout(Duration::from_secs(20), task.result())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.text().as_deref(), Some("Deleted 'notes.txt'"));
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "one question, one handler call");
    assert_eq!(asked[0].task_id.as_ref(), Some(&id));
    assert!(asked[0].message().unwrap().contains("notes.txt"));
    client.close().await;
}

#[tokio::test]
async fn a_declined_elicitation_is_reported_by_the_tool() {
    let Some(dir) = examples() else { return };
    let server = start(&dir, "simpleTaskInteractive.js", "PORT");
    let client = Client::builder()
        .on_elicitation(|_| async { Ok(input::decline()) })
        .connect(&target(&server))
        .await
        .unwrap();
    let outcome = run_task(&client, "confirm_delete", json!({"filename": "x"})).await;
    assert_eq!(outcome.text().as_deref(), Some("Deletion cancelled"));
    client.close().await;
}

#[tokio::test]
async fn sampling_during_a_task_reaches_the_handler() {
    let Some(dir) = examples() else { return };
    let server = start(&dir, "simpleTaskInteractive.js", "PORT");
    let client = Client::builder()
        .on_sampling(|q| async move {
            let prompt = q.params["messages"][0]["content"]["text"]
                .as_str()
                .unwrap_or("")
                .to_string();
            assert!(prompt.contains("autumn"), "{prompt}");
            Ok(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "leaves fall"},
                "model": "test-model",
                "stopReason": "endTurn"
            }))
        })
        .connect(&target(&server))
        .await
        .unwrap();
    let outcome = run_task(&client, "write_haiku", json!({"topic": "autumn"})).await;
    assert_eq!(outcome.text().as_deref(), Some("Haiku:\nleaves fall"));
    client.close().await;
}
