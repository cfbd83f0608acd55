//! Plain calls in hosts that speak no tasks (issue: long tools in the hosts people use):
//! the sync budget turns a long plain call into a task and answers with a handle before
//! the budget ends; the task tools wait for it, show it, cancel it and list it, bound to
//! their owner; a plain call with a `progressToken` gets progress at least every
//! interval; a host's timeout leaves the task running, a person's stop cancels it.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{
    read_stream, start_server_with, start_server_with_engine, test_engine_config, Client,
};
use mcp_tasks_server::auth::{AuthMode, StaticTokens};
use mcp_tasks_server::{ServerConfig, TaskTools};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

const RT: &str = "io.modelcontextprotocol/related-task";

/// A budget short enough for tests, and heartbeats every 50 ms.
fn budgeted() -> ServerConfig {
    ServerConfig {
        sync_budget: Duration::from_millis(300),
        progress_interval: Duration::from_millis(50),
        ..ServerConfig::default()
    }
}

/// The task id a handle names (and checks the rest of its shape: a tool without an
/// outputSchema, so not flagged as an error, with the task's state as structured
/// content).
fn handle_id(r: &Value) -> String {
    let id = r["_meta"][RT]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("not a handle: {r}"))
        .to_string();
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["taskId"], id.as_str(), "{r}");
    let text = r["content"][0]["text"].as_str().unwrap();
    for told in [
        "Not an error",
        "task_wait",
        "task_status",
        "task_cancel",
        &id,
    ] {
        assert!(
            text.contains(told),
            "the handle tells the model '{told}': {text}"
        );
    }
    id
}

/// Calls a task tool; its result.
async fn tool(c: &mut Client, name: &str, args: Value) -> Value {
    c.call("tools/call", json!({"name": name, "arguments": args}))
        .await
}

/// `task_wait` until the task ended (each wait is at most the budget), bounded.
async fn wait_for_result(c: &mut Client, id: &str) -> Value {
    for _ in 0..200 {
        let r = tool(c, "task_wait", json!({"taskId": id, "seconds": 5})).await;
        if r["structuredContent"]["status"].is_string() && r["_meta"][RT].is_null() {
            continue; // still running: the status, not the result
        }
        return r;
    }
    panic!("task {id} never ended");
}

#[tokio::test]
async fn a_long_plain_call_gets_a_handle_and_task_wait_returns_the_real_result() {
    let s = start_server_with(budgeted()).await;
    let mut c = Client::connect(&s.url).await;
    let r = tool(&mut c, "sleep", json!({"ms": 3000})).await;
    let id = handle_id(&r);
    assert_eq!(r["structuredContent"]["status"], "working", "{r}");
    assert_eq!(r["structuredContent"]["tool"], "sleep", "{r}");

    let status = tool(&mut c, "task_status", json!({"taskId": id})).await;
    assert_eq!(status["structuredContent"]["status"], "working", "{status}");
    let done = wait_for_result(&mut c, &id).await;
    assert_eq!(done["content"][0]["text"], "slept 3000 ms", "{done}");
    assert_eq!(done["_meta"][RT]["taskId"], id.as_str(), "{done}");
}

#[tokio::test]
async fn a_plain_call_within_the_budget_gets_its_ordinary_result() {
    let s = start_server_with(ServerConfig {
        sync_budget: Duration::from_secs(30),
        ..ServerConfig::default()
    })
    .await;
    let mut c = Client::connect(&s.url).await;
    let r = tool(&mut c, "sleep", json!({"ms": 50})).await;
    assert_eq!(r["content"][0]["text"], "slept 50 ms", "{r}");
    assert!(r.get("_meta").is_none(), "no handle: {r}");
}

#[tokio::test]
async fn with_the_budget_off_a_plain_call_runs_inline_to_its_end() {
    let s = start_server_with(ServerConfig {
        sync_budget: Duration::ZERO,
        ..ServerConfig::default()
    })
    .await;
    let mut c = Client::connect(&s.url).await;
    let r = tool(&mut c, "sleep", json!({"ms": 400})).await;
    assert_eq!(r["content"][0]["text"], "slept 400 ms", "{r}");
    let listed = tool(&mut c, "task_list", json!({})).await;
    assert_eq!(listed["structuredContent"]["tasks"], json!([]), "{listed}");
}

