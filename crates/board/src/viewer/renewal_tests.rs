//! Silent renewal of a sign-in through the provider, against an issuer run by the test:
//! a session due for renewal is refused with `renew` (401 on the API, a redirect to
//! `/board/oidc/start?renew=1` for a page); the start asks with `prompt=none` and the
//! kept ID token; a successful renewal carries the provider's groups of now; a declined
//! one (`login_required`) ends the session; sign-out sends the ID token as the hint.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::{Claims, COOKIE, ID_TOKEN_COOKIE};
use crate::{Board, BoardConfig, OidcConfig};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use mcp_tasks_server::Server;
use mcp_tasks_store::MemoryStore;
use mcp_tasks_testkit::issuer::{now, TestIssuer, TestKey};
use reqwest::header::{COOKIE as COOKIE_HEADER, LOCATION, SET_COOKIE};
use reqwest::{StatusCode, Url};
use serde_json::{json, Value};
use std::sync::Arc;

struct Running {
    board: Board,
    base: String,
    http: reqwest::Client,
    serving: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

async fn running(issuer: &TestIssuer) -> Running {
    let server = Server::builder()
        .store(Arc::new(MemoryStore::new()))
        .build()
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let config = BoardConfig {
        oidc: Some(OidcConfig::new("Test IdP", &issuer.url, "board", &base)),
        token_login: false,
        ..BoardConfig::default()
    };
    let board = Board::new(server, config);
    let router = board.router();
    let serving = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    Running {
        board,
        base,
        http,
        serving,
    }
}

/// A session cookie for `ana` signed in through the provider, due for renewal in
/// `renew_in` seconds (negative: overdue).
fn session(board: &Board, renew_in: i64) -> String {
    let now = chrono::Utc::now().timestamp();
    let claims = Claims {
        p: "ana".into(),
        e: now + 3600,
        n: "a-session-nonce".into(),
        g: vec!["release-managers".into()],
        o: true,
        r: now + renew_in,
    };
    let body = serde_json::to_vec(&claims).unwrap();
    let value = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(&body),
        URL_SAFE_NO_PAD.encode(board.inner.keys.sign(&body))
    );
    format!("{COOKIE}={value}")
}

fn set_cookies(response: &reqwest::Response) -> Vec<String> {
    response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect()
}

/// The `name=value` of cookie `name` among `set`.
fn cookie_pair(set: &[String], name: &str) -> String {
    set.iter()
        .find(|c| c.starts_with(&format!("{name}=")))
        .map(|c| c.split(';').next().unwrap().to_string())
        .unwrap_or_else(|| panic!("no {name} cookie in {set:?}"))
}

fn query(url: &str) -> Value {
    let url = Url::parse(url).unwrap();
    let pairs: serde_json::Map<String, Value> = url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), Value::String(v.into_owned())))
        .collect();
    Value::Object(pairs)
}

impl Running {
    async fn get(&self, path: &str, cookies: &[&str]) -> reqwest::Response {
        let mut request = self.http.get(format!("{}{path}", self.base));
        if !cookies.is_empty() {
            request = request.header(COOKIE_HEADER, cookies.join("; "));
        }
        request.send().await.unwrap()
    }

    /// `/board/oidc/start?renew=1` with `cookies`: the provider's URL it sends to,
    /// and the attempt cookie.
    async fn start_renewal(&self, cookies: &[&str]) -> (String, String) {
        let response = self
            .get(
                "/board/oidc/start?renew=1&next=%2Fboard%2Ftasks%2Fx",
                cookies,
            )
            .await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        let location = response.headers()[LOCATION].to_str().unwrap().to_string();
        let attempt = cookie_pair(&set_cookies(&response), "mcp_tasks_oidc");
        (location, attempt)
    }
}

#[tokio::test]
async fn a_session_due_for_renewal_is_refused_and_a_page_goes_to_the_provider_silently() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let run = running(&issuer).await;

    let fresh = session(&run.board, 600);
    let me = run.get("/board/api/me", &[&fresh]).await;
    assert_eq!(me.status(), StatusCode::OK);
    let me: Value = me.json().await.unwrap();
    assert_eq!(me["groups"], json!(["release-managers"]));

    let stale = session(&run.board, -1);
    let me = run.get("/board/api/me", &[&stale]).await;
    assert_eq!(me.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(me.json::<Value>().await.unwrap()["renew"], json!(true));

    let page = run.get("/board/tasks/x", &[&stale]).await;
    assert_eq!(page.status(), StatusCode::SEE_OTHER);
    let to = page.headers()[LOCATION].to_str().unwrap().to_string();
    assert!(to.starts_with("/board/oidc/start?"), "{to}");
    let to = query(&format!("http://x{to}"));
    assert_eq!(to["renew"], "1");
    assert_eq!(to["next"], "/board/tasks/x");

    let id_token = format!("{ID_TOKEN_COOKIE}=the.kept.idtoken");
    let (provider, _) = run.start_renewal(&[&stale, &id_token]).await;
    assert!(provider.starts_with(&format!("{}/authorize?", issuer.url)));
    let asked = query(&provider);
    assert_eq!(asked["prompt"], "none");
    assert_eq!(asked["id_token_hint"], "the.kept.idtoken");

    // A sign-in with pages asks without either.
    let response = run.get("/board/oidc/start", &[]).await;
    let asked = query(response.headers()[LOCATION].to_str().unwrap());
    assert!(asked.get("prompt").is_none() && asked.get("id_token_hint").is_none());
}

