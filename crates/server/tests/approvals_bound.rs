//! An approval is for the exact arguments it was given for: each round carries the
//! hash of their canonical JSON, and an approver who changes them starts a new
//! approval, in which the votes for the old arguments no longer count.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{start_server_with, Client, TestServer};
use mcp_tasks_engine::{Caller, Outcome, TaskRecord};
use mcp_tasks_protocol::TaskId;
use mcp_tasks_server::approvals::{ApprovalRule, Approvals, APPROVAL_METHOD};
use mcp_tasks_server::auth::{AuthMode, StaticTokens};
use mcp_tasks_server::ServerConfig;
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

async fn server() -> TestServer {
    let rule: ApprovalRule =
        toml::from_str("tool = \"sleep\"\napprovers = [\"ops\"]\nrequired = 2\nallow_edit = true")
            .unwrap();
    let groups = BTreeMap::from([(
        "ops".to_string(),
        vec!["alice".to_string(), "bob".to_string(), "dave".to_string()],
    )]);
    let tokens: HashMap<String, String> = [("tok-carol".to_string(), "carol".to_string())].into();
    start_server_with(ServerConfig {
        auth: AuthMode::Required(Arc::new(StaticTokens::new(tokens))),
        approvals: Approvals::new(vec![rule], groups).unwrap(),
        ..ServerConfig::default()
    })
    .await
}

async fn record(s: &TestServer, id: &str) -> TaskRecord {
    s.server
        .engine()
        .get(
            &TaskId::from_string(id),
            &Caller::anonymous("test", None).as_operator(),
        )
        .await
        .unwrap()
}

/// The open approval round other than `not`: its key and params.
async fn round(s: &TestServer, id: &str, not: &str) -> (String, Value) {
    eventually(WAIT, || async {
        record(s, id)
            .await
            .input_requests
            .iter()
            .find(|(k, q)| q.is_outstanding() && q.method == APPROVAL_METHOD && *k != not)
            .map(|(k, q)| (k.clone(), q.params.clone()))
    })
    .await
}

async fn vote(s: &TestServer, id: &str, key: &str, who: &str, vote: Value) {
    let person = Caller::authenticated(who, None).with_groups(vec!["ops".to_string()]);
    s.server
        .engine()
        .answer_input_as(
            &TaskId::from_string(id),
            key,
            Outcome::Result { value: vote },
            &person,
            "link",
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn changed_arguments_are_a_new_approval_and_old_votes_do_not_count() {
    let s = server().await;
    let mut carol = Client::connect_with_token(&s.url, "tok-carol").await;
    let id = carol.create_task("sleep", json!({"ms": 100000})).await;
    let (first, params) = round(&s, &id, "").await;
    let original_hash = params["argumentsHash"].as_str().unwrap().to_string();
    assert_eq!(original_hash.len(), 64, "a SHA-256 in hex: {params}");
    vote(&s, &id, &first, "alice", json!({"decision": "approve"})).await;

    // Bob approves other arguments: alice approved the old ones only.
    let (second, params) = round(&s, &id, &first).await;
    assert_eq!(params["argumentsHash"], original_hash.as_str());
    assert_eq!(params["approvedBy"], json!(["alice"]));
    vote(
        &s,
        &id,
        &second,
        "bob",
        json!({"decision": "approve", "arguments": {"ms": 2}}),
    )
    .await;
    let (third, params) = round(&s, &id, &second).await;
    assert_ne!(params["argumentsHash"], original_hash.as_str());
    assert_eq!(params["arguments"], json!({"ms": 2}));
    assert_eq!(params["approvedBy"], json!(["bob"]), "{params}");
    assert_eq!(params["changed"]["by"], "bob");
    assert_eq!(params["changed"]["from"], json!({"ms": 100000}));
    assert_eq!(params["changed"]["votesDropped"], json!(["alice"]));
    assert_eq!(
        record(&s, &id).await.status_message.as_deref(),
        Some(
            "arguments changed by bob, a new approval: waiting for approval by ops (1 of 2 given)"
        )
    );
    // Alice may approve again, now the new arguments.
    vote(&s, &id, &third, "alice", json!({"decision": "approve"})).await;
    let done = eventually(WAIT, || async {
        let r = record(&s, &id).await;
        r.status.is_terminal().then_some(r)
    })
    .await;
    match done.outcome.as_deref() {
        Some(Outcome::Result { value }) => assert_eq!(value["content"][0]["text"], "slept 2 ms"),
        other => panic!("{other:?}"),
    }
    let timeline = s.server.engine().timeline(&done).await.unwrap();
    assert!(
        timeline.iter().any(|e| e
            .status_message
            .as_deref()
            .is_some_and(|m| m.contains("by bob via link"))),
        "the channel of each decision is in the timeline: {timeline:?}"
    );
}
