//! Human in the loop on the 2025-11-25 wire: a task asks the client (elicitation), the
//! question travels on the `tasks/result` stream with related-task `_meta`, the answer
//! resumes the work; reconnect, cancel, timeout and a client without the capability.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{read_stream, start_server, start_server_with_engine, test_engine_config, Client};
use mcp_tasks_engine::EngineConfig;
use mcp_tasks_server::ServerConfig;
use serde_json::{json, Value};
use std::time::Duration;

const RT: &str = "io.modelcontextprotocol/related-task";

/// Opens tasks/result on an SSE stream, answers the first elicitation it carries with
/// `answer` (from `answerer`), and returns (the elicitation request, the final response).
async fn answer_on_result_stream(
    asker: &Client,
    answerer: &Client,
    task: &str,
    answer: Value,
) -> (Value, Value) {
    let resp = asker
        .stream_request(77, "tasks/result", json!({"taskId": task}))
        .await;
    answer_on_stream(resp, answerer, answer).await
}

/// Reads the SSE stream of request 77, answers the first elicitation it carries with
/// `answer` (from `answerer`, twice: the second is ignored), and returns (the
/// elicitation request, the final response).
async fn answer_on_stream(
    resp: reqwest::Response,
    answerer: &Client,
    answer: Value,
) -> (Value, Value) {
    let mut request = Value::Null;
    let mut reply = Value::Null;
    let mut answered = false;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let reader = tokio::spawn(async move {
        read_stream(resp, |m| {
            let _ = tx.send(m.clone());
            m["id"] == 77
        })
        .await;
    });
    while let Some(m) = rx.recv().await {
        if m["method"] == "elicitation/create" && !answered {
            request = m.clone();
            answered = true;
            let body = json!({"jsonrpc": "2.0", "id": m["id"], "result": answer});
            assert_eq!(answerer.post_raw(body.to_string()).await.status, 202);
            // a second answer to the same request is ignored
            assert_eq!(answerer.post_raw(body.to_string()).await.status, 202);
        } else if m["id"] == 77 {
            reply = m;
        }
    }
    reader.await.unwrap();
    (request, reply)
}

#[tokio::test]
async fn elicitation_travels_on_the_result_stream_and_resumes_the_task() {
    let s = start_server().await;
    let mut c = Client::connect_eliciting(&s.url).await;
    let id = c.create_task("ask", json!({})).await;
    let waiting = c.wait_status(&id, "input_required").await;
    assert_eq!(waiting["taskId"], id.as_str());
    let (request, reply) = answer_on_result_stream(
        &c,
        &c,
        &id,
        json!({"action": "accept", "content": {"answer": "yes"}}),
    )
    .await;
    assert_eq!(
        request["params"]["_meta"][RT]["taskId"],
        id.as_str(),
        "related-task on the request"
    );
    assert_eq!(request["params"]["message"], "Your answer?");
    assert!(
        request["params"].get("task").is_none(),
        "no client-hosted task unless enabled"
    );
    assert!(request["params"]["requestedSchema"]["properties"]["answer"].is_object());
    assert_eq!(reply["result"]["content"][0]["text"], "answer: yes");
    assert_eq!(
        reply["result"]["_meta"][RT]["taskId"],
        id.as_str(),
        "related-task on the result"
    );
    assert_eq!(c.status_of(&id).await, "completed");
}

#[tokio::test]
async fn a_client_that_reconnects_is_asked_again_and_answers_from_the_new_session() {
    let s = start_server().await;
    let mut a = Client::connect_eliciting(&s.url).await;
    let id = a.create_task("ask", json!({})).await;
    a.wait_status(&id, "input_required").await;
    a.delete_session().await;

    let b = Client::connect_eliciting(&s.url).await;
    let (request, reply) = answer_on_result_stream(
        &b,
        &b,
        &id,
        json!({"action": "accept", "content": {"answer": "later"}}),
    )
    .await;
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(reply["result"]["content"][0]["text"], "answer: later");
}

#[tokio::test]
async fn status_goes_working_input_required_working_completed() {
    let s = start_server().await;
    let mut c = Client::connect_eliciting(&s.url).await;
    let events = c.open_event_stream().await;
    let id = c.create_task("ask", json!({})).await;
    let (url, session) = (s.url.clone(), c.session.clone());
    let mut statuses = vec!["working".to_string()];
    read_stream(events, |m| {
        if m["method"] == "notifications/tasks/status" && m["params"]["taskId"] == id.as_str() {
            statuses.push(m["params"]["status"].as_str().unwrap().to_string());
        }
        if m["method"] == "elicitation/create" {
            // no tasks/result is pending, so the question comes on the GET stream
            assert_eq!(m["params"]["_meta"][RT]["taskId"], id.as_str());
            let body = json!({"jsonrpc": "2.0", "id": m["id"], "result": {"action": "accept", "content": {"answer": "x"}}});
            let answerer = Client::on_session(&url, session.clone());
            tokio::spawn(async move { answerer.post_raw(body.to_string()).await });
        }
        statuses.last().map(String::as_str) == Some("completed")
    })
    .await;
    statuses.dedup();
    assert_eq!(
        statuses,
        ["working", "input_required", "working", "completed"]
    );
    assert_eq!(
        c.call("tasks/result", json!({"taskId": id})).await["content"][0]["text"],
        "answer: x"
    );
}

