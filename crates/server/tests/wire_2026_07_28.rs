//! The 2026-07-28 stateless wire with the Tasks extension, beside the 2025-11-25 wire on
//! the same endpoint.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{is_event_stream, read_until, start_server, start_server_with, Client};
use mcp_tasks_engine::Caller;
use mcp_tasks_server::ServerConfig;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::stateless::{Stateless, EXT};

#[tokio::test]
async fn discover_advertises_the_extension_not_the_legacy_capability() {
    let s = start_server().await;
    let mut c = Stateless::new(&s.url);
    let r = c.result("server/discover", json!({})).await;
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["supportedVersions"], json!(["2026-07-28"]));
    assert!(r["capabilities"]["extensions"][EXT].is_object());
    assert!(r["capabilities"].get("tasks").is_none());
}

/// `tools/list` and `server/discover` are `CacheableResult`s: `ttlMs` and `cacheScope`
/// are required (the TypeScript SDK v2 client refused a tool list without them).
#[tokio::test]
async fn cacheable_results_carry_ttl_and_cache_scope() {
    let s = start_server().await;
    let mut c = Stateless::new(&s.url);
    for method in ["tools/list", "server/discover"] {
        let r = c.result(method, json!({})).await;
        assert_eq!(r["resultType"], "complete", "{method}: {r}");
        assert!(r["ttlMs"].as_u64().is_some(), "{method} needs ttlMs: {r}");
        assert!(
            matches!(r["cacheScope"].as_str(), Some("public" | "private")),
            "{method} needs cacheScope: {r}"
        );
    }
}

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
async fn undeclared_extension_and_removed_methods_get_their_codes() {
    let s = start_server().await;
    let mut c = Stateless::new(&s.url);
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let (status, body) = c.send(method, json!({"taskId": "gate"}), false, None).await;
        assert_eq!(
            (status, body["error"]["code"].as_i64()),
            (400, Some(-32021)),
            "{method}"
        );
        assert!(body["error"]["data"]["requiredCapabilities"]["extensions"][EXT].is_object());
    }
    let (_, body) = c
        .send(
            "tools/call",
            json!({"name": "tool_error", "arguments": {}}),
            false,
            None,
        )
        .await;
    assert_eq!(
        body["error"]["code"], -32021,
        "task-required tool without the extension"
    );
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("tool 'tool_error' needs"),
        "quoted once: {message}"
    );
    let (_, body) = c
        .send("tasks/get", json!({"taskId": "g"}), false, None)
        .await;
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("'tasks/get' needs"), "{message}");
    for method in ["tasks/result", "tasks/list"] {
        let (_, body) = c
            .send(method, json!({"taskId": "x"}), true, Some("x"))
            .await;
        assert_eq!(body["error"]["code"], -32601, "{method}");
    }
    let (_, body) = c
        .send("tasks/get", json!({"taskId": "no-such-task"}), true, None)
        .await;
    assert_eq!(body["error"]["code"], -32602);
}

#[tokio::test]
async fn routing_headers_must_match_the_body() {
    let s = start_server().await;
    let mut c = Stateless::new(&s.url);
    let (status, body) = c
        .send(
            "tools/call",
            json!({"name": "echo", "arguments": {}}),
            true,
            Some("other-tool"),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (400, Some(-32020))
    );
    let (status, body) = c
        .send("tasks/get", json!({"taskId": "abc"}), true, Some("def"))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (400, Some(-32020))
    );
}

