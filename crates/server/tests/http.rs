//! The 2025-11-25 task wire and the Streamable HTTP transport, over a real loopback port.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{
    is_event_stream, read_until, start_server, start_server_with, test_engine_config, Client,
};
use mcp_tasks_server::ServerConfig;
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;

const RT: &str = "io.modelcontextprotocol/related-task";

#[tokio::test]
async fn initialize_negotiates_and_advertises_tasks() {
    let s = start_server().await;
    let mut c = Client::new(&s.url);
    let r = c.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})).await;
    assert_eq!(r.body["result"]["protocolVersion"], "2025-11-25");
    let caps = &r.body["result"]["capabilities"]["tasks"];
    assert!(caps["list"].is_object() && caps["cancel"].is_object());
    assert!(caps["requests"]["tools"]["call"].is_object());
    assert!(r.headers.get("mcp-session-id").is_some());

    let mut old = Client::new(&s.url);
    let r = old.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})).await;
    assert_eq!(r.body["result"]["protocolVersion"], "2025-06-18");
    assert!(r.body["result"]["capabilities"].get("tasks").is_none());

    let mut future = Client::new(&s.url);
    let r = future.request("initialize", json!({"protocolVersion": "2099-01-01", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})).await;
    assert_eq!(r.body["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn old_protocol_gets_sync_calls_and_no_task_methods() {
    let s = start_server().await;
    let mut c = Client::connect_with_version(&s.url, "2025-06-18").await;
    let r = c
        .call(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}, "task": {}}),
        )
        .await;
    assert_eq!(
        r["content"][0]["text"], "slept 1 ms",
        "params.task is ignored before 2025-11-25"
    );
    assert_eq!(
        c.error_code("tasks/get", json!({"taskId": "x"})).await,
        -32601
    );
}

#[tokio::test]
async fn bad_input_gets_json_rpc_errors_and_the_server_keeps_serving() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    let r = c.post_raw("{not json").await;
    assert_eq!(
        (r.status, r.body["error"]["code"].as_i64()),
        (400, Some(-32700))
    );
    let r = c
        .post_raw(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)
        .await;
    assert_eq!(r.body["error"]["code"], -32600);
    let r = c.post_raw(r#"{"jsonrpc":"2.0","id":1}"#).await;
    assert_eq!(r.body["error"]["code"], -32600);
    assert_eq!(c.error_code("no/such/method", json!({})).await, -32601);
    assert_eq!(
        c.error_code("tools/call", json!({"name": 42})).await,
        -32602
    );
    assert_eq!(
        c.error_code("tools/call", json!({"name": "nope"})).await,
        -32602
    );
    let r = c
        .request("tools/call", json!({"name": "sleep", "arguments": {}}))
        .await;
    assert_eq!(r.body["error"]["code"], -32602);
    assert!(
        r.body["error"]["message"].as_str().unwrap().contains("ms"),
        "{}",
        r.body
    );
    assert_eq!(
        c.error_code(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": "soon"}})
        )
        .await,
        -32602
    );
    assert_eq!(
        c.error_code(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}, "task": 5})
        )
        .await,
        -32602
    );
    assert_eq!(c.error_code("tasks/get", json!({})).await, -32602);
    assert_eq!(
        c.error_code("tasks/get", json!({"taskId": 7})).await,
        -32602
    );
    let big = json!({"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"pad": "x".repeat(100 * 1024)}});
    let r = c.post_raw(big.to_string()).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.body["error"]["code"], -32600);
    assert!(r.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("65536"));
    assert_eq!(c.call("ping", json!({})).await, json!({}));
}

