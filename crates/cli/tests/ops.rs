//! What operators rely on, on the real binary: JSON log lines and the health endpoints.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::BIN;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[tokio::test]
async fn json_logs_parse_and_health_endpoints_answer() {
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--demo",
            "--database",
            "memory:",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--log", "info", "--log-format", "json"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut json_lines = Vec::new();
    let url = loop {
        let line = lines
            .next()
            .expect("the server printed its address")
            .unwrap();
        if let Some(url) = common::listening_url(&line) {
            break url;
        }
        json_lines.push(line);
    };
    let first: serde_json::Value = serde_json::from_str(&json_lines[0])
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", json_lines[0]));
    for key in ["timestamp", "level", "target", "fields"] {
        assert!(first.get(key).is_some(), "{key} missing: {first}");
    }
    assert_eq!(first["level"], "INFO", "{first}");

    let base = url.trim_end_matches("/mcp");
    let health = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(health.status().as_u16(), 200);
    let ready = reqwest::get(format!("{base}/readyz")).await.unwrap();
    assert_eq!(ready.status().as_u16(), 200);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn completions_and_the_manual_page_are_generated() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = Command::new(BIN)
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(
            script.contains("wrap") && script.contains("serve"),
            "{shell}: {script}"
        );
    }
    // The bash script is valid bash.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp-tasks.bash");
    let out = Command::new(BIN)
        .args(["completions", "bash"])
        .output()
        .unwrap();
    std::fs::write(&path, out.stdout).unwrap();
    let checked = Command::new("bash").arg("-n").arg(&path).status().unwrap();
    assert!(checked.success(), "bash -n refused the completion script");

    let out = Command::new(BIN).arg("man").output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH mcp-tasks 1"), "{page}");
    assert!(page.contains("wrap") && page.contains("serve"), "{page}");

    // One page per command, so that the top-level page's `mcp-tasks-serve(1)` exists.
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for command in [
        "serve",
        "wrap",
        "bench",
        "call",
        "watch",
        "get",
        "list",
        "cancel",
        "tools",
        "completions",
        "man",
    ] {
        let path = dir.path().join(format!("mcp-tasks-{command}.1"));
        let page =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            page.contains(&format!(".TH mcp-tasks-{command} 1")),
            "{page}"
        );
        assert!(page.contains(".SH OPTIONS"), "{command}: {page}");
    }
    let top = std::fs::read_to_string(dir.path().join("mcp-tasks.1")).unwrap();
    assert!(top.contains("mcp\\-tasks\\-serve(1)"), "{top}");
}

/// The packaging examples (Dockerfile, compose file, systemd unit) only use flags and
/// environment variables `serve` knows, and the example token file parses: they cannot
/// drift from the binary unnoticed.
#[test]
fn deployment_examples_use_only_what_serve_knows() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let help = Command::new(BIN)
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    for file in [
        "Dockerfile",
        "deploy/docker-compose.yml",
        "deploy/mcp-tasks.service",
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        // The lines that run the server, and the environment they set.
        for line in text
            .lines()
            .filter(|l| l.contains("serve") || l.contains("MCP_TASKS_"))
        {
            for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')) {
                if let Some(flag) = word.strip_prefix("--").filter(|f| f.len() > 2) {
                    assert!(
                        help.contains(&format!("--{flag}")),
                        "{file}: --{flag} is not a serve flag"
                    );
                }
                if word.starts_with("MCP_TASKS_") && word != "MCP_TASKS_STATE_DIR" {
                    assert!(
                        help.contains(&format!("env: {word}")),
                        "{file}: {word} is not read by serve"
                    );
                }
            }
        }
    }
    let tokens = std::fs::read_to_string(root.join("deploy/tokens.toml")).unwrap();
    mcp_tasks_server::auth::StaticTokens::from_toml(&tokens)
        .expect("the example token file parses");
}

/// After tasks of every outcome, `/metrics` counts them by tool and status, and (where
/// Prometheus's `promtool` is installed; CI installs it and sets
/// MCP_TASKS_REQUIRE_PROMTOOL=1) the scrape passes `promtool check metrics`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_every_outcome_and_pass_promtool() {
    use mcp_tasks_client::{Client, Target, TaskOptions, WirePreference};
    use serde_json::json;
    // SQLite, so that group commits and the sqlite store backend show up.
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let server = common::serve(&["--database", &database]);
    let client = Client::builder()
        .wire(WirePreference::V2025_11_25)
        .connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    let run = |tool: &'static str, args: serde_json::Value| {
        let client = client.clone();
        async move {
            client
                .call_tool_as_task(tool, args, TaskOptions::default())
                .await
                .unwrap()
        }
    };
    run("slow_compute", json!({"seconds": 0}))
        .await
        .result()
        .await
        .unwrap();
    run("failing_job", json!({})).await.result().await.unwrap();
    let long = run("slow_compute", json!({"seconds": 60})).await;
    long.cancel().await.unwrap();
    client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .unwrap();

    let base = server.url.trim_end_matches("/mcp").to_string();
    let openmetrics = reqwest::Client::new()
        .get(format!("{base}/metrics"))
        .header("accept", "application/openmetrics-text; version=1.0.0")
        .send()
        .await
        .unwrap();
    assert!(openmetrics
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/openmetrics-text")));
    assert!(openmetrics.text().await.unwrap().ends_with("# EOF\n"));
    let scrape = reqwest::get(format!("{base}/metrics")).await.unwrap();
    assert!(scrape
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/plain; version=0.0.4")));
    let text = scrape.text().await.unwrap();
    for line in [
        "mcp_tasks_tasks_created_total{tool=\"slow_compute\"} 2",
        "mcp_tasks_tasks_finished_total{tool=\"slow_compute\",status=\"completed\"} 1",
        "mcp_tasks_tasks_finished_total{tool=\"slow_compute\",status=\"cancelled\"} 1",
        "mcp_tasks_tasks_finished_total{tool=\"failing_job\",status=\"failed\"} 1",
        "mcp_tasks_requests_total{method=\"tools/call\",outcome=\"ok\"} 4",
        "mcp_tasks_sessions 1",
        // Read from the store at scrape time.
        "mcp_tasks_tasks{status=\"working\"} 0",
        // failing_job's tool error is a completed task on this wire.
        "mcp_tasks_tasks{status=\"completed\"} 2",
        "mcp_tasks_tasks{status=\"failed\"} 0",
        "mcp_tasks_tasks{status=\"cancelled\"} 1",
        "mcp_tasks_store_operation_duration_seconds_count{operation=\"create\",backend=\"sqlite\"} 3",
        "mcp_tasks_store_operation_duration_seconds_sum{operation=\"transition\",backend=\"sqlite\"}",
        // Three creates, in however many group commits.
        "mcp_tasks_sqlite_group_commit_batch_size_sum 3",
        "mcp_tasks_lease_losses_total 0",
    ] {
        assert!(text.contains(line), "missing {line}:\n{text}");
    }
    assert!(
        text.contains("mcp_tasks_task_duration_seconds_bucket{le="),
        "{text}"
    );

    let required = std::env::var("MCP_TASKS_REQUIRE_PROMTOOL").is_ok_and(|v| v == "1");
    let promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut promtool = match promtool {
        Ok(p) => p,
        Err(e) if !required => {
            eprintln!("promtool not installed ({e}): the scrape was not linted");
            return;
        }
        Err(e) => panic!("promtool is required here (MCP_TASKS_REQUIRE_PROMTOOL=1): {e}"),
    };
    use std::io::Write;
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = promtool.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
