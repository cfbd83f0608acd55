//! Cedar policies through the real binary: `[policy]` authorizes native tools and a
//! gateway's upstream tools by the name the agent sees (the prefix included), an
//! `@approval` permit holds a deploy for a quorum, a bad policy stops the start with
//! Cedar's message, file and line, and `mcp-tasks policy check` says what a call meets
//! with its exit status.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{spawn_listening, BIN};
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

const POLICIES: &str = r#"
@id("everyone")
permit(principal, action == Action::"call", resource);

// The gateway's upstream deploy is reached as up_deploy: the name the agent sees.
@id("no-upstream-deploys")
@reason("deploys go through the native deploy tool")
forbid(principal, action, resource == Tool::"up_deploy");

// Only alice greets natively; the upstream's greet (up_greet) is not this tool.
@id("greet-is-alices")
forbid(principal, action, resource == Tool::"greet")
unless { principal == User::"alice" };

@id("prod-deploys")
@approval("Deploy to production?")
@approvers("ops")
@quorum("2")
@deadline("30m")
permit(principal, action, resource == Tool::"deploy")
when { context.arguments has env && context.arguments.env == "prod" };

@id("interns-never-deploy")
@reason("interns do not deploy")
forbid(principal in Group::"interns", action, resource == Tool::"deploy");
"#;

const CONFIG: &str = r#"
[groups]
ops = ["alice", "bob"]
interns = ["ivan"]

[policy]
dir = "policies"
"#;

/// A folder with `policies/tools.cedar` and `tasks.toml` (`CONFIG`, plus `extra`).
fn setup(extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("policies")).unwrap();
    std::fs::write(dir.path().join("policies/tools.cedar"), POLICIES).unwrap();
    std::fs::write(dir.path().join("tasks.toml"), format!("{CONFIG}{extra}")).unwrap();
    std::fs::write(
        dir.path().join("tokens.toml"),
        "\"tok-carol\" = \"carol\"\n\"tok-alice\" = \"alice\"\n",
    )
    .unwrap();
    dir
}