#[tokio::test]
async fn cancel_while_waiting_for_input_wakes_the_tool() {
    let s = start_server().await;
    let mut c = Client::connect_eliciting(&s.url).await;
    let id = c.create_task("ask", json!({})).await;
    c.wait_status(&id, "input_required").await;
    assert_eq!(
        c.call("tasks/cancel", json!({"taskId": id})).await["status"],
        "cancelled"
    );
    // the waiting elicit() returned Cancelled
    s.saw_cancellation().await;
    assert_eq!(c.status_of(&id).await, "cancelled");
}

#[tokio::test]
async fn a_question_past_its_deadline_fails_the_task_naming_the_request() {
    // The input timeout bounds plain calls only: the task's question has its own
    // deadline (300 ms, outcome: fail).
    let engine = EngineConfig {
        input_timeout: Duration::from_secs(3600),
        ..test_engine_config()
    };
    let s = start_server_with_engine(engine, ServerConfig::default()).await;
    let mut c = Client::connect_eliciting(&s.url).await;
    let id = c.create_task("ask_briefly", json!({})).await;
    let failed = c.wait_status(&id, "failed").await;
    let message = failed["statusMessage"].as_str().unwrap();
    assert!(
        message.contains("elicitation-1")
            && message.contains("elicitation/create")
            && message.contains("deadline"),
        "{message}"
    );
    let r = c.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(r.body["error"]["code"], -32001, "{}", r.body);
}

#[tokio::test]
async fn a_client_without_elicitation_gets_an_explicit_failure_not_a_hang() {
    let s = start_server().await;
    let mut c = Client::connect_with_capabilities(&s.url, json!({})).await;
    let id = c.create_task("ask", json!({})).await;
    let result = c.call("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["isError"], true);
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("capabilities.elicitation"),
        "{result}"
    );
    assert_eq!(c.status_of(&id).await, "failed");
}

#[tokio::test]
async fn a_synchronous_call_asks_on_its_own_stream_and_waits_for_the_answer() {
    let s = start_server().await;
    let c = Client::connect_eliciting(&s.url).await;
    let resp = c
        .stream_request(77, "tools/call", json!({"name": "ask", "arguments": {}}))
        .await;
    let (request, reply) = answer_on_stream(
        resp,
        &c,
        json!({"action": "accept", "content": {"answer": "yes"}}),
    )
    .await;
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Your answer?");
    assert!(
        request["params"]["_meta"].get(RT).is_none(),
        "no task to relate to: {request}"
    );
    assert_eq!(
        reply["result"]["content"][0]["text"], "answer: yes",
        "{reply}"
    );

    // Declined: the tool sees it and says so.
    let resp = c
        .stream_request(77, "tools/call", json!({"name": "ask", "arguments": {}}))
        .await;
    let (_, reply) = answer_on_stream(resp, &c, json!({"action": "decline"})).await;
    assert_eq!(
        reply["result"]["content"][0]["text"], "answer: none",
        "{reply}"
    );
}

/// A plain call's answer when its task waits for a question the client cannot answer
/// on the call: the handle, naming the task and how to answer it.
fn assert_waits_for_an_answer(r: &Value) -> String {
    assert_eq!(r["isError"], false, "the tool has no outputSchema: {r}");
    assert_eq!(r["structuredContent"]["status"], "input_required", "{r}");
    assert_eq!(
        r["structuredContent"]["questions"][0]["method"], "elicitation/create",
        "{r}"
    );
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("waiting for an answer") && text.contains("task_answer"),
        "{r}"
    );
    let id = r["_meta"][RT]["taskId"].as_str().unwrap().to_string();
    assert_eq!(r["structuredContent"]["taskId"], id.as_str());
    id
}

