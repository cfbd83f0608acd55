//! `/readyz` tells the truth on the real binary: 503 with a reason while a configured
//! HTTP upstream is down (from the start, or gone later) or the PostgreSQL store went
//! away, 200 when all is well; `/healthz` answers 200 throughout.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::pg::{via, with_password, Forwarder};
use common::proc::Run;
use mcp_tasks_store::suite::postgres::{test_url, TestSchema};
use serde_json::Value;

const PASSWORD: &str = "readiness-test-pw-51c9";

async fn get(url: &str) -> (u16, Value) {
    let r = reqwest::get(url).await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// `serve --demo` with `config` (a TOML text), on memory: unless `database` says.
fn serve_with(dir: &tempfile::TempDir, config: &str, database: &str) -> Run {
    let path = dir.path().join("tasks.toml");
    std::fs::write(&path, config).unwrap();
    Run::start(
        &[
            "serve",
            "--demo",
            "--config",
            path.to_str().unwrap(),
            "--database",
            database,
            "--listen",
            "127.0.0.1:0",
            "--log",
            "warn",
        ],
        &[],
    )
}

/// The problem `check` of a 503 `/readyz` body.
fn problem<'a>(body: &'a Value, check: &str) -> Option<&'a Value> {
    body["problems"]
        .as_array()?
        .iter()
        .find(|p| p["check"] == check)
}

#[tokio::test]
async fn an_http_upstream_that_is_down_makes_the_server_not_ready() {
    // Down from the start: a closed port.
    let dir = tempfile::tempdir().unwrap();
    let (_held, port) = common::refused_port();
    let mut run = serve_with(
        &dir,
        &format!("[[upstream]]\nname = \"away\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
        "memory:",
    );
    let base = run.listening().await.trim_end_matches("/mcp").to_string();
    let (status, body) = get(&format!("{base}/readyz")).await;
    assert_eq!(status, 503, "{body}");
    let why = problem(&body, "upstream away").unwrap_or_else(|| panic!("{body}"));
    assert!(why["reason"].as_str().unwrap().contains("away"), "{body}");
    assert_eq!(get(&format!("{base}/healthz")).await.0, 200);
    assert!(run.stop().await, "{}", run.output());

    // Up at the start, gone later.
    let upstream = common::serve(&["--database", "memory:"]);
    let mut run = serve_with(
        &dir,
        &format!(
            "[[upstream]]\nname = \"inner\"\nprefix = \"inner_\"\nurl = \"{}\"\n",
            upstream.url
        ),
        "memory:",
    );
    let base = run.listening().await.trim_end_matches("/mcp").to_string();
    let (status, body) = get(&format!("{base}/readyz")).await;
    assert_eq!(status, 200, "{body}");
    drop(upstream); // killed and waited for
    let (status, body) = get(&format!("{base}/readyz")).await;
    assert_eq!(status, 503, "{body}");
    assert!(problem(&body, "upstream inner").is_some(), "{body}");
    assert_eq!(get(&format!("{base}/healthz")).await.0, 200);
    assert!(run.stop().await, "{}", run.output());
}

#[tokio::test]
async fn a_postgres_store_that_goes_away_makes_the_server_not_ready() {
    let Some(server) = test_url() else { return };
    let schema = TestSchema::create(&server).await;
    let forwarder = Forwarder::start(common::pg::host_port(schema.url())).await;
    let url = with_password(&via(schema.url(), forwarder.addr), PASSWORD);
    let dir = tempfile::tempdir().unwrap();
    let mut run = serve_with(&dir, "", &url);
    let base = run.listening().await.trim_end_matches("/mcp").to_string();
    let (status, body) = get(&format!("{base}/readyz")).await;
    assert_eq!(status, 200, "{body}");

    forwarder.close();
    let (status, body) = get(&format!("{base}/readyz")).await;
    assert_eq!(status, 503, "{body}");
    let why = problem(&body, "store").unwrap_or_else(|| panic!("{body}"));
    assert!(why["reason"].as_str().unwrap().contains("store"), "{body}");
    assert!(!body.to_string().contains(PASSWORD), "{body}");
    assert_eq!(get(&format!("{base}/healthz")).await.0, 200);
    assert!(run.stop().await, "{}", run.output());
    assert!(!run.output().contains(PASSWORD), "{}", run.output());
}
