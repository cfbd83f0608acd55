//! The 2026-07-28 stateless wire with the Tasks extension, beside the 2025-11-25 wire on
//! the same endpoint: discovery, cache hints, routing headers, error codes, one store for
//! both wires, subscriptions. The task path is in `wire_2026_07_28_tasks.rs`, questions
//! and MRTR rounds in `wire_2026_07_28_input.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{is_event_stream, read_until, start_server, start_server_with, Client};
use mcp_tasks_server::ServerConfig;
use serde_json::json;
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
