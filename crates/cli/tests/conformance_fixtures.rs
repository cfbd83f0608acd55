//! `mcp-tasks serve --conformance-fixtures` without the conformance suite: the
//! 2025-11-25 tool scenarios' fixtures return what those scenarios check (exact texts,
//! tool errors, content types, progress over SSE, sampling and elicitation in a plain
//! call, the JSON Schema 2020-12 input schema as written).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_client::{input, Client, Target, WirePreference};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

mod common;

use common::{serve_tools, Server};
use mcp_tasks_testkit::{eventually, WAIT};

fn start() -> Server {
    serve_tools("--conformance-fixtures", &["--database", "memory:"])
}

/// A 2025-11-25 client that answers sampling and elicitation, keeping the elicitation
/// params it was sent.
async fn connect(url: &str, asked: Arc<Mutex<Vec<Value>>>) -> Client {
    Client::builder()
        .wire(WirePreference::V2025_11_25)
        .on_sampling(|_| async {
            Ok(json!({
                "role": "assistant",
                "content": { "type": "text", "text": "a test answer" },
                "model": "test-model",
                "stopReason": "endTurn"
            }))
        })
        .on_elicitation(move |q| {
            asked.lock().unwrap().push(q.params.clone());
            // An answer that fits each form (the server refuses one that does not):
            // the user's name and address where asked, else the form's defaults.
            let properties = q.params["requestedSchema"]["properties"].clone();
            let content = if properties.get("username").is_some() {
                json!({"username": "testuser", "email": "t@example.com"})
            } else {
                let defaults = properties
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter_map(|(k, p)| p.get("default").map(|d| (k.clone(), d.clone())));
                Value::Object(defaults.collect())
            };
            async move { Ok(input::accept(content)) }
        })
        .connect(&Target::Http(url.to_string()))
        .await
        .unwrap()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn types(result: &Value) -> Vec<&str> {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect()
}

/// The result of a plain call of `tool`, which must not fail at the protocol level.
async fn call(client: &Client, tool: &str, args: Value) -> Value {
    client
        .call_tool(tool, args)
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

#[tokio::test]
async fn content_and_error_fixtures_return_what_the_scenarios_specify() {
    let server = start();
    let client = connect(&server.url, Arc::default()).await;

    let r = call(&client, "test_simple_text", json!({})).await;
    assert_eq!(text(&r), "This is a simple text response for testing.");
    assert_eq!(r["isError"], false);

    let r = call(&client, "test_error_handling", json!({})).await;
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        text(&r),
        "This tool intentionally returns an error for testing"
    );

    // PNG and RIFF/WAVE signatures, base64.
    for (tool, mime, signature) in [
        ("test_image_content", "image/png", "iVBORw0KGgo"),
        ("test_audio_content", "audio/wav", "UklGR"),
    ] {
        let r = call(&client, tool, json!({})).await;
        assert_eq!(r["content"][0]["mimeType"], mime, "{r}");
        let data = r["content"][0]["data"].as_str().unwrap();
        assert!(data.starts_with(signature), "{tool}: {data}");
    }

    let r = call(&client, "test_embedded_resource", json!({})).await;
    assert_eq!(
        r["content"][0]["resource"]["uri"],
        "test://embedded-resource"
    );
    let r = call(&client, "test_multiple_content_types", json!({})).await;
    assert_eq!(types(&r), ["text", "image", "resource"]);
    let embedded: Value =
        serde_json::from_str(r["content"][2]["resource"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(embedded, json!({"test": "data", "value": 123}));
}

#[tokio::test]
async fn sampling_and_elicitation_reach_the_client_in_a_plain_call() {
    let server = start();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let client = connect(&server.url, Arc::clone(&asked)).await;

    let r = call(&client, "test_sampling", json!({"prompt": "Say something"})).await;
    assert_eq!(text(&r), "LLM response: a test answer", "{r}");

    let r = call(
        &client,
        "test_elicitation",
        json!({"message": "Who are you?"}),
    )
    .await;
    assert_eq!(r["isError"], false, "{r}");
    assert!(
        text(&r).starts_with("User response: action=accept, content={"),
        "{r}"
    );
    assert!(text(&r).contains("testuser"), "{r}");

    call(&client, "test_elicitation_sep1034_defaults", json!({})).await;
    call(&client, "test_elicitation_sep1330_enums", json!({})).await;
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 3);
    assert_eq!(asked[0]["message"], "Who are you?");
    let defaults = &asked[1]["requestedSchema"]["properties"];
    assert_eq!(defaults["name"]["default"], "John Doe");
    assert_eq!(defaults["age"]["default"], 30);
    assert_eq!(defaults["score"]["default"], 95.5);
    assert_eq!(defaults["status"]["default"], "active");
    assert_eq!(defaults["verified"]["default"], true);
    let enums = &asked[2]["requestedSchema"]["properties"];
    assert_eq!(
        enums["legacyEnum"]["enumNames"].as_array().unwrap().len(),
        3
    );
    assert!(enums["titledMulti"]["items"]["anyOf"].is_array());

    // A client without the sampling capability gets a tool error, not a hang. (It
    // speaks tasks, so it is offered no task tools to answer with, and this server's
    // board takes no questions: nobody could answer.)
    let bare = Client::builder()
        .wire(WirePreference::V2025_11_25)
        .connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    let r = bare
        .call_tool("test_sampling", json!({"prompt": "x"}))
        .await
        .unwrap();
    assert_eq!(r["isError"], true, "{r}");
}

#[tokio::test]
async fn json_schema_2020_12_tool_is_listed_as_written_and_enforced() {
    let server = start();
    let client = connect(&server.url, Arc::default()).await;
    let tools = client.tools().await.unwrap();
    let tool = tools
        .iter()
        .find(|t| t.name == "json_schema_2020_12_tool")
        .unwrap();
    let schema = &tool.input_schema;
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
    assert!(schema["allOf"][0]["anyOf"].is_array());
    assert!(schema["if"].is_object() && schema["then"].is_object() && schema["else"].is_object());
    assert_eq!(schema["additionalProperties"], false);

    let ok = client
        .call_tool(
            "json_schema_2020_12_tool",
            json!({"name": "A", "contactMethod": "phone", "phone": "1"}),
        )
        .await
        .unwrap();
    assert_eq!(ok["isError"], false, "{ok}");
    // Phone chosen but not given: the `then` branch rejects it.
    let err = client
        .call_tool(
            "json_schema_2020_12_tool",
            json!({"contactMethod": "phone", "email": "a@b.c"}),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(-32602), "{err}");
}

/// The progress notifications of a plain call with a progress token, read off the
/// call's own SSE stream.
#[tokio::test]
async fn progress_fixture_sends_three_increasing_notifications_on_the_call_stream() {
    let server = start();
    let http = reqwest::Client::new();
    let accept = "application/json, text/event-stream";
    let init = http
        .post(&server.url)
        .header("accept", accept)
        .json(&json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fixtures-test","version":"0"}}}))
        .send()
        .await
        .unwrap();
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let post = |body: Value| {
        http.post(&server.url)
            .header("accept", accept)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .json(&body)
            .send()
    };
    post(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await
        .unwrap();
    let body = post(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
            "name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p-1"}
        }}),
    )
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    let messages: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).unwrap())
        .collect();
    let progress: Vec<f64> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .inspect(|m| {
            assert_eq!(m["params"]["progressToken"], "p-1");
            assert_eq!(m["params"]["total"], 100.0);
        })
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(progress, [0.0, 50.0, 100.0], "{body}");
    let result = messages.last().unwrap();
    assert_eq!(result["id"], 1, "{body}");
    assert_eq!(result["result"]["isError"], false, "{body}");
}