fn names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

const TASK_TOOLS: [&str; 5] = [
    "task_wait",
    "task_status",
    "task_answer",
    "task_cancel",
    "task_list",
];

#[tokio::test]
async fn task_tools_are_offered_to_clients_without_tasks_unless_configured_otherwise() {
    let s = start_server_with(budgeted()).await;
    let mut plain = Client::connect(&s.url).await;
    let listed = names(&plain.call("tools/list", json!({})).await);
    for t in TASK_TOOLS {
        assert!(listed.contains(&t.to_string()), "{t} offered: {listed:?}");
    }
    // A client that speaks tasks uses tasks/*: no task tools, and calling one is
    // calling an unknown tool.
    let mut tasks = Client::connect_with_capabilities(&s.url, json!({"tasks": {}})).await;
    let listed = names(&tasks.call("tools/list", json!({})).await);
    assert!(listed.iter().all(|n| !n.starts_with("task_")), "{listed:?}");
    assert_eq!(
        tasks
            .error_code("tools/call", json!({"name": "task_list", "arguments": {}}))
            .await,
        -32602
    );

    for (mode, offered_to_tasks, offered_to_plain) in [
        (TaskTools::Always, true, true),
        (TaskTools::Never, false, false),
    ] {
        let s = start_server_with(ServerConfig {
            task_tools: mode,
            ..budgeted()
        })
        .await;
        let mut tasks = Client::connect_with_capabilities(&s.url, json!({"tasks": {}})).await;
        let mut plain = Client::connect(&s.url).await;
        let t = names(&tasks.call("tools/list", json!({})).await);
        let p = names(&plain.call("tools/list", json!({})).await);
        assert_eq!(
            t.contains(&"task_wait".to_string()),
            offered_to_tasks,
            "{mode:?} {t:?}"
        );
        assert_eq!(
            p.contains(&"task_wait".to_string()),
            offered_to_plain,
            "{mode:?} {p:?}"
        );
    }
}

#[tokio::test]
async fn task_list_finds_a_task_and_task_cancel_stops_it() {
    let s = start_server_with(budgeted()).await;
    let mut c = Client::connect(&s.url).await;
    let id = handle_id(&tool(&mut c, "sleep", json!({"ms": 60000})).await);
    let listed = tool(&mut c, "task_list", json!({"status": "working"})).await;
    let tasks = listed["structuredContent"]["tasks"].as_array().unwrap();
    assert!(tasks.iter().any(|t| t["taskId"] == id.as_str()), "{listed}");
    assert!(
        listed["content"][0]["text"].as_str().unwrap().contains(&id),
        "one line per task: {listed}"
    );
    let cancelled = tool(&mut c, "task_cancel", json!({"taskId": id})).await;
    assert_eq!(
        cancelled["structuredContent"]["status"], "cancelled",
        "{cancelled}"
    );
    s.saw_cancellation().await;
    let again = tool(&mut c, "task_cancel", json!({"taskId": id})).await;
    assert_eq!(again["isError"], true, "already cancelled: {again}");
    let none = tool(&mut c, "task_list", json!({"status": "working"})).await;
    assert_eq!(none["structuredContent"]["tasks"], json!([]), "{none}");
    // Arguments that do not fit are protocol errors naming the field.
    assert_eq!(
        c.error_code(
            "tools/call",
            json!({"name": "task_status", "arguments": {}})
        )
        .await,
        -32602
    );
    assert_eq!(
        c.error_code(
            "tools/call",
            json!({"name": "task_list", "arguments": {"status": "sleeping"}})
        )
        .await,
        -32602
    );
}