#[tokio::test]
async fn a_plain_call_whose_client_cannot_answer_becomes_a_task_waiting_for_an_answer() {
    let s = start_server().await;
    // The client did not declare elicitation: the question waits in the task (for
    // task_answer, a person on the board), instead of failing the tool.
    let mut plain = Client::connect(&s.url).await;
    let r = plain
        .call("tools/call", json!({"name": "ask", "arguments": {}}))
        .await;
    let id = assert_waits_for_an_answer(&r);
    let key = r["structuredContent"]["questions"][0]["key"].clone();
    let answered = plain
        .call(
            "tools/call",
            json!({"name": "task_answer", "arguments": {"taskId": id, "answers": {key.as_str().unwrap(): {"answer": "later"}}}}),
        )
        .await;
    assert_eq!(answered["isError"], false, "{answered}");
    let done = plain
        .call(
            "tools/call",
            json!({"name": "task_wait", "arguments": {"taskId": id}}),
        )
        .await;
    assert_eq!(done["content"][0]["text"], "answer: later", "{done}");

    // A JSON-only POST and no GET stream: nothing can carry the question, so the
    // call's answer is the handle too.
    let c = Client::connect_eliciting(&s.url).await;
    let r: Value = c
        .http
        .post(&c.url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-session-id", c.session.clone().unwrap())
        .body(
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                   "params": {"name": "ask", "arguments": {}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_waits_for_an_answer(&r["result"]);
}

#[tokio::test]
async fn client_hosted_tasks_are_created_polled_and_collected_on_the_client() {
    let config = ServerConfig {
        client_hosted_tasks: true,
        ..ServerConfig::default()
    };
    let s = start_server_with_engine(test_engine_config(), config).await;
    let caps = json!({"elicitation": {}, "tasks": {"requests": {"elicitation": {"create": {}}}}});
    let mut c = Client::connect_with_capabilities(&s.url, caps).await;
    let events = c.open_event_stream().await;
    let id = c.create_task("ask", json!({})).await;
    let (url, session) = (s.url.clone(), c.session.clone());
    let mut seen = Vec::new();
    let task_id = id.clone();
    read_stream(events, |m| {
        let Some(method) = m["method"].as_str() else { return false };
        if m.get("id").is_none() {
            return false; // notifications
        }
        seen.push(method.to_string());
        let now = "2026-01-01T00:00:00Z";
        let result = match method {
            "elicitation/create" => {
                assert_eq!(m["params"]["task"]["ttl"], 600000, "request augmented with task");
                assert_eq!(m["params"]["_meta"][RT]["taskId"], task_id.as_str());
                json!({"task": {"taskId": "client-task-1", "status": "working", "createdAt": now, "lastUpdatedAt": now, "ttl": 60000, "pollInterval": 50}})
            }
            "tasks/get" => {
                assert_eq!(m["params"]["taskId"], "client-task-1");
                json!({"taskId": "client-task-1", "status": "completed", "createdAt": now, "lastUpdatedAt": now, "ttl": 60000})
            }
            "tasks/result" => json!({"action": "accept", "content": {"answer": "hosted"}}),
            other => panic!("unexpected request {other}"),
        };
        let body = json!({"jsonrpc": "2.0", "id": m["id"], "result": result});
        let answerer = Client::on_session(&url, session.clone());
        tokio::spawn(async move { answerer.post_raw(body.to_string()).await });
        method == "tasks/result"
    })
    .await;
    assert_eq!(seen, ["elicitation/create", "tasks/get", "tasks/result"]);
    assert_eq!(
        c.call("tasks/result", json!({"taskId": id})).await["content"][0]["text"],
        "answer: hosted"
    );
}

/// Reads the SSE stream of a plain `ask` call up to its `elicitation/create`, handing
/// every message to `tx`; returns the request.
async fn ask_plainly(c: &Client, id: i64) -> (Value, tokio::sync::mpsc::UnboundedReceiver<Value>) {
    let resp = c
        .stream_request(id, "tools/call", json!({"name": "ask", "arguments": {}}))
        .await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        common::read_sse(resp, |m| {
            let _ = tx.send(m.clone());
            m["id"] == id
        })
        .await;
    });
    loop {
        let m = rx
            .recv()
            .await
            .expect("the stream ended before the question");
        if m["method"] == "elicitation/create" {
            return (m, rx);
        }
    }
}

#[tokio::test]
async fn only_the_session_asked_can_answer_a_plain_call() {
    let s = start_server().await;
    let asked = Client::connect_eliciting(&s.url).await;
    let other = Client::connect_eliciting(&s.url).await;
    let (request, mut rest) = ask_plainly(&asked, 31).await;
    let id = request["id"].as_str().unwrap().to_string();
    assert!(id.len() > 30, "server request ids are unguessable: {id}");
    let answer = |who: &str| {
        json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"answer": who}}})
            .to_string()
    };
    // Another session's answer is dropped...
    assert_eq!(other.post_raw(answer("intruder")).await.status, 202);
    // ...the asked session's counts.
    assert_eq!(asked.post_raw(answer("owner")).await.status, 202);
    let reply = loop {
        let m = rest.recv().await.expect("the call never answered");
        if m["id"] == 31 {
            break m;
        }
    };
    assert_eq!(
        reply["result"]["content"][0]["text"], "answer: owner",
        "{reply}"
    );
}

#[tokio::test]
async fn a_cancelled_plain_call_withdraws_its_question() {
    let s = start_server().await;
    let c = Client::connect_eliciting(&s.url).await;
    let (request, mut rest) = ask_plainly(&c, 32).await;
    c.notify(
        "notifications/cancelled",
        json!({"requestId": 32, "reason": "user gave up"}),
    )
    .await;
    let withdrawn = loop {
        let m = rest
            .recv()
            .await
            .expect("the stream ended without withdrawing the question");
        if m["method"] == "notifications/cancelled" {
            break m;
        }
    };
    assert_eq!(
        withdrawn["params"]["requestId"], request["id"],
        "{withdrawn}"
    );
    // A late answer is harmless.
    let late = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "decline"}});
    assert_eq!(c.post_raw(late.to_string()).await.status, 202);
    // the tool saw the cancellation
    s.saw_cancellation().await;
}
