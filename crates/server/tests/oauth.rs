//! OAuth access tokens on `/mcp` against an issuer run by the test (keys made here,
//! served as a JWKS from 127.0.0.1): the verifier's checks one by one (another
//! audience, another issuer, a forged signature, expiry, introspection and its cache),
//! the transport's 403 for a missing scope, and the groups a token names reaching the
//! engine's caller, so a member of a group may do what the group may.
#![cfg(feature = "oauth")]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::stateless::Stateless;
use common::{start_server_with, Client};
use mcp_tasks_protocol::Secret;
use mcp_tasks_server::auth::{
    AuthMode, Authenticator, ClaimNames, Introspection, OAuthConfig, OAuthVerifier,
    ResourceMetadata,
};
use mcp_tasks_server::ServerConfig;
use mcp_tasks_testkit::issuer::{now, TestIssuer, TestKey};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

const RESOURCE: &str = "http://127.0.0.1/mcp";

fn config(issuer: &TestIssuer, introspection_cache: Option<Duration>) -> OAuthConfig {
    OAuthConfig {
        metadata: ResourceMetadata {
            resource: RESOURCE.into(),
            authorization_servers: vec![issuer.url.clone()],
            scopes_supported: vec!["mcp:tools".into()],
            required_scopes: vec!["mcp:tools".into()],
            resource_name: None,
        },
        issuer: None,
        audience: None,
        jwks_uri: None,
        introspection: introspection_cache.map(|cache| Introspection {
            endpoint: None,
            client_id: "mcp-tasks".into(),
            client_secret: Secret::new("introspection-secret".to_string()),
            cache,
        }),
        claims: ClaimNames::default(),
        leeway: Duration::from_secs(30),
    }
}

/// Claims of a good access token for `sub`, changed by `edit`.
fn claims(issuer: &TestIssuer, sub: &str, edit: impl FnOnce(&mut Value)) -> Value {
    let mut c = json!({
        "iss": issuer.url, "aud": RESOURCE, "sub": sub, "scope": "mcp:tools",
        "iat": now(), "exp": now() + 300,
    });
    edit(&mut c);
    c
}

#[tokio::test]
async fn a_good_token_names_its_principal_groups_and_scopes() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let v = OAuthVerifier::new(config(&issuer, None)).unwrap();
    let token = key.sign(&claims(&issuer, "ana", |c| c["groups"] = json!(["ops"])));
    let id = v.identify(&token).await.unwrap();
    assert_eq!(id.principal, "ana");
    assert_eq!(id.groups, vec!["ops"]);
    assert_eq!(id.scopes, Some(vec!["mcp:tools".to_string()]));
}

#[tokio::test]
async fn a_token_for_another_audience_is_refused() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let v = OAuthVerifier::new(config(&issuer, None)).unwrap();
    // RFC 8707: minted for another resource, otherwise perfect.
    let token = key.sign(&claims(&issuer, "ana", |c| {
        c["aud"] = json!("https://other.example/mcp")
    }));
    let e = v.identify(&token).await.unwrap_err();
    assert!(e.0.contains("another audience"), "{e}");
}

#[tokio::test]
async fn a_token_of_another_issuer_a_forged_signature_and_an_expired_token_are_refused() {
    let key = TestKey::generate("k1");
    let forger = TestKey::generate("forger");
    let issuer = TestIssuer::start(&[&key]).await;
    let v = OAuthVerifier::new(config(&issuer, None)).unwrap();
    let other = key.sign(&claims(&issuer, "ana", |c| {
        c["iss"] = json!("https://evil.example")
    }));
    let e = v.identify(&other).await.unwrap_err();
    assert!(e.0.contains("another issuer"), "{e}");
    // Signed by a key the issuer does not publish, naming the key it does.
    let forged = forger.sign_as("k1", &claims(&issuer, "ana", |_| {}));
    let e = v.identify(&forged).await.unwrap_err();
    assert!(e.0.contains("signature"), "{e}");
    // Expired beyond the leeway (30 s).
    let expired = key.sign(&claims(&issuer, "ana", |c| c["exp"] = json!(now() - 120)));
    let e = v.identify(&expired).await.unwrap_err();
    assert!(e.0.contains("expired"), "{e}");
    // Within the leeway it still passes: the leeway is what lets it.
    let late = key.sign(&claims(&issuer, "ana", |c| c["exp"] = json!(now() - 10)));
    assert_eq!(v.identify(&late).await.unwrap().principal, "ana");
}

#[tokio::test]
async fn an_unknown_key_fetches_the_jwks_once_then_not_again_within_the_interval() {
    let key = TestKey::generate("k1");
    let rotated = TestKey::generate("k2");
    let issuer = TestIssuer::start(&[&key]).await;
    let v = OAuthVerifier::new(config(&issuer, None)).unwrap();
    v.identify(&key.sign(&claims(&issuer, "ana", |_| {})))
        .await
        .unwrap();
    assert_eq!(issuer.jwks_fetches(), 1);
    // The issuer rotated just now: the first token of the new key makes the server
    // look again... but not within ten seconds of the last fetch (a flood of tokens
    // with made-up key ids cannot make it hammer the issuer).
    issuer.publish(&[&rotated]);
    let e = v
        .identify(&rotated.sign(&claims(&issuer, "ana", |_| {})))
        .await
        .unwrap_err();
    assert!(e.0.contains("does not publish"), "{e}");
    assert_eq!(issuer.jwks_fetches(), 1, "no fetch within the interval");
}

