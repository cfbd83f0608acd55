//! Idle sessions: clients that leave without `DELETE` do not leave their sessions in
//! memory forever, while sessions with an open stream or a call in flight stay.
//!
//! The idle-session tests run on paused tokio time: the server measures idleness on
//! tokio's clock, so `advance` makes sessions idle at once. Paused time also moves by
//! itself whenever the runtime waits (on a socket, say), to the next timer due: never
//! further than the server's next idle sweep (a quarter of [`IDLE`]), in practice the
//! engine's sweeper (every 50 ms). Every "still kept" check leaves more than that
//! margin: sessions in use are used a third of [`IDLE`] apart, or are busy.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{start_server_with, Client};
use mcp_tasks_server::ServerConfig;
use mcp_tasks_testkit::eventually;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::advance;

/// The idle timeout of these tests, in paused time: long beside the jumps paused time
/// makes by itself, short beside the HTTP connections' own idle timeout (60 s), so no
/// connection is closed under a test.
const IDLE: Duration = Duration::from_secs(10);

/// How long, in paused time, a test waits for a sweep to forget sessions that already
/// are idle: several sweeps (one runs every quarter of [`IDLE`]), reached at once
/// since the runtime is idle while the test waits.
const SWEEPS: Duration = Duration::from_secs(30);

fn idle_config() -> ServerConfig {
    ServerConfig {
        session_idle_timeout: Some(IDLE),
        ..ServerConfig::default()
    }
}

/// Waits until the server holds `n` sessions.
async fn wait_sessions(server: &mcp_tasks_server::Server, n: usize) {
    eventually(SWEEPS, || async { server.session_count() == n }).await;
}

/// Lets [`IDLE`] pass and waits for the sweep that then forgets a new session nobody
/// uses: one sweep checks all sessions against the same instant, so the `n` others,
/// unused as long as that probe at least, were kept by it.
async fn wait_for_a_sweep_keeping(s: &common::TestServer, n: usize) {
    let _probe = Client::connect(&s.url).await;
    assert_eq!(s.server.session_count(), n + 1);
    advance(IDLE).await;
    wait_sessions(&s.server, n).await;
}

#[tokio::test(start_paused = true)]
async fn an_idle_session_is_forgotten_and_its_tasks_stay_reachable_from_a_new_one() {
    let s = start_server_with(idle_config()).await;
    let mut c = Client::connect(&s.url).await;
    let task = c.create_task("sleep", json!({"ms": 1})).await;
    c.wait_status(&task, "completed").await;
    assert_eq!(s.server.session_count(), 1);

    // Used more often than the timeout, over longer than the timeout: kept. A sweep
    // runs after each advance (sweeps are a quarter of IDLE apart).
    for _ in 0..4 {
        advance(IDLE / 3).await;
        c.call("ping", json!({})).await;
    }
    assert_eq!(
        s.server.session_count(),
        1,
        "an active session was forgotten"
    );

    // Unused: forgotten, and the next request says how to go on.
    advance(IDLE).await;
    wait_sessions(&s.server, 0).await;
    let r = c.request("ping", json!({})).await;
    assert_eq!(r.status, 404, "{:?}", r.body);
    assert!(
        r.body.to_string().contains("initialize"),
        "the 404 should say to initialize again: {}",
        r.body
    );
    let mut again = Client::connect(&s.url).await;
    let result = again.call("tasks/result", json!({"taskId": task})).await;
    assert_eq!(result["content"][0]["text"], "slept 1 ms");
}

#[tokio::test(start_paused = true)]
async fn sessions_with_an_open_stream_or_a_call_in_flight_are_kept() {
    let s = start_server_with(idle_config()).await;
    let watcher = Client::connect(&s.url).await;
    let stream = watcher.open_event_stream().await;
    assert_eq!(stream.status(), 200);
    let caller = Client::connect(&s.url).await;
    // The call outlasts the sweeps below: it ends only when the test lets time run.
    let ms = (IDLE * 4).as_millis();
    let call = tokio::spawn(async move {
        caller
            .stream_request(
                7,
                "tools/call",
                json!({"name": "sleep", "arguments": {"ms": ms}}),
            )
            .await
    });
    // The call is in flight once the tool began.
    let started = s.sleeps_started.clone();
    eventually(SWEEPS, || {
        let began = started.load(Ordering::SeqCst) == 1;
        async move { began }
    })
    .await;
    let _left = Client::connect(&s.url).await;

    // The session nobody uses goes; the two others stay past the timeout.
    advance(IDLE).await;
    wait_sessions(&s.server, 2).await;
    wait_for_a_sweep_keeping(&s, 2).await;

    // Once the call answered and the stream closed, they go too.
    let reply = call.await.unwrap().text().await.unwrap();
    assert!(reply.contains(&format!("slept {ms} ms")), "{reply}");
    drop(stream);
    wait_sessions(&s.server, 0).await;
}

