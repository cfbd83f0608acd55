//! No secret leaves the process: `serve` given a database URL with a password, with
//! the database reachable and not, in both log formats, never writes the password —
//! not in a log line, an error, `/readyz`, `/metrics`, `/healthz` or the board.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::pg::{with_password, Forwarder};
use common::proc::Run;
use mcp_tasks_store::suite::postgres::{test_url, TestSchema};

/// The password given; nothing the process writes may contain it.
const PASSWORD: &str = "Pw0rd-of-the-leak-test-7f3a";

/// Every line of a `--log-format json` run is one JSON object.
fn assert_json_lines(run: &Run) {
    for line in &run.seen {
        let value: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {line}\nall:\n{}", run.output()));
        assert!(value.is_object(), "not an object: {line}");
    }
}

fn assert_no_password(what: &str, text: &str) {
    assert!(
        !text.contains(PASSWORD),
        "the password is in {what}:\n{text}"
    );
}

#[tokio::test]
async fn an_unreachable_database_is_named_without_its_password() {
    let (_held, port) = common::refused_port();
    for format in ["text", "json"] {
        for url in [
            format!("postgres://app:{PASSWORD}@127.0.0.1:{port}/tasks"),
            format!("postgres://app@127.0.0.1:{port}/tasks?password={PASSWORD}&sslmode=disable"),
        ] {
            let mut run = Run::start(
                &[
                    "serve",
                    "--demo",
                    "--listen",
                    "127.0.0.1:0",
                    "--database",
                    &url,
                    "--log",
                    "debug",
                    "--log-format",
                    format,
                ],
                &[],
            );
            assert!(!run.finish().await, "it cannot serve without its store");
            let out = run.output();
            assert_no_password(&format!("the {format} output for {url}"), &out);
            // The error is there, naming the database as far as it may.
            assert!(
                out.contains(&format!("127.0.0.1:{port}/tasks")) && out.contains("***"),
                "{out}"
            );
            if format == "json" {
                assert_json_lines(&run);
            }
        }
    }
    // The same URL from the environment stays out of --help.
    let url = format!("postgres://app:{PASSWORD}@127.0.0.1:{port}/tasks");
    let mut help = Run::start(&["serve", "--help"], &[("MCP_TASKS_DATABASE", &url)]);
    assert!(help.finish().await);
    assert_no_password("serve --help", &help.output());
}

#[tokio::test]
async fn a_reachable_database_is_named_without_its_password() {
    let Some(server) = test_url() else { return };
    let schema = TestSchema::create(&server).await;
    // Through a forwarder, so the password-bearing URL differs from any the cluster
    // scripts print; the cluster trusts local connections, so any password works.
    let forwarder = Forwarder::start(common::pg::host_port(schema.url())).await;
    let url = with_password(&common::pg::via(schema.url(), forwarder.addr), PASSWORD);
    for format in ["text", "json"] {
        let mut run = Run::start(
            &[
                "serve",
                "--demo",
                "--listen",
                "127.0.0.1:0",
                "--database",
                &url,
                "--log",
                "debug",
                "--log-format",
                format,
            ],
            &[],
        );
        let mcp = run.listening().await;
        let base = mcp.trim_end_matches("/mcp").to_string();
        let mut bodies = String::new();
        for path in ["/readyz", "/healthz", "/metrics", "/board"] {
            let response = reqwest::get(format!("{base}{path}")).await.unwrap();
            let status = response.status();
            let body = response.text().await.unwrap();
            if path == "/readyz" || path == "/healthz" {
                assert_eq!(status.as_u16(), 200, "{path}: {body}");
            }
            bodies.push_str(&body);
        }
        assert_no_password("the /readyz, /healthz, /metrics and /board bodies", &bodies);
        assert!(run.stop().await, "{}", run.output());
        let out = run.output();
        assert_no_password(&format!("the {format} output"), &out);
        assert!(out.contains("task store ready"), "{out}");
        assert!(
            out.contains(":***@127.0.0.1"),
            "the URL is shown masked: {out}"
        );
        if format == "json" {
            assert_json_lines(&run);
        }
    }
}

/// A webhook whose URL is its own credential (Slack's incoming webhooks: the secret is
/// the path) and that has no `name`: its deliveries fail (nothing listens), and the
/// URL's path shows in no log line (debug included) and no metric label.
#[tokio::test]
async fn a_webhook_url_that_is_its_own_credential_is_in_no_output() {
    let (_held, port) = common::refused_port();
    let hook = format!("http://127.0.0.1:{port}/services/T0/B0/{PASSWORD}");
    let mut run = Run::start(
        &[
            "serve",
            "--demo",
            "--listen",
            "127.0.0.1:0",
            "--database",
            "memory:",
            "--log",
            "debug",
            "--task-after",
            "0s",
            "--notify-webhook",
            &hook,
            "--notify-retry",
            "50ms",
        ],
        &[],
    );
    let mcp = run.listening().await;
    let base = mcp.trim_end_matches("/mcp").to_string();
    // A tool error is a `failed` event, which --notify-webhook sinks hear.
    let call = std::process::Command::new(common::BIN)
        .args(["call", &mcp, "failing_job", "--json"])
        .output()
        .unwrap();
    assert_eq!(call.status.code(), Some(1), "{call:?}");
    let metrics = mcp_tasks_testkit::eventually(mcp_tasks_testkit::WAIT, || async {
        let text = reqwest::get(format!("{base}/metrics"))
            .await
            .ok()?
            .text()
            .await
            .ok()?;
        text.lines()
            .any(|l| l.contains("webhook_attempts") && l.contains("sink="))
            .then_some(text)
    })
    .await;
    assert_no_password("/metrics", &metrics);
    assert!(
        metrics.contains("sink=\"http://127.0.0.1:"),
        "the sink is named by its origin: {metrics}"
    );
    assert!(run.stop().await, "{}", run.output());
    assert_no_password("the output", &run.output());
}
