//! Cedar policies on every tools/call: a `forbid` refuses with its id and reason on
//! both wires, a `permit` runs the call, a `permit` with `@approval` holds it for a
//! quorum of approvers as an `[[approval]]` rule does, groups the caller comes with (as
//! an identity provider gives them) count, and a client cannot name the policy its
//! call is held by.
#![cfg(feature = "policy")]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::stateless::Stateless;
use common::{start_server_with, Client, TestServer};
use mcp_tasks_engine::{Caller, Outcome, TaskRecord};
use mcp_tasks_protocol::error_code::FORBIDDEN_BY_POLICY;
use mcp_tasks_protocol::TaskId;
use mcp_tasks_server::approvals::{Approvals, Policies, APPROVAL_METHOD, APPROVAL_POLICY_META};
use mcp_tasks_server::auth::{AuthMode, StaticTokens};
use mcp_tasks_server::ServerConfig;
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

const POLICIES: &str = r#"
// Everyone may call every tool, unless a forbid below says otherwise.
@id("everyone")
permit(principal, action == Action::"call", resource);

@id("no-panics")
@reason("the panics tool is off limits for agents")
forbid(principal, action, resource == Tool::"panics");

@id("contractors-no-secrets")
@reason("contractors may not pass secrets")
forbid(principal in Group::"contractors", action, resource == Tool::"sleep")
when { context.arguments has secret };

@id("long-sleeps")
@approval("Sleep that long?")
@approvers("ops")
@quorum("2")
permit(principal, action, resource == Tool::"sleep")
when { context.arguments.ms > 1000 };
"#;

fn groups() -> BTreeMap<String, Vec<String>> {
    BTreeMap::from([(
        "ops".to_string(),
        vec!["alice".to_string(), "bob".to_string()],
    )])
}

async fn server() -> TestServer {
    let policies = Policies::from_sources(
        &[("tools.cedar".to_string(), POLICIES.to_string())],
        &groups(),
    )
    .unwrap();
    let tokens: HashMap<String, String> = [("tok-carol".to_string(), "carol".to_string())].into();
    start_server_with(ServerConfig {
        auth: AuthMode::Required(Arc::new(StaticTokens::new(tokens))),
        approvals: Approvals::new(Vec::new(), groups())
            .unwrap()
            .with_policies(policies),
        ..ServerConfig::default()
    })
    .await
}

fn everyone() -> Caller {
    Caller::anonymous("test", None).as_operator()
}

async fn record(s: &TestServer, id: &str) -> TaskRecord {
    s.server
        .engine()
        .get(&TaskId::from_string(id), &everyone())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_forbid_refuses_with_its_id_and_reason_and_a_permit_runs() {
    let s = server().await;
    let mut carol = Client::connect_with_token(&s.url, "tok-carol").await;
    let refused = carol
        .request("tools/call", json!({"name": "panics", "arguments": {}}))
        .await;
    let error = &refused.body["error"];
    assert_eq!(error["code"], FORBIDDEN_BY_POLICY, "{}", refused.body);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("forbidden by policy no-panics: the panics tool is off limits"),
        "{message}"
    );
    assert_eq!(error["data"]["policies"], json!(["no-panics"]));
    // Asked for as a task, the same: nothing is created.
    let as_task = carol
        .request(
            "tools/call",
            json!({"name": "panics", "arguments": {}, "task": {}}),
        )
        .await;
    assert_eq!(as_task.body["error"]["code"], FORBIDDEN_BY_POLICY);
    // The permit lets an ordinary call run.
    let echoed = carol
        .call(
            "tools/call",
            json!({"name": "echo", "arguments": {"secret": "x"}}),
        )
        .await;
    assert_ne!(echoed["isError"], true, "{echoed}");
    // The stateless wire meets the same policies.
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        "Bearer tok-carol".parse().unwrap(),
    );
    let mut stateless = Stateless::new(&s.url);
    stateless.http = reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap();
    for ext in [false, true] {
        let (_, body) = stateless
            .send(
                "tools/call",
                json!({"name": "panics", "arguments": {}}),
                ext,
                None,
            )
            .await;
        assert_eq!(body["error"]["code"], FORBIDDEN_BY_POLICY, "{body}");
    }
}

