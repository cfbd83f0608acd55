//! Logging: `logging/setLevel` and `notifications/message` from a tool, in a plain call
//! (on the call's stream) and in a task (related to it), filtered by the session level.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{read_until, Client};
use mcp_tasks_engine::TaskContext;
use mcp_tasks_protocol::LoggingLevel;
use mcp_tasks_server::{NoArgs, Server, TaskSupport, Tool};
use serde_json::{json, Value};

const RT: &str = "io.modelcontextprotocol/related-task";

/// Logs one message at each of debug, info and warning, then answers.
fn chatty() -> Tool {
    Tool::from_fn(
        "chatty",
        "logs at three levels",
        |_: NoArgs, ctx: TaskContext| async move {
            ctx.log(LoggingLevel::Debug, "d");
            ctx.log(LoggingLevel::Info, json!({"step": "i"}));
            ctx.log_as(LoggingLevel::Warning, Some("disk"), "w");
            "done".to_string()
        },
    )
    .task_support(TaskSupport::Optional)
}

/// A server with `chatty`, on a free loopback port; stopped when the returned sender drops.
async fn start() -> (String, tokio::sync::oneshot::Sender<()>) {
    let server = Server::builder().tool(chatty()).build().await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = server
            .serve_http_on(listener, async move {
                let _ = stopped.await;
            })
            .await;
    });
    (url, stop)
}

/// The log messages of a plain call of `chatty`, read from its stream, as (level, data).
async fn plain_call_logs(c: &Client) -> Vec<(String, Value)> {
    let resp = c
        .stream_request(9, "tools/call", json!({"name": "chatty", "arguments": {}}))
        .await;
    let seen = read_until(resp, |m| m["id"] == 9).await;
    let last = seen.last().unwrap();
    assert_eq!(last["result"]["content"][0]["text"], "done", "{last}");
    seen.iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| {
            assert!(m["params"]["_meta"].get(RT).is_none(), "{m}");
            (
                m["params"]["level"].as_str().unwrap().to_string(),
                m["params"]["data"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_plain_call_logs_on_its_stream_at_the_level_the_client_set() {
    let (url, _stop) = start().await;
    let mut fresh = Client::new(&url);
    let init = fresh
        .request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))
        .await;
    assert!(
        init.body["result"]["capabilities"]["logging"].is_object(),
        "{}",
        init.body
    );
    let mut c = Client::connect(&url).await;

    // Until the client says: info and above.
    assert_eq!(
        plain_call_logs(&c).await,
        vec![
            ("info".to_string(), json!({"step": "i"})),
            ("warning".to_string(), json!("w"))
        ]
    );
    c.call("logging/setLevel", json!({"level": "debug"})).await;
    assert_eq!(plain_call_logs(&c).await.len(), 3);
    c.call("logging/setLevel", json!({"level": "error"})).await;
    assert!(plain_call_logs(&c).await.is_empty());

    assert_eq!(
        c.error_code("logging/setLevel", json!({"level": "loud"}))
            .await,
        -32602
    );
    assert_eq!(c.error_code("logging/setLevel", json!({})).await, -32602);
}

#[tokio::test]
async fn a_task_logs_to_its_session_related_to_the_task() {
    let (url, _stop) = start().await;
    let mut c = Client::connect(&url).await;
    c.call("logging/setLevel", json!({"level": "warning"}))
        .await;
    let events = c.open_event_stream().await;
    let id = c.create_task("chatty", json!({})).await;
    let seen = read_until(events, |m| m["method"] == "notifications/message").await;
    let log = seen.last().unwrap();
    assert_eq!(log["params"]["level"], "warning", "{log}");
    assert_eq!(log["params"]["logger"], "disk", "{log}");
    assert_eq!(log["params"]["data"], "w", "{log}");
    assert_eq!(log["params"]["_meta"][RT]["taskId"], id.as_str(), "{log}");
    let below: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/message" && m["params"]["level"] != "warning")
        .collect();
    assert!(
        below.is_empty(),
        "messages below the level were sent: {below:?}"
    );
}
