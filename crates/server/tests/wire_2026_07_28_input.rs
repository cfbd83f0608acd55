//! Questions on the 2026-07-28 wire: input requests inlined in `tasks/get` and answered
//! with `tasks/update`, MRTR rounds for a tool's preflight questions, and the same
//! question asked inside the task on the 2025-11-25 wire.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{start_server, Client};
use serde_json::json;

use common::stateless::Stateless;

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