#[tokio::test]
async fn a_renewal_reads_the_groups_of_now_and_keeps_the_new_id_token() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let run = running(&issuer).await;
    let stale = session(&run.board, -1);
    let (provider, attempt) = run.start_renewal(&[&stale]).await;
    let asked = query(&provider);
    // The provider took ana out of release-managers since she signed in.
    let token = key.sign(&json!({
        "iss": issuer.url, "aud": "board", "sub": "ana", "nonce": asked["nonce"],
        "groups": ["readers"], "iat": now(), "exp": now() + 300,
    }));
    issuer.next_id_token(token.clone());
    let state = asked["state"].as_str().unwrap();
    let back = run
        .get(
            &format!("/board/oidc/callback?code=c&state={state}"),
            &[&attempt],
        )
        .await;
    assert_eq!(back.status(), StatusCode::OK);
    let set = set_cookies(&back);
    let renewed = cookie_pair(&set, COOKIE);
    assert_eq!(
        cookie_pair(&set, ID_TOKEN_COOKIE),
        format!("{ID_TOKEN_COOKIE}={token}")
    );
    let me: Value = run
        .get("/board/api/me", &[&renewed])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(me["principal"], "ana");
    assert_eq!(me["groups"], json!(["readers"]));
}

#[tokio::test]
async fn a_renewal_the_provider_declines_ends_the_session_on_the_login_page() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let run = running(&issuer).await;
    let stale = session(&run.board, -1);
    let (provider, attempt) = run.start_renewal(&[&stale]).await;
    let state = query(&provider)["state"].as_str().unwrap().to_string();
    let back = run
        .get(
            &format!("/board/oidc/callback?error=login_required&state={state}"),
            &[&attempt],
        )
        .await;
    assert_eq!(back.status(), StatusCode::UNAUTHORIZED);
    let set = set_cookies(&back);
    assert!(
        set.iter()
            .any(|c| c.starts_with(&format!("{COOKIE}=; Max-Age=0"))),
        "{set:?}"
    );
    assert!(set
        .iter()
        .any(|c| c.starts_with(&format!("{ID_TOKEN_COOKIE}=; Max-Age=0"))));
    let page = back.text().await.unwrap();
    assert!(page.contains("Your session has ended"), "{page}");
    assert!(page.contains("login_required"));
    assert!(page.contains("Sign in with Test IdP"));

    // The same error on a sign-in with pages is a sign-in problem, not an ended session.
    let response = run.get("/board/oidc/start", &[]).await;
    let state = query(response.headers()[LOCATION].to_str().unwrap())["state"]
        .as_str()
        .unwrap()
        .to_string();
    let attempt = cookie_pair(&set_cookies(&response), "mcp_tasks_oidc");
    let back = run
        .get(
            &format!("/board/oidc/callback?error=login_required&state={state}"),
            &[&attempt],
        )
        .await;
    assert_eq!(back.status(), StatusCode::FORBIDDEN);
    assert!(back
        .text()
        .await
        .unwrap()
        .contains("Sign-in was not completed"));
}

#[tokio::test]
async fn sign_out_sends_the_kept_id_token_as_the_hint() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let run = running(&issuer).await;
    let fresh = session(&run.board, 600);
    let id_token = format!("{ID_TOKEN_COOKIE}=the.kept.idtoken");
    let me: Value = run
        .get("/board/api/me", &[&fresh])
        .await
        .json()
        .await
        .unwrap();
    let out = run
        .http
        .post(format!("{}/board/logout", run.base))
        .header(COOKIE_HEADER, format!("{fresh}; {id_token}"))
        .form(&[("csrf", me["csrf"].as_str().unwrap())])
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), StatusCode::OK);
    let set = set_cookies(&out);
    assert!(set
        .iter()
        .any(|c| c.starts_with(&format!("{ID_TOKEN_COOKIE}=; Max-Age=0"))));
    let page = out.text().await.unwrap();
    assert!(page.contains(&format!("{}/logout?", issuer.url)), "{page}");
    assert!(page.contains("id_token_hint=the.kept.idtoken"), "{page}");
}

#[tokio::test]
async fn the_live_stream_ends_when_the_session_is_due_for_renewal() {
    let key = TestKey::generate("k1");
    let issuer = TestIssuer::start(&[&key]).await;
    let run = running(&issuer).await;
    // Due in a second: the stream opens, then ends on its own (the page then asks
    // again, is refused with `renew`, and reloads).
    let soon = session(&run.board, 1);
    let events = run.get("/board/api/events", &[&soon]).await;
    assert_eq!(events.status(), StatusCode::OK);
    let ended = tokio::time::timeout(std::time::Duration::from_secs(20), events.bytes()).await;
    assert!(
        ended.is_ok(),
        "the stream outlived the session's renewal time"
    );
    let again = run.get("/board/api/events", &[&soon]).await;
    assert_eq!(again.status(), StatusCode::UNAUTHORIZED);
}
