//! One story on every path: answers checked against their question before any tool sees
//! them (2025-11-25 responses, `tasks/update`, MRTR), and a tool error told the same way
//! by `tasks/get`, `tasks/list` and a status notification, as each wire's text says.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{read_stream, read_until, start_server, Client};
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::{json, Value};

const EXT: &str = "io.modelcontextprotocol/tasks";

/// One stateless (2026-07-28) request declaring the extension; returns the response.
async fn stateless(url: &str, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {EXT: {}}},
    });
    let name = ["name", "taskId"]
        .iter()
        .find_map(|k| params.get(*k).and_then(Value::as_str).map(String::from))
        .unwrap_or_default();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn stateless_wait(url: &str, task: &str, status: &str) -> Value {
    eventually(WAIT, || async {
        let t = stateless(url, "tasks/get", json!({"taskId": task})).await["result"].clone();
        (t["status"] == status).then_some(t)
    })
    .await
}

#[tokio::test]
async fn tasks_update_refuses_a_wrong_answer_naming_the_field_and_the_question_stays_open() {
    let s = start_server().await;
    let created = stateless(
        &s.url,
        "tools/call",
        json!({"name": "ask", "arguments": {}}),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let waiting = stateless_wait(&s.url, &id, "input_required").await;
    let key = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    for wrong in [
        json!({"action": "accept", "content": {"answer": 5}}),
        json!({"action": "accept", "content": {}}),
        json!({"action": "accept"}),
    ] {
        let refused = stateless(
            &s.url,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {key.as_str(): wrong}}),
        )
        .await;
        assert_eq!(refused["error"]["code"], -32602, "{wrong}: {refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains("'answer'"), "{message}");
        let still = stateless(&s.url, "tasks/get", json!({"taskId": id})).await["result"].clone();
        assert_eq!(still["status"], "input_required", "{wrong}");
        assert!(still["inputRequests"].get(&key).is_some());
    }
    let right = json!({"action": "accept", "content": {"answer": "fits"}});
    let ack = stateless(
        &s.url,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {key.as_str(): right}}),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let done = stateless_wait(&s.url, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "answer: fits");
}

#[tokio::test]
async fn mrtr_refuses_a_wrong_preflight_answer_and_creates_nothing() {
    let s = start_server().await;
    let refused = stateless(
        &s.url,
        "tools/call",
        json!({"name": "named", "arguments": {}, "inputResponses": {"who": {"action": "accept", "content": {"name": 42}}}}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("'name' must be text"), "{message}");
    let fixed = stateless(
        &s.url,
        "tools/call",
        json!({"name": "named", "arguments": {}, "inputResponses": {"who": {"action": "accept", "content": {"name": "Ann"}}}}),
    )
    .await;
    assert_eq!(fixed["result"]["resultType"], "task", "{fixed}");
}

/// Reads the SSE stream of request 77, answers its first `elicitation/create` wrongly
/// and the one asked again rightly (checking, when `task` is given, that the task still
/// waits in between); returns how often it was asked and the final response.
async fn answer_wrong_then_right(
    c: &mut Client,
    stream: reqwest::Response,
    task: Option<&str>,
) -> (usize, Value) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let reader = tokio::spawn(async move {
        read_stream(stream, |m| {
            let _ = tx.send(m.clone());
            m["id"] == 77
        })
        .await;
    });
    let mut asked: Vec<Value> = Vec::new();
    let mut reply = Value::Null;
    while let Some(m) = rx.recv().await {
        if m["method"] == "elicitation/create" {
            asked.push(m.clone());
            let answer = if asked.len() == 1 {
                json!({"action": "accept", "content": {"answer": 5}})
            } else {
                // Asked again: the question says what was wrong.
                let message = m["params"]["message"].as_str().unwrap();
                assert!(message.contains("'answer' must be text"), "{message}");
                assert!(message.contains("Your answer?"), "{message}");
                assert_ne!(m["id"], asked[0]["id"], "a new request has a new id");
                if let Some(task) = task {
                    assert_eq!(c.status_of(task).await, "input_required");
                }
                json!({"action": "accept", "content": {"answer": "fits"}})
            };
            let body = json!({"jsonrpc": "2.0", "id": m["id"], "result": answer});
            assert_eq!(c.post_raw(body.to_string()).await.status, 202);
        } else if m["id"] == 77 {
            reply = m;
        }
    }
    reader.await.unwrap();
    (asked.len(), reply)
}

#[tokio::test]
async fn a_wrong_response_on_the_2025_wire_is_asked_again_saying_why() {
    let s = start_server().await;
    let mut c = Client::connect_eliciting(&s.url).await;
    let id = c.create_task("ask", json!({})).await;
    c.wait_status(&id, "input_required").await;
    let stream = c
        .stream_request(77, "tasks/result", json!({"taskId": id}))
        .await;
    let (asked, reply) = answer_wrong_then_right(&mut c, stream, Some(&id)).await;
    assert_eq!(asked, 2, "asked once, then once again");
    assert_eq!(reply["result"]["content"][0]["text"], "answer: fits");

    // A plain call's question too: the tool sees only the answer that fits.
    let stream = c
        .stream_request(77, "tools/call", json!({"name": "ask", "arguments": {}}))
        .await;
    let (asked, reply) = answer_wrong_then_right(&mut c, stream, None).await;
    assert_eq!(asked, 2, "asked once, then once again");
    assert_eq!(reply["result"]["content"][0]["text"], "answer: fits");
}

/// 2025-11-25 says a tool call whose result has `isError: true` is `failed`; the
/// extension (SEP-2557/2663) says `completed`, with the result inlined. Every path of a
/// wire tells its story, and the status message carries the tool's words on both.
#[tokio::test]
async fn a_tool_error_reads_the_same_on_every_path_of_each_wire() {
    let s = start_server().await;
    let mut c = Client::connect(&s.url).await;
    let events = c.open_event_stream().await;
    let id = c.create_task("tool_error", json!({})).await;
    let notified = read_until(events, |v| {
        v["method"] == "notifications/tasks/status"
            && v["params"]["taskId"] == id.as_str()
            && v["params"]["status"]
                .as_str()
                .is_some_and(|s| s != "working")
    })
    .await;
    let notification = &notified.last().unwrap()["params"];
    let got = c.wait_status(&id, "failed").await;
    let listed = c.call("tasks/list", json!({})).await;
    let listed = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["taskId"] == id.as_str())
        .cloned()
        .unwrap();
    for (path, task) in [
        ("notification", notification),
        ("tasks/get", &got),
        ("tasks/list", &listed),
    ] {
        assert_eq!(task["status"], "failed", "{path}: {task}");
        let message = task["statusMessage"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("the tool reported an error"),
            "{path}: {message}"
        );
    }
    let extension = stateless_wait(&s.url, &id, "completed").await;
    assert_eq!(extension["result"]["isError"], true, "{extension}");
    assert_eq!(extension["statusMessage"], got["statusMessage"]);
    // The extension's notification is the DetailedTask tasks/get would give.
    let listen = json!({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": {
        "notifications": {"taskIds": [id]},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}}}}});
    let stream = reqwest::Client::new()
        .post(&s.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(listen.to_string())
        .send()
        .await
        .unwrap();
    let told = read_until(stream, |v| v["method"] == "notifications/tasks").await;
    let told = &told.last().unwrap()["params"];
    assert_eq!(told["status"], "completed", "{told}");
    assert_eq!(told["result"]["isError"], true, "{told}");
    assert_eq!(told["statusMessage"], got["statusMessage"]);
}
