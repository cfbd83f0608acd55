//! Crash honesty with the real binary: SQLite store, `kill -9`, restart. Completed
//! results come back intact; work that was running is reported `failed`, never left
//! `working`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::path::Path;

mod common;

use common::rpc::Session;
use common::{serve, Server};
use mcp_tasks_testkit::{eventually, WAIT};

/// A lease short enough for a test to outlive it: a process killed while holding tasks
/// leaves them `working` this long before another process fails them.
const TEST_LEASE: &str = "1s";

fn start(db: &Path) -> Server {
    serve(&[
        "--database",
        &format!("sqlite://{}", db.display()),
        "--lease-ttl",
        TEST_LEASE,
    ])
}

fn start_url(database: &str) -> Server {
    serve(&["--database", database])
}

#[tokio::test]
async fn kill_9_then_restart_keeps_results_and_fails_interrupted_work() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");

    let mut server = start(&db);
    let s = Session::open(&server.url).await;
    let quick = s
        .create_with("slow_compute", json!({"seconds": 0, "label": "quick"}))
        .await;
    let failing = s.create_with("failing_job", json!({})).await;
    let long = s
        .create_with("slow_compute", json!({"seconds": 600, "label": "long"}))
        .await;
    let quick_result = s.rpc("tasks/result", json!({"taskId": quick})).await;
    assert_eq!(
        quick_result["result"]["content"][0]["text"],
        "slow_compute 'quick' finished after 0 s"
    );
    let failing_result = s.rpc("tasks/result", json!({"taskId": failing})).await;
    assert_eq!(failing_result["result"]["isError"], true);
    assert_eq!(
        s.rpc("tasks/get", json!({"taskId": long})).await["result"]["status"],
        "working"
    );

    server.child.kill().unwrap(); // SIGKILL: no shutdown code runs
    server.child.wait().unwrap();
    drop(server);

    let server = start(&db);
    let s = Session::open(&server.url).await;
    assert_eq!(
        s.rpc("tasks/result", json!({"taskId": quick})).await,
        quick_result,
        "same data after the crash"
    );
    // The killed process's lease runs out, then the new one fails what it left running.
    s.wait_status(&long, "failed", std::time::Duration::from_secs(15))
        .await;
    assert_eq!(
        s.rpc("tasks/result", json!({"taskId": failing})).await,
        failing_result
    );
    assert_eq!(
        s.rpc("tasks/get", json!({"taskId": failing})).await["result"]["status"],
        "failed"
    );
    let interrupted = s.rpc("tasks/get", json!({"taskId": long})).await;
    assert_eq!(interrupted["result"]["status"], "failed", "{interrupted}");
    assert!(
        interrupted["result"]["statusMessage"]
            .as_str()
            .unwrap()
            .contains("restarted"),
        "{interrupted}"
    );
    let r = s.rpc("tasks/result", json!({"taskId": long})).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert!(r["error"]["message"]
        .as_str()
        .unwrap()
        .contains("restarted"));
}

/// How many `transition` calls the server's store answered, from `/metrics`.
async fn store_transitions(mcp_url: &str) -> u64 {
    let base = mcp_url.trim_end_matches("/mcp");
    let text = reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find(|l| {
            l.starts_with("mcp_tasks_store_operation_duration_seconds_count{")
                && l.contains("operation=\"transition\"")
        })
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Work that ends while its creation is being committed is committed with it: the
/// first `tasks/get` after the reply finds the result (no second commit to wait for),
/// and a `kill -9` right after loses nothing.
#[tokio::test]
async fn instant_work_is_committed_with_its_creation_and_survives_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tasks.db");
    let mut server = start(&db);
    let s = Session::open(&server.url).await;
    let transitions_before = store_transitions(&server.url).await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let label = format!("instant {i}");
        let id = s
            .create_with("slow_compute", json!({"seconds": 0, "label": label}))
            .await;
        let got = s.rpc("tasks/get", json!({"taskId": id})).await;
        assert_eq!(
            got["result"]["status"], "completed",
            "the very next read: {got}"
        );
        ids.push((id, label));
    }
    // Each end went into its creation's transaction instead of a transition of its own
    // (one fsync per task, not two). Allow one that the writer sealed too early on a
    // loaded machine; without the merge there would be five.
    let transitions = store_transitions(&server.url).await - transitions_before;
    assert!(
        transitions <= 1,
        "{transitions} separate transitions for 5 instant tasks"
    );
    server.child.kill().unwrap(); // SIGKILL: no shutdown code runs
    server.child.wait().unwrap();
    drop(server);

    let server = start(&db);
    let s = Session::open(&server.url).await;
    for (id, label) in ids {
        let r = s.rpc("tasks/result", json!({"taskId": id})).await;
        assert_eq!(
            r["result"]["content"][0]["text"],
            format!("slow_compute '{label}' finished after 0 s"),
            "{r}"
        );
    }
}