#[tokio::test]
async fn input_requests_are_inlined_and_answered_with_tasks_update() {
    let s = start_server().await;
    let mut c = Stateless::new(&s.url);
    let created = c
        .result("tools/call", json!({"name": "ask", "arguments": {}}))
        .await;
    let id = created["taskId"].as_str().unwrap().to_string();
    let waiting = c.wait(&id, "input_required").await;
    let requests = waiting["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1);
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    let ack = c
        .result("tasks/update", json!({"taskId": id, "inputResponses": {"unknown": {"x": 1}, key.as_str(): {"action": "accept", "content": {"answer": "stateless"}}}}))
        .await;
    assert_eq!(ack, json!({"resultType": "complete"}));
    let done = c.wait(&id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "answer: stateless");
    let ack = c.result("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(
        ack,
        json!({"resultType": "complete"}),
        "cancel of a finished task is an idempotent ack"
    );
}

#[tokio::test]
async fn mrtr_round_then_escalation_to_a_task() {
    let s = start_server().await;
    let mut c = Stateless::new(&s.url);
    let round1 = c
        .result("tools/call", json!({"name": "named", "arguments": {}}))
        .await;
    assert_eq!(round1["resultType"], "input_required");
    assert!(round1.get("taskId").is_none());
    assert_eq!(
        round1["inputRequests"]["who"]["method"],
        "elicitation/create"
    );
    let round2 = c
        .result("tools/call", json!({"name": "named", "arguments": {}, "inputResponses": {"who": {"action": "accept", "content": {"name": "Alice"}}}}))
        .await;
    assert_eq!(round2["resultType"], "task");
    assert!(round2.get("inputRequests").is_none() && round2.get("requestState").is_none());
    let done = c
        .wait(round2["taskId"].as_str().unwrap(), "completed")
        .await;
    assert_eq!(done["result"]["content"][0]["text"], "hi Alice");
}

#[tokio::test]
async fn both_wires_share_one_endpoint_and_one_store() {
    // Every call of a task tool a task, whatever it takes: this is about tasks.
    let s = start_server_with(ServerConfig {
        task_after: Duration::ZERO,
        ..ServerConfig::default()
    })
    .await;
    let mut modern = Stateless::new(&s.url);
    let created = modern
        .result(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}}),
        )
        .await;
    let id = created["taskId"].as_str().unwrap().to_string();
    modern.wait(&id, "completed").await;
    // a 2025-11-25 session on the same endpoint reads the same task (ids are capabilities)
    let mut legacy = Client::connect(&s.url).await;
    let r = legacy.call("tasks/result", json!({"taskId": id})).await;
    assert_eq!(r["content"][0]["text"], "slept 1 ms");
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
}

#[tokio::test]
async fn the_preflight_question_is_asked_inside_the_task_on_the_2025_wire() {
    let s = start_server().await;
    let mut c = Client::connect_eliciting(&s.url).await;
    let id = c.create_task("named", json!({})).await;
    let waiting = c.wait_status(&id, "input_required").await;
    assert_eq!(waiting["taskId"], id.as_str());
    let key = format!("mcp-tasks:{id}:elicitation-1");
    let answer = json!({"jsonrpc": "2.0", "id": key, "result": {"action": "accept", "content": {"name": "Bob"}}});
    assert_eq!(c.post_raw(answer.to_string()).await.status, 202);
    let r = c.call("tasks/result", json!({"taskId": id})).await;
    assert_eq!(r["content"][0]["text"], "hi Bob");
}

#[tokio::test]
async fn subscribers_get_task_notifications_until_the_end() {
    let s = start_server().await;
    let mut c = Stateless::new(&s.url);
    let created = c
        .result(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 200}}),
        )
        .await;
    let id = created["taskId"].as_str().unwrap().to_string();
    let body = json!({"jsonrpc": "2.0", "id": 900, "method": "subscriptions/listen", "params": {
        "notifications": {"taskIds": [id, "not-a-task"]},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}}}}});
    let resp = c
        .http
        .post(&s.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert!(is_event_stream(resp.headers()));
    let messages = read_until(resp, |v| v["params"]["status"] == "completed").await;
    assert_eq!(
        messages[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(
        messages[0]["params"]["notifications"]["taskIds"],
        json!([id]),
        "unknown ids are not accepted"
    );
    assert_eq!(
        messages[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        900
    );
    let last = messages.last().unwrap();
    assert_eq!(last["method"], "notifications/tasks");
    assert_eq!(last["params"]["taskId"], id.as_str());
    assert_eq!(
        last["params"]["result"]["content"][0]["text"], "slept 200 ms",
        "full DetailedTask"
    );

    // without the extension, asking for task ids is refused
    let (status, body) = c
        .send(
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [id]}}),
            false,
            None,
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (400, Some(-32021))
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