#[tokio::test]
async fn sessions_are_required_checked_and_deletable() {
    let s = start_server().await;
    let anon = Client::new(&s.url);
    let r = anon
        .post_raw(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    assert_eq!(r.status, 400);
    let mut ghost = Client::new(&s.url);
    ghost.session = Some("not-a-session".into());
    assert_eq!(
        ghost
            .post_raw(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .await
            .status,
        404
    );
    let c = Client::connect(&s.url).await;
    let del = c.delete_session().await;
    assert_eq!(del.status(), 200);
    assert_eq!(
        c.post_raw(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn foreign_origins_are_refused() {
    let s = start_server_with(ServerConfig {
        allowed_origins: vec!["https://app.example".into()],
        ..ServerConfig::default()
    })
    .await;
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}).to_string();
    for (origin, ok) in [
        ("https://evil.example", false),
        ("http://localhost:3000", true),
        ("https://app.example", true),
    ] {
        let r = http
            .post(&s.url)
            .header("origin", origin)
            .header("accept", "application/json")
            .body(init.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status() == 200, ok, "{origin}: {}", r.status());
    }
}

#[tokio::test]
async fn task_lifecycle_create_get_result_list() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    let created = c
        .call(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 300}, "task": {"ttl": 60000}}),
        )
        .await;
    let task = &created["task"];
    let id = task["taskId"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 32);
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60000);
    assert_eq!(task["pollInterval"], 1000);
    assert!(task["createdAt"].as_str().unwrap().ends_with('Z'));
    assert!(created["_meta"]["io.modelcontextprotocol/model-immediate-response"].is_string());

    let got = c.call("tasks/get", json!({"taskId": id, "task": {}})).await;
    assert_eq!(got["taskId"], id.as_str());
    // tasks/result blocks until the work is done, then returns the tool's result
    let result = c.call("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["content"][0]["text"], "slept 300 ms");
    assert_eq!(result["_meta"][RT]["taskId"], id.as_str());
    assert_eq!(
        c.call("tasks/result", json!({"taskId": id})).await,
        result,
        "readable again"
    );
    let got = c.call("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["status"], "completed");
    assert_eq!(got["statusMessage"], "slept");
    let list = c.call("tasks/list", json!({})).await;
    assert!(list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["taskId"] == id.as_str()));
}

#[tokio::test]
async fn empty_task_metadata_gets_default_ttl_and_big_ttl_is_clamped() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    let r = c
        .call(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}, "task": {}}),
        )
        .await;
    assert_eq!(r["task"]["ttl"], 3_600_000);
    let r = c
        .call(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}, "task": {"ttl": 999_999_999_u64}}),
        )
        .await;
    assert_eq!(
        r["task"]["ttl"], 3_600_000,
        "clamped to the configured maximum"
    );
}

/// A ttl of 0 (or anything under the minimum) is raised to the minimum and reported,
/// so the task can still be read and collected; before, it was "not found" from its
/// first `tasks/get` while its work ran.
#[tokio::test]
async fn zero_ttl_is_raised_to_the_minimum_and_the_task_stays_readable() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    let r = c
        .call(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}, "task": {"ttl": 0}}),
        )
        .await;
    let min_ms = u64::try_from(test_engine_config().min_ttl.as_millis()).unwrap();
    assert_eq!(r["task"]["ttl"], min_ms, "{r}");
    let id = r["task"]["taskId"].as_str().unwrap().to_string();
    let got = c.call("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["ttl"], min_ms, "{got}");
    let result = c.call("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["content"][0]["text"], "slept 1 ms", "{result}");
}

/// `"task": null` is not `TaskMetadata` (the schema has `task?: TaskMetadata`): it is
/// refused with -32602 and a message saying to leave it out, never run synchronously.
#[tokio::test]
async fn null_task_metadata_is_invalid_params() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    let r = c
        .request(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}, "task": null}),
        )
        .await;
    assert_eq!(r.body["error"]["code"], -32602, "{}", r.body);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("leave 'task' out"),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn task_support_rules_use_method_not_found() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    assert_eq!(
        c.error_code("tools/call", json!({"name": "tool_error", "arguments": {}}))
            .await,
        -32601
    );
    assert_eq!(
        c.error_code(
            "tools/call",
            json!({"name": "echo", "arguments": {}, "task": {}})
        )
        .await,
        -32601
    );
    let sync = c
        .call(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}}),
        )
        .await;
    assert_eq!(sync["content"][0]["text"], "slept 1 ms");
}

