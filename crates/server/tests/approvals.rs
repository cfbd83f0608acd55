//! Approval rules: a matching call waits for its approvers before the tool runs, on
//! both wires and for plain calls; only the approvers answer (never the client that
//! asked, through any channel); quorum, changed arguments, reject reasons, deadlines
//! and escalation.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::stateless::Stateless;
use common::{start_server_with, Client, TestServer};
use mcp_tasks_engine::{Caller, EngineError, Outcome, TaskRecord};
use mcp_tasks_protocol::TaskId;
use mcp_tasks_server::approvals::{ApprovalRule, Approvals, APPROVAL_METHOD};
use mcp_tasks_server::auth::{AuthMode, StaticTokens};
use mcp_tasks_server::ServerConfig;
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

#[derive(serde::Deserialize)]
struct Rules {
    approval: Vec<ApprovalRule>,
}

fn groups() -> BTreeMap<String, Vec<String>> {
    BTreeMap::from([
        (
            "ops".to_string(),
            vec!["alice".to_string(), "bob".to_string()],
        ),
        ("leads".to_string(), vec!["dave".to_string()]),
    ])
}

/// A server with `rules` (TOML `[[approval]]` entries); `carol` calls tools with
/// `tok-carol`, when `tokens` is set.
async fn server(rules: &str, tokens: bool) -> TestServer {
    let rules: Rules = toml::from_str(rules).unwrap();
    let auth = if tokens {
        let map: HashMap<String, String> = [("tok-carol".to_string(), "carol".to_string())].into();
        AuthMode::Required(Arc::new(StaticTokens::new(map)))
    } else {
        AuthMode::default()
    };
    start_server_with(ServerConfig {
        auth,
        approvals: Approvals::new(rules.approval, groups()).unwrap(),
        ..ServerConfig::default()
    })
    .await
}

