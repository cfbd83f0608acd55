//! Liveness, takeover and drain with the real binary: a restarted SQLite server takes
//! its dead predecessor's tasks over at once (resumes the resumable, fails the rest),
//! well under the alive window; a task of a replica killed with SIGKILL runs again on
//! another PostgreSQL replica within 10 s; SIGTERM drains (503 on `/readyz`, new tasks
//! refused, a resumable task handed to another replica that finishes it, the rest
//! failed after `--drain-timeout` saying why); a second signal stops at once; a stdio
//! server drains the same way when its input closes.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod common;

use common::rpc::Session;
use common::{spawn_listening, Server};
use mcp_tasks_testkit::{eventually, WAIT};

/// Two command tools: `nap` (resumable: safe to run again from the start) and
/// `stuck` (not resumable); both sleep `seconds`, then print it.
fn config(dir: &Path) -> PathBuf {
    let path = dir.join("tasks.toml");
    let tool = |name: &str, resumable: bool| {
        format!(
            "[[tools]]\nname = \"{name}\"\nresumable = {resumable}\n\
             command = [\"sh\", \"-c\", \"sleep \\\"$1\\\"; echo slept \\\"$1\\\"\", \"--\", \"{{seconds}}\"]\n\
             input_schema = {{ type = \"object\", properties = {{ seconds = {{ type = \"integer\" }} }}, required = [\"seconds\"] }}\n\n"
        )
    };
    std::fs::write(&path, tool("nap", true) + &tool("stuck", false)).unwrap();
    path
}

/// `serve` with the config of [`config`] on `database`, and `extra` flags.
fn start(config: &Path, database: &str, extra: &[&str]) -> Server {
    let config = config.display().to_string();
    let mut args = vec![
        "serve",
        "--config",
        &config,
        "--database",
        database,
        "--log",
        "warn",
        "--listen",
        "127.0.0.1:0",
    ];
    args.extend_from_slice(extra);
    spawn_listening(&args)
}

fn sqlite(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("tasks.db").display())
}

/// The text of a finished task's result.
async fn result_text(s: &Session, id: &str) -> String {
    let r = s.rpc("tasks/result", json!({"taskId": id})).await;
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .trim()
        .to_string()
}

fn kill_9(server: &mut Server) {
    server.child.kill().unwrap();
    server.child.wait().unwrap();
}

fn sigterm(server: &Server) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(server.child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
}

/// Waits (up to `within`) for the process to exit; returns whether it succeeded.
async fn exited(server: &mut Server, within: Duration) -> bool {
    eventually(within, || {
        let status = server.child.try_wait().unwrap();
        async move { status.map(|s| s.success()) }
    })
    .await
}

async fn readyz(server: &Server) -> u16 {
    let base = server.url.trim_end_matches("/mcp");
    reqwest::get(format!("{base}/readyz"))
        .await
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

#[tokio::test]
async fn an_sqlite_restart_takes_the_dead_processs_tasks_over_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let db = sqlite(dir.path());
    // A long alive window: without the reap at start, the restart would leave the
    // dead process's tasks alone this long.
    let window = ["--lease-ttl", "30s"];
    let mut first = start(&config, &db, &window);
    let s = Session::open(&first.url).await;
    let resumable = s.create("nap", 2).await;
    let plain = s.create("stuck", 20).await;
    assert_eq!(s.status(&plain).await["status"], "working");
    kill_9(&mut first);

    let restarted_at = Instant::now();
    let second = start(&config, &db, &window);
    // (Over SQLite each process keeps its own sessions: a new one there.)
    let s = Session::open(&second.url).await;
    // The start reaped the dead process's row (same host, pid gone) and took its
    // tasks over before it listened: no waiting for the alive window.
    let failed = s.wait_status(&plain, "failed", WAIT).await;
    let took = restarted_at.elapsed();
    assert!(
        took < WAIT,
        "the interrupted task was failed {took:?} after the restart"
    );
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap()
            .contains("not resumable"),
        "{failed}"
    );
    // The resumable one runs again from the start (2 s) and completes.
    assert_eq!(s.status(&resumable).await["status"], "working");
    assert_eq!(result_text(&s, &resumable).await, "slept 2");
}