#[tokio::test]
async fn another_principals_task_answers_like_an_unknown_one() {
    let tokens: HashMap<String, String> = [("tok-alice", "alice"), ("tok-bob", "bob")]
        .into_iter()
        .map(|(t, s)| (t.to_string(), s.to_string()))
        .collect();
    let s = start_server_with_engine(
        test_engine_config(),
        ServerConfig {
            auth: AuthMode::Required(Arc::new(StaticTokens::new(tokens))),
            ..budgeted()
        },
    )
    .await;
    let mut alice = Client::connect_with_token(&s.url, "tok-alice").await;
    let mut bob = Client::connect_with_token(&s.url, "tok-bob").await;
    let id = handle_id(&tool(&mut alice, "sleep", json!({"ms": 60000})).await);
    let unknown = tool(
        &mut bob,
        "task_status",
        json!({"taskId": "0123456789abcdef"}),
    )
    .await;
    for name in ["task_status", "task_wait", "task_cancel"] {
        let foreign = tool(&mut bob, name, json!({"taskId": id, "seconds": 0})).await;
        assert_eq!(foreign["isError"], true, "{name}: {foreign}");
        let text = foreign["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("no task"), "{name}: {foreign}");
        assert_eq!(
            text.replace(&id, "ID"),
            unknown["content"][0]["text"]
                .as_str()
                .unwrap()
                .replace("0123456789abcdef", "ID"),
            "a foreign id says exactly what an unknown one says"
        );
    }
    let answer = tool(
        &mut bob,
        "task_answer",
        json!({"taskId": id, "answers": {"elicitation-1": {"answer": "x"}}}),
    )
    .await;
    assert!(answer["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("no task"));
    let listed = tool(&mut bob, "task_list", json!({})).await;
    assert_eq!(listed["structuredContent"]["tasks"], json!([]), "{listed}");
    // Alice's task went on untouched.
    let mine = tool(&mut alice, "task_status", json!({"taskId": id})).await;
    assert_eq!(mine["structuredContent"]["status"], "working", "{mine}");
}

/// Reads the SSE stream of a plain call made with a progress token until its reply:
/// (the progress notifications, the reply).
async fn call_with_progress(c: &Client, id: i64, params: Value) -> (Vec<Value>, Value) {
    let resp = c.stream_request(id, "tools/call", params).await;
    let mut progress = Vec::new();
    let mut reply = Value::Null;
    read_stream(resp, |m| {
        if m["method"] == "notifications/progress" {
            progress.push(m["params"].clone());
        }
        if m["id"] == id {
            reply = m.clone();
            return true;
        }
        false
    })
    .await;
    (progress, reply)
}

#[tokio::test]
async fn a_quiet_plain_call_with_a_progress_token_gets_heartbeats() {
    let s = start_server_with(ServerConfig {
        sync_budget: Duration::from_secs(30),
        progress_interval: Duration::from_millis(50),
        ..ServerConfig::default()
    })
    .await;
    let c = Client::connect(&s.url).await;
    // `sleep` reports once as it starts, then says nothing until it ends.
    let (progress, reply) = call_with_progress(
        &c,
        9,
        json!({"name": "sleep", "arguments": {"ms": 600}, "_meta": {"progressToken": "tok-9"}}),
    )
    .await;
    assert_eq!(
        reply["result"]["content"][0]["text"], "slept 600 ms",
        "{reply}"
    );
    assert_eq!(
        progress[0]["message"], "started",
        "the tool's own first: {progress:?}"
    );
    let beats: Vec<&Value> = progress
        .iter()
        .filter(|p| {
            p["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("still working after"))
        })
        .collect();
    assert!(
        beats.len() >= 2,
        "heartbeats while the tool was quiet: {progress:?}"
    );
    assert!(progress.iter().all(|p| p["progressToken"] == "tok-9"));
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(
        values.windows(2).all(|w| w[1] > w[0]),
        "increasing: {values:?}"
    );
}

#[tokio::test]
async fn an_inline_plain_call_with_a_progress_token_gets_heartbeats_too() {
    let s = start_server_with(ServerConfig {
        sync_budget: Duration::ZERO,
        progress_interval: Duration::from_millis(50),
        ..ServerConfig::default()
    })
    .await;
    let c = Client::connect(&s.url).await;
    let (progress, reply) = call_with_progress(
        &c,
        10,
        json!({"name": "sleep", "arguments": {"ms": 600}, "_meta": {"progressToken": 10}}),
    )
    .await;
    assert_eq!(
        reply["result"]["content"][0]["text"], "slept 600 ms",
        "{reply}"
    );
    let beats = progress
        .iter()
        .filter(|p| {
            p["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("still working"))
        })
        .count();
    assert!(beats >= 2, "{progress:?}");
}

#[tokio::test]
async fn task_wait_reports_the_tasks_progress_on_its_own_token() {
    let s = start_server_with(budgeted()).await;
    let mut c = Client::connect(&s.url).await;
    let id = handle_id(&tool(&mut c, "sleep", json!({"ms": 60000})).await);
    let (progress, reply) = call_with_progress(
        &c,
        11,
        json!({"name": "task_wait", "arguments": {"taskId": id}, "_meta": {"progressToken": "w"}}),
    )
    .await;
    assert_eq!(
        reply["result"]["structuredContent"]["status"], "working",
        "{reply}"
    );
    assert!(!progress.is_empty(), "heartbeats while waiting: {reply}");
    assert!(
        progress.iter().all(|p| p["progressToken"] == "w"),
        "{progress:?}"
    );
}

#[tokio::test]
async fn a_hosts_timeout_leaves_the_task_running_and_a_persons_stop_cancels_it() {
    let s = start_server_with(ServerConfig {
        sync_budget: Duration::from_secs(30),
        ..ServerConfig::default()
    })
    .await;
    let mut c = Client::connect(&s.url).await;
    for (request, reason, survives) in [
        (21, "McpError: MCP error -32001: Request timed out", true),
        (22, "the user pressed stop", false),
    ] {
        let started = s.sleeps_started.load(std::sync::atomic::Ordering::SeqCst);
        let resp = c
            .stream_request(
                request,
                "tools/call",
                json!({"name": "sleep", "arguments": {"ms": 60000}}),
            )
            .await;
        let reader = tokio::spawn(common::read_sse(resp, move |m| m["id"] == request));
        // The call became a task once the tool started (the task window is 20 ms).
        mcp_tasks_testkit::eventually(mcp_tasks_testkit::WAIT, || {
            let n = s.sleeps_started.load(std::sync::atomic::Ordering::SeqCst);
            async move { n > started }
        })
        .await;
        let listed = mcp_tasks_testkit::eventually(mcp_tasks_testkit::WAIT, || {
            let engine = s.server.engine().clone();
            async move {
                let caller = mcp_tasks_engine::Caller::anonymous("any", None);
                let filter = mcp_tasks_engine::TaskFilter {
                    limit: 10,
                    ..Default::default()
                };
                let page = engine
                    .query_tasks(
                        &mcp_tasks_engine::Caller {
                            operator: true,
                            ..caller
                        },
                        &filter,
                    )
                    .await
                    .unwrap();
                page.tasks.len() >= (request - 20) as usize
            }
        });
        listed.await;
        c.notify(
            "notifications/cancelled",
            json!({"requestId": request, "reason": reason}),
        )
        .await;
        assert!(!reader.await.unwrap(), "a cancelled call gets no response");
        let tasks = tool(&mut c, "task_list", json!({})).await;
        let newest = &tasks["structuredContent"]["tasks"][0];
        if survives {
            assert_eq!(newest["status"], "working", "a timeout leaves it: {tasks}");
        } else {
            let id = newest["taskId"].as_str().unwrap().to_string();
            let status = mcp_tasks_testkit::eventually(mcp_tasks_testkit::WAIT, || {
                let engine = s.server.engine().clone();
                let id = id.clone();
                async move {
                    let caller = mcp_tasks_engine::Caller {
                        operator: true,
                        ..mcp_tasks_engine::Caller::anonymous("any", None)
                    };
                    engine
                        .get(&mcp_tasks_protocol::TaskId::from_string(&id), &caller)
                        .await
                        .unwrap()
                        .status
                        == mcp_tasks_protocol::TaskStatus::Cancelled
                }
            });
            status.await;
        }
    }
}

#[test]
fn a_tool_cannot_take_a_task_tools_name() {
    let mut r = mcp_tasks_server::ToolRegistry::new();
    let t =
        mcp_tasks_server::Tool::new("task_wait", "mine", json!({"type": "object"}), |_a, _c| {
            Box::pin(async { Ok(mcp_tasks_server::ToolResult::text("x").into()) })
                as mcp_tasks_server::registry::ToolFuture
        })
        .unwrap();
    let e = r.register(t).unwrap_err().to_string();
    assert!(e.contains("'task_wait'") && e.contains("task tool"), "{e}");
}