/// A person, as the board (or a link, or Slack) acts for them.
fn person(s: &TestServer, name: &str) -> Caller {
    Caller::authenticated(name, None).with_groups(s.server.config().approvals.groups_of(name))
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

/// Waits until the task asks an open approval question; returns its key and params.
async fn open_approval(s: &TestServer, id: &str) -> (String, Value) {
    eventually(WAIT, || async {
        let r = record(s, id).await;
        r.input_requests
            .iter()
            .find(|(_, q)| q.is_outstanding() && q.method == APPROVAL_METHOD)
            .map(|(k, q)| (k.clone(), q.params.clone()))
    })
    .await
}

async fn vote(
    s: &TestServer,
    id: &str,
    key: &str,
    who: &str,
    vote: Value,
) -> Result<bool, EngineError> {
    s.server
        .engine()
        .answer_input_as(
            &TaskId::from_string(id),
            key,
            Outcome::Result { value: vote },
            &person(s, who),
            "board",
        )
        .await
}

async fn finished(s: &TestServer, id: &str) -> TaskRecord {
    eventually(WAIT, || async {
        let r = record(s, id).await;
        r.status.is_terminal().then_some(r)
    })
    .await
}

fn result_text(r: &TaskRecord) -> String {
    match r.outcome.as_deref() {
        Some(Outcome::Result { value }) => value["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        other => panic!("no result: {other:?}"),
    }
}

fn is_tool_error(r: &TaskRecord) -> bool {
    matches!(r.outcome.as_deref(), Some(Outcome::Result { value }) if value["isError"] == true)
}

const SLEEP_BY_OPS: &str = r#"
[[approval]]
tool = "sl*"
approvers = ["ops"]
"#;

#[tokio::test]
async fn an_approved_call_runs_and_its_client_cannot_answer_the_approval() {
    let s = server(SLEEP_BY_OPS, true).await;
    let mut carol = Client::connect_as(
        &s.url,
        "2025-11-25",
        json!({"elicitation": {}, "tasks": {}}),
        Some("tok-carol".into()),
    )
    .await;
    let id = carol.create_task("sleep", json!({"ms": 1})).await;
    carol.wait_status(&id, "input_required").await;
    let (key, params) = open_approval(&s, &id).await;
    assert!(key.starts_with("approval-"), "{key}");
    assert_eq!(params["tool"], "sleep");
    assert_eq!(params["arguments"], json!({"ms": 1}));
    assert_eq!(
        record(&s, &id).await.status_message.as_deref(),
        Some("waiting for approval by ops (0 of 1 given)")
    );

    // The client: a response made up for the question's request id is not an answer.
    let forged = json!({"jsonrpc": "2.0", "id": format!("mcp-tasks:{id}:{key}"), "result": {"decision": "approve"}});
    assert_eq!(carol.post_raw(forged.to_string()).await.status, 202);
    // Nor is an answer through the engine's client channel, whoever the client is.
    let as_client = s
        .server
        .engine()
        .answer_input(
            &TaskId::from_string(&id),
            &key,
            Outcome::Result {
                value: json!({"decision": "approve"}),
            },
            &person(&s, "alice"),
        )
        .await;
    assert!(
        matches!(&as_client, Err(EngineError::NotAllowed(m)) if m.contains("not for the client")),
        "{as_client:?}"
    );
    // Someone who is neither an approver nor the owner does not even see the task; an
    // operator sees it but is no approver.
    assert!(matches!(
        vote(&s, &id, &key, "mallory", json!({"decision": "approve"})).await,
        Err(EngineError::NotFound)
    ));
    let root = Caller::authenticated("root", None).as_operator();
    let by_operator = s
        .server
        .engine()
        .answer_input_as(
            &TaskId::from_string(&id),
            &key,
            Outcome::Result {
                value: json!({"decision": "approve"}),
            },
            &root,
            "board",
        )
        .await;
    assert!(
        matches!(&by_operator, Err(EngineError::NotAllowed(m)) if m.contains("root is not one of them")),
        "{by_operator:?}"
    );
    // A vote that is not one is refused and leaves the question open.
    assert!(matches!(
        vote(&s, &id, &key, "alice", json!({"decision": "maybe"})).await,
        Err(EngineError::InvalidInput(_))
    ));
    let still = record(&s, &id).await;
    assert!(
        still.input_requests[&key].is_outstanding(),
        "nothing above answered it"
    );
    // An approver sees the task although it is carol's.
    s.server
        .engine()
        .get_for_person(&TaskId::from_string(&id), &person(&s, "bob"))
        .await
        .unwrap();

    assert!(vote(&s, &id, &key, "alice", json!({"decision": "approve"}))
        .await
        .unwrap());
    let done = finished(&s, &id).await;
    assert_eq!(result_text(&done), "slept 1 ms");
    // The decision stays in the ended record: who, through which channel.
    let by = done.input_requests[&key].answered_by.as_ref().unwrap();
    assert_eq!((by.principal.as_str(), by.via.as_str()), ("alice", "board"));
    // The approver still sees the task after it ended.
    s.server
        .engine()
        .get_for_person(&TaskId::from_string(&id), &person(&s, "alice"))
        .await
        .unwrap();
    let timeline = s.server.engine().timeline(&done).await.unwrap();
    assert!(
        timeline
            .iter()
            .any(|e| e.status_message.as_deref() == Some("approved by alice via board")),
        "the vote is in the timeline: {timeline:?}"
    );
    let result = carol.call("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["content"][0]["text"], "slept 1 ms");
}

#[tokio::test]
async fn a_rejection_ends_the_call_with_the_reason_for_the_model() {
    let s = server(SLEEP_BY_OPS, true).await;
    let mut carol = Client::connect_with_token(&s.url, "tok-carol").await;
    let id = carol.create_task("sleep", json!({"ms": 1})).await;
    let (key, _) = open_approval(&s, &id).await;
    vote(
        &s,
        &id,
        &key,
        "bob",
        json!({"decision": "reject", "reason": "not on a Friday"}),
    )
    .await
    .unwrap();
    let done = finished(&s, &id).await;
    assert!(is_tool_error(&done));
    let text = result_text(&done);
    assert!(
        text.contains("rejected by bob: \"not on a Friday\"") && text.contains("did not run"),
        "{text}"
    );
    assert_eq!(
        s.sleeps_started.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the tool never ran"
    );
    let result = carol.call("tasks/result", json!({"taskId": id})).await;
    assert!(result["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("not on a Friday"));
}

#[tokio::test]
async fn a_quorum_counts_distinct_people_and_approvers_may_change_the_arguments() {
    let s = server(
        r#"
[[approval]]
tool = "sleep"
approvers = ["ops"]
required = 2
allow_edit = true
"#,
        true,
    )
    .await;
    let mut carol = Client::connect_with_token(&s.url, "tok-carol").await;
    let id = carol.create_task("sleep", json!({"ms": 100000})).await;
    let (first, _) = open_approval(&s, &id).await;
    // Changed arguments must fit the tool's schema.
    let wrong = vote(
        &s,
        &id,
        &first,
        "alice",
        json!({"decision": "approve", "arguments": {"ms": "soon"}}),
    )
    .await;
    assert!(
        matches!(&wrong, Err(EngineError::InvalidInput(m)) if m.contains("input schema")),
        "{wrong:?}"
    );
    vote(
        &s,
        &id,
        &first,
        "alice",
        json!({"decision": "approve", "arguments": {"ms": 3}}),
    )
    .await
    .unwrap();
    let (second, params) = eventually(WAIT, || async {
        let (k, p) = open_approval(&s, &id).await;
        (k != first).then_some((k, p))
    })
    .await;
    assert_eq!(params["approvedBy"], json!(["alice"]));
    assert_eq!(
        params["arguments"],
        json!({"ms": 3}),
        "the second approver sees the changed arguments"
    );
    let again = vote(&s, &id, &second, "alice", json!({"decision": "approve"})).await;
    assert!(
        matches!(&again, Err(EngineError::NotAllowed(m)) if m.contains("counts once")),
        "{again:?}"
    );
    assert!(record(&s, &id).await.input_requests[&second].is_outstanding());
    vote(&s, &id, &second, "bob", json!({"decision": "approve"}))
        .await
        .unwrap();
    let done = finished(&s, &id).await;
    assert_eq!(
        result_text(&done),
        "slept 3 ms",
        "the tool ran with the changed arguments"
    );
}

#[tokio::test]
async fn deadlines_reject_approve_or_escalate() {
    let s = server(
        r#"
[[approval]]
tool = "sleep"
when = [{ pointer = "/ms", equals = 1 }]
approvers = ["ops"]
deadline = "300ms"

[[approval]]
tool = "sleep"
when = [{ pointer = "/ms", equals = 2 }]
approvers = ["ops"]
deadline = "300ms"
on_timeout = "approve"

[[approval]]
tool = "sleep"
when = [{ pointer = "/ms", in = [3] }]
approvers = ["ops"]
deadline = "300ms"
on_timeout = "escalate"
escalate_to = ["leads"]
"#,
        true,
    )
    .await;
    let mut carol = Client::connect_with_token(&s.url, "tok-carol").await;
    let rejected = carol.create_task("sleep", json!({"ms": 1})).await;
    let approved = carol.create_task("sleep", json!({"ms": 2})).await;
    let escalated = carol.create_task("sleep", json!({"ms": 3})).await;
    let unruled = carol.create_task("sleep", json!({"ms": 4})).await;

    let done = finished(&s, &unruled).await;
    assert_eq!(result_text(&done), "slept 4 ms", "no rule, no approval");
    let done = finished(&s, &rejected).await;
    assert!(is_tool_error(&done));
    assert!(
        result_text(&done).contains("nobody decided by its deadline"),
        "{}",
        result_text(&done)
    );
    let done = finished(&s, &approved).await;
    assert_eq!(result_text(&done), "slept 2 ms");

    let (key, params) = eventually(WAIT, || async {
        let (k, p) = open_approval(&s, &escalated).await;
        (p["escalated"] == true).then_some((k, p))
    })
    .await;
    assert_eq!(params["approvers"], json!(["leads"]));
    let by_ops = vote(
        &s,
        &escalated,
        &key,
        "alice",
        json!({"decision": "approve"}),
    )
    .await;
    assert!(
        by_ops.is_err(),
        "after the escalation the first approvers no longer decide: {by_ops:?}"
    );
    vote(&s, &escalated, &key, "dave", json!({"decision": "approve"}))
        .await
        .unwrap();
    let done = finished(&s, &escalated).await;
    assert_eq!(result_text(&done), "slept 3 ms");
}

#[tokio::test]
async fn a_plain_call_gets_a_handle_and_task_answer_cannot_approve() {
    // `echo` is a tool that never runs as a task (taskSupport forbidden): behind a
    // rule its call becomes one all the same.
    let s = server(
        "[[approval]]\ntool = \"echo\"\napprovers = [\"alice\"]\n",
        true,
    )
    .await;
    let mut carol =
        Client::connect_as(&s.url, "2025-06-18", json!({}), Some("tok-carol".into())).await;
    let handle = carol
        .call("tools/call", json!({"name": "echo", "arguments": {"x": 1}}))
        .await;
    let text = handle["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("Waiting for alice to decide") && text.contains("do not answer it yourself"),
        "{text}"
    );
    assert!(
        !text.contains("call task_answer"),
        "no hint to answer it: {text}"
    );
    let id = handle["structuredContent"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let question = &handle["structuredContent"]["questions"][0];
    assert_eq!(question["onlyAssigneesAnswer"], true);
    let key = question["key"].as_str().unwrap().to_string();

    let tried = carol
        .call("tools/call", json!({"name": "task_answer", "arguments": {"taskId": id, "answers": {key.as_str(): {"decision": "approve"}}}}))
        .await;
    assert_eq!(tried["isError"], true, "{tried}");
    assert!(
        tried["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("not for the client"),
        "{tried}"
    );
    assert!(record(&s, &id).await.input_requests[&key].is_outstanding());

    vote(&s, &id, &key, "alice", json!({"decision": "approve"}))
        .await
        .unwrap();
    let waited = carol
        .call(
            "tools/call",
            json!({"name": "task_wait", "arguments": {"taskId": id}}),
        )
        .await;
    assert_eq!(waited["content"][0]["text"], "{\"x\":1}", "{waited}");
}

#[tokio::test]
async fn on_the_extension_wire_the_approval_is_not_the_clients_to_answer() {
    let s = server(SLEEP_BY_OPS, false).await;
    let mut c = Stateless::new(&s.url);
    let created = c
        .result(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}}),
        )
        .await;
    let id = created["taskId"]
        .as_str()
        .expect("the call became a task")
        .to_string();
    let (key, _) = open_approval(&s, &id).await;
    let waiting = c.wait(&id, "input_required").await;
    assert!(
        waiting["inputRequests"]
            .as_object()
            .is_none_or(|r| r.is_empty()),
        "the approval is not offered to the client: {waiting}"
    );
    let (_, refused) = c
        .send(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {key.as_str(): {"decision": "approve"}}}),
            true,
            None,
        )
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ops"),
        "{refused}"
    );
    assert!(record(&s, &id).await.input_requests[&key].is_outstanding());
    vote(&s, &id, &key, "bob", json!({"decision": "approve"}))
        .await
        .unwrap();
    let done = c.wait(&id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "slept 1 ms");

    // Without the extension the stateless call gets a handle at once, and the task
    // tools cannot approve it either.
    let (_, handle) = c
        .send(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 2}}),
            false,
            None,
        )
        .await;
    let state = &handle["result"]["structuredContent"];
    let id = state["taskId"].as_str().expect("a handle").to_string();
    let key = state["questions"][0]["key"].as_str().unwrap().to_string();
    let (_, tried) = c
        .send(
            "tools/call",
            json!({"name": "task_answer", "arguments": {"taskId": id, "answers": {key.as_str(): {"decision": "approve"}}}}),
            false,
            None,
        )
        .await;
    assert_eq!(tried["result"]["isError"], true, "{tried}");
    assert!(record(&s, &id).await.input_requests[&key].is_outstanding());
}

#[tokio::test]
async fn a_call_the_server_starts_itself_waits_for_approval_too() {
    // The board's "run again" starts calls through `Server::start_tool_task`: a rule
    // applies to them as to a client's call.
    let s = server(SLEEP_BY_OPS, true).await;
    let started = s
        .server
        .start_tool_task(
            Caller::authenticated("carol", None),
            json!({"name": "sleep", "arguments": {"ms": 1}}),
        )
        .await
        .unwrap();
    let id = started.id.as_str().to_string();
    let (key, _) = open_approval(&s, &id).await;
    assert_eq!(
        s.sleeps_started.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "nothing ran before the approval"
    );
    vote(&s, &id, &key, "alice", json!({"decision": "approve"}))
        .await
        .unwrap();
    assert_eq!(result_text(&finished(&s, &id).await), "slept 1 ms");
}