#[tokio::test]
async fn an_approval_policy_holds_the_call_for_a_quorum() {
    let s = server().await;
    let mut carol = Client::connect_as(
        &s.url,
        "2025-11-25",
        json!({"tasks": {}}),
        Some("tok-carol".into()),
    )
    .await;
    // A short sleep is permitted outright (the approval permit's condition fails).
    let short = carol.create_task("sleep", json!({"ms": 1})).await;
    carol.wait_status(&short, "completed").await;
    // A client that names a policy in its own _meta does not get to choose.
    let id = {
        let r = carol
            .call(
                "tools/call",
                json!({"name": "sleep", "arguments": {"ms": 1001}, "task": {},
                       "_meta": {APPROVAL_POLICY_META: "everyone"}}),
            )
            .await;
        r["task"]["taskId"].as_str().unwrap().to_string()
    };
    carol.wait_status(&id, "input_required").await;
    let r = record(&s, &id).await;
    assert_eq!(
        r.request.field("_meta").unwrap()[APPROVAL_POLICY_META],
        "long-sleeps",
        "the server writes the deciding policy"
    );
    for who in ["alice", "bob"] {
        let key = eventually(WAIT, || async {
            let r = record(&s, &id).await;
            r.input_requests
                .iter()
                .find(|(_, q)| q.is_outstanding() && q.method == APPROVAL_METHOD)
                .map(|(k, q)| {
                    assert_eq!(q.params["message"], "Sleep that long?");
                    assert_eq!(q.params["required"], 2);
                    k.clone()
                })
        })
        .await;
        let person = Caller::authenticated(who, None).with_groups(vec!["ops".to_string()]);
        s.server
            .engine()
            .answer_input_as(
                &TaskId::from_string(&id),
                &key,
                Outcome::Result {
                    value: json!({"decision": "approve"}),
                },
                &person,
                "board",
            )
            .await
            .unwrap();
    }
    carol.wait_status(&id, "completed").await;
    let result = carol.call("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["content"][0]["text"], "slept 1001 ms");
}

#[tokio::test]
async fn groups_the_caller_comes_with_count() {
    let s = server().await;
    // As an identity provider's claims put them on the caller (not in [groups]).
    let contractor =
        Caller::authenticated("eve", None).with_groups(vec!["contractors".to_string()]);
    let refused = s
        .server
        .start_tool_task(
            contractor.clone(),
            json!({"name": "sleep", "arguments": {"ms": 1, "secret": "s"}}),
        )
        .await
        .expect_err("refused");
    assert_eq!(refused.code, FORBIDDEN_BY_POLICY);
    assert!(
        refused.message.contains("contractors-no-secrets"),
        "{}",
        refused.message
    );
    // Without the argument the forbid does not apply; without the group neither.
    s.server
        .start_tool_task(contractor, json!({"name": "sleep", "arguments": {"ms": 1}}))
        .await
        .unwrap();
    s.server
        .start_tool_task(
            Caller::authenticated("eve", None),
            json!({"name": "sleep", "arguments": {"ms": 1, "secret": "s"}}),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn without_a_permit_nothing_runs() {
    let policies = Policies::from_sources(
        &[(
            "only-alice.cedar".to_string(),
            "permit(principal == User::\"alice\", action, resource);".to_string(),
        )],
        &BTreeMap::new(),
    )
    .unwrap();
    let s = start_server_with(ServerConfig {
        approvals: Approvals::default().with_policies(policies),
        ..ServerConfig::default()
    })
    .await;
    let mut anyone = Client::connect(&s.url).await;
    let r = anyone
        .request("tools/call", json!({"name": "echo", "arguments": {}}))
        .await;
    assert_eq!(r.body["error"]["code"], FORBIDDEN_BY_POLICY, "{}", r.body);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("No policy permits"),
        "{}",
        r.body
    );
    assert_eq!(r.body["error"]["data"]["policies"], json!([]));
}
