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

/// A loopback port nothing listens on (bound, then let go).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

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
    let port = closed_port();
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
