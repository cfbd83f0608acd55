//! Owner binding with real bearer tokens: two principals, foreign tasks look unknown,
//! lists never leak, the same subject collects from a new session, quotas refuse
//! without creating, and the HTTP layer answers 401 / 403 as it should.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{start_server_with_engine, test_engine_config, Client};
use mcp_tasks_engine::EngineConfig;
use mcp_tasks_server::auth::{AuthMode, StaticTokens};
use mcp_tasks_server::ServerConfig;
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

fn tokens() -> AuthMode {
    let map: HashMap<String, String> = [("tok-alice", "alice"), ("tok-bob", "bob")]
        .into_iter()
        .map(|(t, s)| (t.to_string(), s.to_string()))
        .collect();
    AuthMode::Required(Arc::new(StaticTokens::new(map)))
}

async fn server() -> common::TestServer {
    let engine = EngineConfig {
        max_tasks_per_principal: 3,
        list_page_size: 2,
        ..test_engine_config()
    };
    start_server_with_engine(
        engine,
        ServerConfig {
            auth: tokens(),
            ..ServerConfig::default()
        },
    )
    .await
}

async fn all_listed(c: &mut Client) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor
            .as_ref()
            .map(|c| json!({"cursor": c}))
            .unwrap_or(json!({}));
        let page = c.call("tasks/list", params).await;
        ids.extend(
            page["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["taskId"].as_str().unwrap().to_string()),
        );
        match page["nextCursor"].as_str() {
            Some(n) => cursor = Some(n.to_string()),
            None => return ids,
        }
    }
}

#[tokio::test]
async fn requests_without_a_valid_token_get_401_with_a_challenge() {
    let s = server().await;
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    let anon = Client::new(&s.url);
    let r = anon.post_raw(init.to_string()).await;
    assert_eq!(r.status, 401);
    assert!(r.headers["www-authenticate"]
        .to_str()
        .unwrap()
        .starts_with("Bearer"));
    let mut forged = Client::new(&s.url);
    forged.token = Some("tok-mallory".into());
    let r = forged.post_raw(init.to_string()).await;
    assert_eq!(r.status, 401);
    assert!(r.headers["www-authenticate"]
        .to_str()
        .unwrap()
        .contains("invalid_token"));
}

#[tokio::test]
async fn a_foreign_task_answers_exactly_like_an_unknown_one() {
    let s = server().await;
    let mut alice = Client::connect_with_token(&s.url, "tok-alice").await;
    let mut bob = Client::connect_with_token(&s.url, "tok-bob").await;
    let id = alice.create_task("sleep", json!({"ms": 50})).await;
    let unknown = "0123456789abcdef0123456789abcdef";
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let foreign = bob.request(method, json!({"taskId": id})).await.body["error"].clone();
        let missing = bob.request(method, json!({"taskId": unknown})).await.body["error"].clone();
        assert_eq!(foreign["code"], -32602, "{method}");
        assert_eq!(
            foreign, missing,
            "{method}: same code and message for foreign and unknown"
        );
    }
    // bob's attempt changed nothing
    let result = alice.call("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["content"][0]["text"], "slept 50 ms");
    for _ in 0..3 {
        bob.create_task("sleep", json!({"ms": 1})).await;
    }
    assert!(
        !all_listed(&mut bob).await.contains(&id),
        "bob never sees alice's task"
    );
    assert!(all_listed(&mut alice).await.contains(&id));
}

#[tokio::test]
async fn the_same_subject_collects_from_a_new_session_and_sessions_cannot_be_borrowed() {
    let s = server().await;
    let mut first = Client::connect_with_token(&s.url, "tok-alice").await;
    let id = first.create_task("sleep", json!({"ms": 30})).await;
    let mut second = Client::connect_with_token(&s.url, "tok-alice").await;
    assert_eq!(
        second.call("tasks/result", json!({"taskId": id})).await["content"][0]["text"],
        "slept 30 ms"
    );
    assert!(
        all_listed(&mut second).await.contains(&id),
        "listing follows the subject, not the session"
    );

    let mut thief = Client::new(&s.url);
    thief.session = first.session.clone();
    thief.token = Some("tok-bob".into());
    let r = thief.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(r.status, 403, "{}", r.body);
}

#[tokio::test]
async fn over_quota_is_refused_with_the_limit_and_creates_nothing() {
    let s = server().await;
    let mut alice = Client::connect_with_token(&s.url, "tok-alice").await;
    for _ in 0..3 {
        alice.create_task("sleep", json!({"ms": 60_000})).await;
    }
    let before = all_listed(&mut alice).await.len();
    let r = alice
        .request(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}, "task": {}}),
        )
        .await;
    assert_eq!(r.body["error"]["code"], -32000, "{}", r.body);
    let message = r.body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("max_tasks_per_principal") && message.contains('3'),
        "{message}"
    );
    assert_eq!(
        all_listed(&mut alice).await.len(),
        before,
        "nothing created"
    );
    // another principal is not affected
    let mut bob = Client::connect_with_token(&s.url, "tok-bob").await;
    bob.create_task("sleep", json!({"ms": 1})).await;
    // cancelling one frees a slot once its work stops
    let first = all_listed(&mut alice).await[0].clone();
    alice.call("tasks/cancel", json!({"taskId": first})).await;
    // a slot comes back after the cancel
    let alice = tokio::sync::Mutex::new(alice);
    eventually(WAIT, || async {
        let r = alice
            .lock()
            .await
            .request(
                "tools/call",
                json!({"name": "sleep", "arguments": {"ms": 1}, "task": {}}),
            )
            .await;
        r.body.get("result").is_some()
    })
    .await;
}

#[tokio::test]
async fn host_header_is_checked_when_bound_to_loopback() {
    let config = ServerConfig {
        allowed_hosts: Some(vec!["localhost".into(), "127.0.0.1".into()]),
        ..ServerConfig::default()
    };
    let s = start_server_with_engine(test_engine_config(), config).await;
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}).to_string();
    let http = reqwest::Client::new();
    let ok = http
        .post(&s.url)
        .header("accept", "application/json")
        .body(init.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    let rebound = http
        .post(&s.url)
        .header("host", "attacker.example:8080")
        .header("accept", "application/json")
        .body(init)
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);
    let body: Value = rebound.json().await.unwrap();
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("allowed-host"));
}

/// Counts how often credentials are checked, around the static table.
#[derive(Debug)]
struct Counting {
    inner: StaticTokens,
    checks: std::sync::atomic::AtomicUsize,
}

impl mcp_tasks_server::auth::Authenticator for Counting {
    fn authenticate(&self, token: &str) -> Result<String, mcp_tasks_server::auth::AuthError> {
        self.checks
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.authenticate(token)
    }
}

/// A request on a session is admitted once: origin, host and the token (a JWT
/// signature check, with JWKS) are checked a single time, not again to find the session.
#[tokio::test]
async fn credentials_are_checked_once_per_request() {
    let map: HashMap<String, String> = [("tok-alice".to_string(), "alice".to_string())].into();
    let counting = Arc::new(Counting {
        inner: StaticTokens::new(map),
        checks: Default::default(),
    });
    let s = start_server_with_engine(
        test_engine_config(),
        ServerConfig {
            auth: AuthMode::Required(counting.clone()),
            ..ServerConfig::default()
        },
    )
    .await;
    let mut c = Client::connect_with_token(&s.url, "tok-alice").await;
    let before = counting.checks.load(std::sync::atomic::Ordering::SeqCst);
    c.call("ping", json!({})).await;
    let after = counting.checks.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        after - before,
        1,
        "one ping, {} credential checks",
        after - before
    );
}
