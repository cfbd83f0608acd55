//! A handle is not an error (issue 43): a long plain call of a tool that has an
//! `outputSchema` answers a client offered the task tools with an ordinary result (not
//! `isError`), the task's state as structured content, because that client is shown
//! no `outputSchema` it could validate the handle against; `task_wait` then hands back
//! the tool's own structured result. A client that speaks tasks still sees the schema.
//! (The SDK clients themselves accept it: tests/interop/hosts.{mjs,py}.)
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{test_engine_config, Client};
use mcp_tasks_server::transport::http;
use mcp_tasks_server::{Server, ServerConfig, TaskSupport, Tool, ToolRegistry};
use serde_json::{json, Value};
use std::time::Duration;

const RT: &str = "io.modelcontextprotocol/related-task";

/// `measure` sleeps `ms`, then answers `{"ms": ms}` as structured content, which its
/// `outputSchema` promises.
fn tools() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    let schema = json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}, "required": ["ms"]});
    r.register(
        Tool::new(
            "measure",
            "sleeps ms milliseconds, then says how long",
            schema.clone(),
            |args, _ctx| {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                Box::pin(async move {
                    // The tool's work: taking `ms` is what it is for.
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(json!({
                        "content": [{"type": "text", "text": format!("{{\"ms\":{ms}}}")}],
                        "structuredContent": {"ms": ms},
                    }))
                })
            },
        )
        .unwrap()
        .output_schema(schema)
        .task_support(TaskSupport::Optional),
    )
    .unwrap();
    r
}

/// A server with `measure` and a 300 ms sync budget on a free loopback port: its URL.
async fn start() -> String {
    let store = mcp_tasks_store::open("memory:").await.unwrap();
    let config = ServerConfig {
        sync_budget: Duration::from_millis(300),
        ..ServerConfig::default()
    };
    let server = Server::start(store, test_engine_config(), tools(), config, Vec::new())
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        http::serve(server, listener, std::future::pending::<()>())
            .await
            .unwrap();
    });
    format!("http://{addr}/mcp")
}

fn listed<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {list}"))
}

#[tokio::test]
async fn a_long_plain_call_of_a_tool_with_an_output_schema_answers_a_handle_that_is_no_error() {
    let url = start().await;
    let mut c = Client::connect(&url).await;
    let list = c.call("tools/list", json!({})).await;
    assert!(
        listed(&list, "task_wait").is_object(),
        "a client without tasks is offered the task tools: {list}"
    );
    assert!(
        listed(&list, "measure").get("outputSchema").is_none(),
        "a client offered the task tools is shown no outputSchema: {list}"
    );

    let r = c
        .call(
            "tools/call",
            json!({"name": "measure", "arguments": {"ms": 1500}}),
        )
        .await;
    let id = r["_meta"][RT]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("not a handle: {r}"))
        .to_string();
    assert_eq!(r["isError"], false, "a handle is not an error: {r}");
    assert_eq!(r["structuredContent"]["taskId"], id.as_str(), "{r}");
    assert_eq!(r["structuredContent"]["status"], "working", "{r}");

    // task_wait hands back the tool's own structured result, unchanged.
    let mut done = Value::Null;
    for _ in 0..50 {
        done = c
            .call(
                "tools/call",
                json!({"name": "task_wait", "arguments": {"taskId": id, "seconds": 5}}),
            )
            .await;
        if done["_meta"][RT]["taskId"] == id.as_str() {
            break;
        }
    }
    assert_eq!(done["structuredContent"], json!({"ms": 1500}), "{done}");
    assert_ne!(done["isError"], true, "{done}");
}

#[tokio::test]
async fn a_client_that_speaks_tasks_still_sees_the_output_schema() {
    let url = start().await;
    let mut c = Client::connect_with_capabilities(&url, json!({"tasks": {}})).await;
    let list = c.call("tools/list", json!({})).await;
    assert_eq!(
        listed(&list, "measure")["outputSchema"]["type"],
        "object",
        "{list}"
    );
    assert!(
        !list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "task_wait"),
        "no task tools for a client that speaks tasks: {list}"
    );
}
