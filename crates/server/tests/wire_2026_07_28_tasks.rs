//! The task path of the 2026-07-28 wire: the server decides which calls become tasks
//! (the task window, tools known to run long, `required` tools), outcomes inlined in
//! `tasks/get`, and a plain call without the extension under the sync budget.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::start_server_with;
use mcp_tasks_engine::Caller;
use mcp_tasks_server::ServerConfig;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::stateless::Stateless;

#[tokio::test]
async fn server_directed_tasks_with_inlined_outcomes() {
    // Every call of a task tool a task, whatever it takes: this is about tasks.
    let s = start_server_with(ServerConfig {
        task_after: Duration::ZERO,
        ..ServerConfig::default()
    })
    .await;
    let mut c = Stateless::new(&s.url);
    let created = c
        .result(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 50}}),
        )
        .await;
    assert_eq!(created["resultType"], "task");
    assert!(
        created.get("task").is_none()
            && created.get("ttl").is_none()
            && created.get("result").is_none()
    );
    assert!(created["ttlMs"].is_u64());
    let id = created["taskId"].as_str().unwrap().to_string();
    let done = c.wait(&id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "slept 50 ms");
    assert_eq!(
        done["result"]["resultType"], "complete",
        "the inlined result is the tools/call result this wire would have sent: {done}"
    );
    assert!(done["result"]["_meta"]
        .get("io.modelcontextprotocol/related-task")
        .is_none());

    let created = c
        .result("tools/call", json!({"name": "tool_error", "arguments": {}}))
        .await;
    let t = c
        .wait(created["taskId"].as_str().unwrap(), "completed")
        .await;
    assert_eq!(
        t["result"]["isError"], true,
        "a tool error is completed on this wire"
    );
    assert_eq!(t["result"]["resultType"], "complete");

    let created = c
        .result(
            "tools/call",
            json!({"name": "protocol_error", "arguments": {}}),
        )
        .await;
    let t = c.wait(created["taskId"].as_str().unwrap(), "failed").await;
    assert_eq!(t["error"]["code"], -32603);
    assert!(t.get("result").is_none());

    // without the extension an optional tool runs synchronously
    let (_, sync) = c
        .send(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}, "task": {"ttl": 5}}),
            false,
            None,
        )
        .await;
    assert_eq!(sync["result"]["resultType"], "complete");
    assert!(sync["result"].get("taskId").is_none());
}

/// The tasks the stateless wire's anonymous callers own, as the engine lists them (the
/// extension wire itself has no `tasks/list`).
async fn stateless_tasks(s: &common::TestServer) -> usize {
    let caller = Caller::anonymous("stateless", None);
    s.server
        .engine()
        .list(&caller, None)
        .await
        .unwrap()
        .tasks
        .len()
}

#[tokio::test]
async fn quick_calls_get_their_plain_result_and_leave_no_task() {
    // A window no loaded test machine misses: this is about what a quick call leaves.
    let s = start_server_with(ServerConfig {
        task_after: Duration::from_secs(5),
        ..ServerConfig::default()
    })
    .await;
    let mut c = Stateless::new(&s.url);
    let r = c
        .result(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 0}}),
        )
        .await;
    assert_eq!(r["resultType"], "complete", "{r}");
    assert!(r.get("taskId").is_none(), "answered inline: {r}");
    assert_eq!(r["content"][0]["text"], "slept 0 ms");
    // A quick protocol error is the call's own error, as for a synchronous call.
    let (_, body) = c
        .send(
            "tools/call",
            json!({"name": "protocol_error", "arguments": {}}),
            true,
            None,
        )
        .await;
    assert_eq!(body["error"]["code"], -32603, "{body}");
    assert_eq!(stateless_tasks(&s).await, 0, "no task was created");
    assert_eq!(s.server.engine().running_count(), 0);
}

#[tokio::test]
async fn slow_calls_become_tasks_whose_work_goes_on_and_required_tools_always_do() {
    let s = start_server_with(ServerConfig {
        task_after: Duration::from_millis(30),
        ..ServerConfig::default()
    })
    .await;
    let mut c = Stateless::new(&s.url);
    let created = c
        .result(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 300}}),
        )
        .await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_string();
    let done = c.wait(&id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "slept 300 ms");
    assert_eq!(
        s.sleeps_started.load(Ordering::SeqCst),
        1,
        "the work started in the window went on; it was not started again"
    );
    // `tool_error` is `required`: a task even though it ends at once.
    let created = c
        .result("tools/call", json!({"name": "tool_error", "arguments": {}}))
        .await;
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(stateless_tasks(&s).await, 2);
}