#[tokio::test]
async fn cancel_is_immediate_final_and_not_repeatable() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    let id = c.create_task("stubborn", json!({"ms": 400})).await;
    let r = c.call("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(r["status"], "cancelled");
    assert_eq!(
        c.error_code("tasks/cancel", json!({"taskId": id})).await,
        -32602
    );
    let r = c.request("tasks/result", json!({"taskId": id})).await;
    assert!(r.body["error"]["code"].is_i64(), "{}", r.body);
    assert_eq!(r.body["error"]["data"]["_meta"][RT]["taskId"], id.as_str());
    // the stubborn work ends later (aborted after the grace period); the task must
    // stay cancelled
    let engine = s.server.engine().clone();
    eventually(WAIT, || async { engine.running_count() == 0 }).await;
    assert_eq!(c.status_of(&id).await, "cancelled");

    let id = c.create_task("sleep", json!({"ms": 60_000})).await;
    c.call("tasks/cancel", json!({"taskId": id})).await;
    // the tool saw its cancellation token fire
    s.saw_cancellation().await;
    assert_eq!(
        c.error_code(
            "tasks/cancel",
            json!({"taskId": "0123456789abcdef0123456789abcdef"})
        )
        .await,
        -32602
    );
}

#[tokio::test]
async fn tool_error_fails_the_task_but_result_is_returned() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    let id = c.create_task("tool_error", json!({})).await;
    let result = c.call("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["isError"], true);
    assert_eq!(result["_meta"][RT]["taskId"], id.as_str());
    assert_eq!(c.status_of(&id).await, "failed");
}

#[tokio::test]
async fn protocol_error_is_replayed_by_tasks_result() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    let id = c.create_task("protocol_error", json!({})).await;
    let r = c.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(r.body["error"]["code"], -32603);
    assert_eq!(r.body["error"]["message"], "backend unavailable");
    assert_eq!(r.body["error"]["data"]["retry"], true);
    let got = c.call("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["status"], "failed");
    assert_eq!(got["statusMessage"], "backend unavailable");
    // the same error synchronously
    let r = c
        .request(
            "tools/call",
            json!({"name": "protocol_error", "arguments": {}}),
        )
        .await;
    assert_eq!(r.body["error"]["code"], -32603);
}

#[tokio::test]
async fn panicking_tool_fails_the_task_and_the_server_survives() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    let id = c.create_task("panics", json!({})).await;
    let r = c.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(r.body["error"]["code"], -32603);
    assert_eq!(c.status_of(&id).await, "failed");
    let r = c
        .request("tools/call", json!({"name": "panics", "arguments": {}}))
        .await;
    assert_eq!(r.body["error"]["code"], -32603);
    assert_eq!(c.call("ping", json!({})).await, json!({}));
}

#[tokio::test]
async fn list_pages_with_opaque_cursors_and_rejects_bad_ones() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    let mut ids = Vec::new();
    for _ in 0..7 {
        ids.push(c.create_task("sleep", json!({"ms": 1})).await);
    }
    let mut seen = Vec::new();
    let mut created = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let params = match &cursor {
            Some(cur) => json!({"cursor": cur}),
            None => json!({}),
        };
        let page = c.call("tasks/list", params).await;
        let tasks = page["tasks"].as_array().unwrap();
        assert!(tasks.len() <= 3, "page size limit");
        for t in tasks {
            seen.push(t["taskId"].as_str().unwrap().to_string());
            created.push(t["createdAt"].as_str().unwrap().to_string());
        }
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    // Every task once, oldest first. Tasks created in the same millisecond have no
    // order between them (the store breaks the tie by id), so the test compares sets
    // and checks the times never go back (it compared lists and failed on such ties).
    let (mut sorted_seen, mut sorted_ids) = (seen.clone(), ids.clone());
    sorted_seen.sort();
    sorted_ids.sort();
    assert_eq!(
        sorted_seen, sorted_ids,
        "every task once: {seen:?} vs {ids:?}"
    );
    assert!(
        created.windows(2).all(|w| w[0] <= w[1]),
        "oldest first: {created:?}"
    );
    assert_eq!(
        c.error_code("tasks/list", json!({"cursor": "garbage"}))
            .await,
        -32602
    );
    // another session does not see them
    let mut other = Client::connect(&s.url).await;
    assert_eq!(
        other.call("tasks/list", json!({})).await["tasks"],
        json!([])
    );
}