#[tokio::test]
async fn sigterm_drains_hands_resumable_work_to_another_replica_and_fails_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let db = sqlite(dir.path());
    // Long enough for the handed-over task to run again and finish on B well within
    // it: without the hand-over, B could take it only once A has exited.
    const DRAIN: Duration = Duration::from_secs(8);
    let mut a = start(&config, &db, &["--drain-timeout", "8s"]);
    let b = start(&config, &db, &[]);
    let on_a = Session::open(&a.url).await;
    // (Over SQLite each process keeps its own sessions.)
    let on_b = Session::open(&b.url).await;
    let resumable = on_a.create("nap", 3).await;
    let plain = on_a.create("stuck", 20).await;
    assert_eq!(readyz(&a).await, 200);

    let signalled = Instant::now();
    sigterm(&a);
    // At once: not ready, and no new task starts here.
    eventually(WAIT, || async { readyz(&a).await == 503 }).await;
    let refused = on_a.call("stuck", 1).await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("draining") && m.contains("another replica")),
        "{refused}"
    );
    // The resumable task is handed over at once and finishes on B (3 s from its new
    // start), without waiting for A's heartbeat to lapse.
    let done = on_b.wait_status(&resumable, "completed", WAIT).await;
    assert!(
        signalled.elapsed() < DRAIN,
        "the resumable task finished {:?} after SIGTERM",
        signalled.elapsed()
    );
    assert_eq!(result_text(&on_b, &resumable).await, "slept 3", "{done}");
    assert_eq!(on_b.status(&plain).await["status"], "working");
    // The other gets the drain timeout, then is failed saying why; then A exits.
    let failed = on_b.wait_status(&plain, "failed", WAIT).await;
    assert!(signalled.elapsed() >= DRAIN, "{:?}", signalled.elapsed());
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap()
            .contains("drain timeout"),
        "{failed}"
    );
    assert!(exited(&mut a, WAIT).await, "the drained server failed");
}

#[tokio::test]
async fn a_second_signal_stops_a_drain_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let mut a = start(&config, &sqlite(dir.path()), &["--drain-timeout", "60s"]);
    let s = Session::open(&a.url).await;
    let plain = s.create("stuck", 20).await;
    assert_eq!(s.status(&plain).await["status"], "working");
    sigterm(&a);
    eventually(WAIT, || async { readyz(&a).await == 503 }).await;
    let second = Instant::now();
    sigterm(&a);
    exited(&mut a, WAIT).await;
    assert!(
        second.elapsed() < Duration::from_secs(5),
        "{:?}",
        second.elapsed()
    );
}

#[tokio::test]
async fn a_postgres_replica_killed_with_sigkill_has_its_task_run_again_within_10_s() {
    use mcp_tasks_store::suite::postgres::{test_url, TestSchema};
    let Some(server) = test_url() else { return };
    let schema = TestSchema::create(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let mut a = start(&config, schema.url(), &[]);
    let b = start(&config, schema.url(), &[]);
    let on_a = Session::open(&a.url).await;
    let on_b = on_a.on(&b.url);
    let resumable = on_a.create("nap", 1).await;
    assert_eq!(on_b.status(&resumable).await["status"], "working");
    kill_9(&mut a);
    let killed = Instant::now();
    on_b.wait_status(&resumable, "completed", Duration::from_secs(20))
        .await;
    // Taken over, run again from the start (1 s) and finished, all within 10 s.
    let took = killed.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
    eprintln!("takeover and re-run after SIGKILL: {took:?}");
    assert_eq!(result_text(&on_b, &resumable).await, "slept 1");
}

/// A stdio server drains when its input closes: its resumable task is handed to a
/// replica on the same file, which finishes it; the other is failed after the drain
/// timeout; then the process exits.
#[tokio::test]
async fn a_stdio_server_drains_when_its_input_closes() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let db = sqlite(dir.path());
    let mut child = tokio::process::Command::new(common::BIN)
        .args(["serve", "--stdio", "--log", "warn", "--drain-timeout", "1s"])
        .args(["--config", &config.display().to_string(), "--database", &db])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let messages = [
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"liveness-test","version":"0"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nap","arguments":{"seconds":2},"task":{}}}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stuck","arguments":{"seconds":20},"task":{}}}),
    ];
    for m in &messages {
        stdin.write_all(format!("{m}\n").as_bytes()).await.unwrap();
    }
    stdin.flush().await.unwrap();
    let mut ids = std::collections::HashMap::new();
    while ids.len() < 2 {
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .expect("the stdio server answered in time")
            .unwrap()
            .expect("the stdio server still runs");
        let v: Value = serde_json::from_str(&line).unwrap();
        if let Some(task) = v["result"]["task"]["taskId"].as_str() {
            ids.insert(v["id"].as_i64().unwrap(), task.to_string());
        }
    }
    let (resumable, plain) = (ids[&1].clone(), ids[&2].clone());
    let b = start(&config, &db, &[]);
    let on_b = Session::open(&b.url).await;
    assert_eq!(on_b.status(&plain).await["status"], "working");

    drop(stdin); // the client goes away
    let done = on_b.wait_status(&resumable, "completed", WAIT).await;
    assert_eq!(result_text(&on_b, &resumable).await, "slept 2", "{done}");
    let failed = on_b.wait_status(&plain, "failed", WAIT).await;
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap()
            .contains("drain timeout"),
        "{failed}"
    );
    let status = tokio::time::timeout(WAIT, child.wait())
        .await
        .expect("the drained stdio server exits")
        .unwrap();
    assert!(status.success(), "{status}");
}