/// `policy check` in `dir` with `args`: exit status and stdout.
fn check(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .current_dir(dir)
        .args(["policy", "check"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn policy_check_says_what_a_call_meets_and_which_policy_decided() {
    let dir = setup("");
    let d = dir.path();
    let (code, out, _) = check(
        d,
        &[
            "--config",
            "tasks.toml",
            "--principal",
            "carol",
            "--tool",
            "deploy",
            "--args",
            r#"{"env":"staging","service":"web"}"#,
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("permit: carol calling deploy"), "{out}");
    assert!(out.contains("decided by: everyone"), "{out}");

    let (code, out, _) = check(
        d,
        &[
            "--config",
            "tasks.toml",
            "--principal",
            "carol",
            "--tool",
            "deploy",
            "--args",
            r#"{"env":"prod"}"#,
        ],
    );
    assert_eq!(code, 7, "approval: {out}");
    assert!(out.contains("decided by: prod-deploys"), "{out}");
    assert!(out.contains("by ops (quorum 2, deadline 30m)"), "{out}");

    // Groups from the config, and groups given as an identity provider would.
    for who in [
        &["--principal", "ivan"][..],
        &["--principal", "zoe", "--group", "interns"],
    ] {
        let mut args = vec!["--config", "tasks.toml", "--tool", "deploy"];
        args.extend_from_slice(who);
        let (code, out, _) = check(d, &args);
        assert_eq!(code, 6, "forbid: {out}");
        assert!(out.contains("interns-never-deploy"), "{out}");
        assert!(out.contains("interns do not deploy"), "{out}");
    }

    // --policies alone, and JSON for a script.
    let (code, out, err) = check(
        d,
        &[
            "--policies",
            "policies",
            "--principal",
            "carol",
            "--tool",
            "up_deploy",
            "--json",
        ],
    );
    assert_eq!(code, 6, "{out}{err}");
    let decision: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(decision["outcome"], "forbid");
    assert_eq!(decision["policies"], json!(["no-upstream-deploys"]));

    // A policy that does not parse: Cedar's message with file, line and column.
    std::fs::write(
        d.join("policies/broken.cedar"),
        "permit(principal, action, resource);\n\nforbid(principal action, resource);\n",
    )
    .unwrap();
    let (code, _, err) = check(
        d,
        &["--policies", "policies", "--principal", "a", "--tool", "t"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("broken.cedar:3:18: unexpected token"), "{err}");
}

#[test]
fn a_bad_policy_stops_the_start_with_file_and_line() {
    let dir = setup("");
    std::fs::write(
        dir.path().join("policies/tools.cedar"),
        "@id(\"x\")\npermit(principal, action, resource)\nwhen { context.arguments.env == };\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args([
            "serve",
            "--database",
            "memory:",
            "--listen",
            "127.0.0.1:0",
            "--config",
        ])
        .arg(dir.path().join("tasks.toml"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("tools.cedar:3:"), "{err}");
    assert!(err.contains("[policy]"), "{err}");
}

/// A stateless `tools/call` with `token`: the whole JSON-RPC response.
async fn call(url: &str, token: &str, tool: &str, args: Value) -> Value {
    reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": tool, "arguments": args,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
            }
        }}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_and_upstream_tools_meet_the_policies_by_the_name_the_agent_sees() {
    let upstream = format!(
        "\n[[upstream]]\nname = \"demo\"\nprefix = \"up_\"\ncommand = [\"{BIN}\", \"serve\", \"--stdio\", \"--demo\", \"--database\", \"memory:\", \"--log\", \"warn\"]\n"
    );
    let dir = setup(&upstream);
    let config = dir.path().join("tasks.toml");
    let tokens = dir.path().join("tokens.toml");
    let server = spawn_listening(&[
        "serve",
        "--demo",
        "--log",
        "warn",
        "--listen",
        "127.0.0.1:0",
        "--database",
        "memory:",
        "--config",
        config.to_str().unwrap(),
        "--auth-tokens",
        tokens.to_str().unwrap(),
    ]);
    let url = &server.url;
    let refused = call(
        url,
        "tok-carol",
        "up_deploy",
        json!({"service": "web", "env": "staging"}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32030, "{refused}");
    assert_eq!(
        refused["error"]["data"]["policies"],
        json!(["no-upstream-deploys"])
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("deploys go through the native deploy tool"),
        "{refused}"
    );
    // The native greet is alice's; the upstream's, renamed, is not that tool.
    let native = call(url, "tok-carol", "greet", json!({"name": "x"})).await;
    assert_eq!(
        native["error"]["data"]["policies"],
        json!(["greet-is-alices"]),
        "{native}"
    );
    let by_alice = call(url, "tok-alice", "greet", json!({"name": "x"})).await;
    assert!(by_alice.get("result").is_some(), "{by_alice}");
    let upstream = call(url, "tok-carol", "up_greet", json!({"name": "x"})).await;
    assert!(upstream.get("result").is_some(), "{upstream}");
    assert_ne!(upstream["result"]["isError"], true, "{upstream}");

    // A production deploy waits for two of ops.
    let held = call(
        url,
        "tok-carol",
        "deploy",
        json!({"service": "web", "env": "prod"}),
    )
    .await;
    assert_eq!(held["result"]["resultType"], "task", "{held}");
    let task = held["result"]["taskId"].as_str().unwrap().to_string();
    let status = eventually(WAIT, || async {
        let r = reqwest::Client::new()
            .post(url)
            .bearer_auth("tok-carol")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tasks/get")
            .header("mcp-name", &task)
            .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {
                "taskId": task,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
                }
            }}))
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap();
        (r["result"]["status"] == "input_required").then_some(r)
    })
    .await;
    assert_eq!(
        status["result"]["statusMessage"], "waiting for approval by ops (0 of 2 given)",
        "{status}"
    );
}