#[tokio::test]
async fn tasks_outlive_their_session_and_are_collected_by_id() {
    let s = start_server().await;
    let mut a = Client::connect(&s.url).await;
    let id = a.create_task("sleep", json!({"ms": 100})).await;
    a.delete_session().await;
    let mut b = Client::connect(&s.url).await;
    let result = b.call("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["content"][0]["text"], "slept 100 ms");
}

#[tokio::test]
async fn expired_tasks_are_swept_and_answer_not_found() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    let r = c
        .call(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}, "task": {"ttl": 150}}),
        )
        .await;
    let id = r["task"]["taskId"].as_str().unwrap().to_string();
    assert_eq!(r["task"]["ttl"], 150);
    // The ttl is a wall-clock expiry in the store; the sweeper deletes the task then.
    let client = tokio::sync::Mutex::new(&mut c);
    eventually(WAIT, || async {
        let r = client
            .lock()
            .await
            .request("tasks/get", json!({"taskId": id}))
            .await;
        r.body["error"]["code"] == -32602
    })
    .await;
    assert_eq!(
        c.error_code("tasks/result", json!({"taskId": id})).await,
        -32602
    );
}

#[tokio::test]
async fn notifications_cancelled_stops_a_synchronous_call() {
    let s = start_server().await;
    let c = Client::connect(&s.url).await;
    let url = s.url.clone();
    let session = c.session.clone().unwrap();
    let call = tokio::spawn(async move {
        Client::on_session(&url, Some(session)).post_raw(json!({"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}).to_string()).await
    });
    // The call reached the tool.
    eventually(WAIT, || async {
        s.sleeps_started.load(Ordering::SeqCst) == 1
    })
    .await;
    let r = c
        .notify(
            "notifications/cancelled",
            json!({"requestId": "slow-1", "reason": "user"}),
        )
        .await;
    assert_eq!(r.status, 202);
    let reply = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("call ended")
        .unwrap();
    assert!(
        reply.body.get("result").is_none(),
        "no result for a cancelled call: {}",
        reply.body
    );
    assert!(s.cancelled_flag.load(Ordering::SeqCst) || reply.body.is_null());
}

#[tokio::test]
async fn status_and_progress_notifications_reach_the_owner_on_the_get_stream() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    let stream = c.open_event_stream().await;
    assert_eq!(stream.status(), 200);
    let r = c
        .call("tools/call", json!({"name": "sleep", "arguments": {"ms": 100}, "task": {}, "_meta": {"progressToken": "p1"}}))
        .await;
    let id = r["task"]["taskId"].as_str().unwrap().to_string();
    let events = read_until(stream, |v| {
        v["method"] == "notifications/tasks/status" && v["params"]["status"] == "completed"
    })
    .await;
    let last = events.last().expect("events arrived");
    assert_eq!(last["params"]["taskId"], id.as_str());
    assert_eq!(last["params"]["status"], "completed");
    assert!(
        last["params"]["createdAt"].is_string() && last["params"].get("ttl").is_some(),
        "full task"
    );
    assert!(
        events.iter().any(
            |v| v["method"] == "notifications/progress" && v["params"]["progressToken"] == "p1"
        ),
        "task progress with the original token: {events:?}"
    );
}

#[tokio::test]
async fn synchronous_call_streams_progress_before_its_result() {
    let s = start_server().await;
    let c = Client::connect(&s.url).await;
    let resp = c
        .http
        .post(&s.url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", c.session.clone().unwrap())
        .body(json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":10},"_meta":{"progressToken":9}}}).to_string())
        .send()
        .await
        .unwrap();
    assert!(is_event_stream(resp.headers()));
    let events = read_until(resp, |v| v["id"] == 5).await;
    assert_eq!(events.first().unwrap()["method"], "notifications/progress");
    assert_eq!(events.first().unwrap()["params"]["progressToken"], 9);
    assert_eq!(
        events.last().unwrap()["result"]["content"][0]["text"],
        "slept 10 ms"
    );
}