/// Log messages reach the client crate's handler (in a plain call and in a task, with
/// the task named) at the level it set, and `mcp-tasks call` shows them on stderr.
#[tokio::test]
async fn log_messages_reach_the_client_and_the_cli_at_the_level_set() {
    let server = start();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let client = Client::builder()
        .wire(WirePreference::V2025_11_25)
        .on_log(move |log| sink.lock().unwrap().push(log))
        .connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    call(&client, "test_tool_with_logging", json!({})).await;
    let texts: Vec<String> = seen.lock().unwrap().iter().map(|l| l.text()).collect();
    assert_eq!(
        texts,
        [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed"
        ]
    );
    assert!(seen.lock().unwrap().iter().all(|l| l.task_id.is_none()));

    // Above the tool's level: nothing comes.
    seen.lock().unwrap().clear();
    client
        .set_log_level(mcp_tasks_client::LoggingLevel::Warning)
        .await
        .unwrap();
    call(&client, "test_tool_with_logging", json!({})).await;
    assert!(
        seen.lock().unwrap().is_empty(),
        "{:?}",
        seen.lock().unwrap()
    );

    // As a task: related to it.
    client
        .set_log_level(mcp_tasks_client::LoggingLevel::Info)
        .await
        .unwrap();
    let handle = client
        .call_tool_as_task("test_tool_with_logging", json!({}), Default::default())
        .await
        .unwrap();
    let id = handle.task_id().cloned().unwrap();
    handle.result().await.unwrap();
    eventually(WAIT, || async { seen.lock().unwrap().len() >= 3 }).await;
    assert!(seen
        .lock()
        .unwrap()
        .iter()
        .all(|l| l.task_id.as_ref() == Some(&id)));
    client.close().await;

    let journal = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(common::BIN)
        .env("MCP_TASKS_STATE_DIR", journal.path())
        .args([
            "call",
            &server.url,
            "test_tool_with_logging",
            "--wire",
            "2025-11-25",
            "--log-level",
            "info",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("[info] Tool execution started"), "{stderr}");
    let bad = std::process::Command::new(common::BIN)
        .env("MCP_TASKS_STATE_DIR", journal.path())
        .args([
            "call",
            &server.url,
            "test_tool_with_logging",
            "--log-level",
            "loud",
        ])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("debug, info"));
}