#[tokio::test]
async fn a_zero_window_makes_every_call_of_a_task_tool_a_task() {
    let s = start_server_with(ServerConfig {
        task_after: Duration::ZERO,
        ..ServerConfig::default()
    })
    .await;
    let mut c = Stateless::new(&s.url);
    let created = c
        .result(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 0}}),
        )
        .await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_string();
    c.wait(&id, "completed").await;
}

#[tokio::test]
async fn a_tool_whose_calls_outlast_the_window_gets_its_task_at_once() {
    let s = start_server_with(ServerConfig {
        task_after: Duration::from_millis(100),
        ..ServerConfig::default()
    })
    .await;
    let mut c = Stateless::new(&s.url);
    // Calls that outlast the window, one after another: the server learns it.
    let mut calls = 0;
    while !s.server.runs_long("sleep") {
        let created = c
            .result(
                "tools/call",
                json!({"name": "sleep", "arguments": {"ms": 100000}}),
            )
            .await;
        assert_eq!(created["resultType"], "task");
        calls += 1;
        assert!(calls <= 8, "learned within 8 calls");
    }
    // Learned long, even a quick call gets its task at once (no window) ... until a
    // probe (one call in 16 still waits the window) sees it end inline.
    let mut tasks = 0;
    let inline = loop {
        let r = c
            .result(
                "tools/call",
                json!({"name": "sleep", "arguments": {"ms": 0}}),
            )
            .await;
        if r["resultType"] == "complete" {
            break r;
        }
        assert_eq!(r["resultType"], "task", "{r}");
        tasks += 1;
        assert!(tasks < 16, "a probe within 16 calls");
    };
    assert!(tasks >= 1, "the window was skipped before the probe");
    assert_eq!(inline["content"][0]["text"], "slept 0 ms");
    // Instant calls are answered inline again.
    assert!(!s.server.runs_long("sleep"));
    let again = c
        .result(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 0}}),
        )
        .await;
    assert_eq!(again["resultType"], "complete", "{again}");
}

#[tokio::test]
async fn stateless_calls_without_authentication_are_not_held_to_a_per_session_limit() {
    let engine = mcp_tasks_engine::EngineConfig {
        max_tasks_per_session: 1,
        max_active_tasks: 3,
        ..common::test_engine_config()
    };
    let s = common::start_server_with_engine(
        engine,
        ServerConfig {
            task_after: Duration::ZERO,
            ..ServerConfig::default()
        },
    )
    .await;
    let mut c = Stateless::new(&s.url);
    for _ in 0..3 {
        let created = c
            .result(
                "tools/call",
                json!({"name": "sleep", "arguments": {"ms": 60000}}),
            )
            .await;
        assert_eq!(created["resultType"], "task", "{created}");
    }
    let (_, body) = c
        .send(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 60000}}),
            true,
            None,
        )
        .await;
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("server-wide") && message.contains("--max-active-tasks"),
        "{body}"
    );
}

#[tokio::test]
async fn a_plain_call_without_the_extension_gets_a_handle_and_the_task_tools() {
    let s = start_server_with(ServerConfig {
        sync_budget: Duration::from_millis(200),
        ..ServerConfig::default()
    })
    .await;
    let mut c = Stateless::new(&s.url);
    // Offered to requests that do not declare the extension, not to those that do.
    let (_, plain) = c.send("tools/list", json!({}), false, None).await;
    let listed = |v: &Value| {
        v["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "task_wait")
    };
    assert!(listed(&plain), "{plain}");
    let (_, ext) = c.send("tools/list", json!({}), true, None).await;
    assert!(!listed(&ext), "{ext}");

    let (_, body) = c
        .send(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 60000}}),
            false,
            None,
        )
        .await;
    let r = &body["result"];
    assert_eq!(
        r["resultType"], "complete",
        "a plain result on this wire: {body}"
    );
    let id = r["_meta"]["io.modelcontextprotocol/related-task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a handle: {body}"))
        .to_string();
    assert!(r["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("task_wait"));
    let (_, status) = c
        .send(
            "tools/call",
            json!({"name": "task_status", "arguments": {"taskId": id}}),
            false,
            None,
        )
        .await;
    assert_eq!(
        status["result"]["structuredContent"]["status"], "working",
        "{status}"
    );
    // Anonymous stateless requests share no owner: listing is refused, ids still work.
    let (_, list) = c
        .send(
            "tools/call",
            json!({"name": "task_list", "arguments": {}}),
            false,
            None,
        )
        .await;
    assert_eq!(list["result"]["isError"], true, "{list}");
    let (_, cancelled) = c
        .send(
            "tools/call",
            json!({"name": "task_cancel", "arguments": {"taskId": id}}),
            false,
            None,
        )
        .await;
    assert_eq!(
        cancelled["result"]["structuredContent"]["status"], "cancelled",
        "{cancelled}"
    );
}