#[tokio::test]
async fn introspection_refuses_an_inactive_token_and_caches_its_answers() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    issuer.introspects(
        "opaque-active",
        json!({"active": true, "iss": issuer.url, "aud": RESOURCE, "sub": "bob",
               "scope": "mcp:tools", "groups": ["ops"], "exp": now() + 300}),
    );
    issuer.introspects("opaque-revoked", json!({"active": false}));
    let v = OAuthVerifier::new(config(&issuer, Some(Duration::from_secs(60)))).unwrap();
    let e = v.identify("opaque-revoked").await.unwrap_err();
    assert!(e.0.contains("not active"), "{e}");
    let id = v.identify("opaque-active").await.unwrap();
    assert_eq!(
        (id.principal.as_str(), id.groups),
        ("bob", vec!["ops".into()])
    );
    assert_eq!(issuer.introspections(), 2);
    // Revoked at the issuer now: the cached answer serves until it ages out, and
    // the issuer is not asked again.
    issuer.introspects("opaque-active", json!({"active": false}));
    assert_eq!(v.identify("opaque-active").await.unwrap().principal, "bob");
    assert_eq!(issuer.introspections(), 2, "answered from the cache");
    // Without a cache, each use asks, and the revocation counts at once.
    let uncached = OAuthVerifier::new(config(&issuer, Some(Duration::ZERO))).unwrap();
    assert!(uncached.identify("opaque-active").await.is_err());
    assert_eq!(issuer.introspections(), 3);
    // An introspection answer for another audience is refused too.
    issuer.introspects(
        "opaque-foreign",
        json!({"active": true, "aud": "https://other.example/mcp", "sub": "bob"}),
    );
    let e = uncached.identify("opaque-foreign").await.unwrap_err();
    assert!(e.0.contains("another audience"), "{e}");
}

async fn oauth_server(issuer: &TestIssuer) -> common::TestServer {
    let verifier = OAuthVerifier::new(config(issuer, None)).unwrap();
    start_server_with(ServerConfig {
        auth: AuthMode::Required(Arc::new(verifier)),
        ..ServerConfig::default()
    })
    .await
}

#[tokio::test]
async fn a_token_without_the_required_scope_gets_403_insufficient_scope() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let s = oauth_server(&issuer).await;
    let token = key.sign(&claims(&issuer, "ana", |c| c["scope"] = json!("openid")));
    let r = Client::new(&s.url)
        .http
        .post(&s.url)
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let challenge = r.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        challenge.contains("insufficient_scope") && challenge.contains("mcp:tools"),
        "{challenge}"
    );
    let body: Value = r.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("mcp:tools"),
        "{body}"
    );
}

/// A question a tool assigns to the group `ops` is open to its members: a person whose
/// access token names `ops` in its groups claim reads the task (not theirs) and
/// answers it over MCP; the same person without the group gets "not found", as for a
/// task that does not exist.
#[tokio::test]
async fn a_group_in_the_token_makes_its_member_an_assignee_on_mcp() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let s = oauth_server(&issuer).await;
    let token =
        |sub: &str, groups: Value| key.sign(&claims(&issuer, sub, |c| c["groups"] = groups));
    let mut owner = Stateless::new(&s.url);
    owner.token = Some(token("owner", json!([])));
    let created = owner
        .result("tools/call", json!({"name": "ask_ops", "arguments": {}}))
        .await;
    let id = created["taskId"].as_str().unwrap().to_string();
    owner.wait(&id, "input_required").await;

    // Without the group: the task is not theirs and asks nothing of them.
    let mut outsider = Stateless::new(&s.url);
    outsider.token = Some(token("ana", json!(["dev"])));
    let (_, body) = outsider
        .send("tasks/get", json!({"taskId": id}), true, None)
        .await;
    assert!(body.get("error").is_some(), "{body}");
    let (_, body) = outsider
        .send(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {}}),
            true,
            None,
        )
        .await;
    assert!(body.get("error").is_some(), "{body}");

    // The same person, now in `ops` at the identity provider: a new token says so.
    let mut member = Stateless::new(&s.url);
    member.token = Some(token("ana", json!(["ops"])));
    let task = member.result("tasks/get", json!({"taskId": id})).await;
    let key = task["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    member
        .result(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"answer": "ship it"}}}}),
        )
        .await;
    let done = owner.wait(&id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "ops said: ship it");
}

/// On the 2025-11-25 wire the session's caller takes the groups of each request's
/// token: the same session reads the task while its token names `ops`, and not once a
/// newer token of the same person no longer does.
#[tokio::test]
async fn a_session_caller_takes_the_groups_of_the_latest_token() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let s = oauth_server(&issuer).await;
    let token =
        |sub: &str, groups: Value| key.sign(&claims(&issuer, sub, |c| c["groups"] = groups));
    let mut owner = Stateless::new(&s.url);
    owner.token = Some(token("owner", json!([])));
    let created = owner
        .result("tools/call", json!({"name": "ask_ops", "arguments": {}}))
        .await;
    let id = created["taskId"].as_str().unwrap().to_string();
    owner.wait(&id, "input_required").await;

    let mut c = Client::connect_with_token(&s.url, &token("ana", json!(["ops"]))).await;
    let task = c.call("tasks/get", json!({"taskId": id})).await;
    assert_eq!(task["status"], "input_required");
    c.token = Some(token("ana", json!(["dev"])));
    c.error_code("tasks/get", json!({"taskId": id})).await;
}