/// Two servers on one SQLite file (a desktop host starting the same stdio server
/// twice, or two terminals in one folder) are replicas: starting one never fails the
/// other's live tasks, each finishes its own, either answers for the other's, and when
/// one is killed the survivor fails its tasks once their leases expire.
#[tokio::test]
async fn two_processes_on_one_sqlite_file_keep_each_others_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.db");

    let a = start(&db);
    let on_a = Session::open(&a.url).await;
    let first = on_a
        .create_with("slow_compute", json!({"seconds": 3, "label": "on-a"}))
        .await;

    // B starts on the same file while A's task runs: A's task must stay A's.
    let b = start(&db);
    let on_b = Session::open(&b.url).await;
    assert_eq!(on_b.status(&first).await["status"], "working");
    let second = on_b
        .create_with("slow_compute", json!({"seconds": 1, "label": "on-b"}))
        .await;

    // Each completes its own; each collects the other's (B re-reads the shared file).
    let r = on_b.rpc("tasks/result", json!({"taskId": first})).await;
    assert_eq!(
        r["result"]["content"][0]["text"], "slow_compute 'on-a' finished after 3 s",
        "{r}"
    );
    let r = on_a.rpc("tasks/result", json!({"taskId": second})).await;
    assert_eq!(
        r["result"]["content"][0]["text"], "slow_compute 'on-b' finished after 1 s",
        "{r}"
    );
    assert_eq!(on_a.status(&first).await["status"], "completed");

    // A dies holding a task: B leaves it alone while the lease could still be
    // renewed, then fails it with a message saying why.
    let orphan = on_a
        .create_with("slow_compute", json!({"seconds": 600, "label": "orphan"}))
        .await;
    let mut a = a;
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    assert_eq!(on_b.status(&orphan).await["status"], "working");
    let failed = on_b
        .wait_status(&orphan, "failed", std::time::Duration::from_secs(15))
        .await;
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap()
            .contains("lease expired"),
        "{failed}"
    );
}

#[tokio::test]
async fn two_replicas_on_postgres_serve_each_others_tasks() {
    use mcp_tasks_store::suite::postgres::{test_url, TestSchema};
    let Some(server) = test_url() else { return };
    let schema = TestSchema::create(&server).await;
    let a = start_url(schema.url());
    let b = start_url(schema.url());
    let on_a = Session::open(&a.url).await;
    let on_b = Session::open(&b.url).await;

    // created on A, collected on B (tasks/result waits on B until A completes it)
    let quick = on_a
        .create_with("slow_compute", json!({"seconds": 1, "label": "cross"}))
        .await;
    let r = on_b.rpc("tasks/result", json!({"taskId": quick})).await;
    assert_eq!(
        r["result"]["content"][0]["text"], "slow_compute 'cross' finished after 1 s",
        "{r}"
    );

    // running on A, cancelled on B: A stops the work and the task stays cancelled
    let long = on_a
        .create_with("slow_compute", json!({"seconds": 600, "label": "long"}))
        .await;
    assert_eq!(
        on_b.rpc("tasks/cancel", json!({"taskId": long})).await["result"]["status"],
        "cancelled"
    );
    assert_eq!(
        on_a.rpc("tasks/get", json!({"taskId": long})).await["result"]["status"],
        "cancelled"
    );
    let r = on_a.rpc("tasks/result", json!({"taskId": long})).await;
    assert!(r["error"]["code"].is_i64(), "{r}");

    // a session opened on A is valid on B: same principal, so tasks/list sees its tasks
    let borrowed = on_a.on(&b.url);
    let listed = borrowed.rpc("tasks/list", json!({})).await;
    let ids: Vec<&str> = listed["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["taskId"].as_str())
        .collect();
    assert!(
        ids.contains(&quick.as_str()) && ids.contains(&long.as_str()),
        "{listed}"
    );
    let created_on_b = borrowed
        .create_with("slow_compute", json!({"seconds": 0, "label": "via-b"}))
        .await;
    let again = on_a
        .rpc("tasks/result", json!({"taskId": created_on_b}))
        .await;
    assert_eq!(
        again["result"]["content"][0]["text"],
        "slow_compute 'via-b' finished after 0 s"
    );
}

/// Sessions whose clients left without DELETE leave every replica's memory and the
/// shared database once idle; a session whose event stream is open on one replica stays
/// valid on the others, because that replica keeps marking it in use.
#[tokio::test]
async fn replicas_forget_idle_shared_sessions_but_not_one_with_an_open_stream() {
    use mcp_tasks_store::suite::postgres::{test_url, TestSchema};
    let Some(server) = test_url() else { return };
    let schema = TestSchema::create(&server).await;
    let args = ["--database", schema.url(), "--session-idle-timeout", "1s"];
    let a = serve(&args);
    let b = serve(&args);
    let left = Session::open(&a.url).await;
    let watched = Session::open(&a.url).await;
    let stream = watched
        .http
        .get(&a.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &watched.id)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    // Both are valid on B too (loaded from the database).
    assert_eq!(left.on(&b.url).ping_status().await, 200);
    assert_eq!(watched.on(&b.url).ping_status().await, 200);

    // Watched in the database itself: a ping would mark the session in use.
    use mcp_tasks_store::SessionStore;
    let db = mcp_tasks_store::PgStore::open(schema.url()).await.unwrap();
    let stored = |id: String| {
        let db = &db;
        async move { db.load_session(&id).await.unwrap().is_some() }
    };
    // The idle session leaves the shared database.
    eventually(WAIT, || stored(left.id.clone())).await;
    eventually(WAIT, || async { !stored(left.id.clone()).await }).await;
    // A session opened (and left) after the watched one's last use leaves too: the
    // watched one was idle at least as long, so only its open stream kept it.
    let probe = Session::open(&a.url).await;
    eventually(WAIT, || stored(probe.id.clone())).await;
    eventually(WAIT, || async { !stored(probe.id.clone()).await }).await;
    assert!(stored(watched.id.clone()).await);
    assert_eq!(
        left.on(&b.url).ping_status().await,
        404,
        "an idle session was still in the shared database"
    );
    assert_eq!(left.ping_status().await, 404);
    assert_eq!(
        watched.on(&b.url).ping_status().await,
        200,
        "a session with an open stream on A was deleted from the shared database"
    );
    drop(stream);
}
