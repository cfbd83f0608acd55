//! `--log-format json` is JSON on every line: a run that starts, serves tool calls
//! (local and through a stdio upstream that writes on its stderr) and stops on SIGTERM
//! writes only JSON objects, with plain values (no Rust `Some(..)`).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::proc::Run;
use serde_json::{json, Value};

/// What the upstream writes on its stderr before it starts.
const CHILD_SAYS: &str = "upstream-stderr-marker";

/// Every string in `value`, keys included.
fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k);
                strings(v, out);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn every_line_of_a_json_run_is_a_json_object_with_plain_values() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tasks.toml");
    let child = format!(
        "echo {CHILD_SAYS} >&2; exec '{}' serve --stdio --demo --database memory:",
        common::BIN
    );
    std::fs::write(
        &config,
        format!(
            "[[upstream]]\nname = \"inner\"\nprefix = \"inner_\"\ncommand = [\"sh\", \"-c\", {}]\n",
            serde_json::to_string(&child).unwrap()
        ),
    )
    .unwrap();
    let mut run = Run::start(
        &[
            "serve",
            "--demo",
            "--config",
            config.to_str().unwrap(),
            "--database",
            "memory:",
            "--listen",
            "127.0.0.1:0",
            "--log-format",
            "json",
            // The upstream's stderr is relayed at debug.
            "--log",
            "info,mcp_tasks_client::server_stderr=debug",
        ],
        &[],
    );
    let url = run.listening().await;
    let client = mcp_tasks_client::Client::builder()
        .connect(&mcp_tasks_client::Target::Http(url.clone()))
        .await
        .unwrap();
    for tool in ["greet", "inner_greet"] {
        let result = client
            .call_tool(tool, json!({"name": "Ada"}))
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert_ne!(result["isError"], json!(true), "{tool}: {result}");
    }
    let base = url.trim_end_matches("/mcp");
    assert_eq!(
        reqwest::get(format!("{base}/readyz"))
            .await
            .unwrap()
            .status(),
        200
    );
    drop(client);
    assert!(run.stop().await, "{}", run.output());

    let mut relayed = false;
    for line in &run.seen {
        let value: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {line}\nall:\n{}", run.output()));
        assert!(value.is_object(), "not an object: {line}");
        let mut all = Vec::new();
        strings(&value, &mut all);
        for s in all {
            assert!(!s.contains("Some("), "a Debug-printed Option in: {line}");
        }
        relayed |= value["target"] == "mcp_tasks_client::server_stderr"
            && value["fields"]["message"] == CHILD_SAYS;
    }
    assert!(relayed, "the upstream's stderr line: {}", run.output());
    let out = run.output();
    for said in ["listening on", "upstream ready", "shutting down"] {
        assert!(out.contains(said), "{said}: {out}");
    }
}