#[tokio::test(start_paused = true)]
async fn without_a_timeout_sessions_stay_until_deleted() {
    let s = start_server_with(ServerConfig {
        session_idle_timeout: None,
        ..ServerConfig::default()
    })
    .await;
    let mut c = Client::connect(&s.url).await;
    // Nothing signals a sweep that is not configured to run: let pass the time in
    // which one would have forgotten the session.
    advance(IDLE * 2).await;
    assert_eq!(s.server.session_count(), 1);
    c.call("ping", json!({})).await;
    assert_eq!(s.server.session_count(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_session_waiting_in_a_plain_json_request_is_kept() {
    let s = start_server_with(idle_config()).await;
    let mut c = Client::connect(&s.url).await;
    // The task outlasts the sweep below: it ends only when the test lets time run.
    let ms = (IDLE * 4).as_millis();
    let task = c.create_task("sleep", json!({"ms": ms})).await;
    // tasks/result without SSE: the request itself is all that keeps the session.
    let (http, url, session) = (c.http.clone(), s.url.clone(), c.session.clone().unwrap());
    let id = session.clone();
    let waiting = tokio::spawn(async move {
        http.post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .header("mcp-session-id", session)
            .body(
                json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/result", "params": {"taskId": task}})
                    .to_string(),
            )
            .send()
            .await
            .unwrap()
            .json::<serde_json::Value>()
            .await
            .unwrap()
    });
    // The request waits once its session is busy: with no stream open, a session is
    // kept at once only while it handles a request.
    let session = s.server.session(&id).unwrap();
    eventually(SWEEPS, || {
        let busy = !session.is_idle(tokio::time::Instant::now(), Duration::ZERO);
        async move { busy }
    })
    .await;
    // Kept (while the request waits) by a sweep that forgets an unused session.
    wait_for_a_sweep_keeping(&s, 1).await;
    let result = waiting.await.unwrap();
    assert_eq!(
        result["result"]["content"][0]["text"],
        format!("slept {ms} ms"),
        "{result}"
    );
}

/// At the session limit a new `initialize` forgets the session unused the longest,
/// sparing sessions with an open stream: 20,000 initializes no longer keep 20,000
/// sessions for an hour.
#[tokio::test]
async fn the_session_limit_forgets_the_longest_unused_session_first() {
    let s = start_server_with(ServerConfig {
        max_sessions: 3,
        ..ServerConfig::default()
    })
    .await;
    let watcher = Client::connect(&s.url).await;
    let stream = watcher.open_event_stream().await;
    assert_eq!(stream.status(), 200);
    let mut oldest = Client::connect(&s.url).await;
    let mut middle = Client::connect(&s.url).await;
    assert_eq!(s.server.session_count(), 3);
    middle.call("ping", json!({})).await; // used after `oldest`

    let mut newest = Client::connect(&s.url).await;
    assert_eq!(s.server.session_count(), 3, "the limit was exceeded");
    assert_eq!(oldest.request("ping", json!({})).await.status, 404);
    assert_eq!(middle.request("ping", json!({})).await.status, 200);
    assert_eq!(newest.request("ping", json!({})).await.status, 200);
    let mut watcher = watcher;
    assert_eq!(
        watcher.request("ping", json!({})).await.status,
        200,
        "a session with an open stream was forgotten before idle ones"
    );

    // Many more: the table never grows past the limit.
    for _ in 0..20 {
        Client::connect(&s.url).await;
        assert!(s.server.session_count() <= 3);
    }
    drop(stream);
}

#[tokio::test]
async fn without_authentication_each_session_has_its_own_quota_under_the_server_wide_cap() {
    let engine = mcp_tasks_engine::EngineConfig {
        max_tasks_per_session: 2,
        max_active_tasks: 3,
        ..common::test_engine_config()
    };
    let s = common::start_server_with_engine(engine, ServerConfig::default()).await;
    let mut one = Client::connect(&s.url).await;
    let mut two = Client::connect(&s.url).await;
    one.create_task("sleep", json!({"ms": 60_000})).await;
    one.create_task("sleep", json!({"ms": 60_000})).await;
    let r = one
        .request(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 60_000}, "task": {}}),
        )
        .await;
    let message = r.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("per session") && message.contains("--max-tasks-per-session"),
        "{}",
        r.body
    );
    // The other session has a quota of its own...
    two.create_task("sleep", json!({"ms": 60_000})).await;
    // ...until the server-wide cap, which says so and names its flag.
    let r = two
        .request(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 60_000}, "task": {}}),
        )
        .await;
    let message = r.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("server-wide") && message.contains("--max-active-tasks"),
        "{}",
        r.body
    );
}
