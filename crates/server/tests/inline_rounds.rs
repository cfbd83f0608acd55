//! Plain calls that ask when no task holds the call (a tool that forbids tasks, or a
//! server whose sync budget is off), on the 2026-07-28 wire: the stateless
//! input-required round. The call answers with the question and a sealed
//! `requestState` carrying the answers so far; the client calls again; the tool runs
//! again from the top, its earlier questions answered from the state. An altered or
//! another principal's state is refused; an unanswered question is asked again.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use mcp_tasks_client::{input, Client, Target, WirePreference};
use mcp_tasks_engine::TaskContext;
use mcp_tasks_protocol::{RequestId, Secret};
use mcp_tasks_server::wire::v2026_07_28::{self, RoutingHeaders};
use mcp_tasks_server::{ElicitAs, NoArgs, Server, ServerConfig, TaskSupport, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Colour {
    colour: String,
}

/// Asks a name, then a colour; counts how often it started.
fn two_questions(support: TaskSupport, runs: &Arc<AtomicUsize>) -> Tool {
    let runs = Arc::clone(runs);
    Tool::from_fn(
        "two_questions",
        "Asks a name, then a colour.",
        move |_: NoArgs, ctx: TaskContext| {
            let runs = Arc::clone(&runs);
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                let name = ctx
                    .elicit_as::<Name>("Your name?")
                    .await
                    .map_err(|e| e.to_string())?
                    .accepted()
                    .map_or("nobody".to_string(), |n| n.name);
                let colour = ctx
                    .elicit_as::<Colour>("Your colour?")
                    .await
                    .map_err(|e| e.to_string())?
                    .accepted()
                    .map_or("none".to_string(), |c| c.colour);
                Ok::<_, String>(format!("{name} likes {colour}"))
            }
        },
    )
    .task_support(support)
}

async fn server(tool: Tool, sync_budget: Duration) -> Server {
    Server::builder()
        .store_url("memory:")
        .tool(tool)
        .server_config(ServerConfig {
            request_state_key: Some(Secret::new(b"inline rounds test key".to_vec())),
            sync_budget,
            ..ServerConfig::default()
        })
        .build()
        .await
        .unwrap()
}

/// Serves `server` on a free loopback port until the sender is dropped.
async fn serve(server: Server) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.serve_http_on(listener, async move {
        let _ = rx.await;
    }));
    (url, tx)
}

async fn call_with_our_client(url: &str, answer: Value) -> (String, usize) {
    let asked = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&asked);
    let client = Client::builder()
        .wire(WirePreference::V2026_07_28)
        .on_elicitation(move |_| {
            let answer = answer.clone();
            let seen = Arc::clone(&seen);
            async move {
                seen.fetch_add(1, Ordering::SeqCst);
                Ok(answer)
            }
        })
        .connect(&Target::Http(url.into()))
        .await
        .unwrap();
    let r = client.call_tool("two_questions", json!({})).await.unwrap();
    client.close().await;
    (
        r["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        asked.load(Ordering::SeqCst),
    )
}

#[tokio::test]
async fn a_tool_that_forbids_tasks_asks_through_rounds_and_runs_again_from_the_top() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (url, _stop) = serve(
        server(
            two_questions(TaskSupport::Forbidden, &runs),
            Duration::from_secs(45),
        )
        .await,
    )
    .await;
    let answer = input::accept(json!({"name": "Ada", "colour": "teal"}));
    assert_eq!(
        call_with_our_client(&url, answer).await,
        ("Ada likes teal".into(), 2)
    );
    // Two rounds, three runs: no journal holds a call without a task.
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    assert_eq!(
        call_with_our_client(&url, input::decline()).await,
        ("nobody likes none".into(), 2),
        "declines reach the tool"
    );
}

#[tokio::test]
async fn with_the_sync_budget_off_an_optional_tool_asks_through_rounds_too() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (url, _stop) =
        serve(server(two_questions(TaskSupport::Optional, &runs), Duration::ZERO).await).await;
    let answer = input::accept(json!({"name": "Lin", "colour": "red"}));
    assert_eq!(
        call_with_our_client(&url, answer).await,
        ("Lin likes red".into(), 2)
    );
}

// The wire itself: `subject` plays the authenticated principal.

async fn call(server: &Server, subject: &str, mut params: Value) -> Value {
    params["name"] = json!("two_questions");
    params["arguments"] = json!({});
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    });
    let headers = RoutingHeaders {
        method: Some("tools/call".into()),
        name: Some("two_questions".into()),
        protocol_version: Some("2026-07-28".into()),
    };
    let (_, body) = v2026_07_28::handle(
        server,
        Some(subject.to_string()),
        &headers,
        &RequestId::Number(1),
        "tools/call",
        params,
    )
    .await;
    body
}

fn round(body: &Value) -> (String, String) {
    let r = &body["result"];
    assert_eq!(r["resultType"], "input_required", "{body}");
    let requests = r["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{body}");
    let (key, q) = requests.iter().next().unwrap();
    assert_eq!(q["method"], "elicitation/create", "{body}");
    (key.clone(), r["requestState"].as_str().unwrap().to_string())
}

fn refusal(body: &Value) -> String {
    assert_eq!(body["error"]["code"], -32602, "{body}");
    body["error"]["message"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn altered_and_foreign_states_are_refused_and_an_unanswered_question_is_asked_again() {
    let runs = Arc::new(AtomicUsize::new(0));
    let s = server(
        two_questions(TaskSupport::Forbidden, &runs),
        Duration::from_secs(45),
    )
    .await;
    let (key, state) = round(&call(&s, "alice", json!({})).await);
    let name = json!({key.clone(): {"action": "accept", "content": {"name": "Ada"}}});

    let mut altered = state.clone().into_bytes();
    altered[3] = if altered[3] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    let said = refusal(
        &call(
            &s,
            "alice",
            json!({"inputResponses": name, "requestState": altered}),
        )
        .await,
    );
    assert!(said.contains("altered"), "{said}");
    let said = refusal(
        &call(
            &s,
            "bob",
            json!({"inputResponses": name, "requestState": state}),
        )
        .await,
    );
    assert!(said.contains("another principal"), "{said}");

    // No answer to the open question: asked again, the same question.
    let (again, state) = round(
        &call(
            &s,
            "alice",
            json!({"inputResponses": {}, "requestState": state}),
        )
        .await,
    );
    assert_eq!(again, key);

    // The name answered: the next round asks the colour, carrying the name.
    let (colour_key, state) = round(
        &call(
            &s,
            "alice",
            json!({"inputResponses": name, "requestState": state}),
        )
        .await,
    );
    assert_ne!(colour_key, key);
    let body = call(
        &s,
        "alice",
        json!({
            "inputResponses": {colour_key: {"action": "accept", "content": {"colour": "teal"}}},
            "requestState": state,
        }),
    )
    .await;
    assert_eq!(
        body["result"]["content"][0]["text"], "Ada likes teal",
        "{body}"
    );
}
