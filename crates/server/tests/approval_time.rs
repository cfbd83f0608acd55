//! A long approval never silently vanishes (issue 43): a call held for approval gets a
//! task that lives at least as long as its approval may wait (the deadline, once per
//! vote and once more for an escalation, plus the time the client asked for, plus the
//! time an unanswered question's task stays readable), clamped by the server's maximum
//! TTL; a rule whose wait exceeds that maximum fails the server's start naming both.
//! And the handle of a held call names only the channels this server offers.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{start_server_with_engine, test_engine_config, Client, TestServer};
use mcp_tasks_engine::config::MAX_SETTLE_BEFORE_EXPIRY;
use mcp_tasks_engine::{EngineConfig, EngineError};
use mcp_tasks_server::approvals::{ApprovalRule, Approvals};
use mcp_tasks_server::{Server, ServerConfig, ToolRegistry};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(serde::Deserialize)]
struct Rules {
    approval: Vec<ApprovalRule>,
}

fn approvals(rules: &str) -> Approvals {
    let rules: Rules = toml::from_str(rules).unwrap();
    let groups = BTreeMap::from([(
        "ops".to_string(),
        vec!["alice".to_string(), "bob".to_string()],
    )]);
    Approvals::new(rules.approval, groups).unwrap()
}

const DAY: Duration = Duration::from_secs(24 * 3600);
const MINUTE: Duration = Duration::from_secs(60);

fn engine_config() -> EngineConfig {
    EngineConfig {
        max_ttl: DAY,
        ..test_engine_config()
    }
}

async fn server(rules: &str, config: ServerConfig) -> TestServer {
    start_server_with_engine(
        engine_config(),
        ServerConfig {
            approvals: approvals(rules),
            ..config
        },
    )
    .await
}

/// The TTL (ms) of the task a `sleep` call with client ttl `ttl_ms` became.
async fn ttl_of_call(s: &TestServer, ttl_ms: u64) -> u64 {
    let mut c = Client::connect_with_capabilities(&s.url, json!({"tasks": {}})).await;
    let r = c
        .call(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1}, "task": {"ttl": ttl_ms}}),
        )
        .await;
    r["task"]["ttl"]
        .as_u64()
        .unwrap_or_else(|| panic!("no task: {r}"))
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap()
}

#[tokio::test]
async fn a_held_call_s_task_lives_as_long_as_its_approval_may_wait() {
    let asked = MINUTE;
    let s = server(
        "[[approval]]\ntool = \"sleep\"\napprovers = [\"ops\"]\ndeadline = \"2h\"\n",
        ServerConfig::default(),
    )
    .await;
    assert_eq!(
        ttl_of_call(&s, ms(asked)).await,
        ms(2 * 3600 * Duration::from_secs(1) + asked + MAX_SETTLE_BEFORE_EXPIRY),
        "the deadline, the client's ttl and the settling time"
    );

    // Two votes, then an escalation: three rounds of the deadline.
    let s = server(
        "[[approval]]\ntool = \"sleep\"\napprovers = [\"ops\"]\nrequired = 2\ndeadline = \"3h\"\non_timeout = \"escalate\"\nescalate_to = [\"carol\"]\n",
        ServerConfig::default(),
    )
    .await;
    assert_eq!(
        ttl_of_call(&s, ms(asked)).await,
        ms(9 * 3600 * Duration::from_secs(1) + asked + MAX_SETTLE_BEFORE_EXPIRY)
    );

    // No deadline: it waits as long as a task may live.
    let s = server(
        "[[approval]]\ntool = \"sleep\"\napprovers = [\"ops\"]\n",
        ServerConfig::default(),
    )
    .await;
    assert_eq!(ttl_of_call(&s, ms(asked)).await, ms(DAY));

    // A call no rule holds keeps the ttl its client asked for.
    let s = server(
        "[[approval]]\ntool = \"stubborn\"\napprovers = [\"ops\"]\n",
        ServerConfig::default(),
    )
    .await;
    assert_eq!(ttl_of_call(&s, ms(asked)).await, ms(asked));
}

#[tokio::test]
async fn a_rule_whose_approval_outlives_the_maximum_ttl_fails_the_start() {
    for (rule, wait) in [
        (
            "[[approval]]\ntool = \"deploy\"\napprovers = [\"ops\"]\ndeadline = \"2d\"\n",
            "up to 2days",
        ),
        (
            "[[approval]]\ntool = \"deploy\"\napprovers = [\"ops\"]\ndeadline = \"13h\"\non_timeout = \"escalate\"\nescalate_to = [\"carol\"]\n",
            "up to 1day 2h (the deadline, then the escalation's own)",
        ),
    ] {
        let store = mcp_tasks_store::open("memory:").await.unwrap();
        let started = Server::start(
            store,
            engine_config(),
            ToolRegistry::new(),
            ServerConfig {
                approvals: approvals(rule),
                ..ServerConfig::default()
            },
            Vec::new(),
        )
        .await;
        let Err(EngineError::InvalidInput(message)) = started else {
            panic!("started with {rule}");
        };
        for part in ["tool 'deploy'", wait, "max_ttl = 1day", "Shorten the deadline or raise max_ttl"] {
            assert!(message.contains(part), "'{part}' missing: {message}");
        }
    }
    // Exactly the maximum is allowed.
    let store = mcp_tasks_store::open("memory:").await.unwrap();
    Server::start(
        store,
        engine_config(),
        ToolRegistry::new(),
        ServerConfig {
            approvals: approvals(
                "[[approval]]\ntool = \"deploy\"\napprovers = [\"ops\"]\ndeadline = \"12h\"\nrequired = 2\n",
            ),
            ..ServerConfig::default()
        },
        Vec::new(),
    )
    .await
    .unwrap();
}

/// The text of the handle a plain call of the held `echo` gets.
async fn handle_text(config: ServerConfig) -> String {
    let s = server(
        "[[approval]]\ntool = \"echo\"\napprovers = [\"alice\"]\n",
        config,
    )
    .await;
    let mut c = Client::connect_with_version(&s.url, "2025-06-18").await;
    let handle = c
        .call("tools/call", json!({"name": "echo", "arguments": {"x": 1}}))
        .await;
    handle["content"][0]["text"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn the_handle_of_a_held_call_names_only_the_channels_this_server_offers() {
    // No board (a stdio server): nobody can answer through it, and it says so.
    let text = handle_text(ServerConfig::default()).await;
    assert!(
        text.contains("Waiting for alice to decide")
            && text.contains("this server offers them no way to answer")
            && !text.contains("on the task board")
            && !text.contains("in their chat"),
        "{text}"
    );
    // A board: only the board.
    let text = handle_text(ServerConfig {
        board_url: Some("http://127.0.0.1:9/board".into()),
        ..ServerConfig::default()
    })
    .await;
    assert!(
        text.contains("Only they can answer it, on the task board;"),
        "{text}"
    );
    assert!(!text.contains("chat") && !text.contains("Slack"), "{text}");
    // The channels the server was given, all of them.
    let text = handle_text(ServerConfig {
        board_url: Some("http://127.0.0.1:9/board".into()),
        people_channels: vec!["on the task board".into(), "in Slack".into()],
        ..ServerConfig::default()
    })
    .await;
    assert!(
        text.contains("Only they can answer it, on the task board or in Slack;"),
        "{text}"
    );
}
