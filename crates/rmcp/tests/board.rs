//! The task board and webhooks on top of an rmcp server: rmcp's Streamable HTTP
//! service (with [`DurableTasks`] as its handler) and our board share one axum app
//! and one `Server`, whose engine was given the webhook notifier's observer. A client
//! (ours, on the extension wire, through rmcp) starts a task that asks a question;
//! the webhook tells of it, the board lists it, a person answers on the board, the
//! client reads the result the answer led to, and the webhook tells of the end.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_tasks::prelude::*;
use mcp_tasks::{EngineConfig, ServerConfig, ToolRegistry};
use mcp_tasks_board::{
    Board, BoardConfig, Notifier, NotifyConfig, NotifyFormat, NotifyOn, NotifySink,
};
use mcp_tasks_client::{Client, Target, TaskOptions, TaskStatus};
use mcp_tasks_engine::Caller;
use mcp_tasks_rmcp::DurableTasks;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

#[derive(Deserialize, JsonSchema)]
struct Ship {
    /// Ship it?
    ok: bool,
}

async fn release(_: NoArgs, ctx: TaskContext) -> String {
    ctx.set_status_message("waiting for a go").await;
    match ctx.elicit_as::<Ship>("Ship release 1.2?").await {
        Ok(Elicited::Accepted(Ship { ok: true })) => "shipped".into(),
        other => format!("held ({:?})", other.map(|_| ())),
    }
}

/// A webhook receiver on a free port: each event's body goes into the channel.
async fn receiver() -> (String, tokio::sync::mpsc::UnboundedReceiver<Value>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(body);
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, rx)
}

/// Waits (at most ten seconds) for a webhook event about `id` naming `status`.
async fn event(events: &mut tokio::sync::mpsc::UnboundedReceiver<Value>, id: &str, status: &str) {
    let found = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(body) = events.recv().await {
            let text = body.to_string();
            if text.contains(id) && text.contains(status) {
                return;
            }
        }
        panic!("the webhook receiver stopped");
    })
    .await;
    assert!(
        found.is_ok(),
        "no {status} event for {id} within ten seconds"
    );
}

#[tokio::test]
async fn the_board_and_webhooks_see_the_tasks_of_an_rmcp_server() {
    let (hook, mut events) = receiver().await;
    let notifier = Notifier::prepare(NotifyConfig {
        sinks: vec![NotifySink {
            name: "test".into(),
            url: hook.into(),
            on: vec![NotifyOn::InputRequired, NotifyOn::Completed],
            format: NotifyFormat::Json,
            headers: Vec::new(),
            secrets: Vec::new(),
            answer_links: false,
            assignee: None,
            answer_link_ttl: None,
        }],
        ..NotifyConfig::default()
    })
    .unwrap();
    let mut tools = ToolRegistry::new();
    let release = Tool::from_fn("release", "Ships after a go.", release);
    tools
        .register(release.task_support(TaskSupport::Required))
        .unwrap();
    let server = Server::start(
        mcp_tasks::store::open("memory:").await.unwrap(),
        // The client declares no elicitation: the question is for people (the board).
        EngineConfig {
            people_answer_questions: true,
            ..EngineConfig::default()
        },
        tools,
        ServerConfig::default(),
        notifier.observer().into_iter().collect(),
    )
    .await
    .unwrap();
    let _notifier = notifier.start(&server).unwrap();
    let tasks = DurableTasks::new(server.clone());
    let mcp = StreamableHttpService::new(
        move || Ok(tasks.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().with_cancellation_token(server.shutdown_token()),
    );
    let board = Board::new(server.clone(), BoardConfig::default());
    let app = axum::Router::new()
        .nest_service("/mcp", mcp)
        .merge(board.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let serving = tokio::spawn(async move { axum::serve(listener, app).await });

    let client = Client::connect(&Target::Http(format!("{base}/mcp")))
        .await
        .unwrap();
    let handle = client
        .call_tool_as_task("release", json!({}), TaskOptions::default())
        .await
        .unwrap();
    let id = handle.task_id().cloned().expect("a task");
    // The webhook's input_required event is the signal: it is sent once the question
    // is stored, so the task reads as asking from then on.
    event(&mut events, id.as_str(), "input_required").await;
    let view = client.get(&id).await.unwrap();
    assert_eq!(view.status, TaskStatus::InputRequired);

    // The board lists it, from the same engine and store.
    let http = reqwest::Client::new();
    let list: Value = http
        .get(format!("{base}/board/api/tasks"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let listed =
        list["tasks"].as_array().expect("tasks").iter().any(|t| {
            t.to_string().contains(id.as_str()) && t.to_string().contains("input_required")
        });
    assert!(listed, "{list}");

    // A person answers on the board.
    let operator = Caller::anonymous("test", None).as_operator();
    let record = server.engine().get(&id, &operator).await.unwrap();
    let key = record
        .input_requests
        .keys()
        .next()
        .expect("a question")
        .clone();
    let me: Value = http
        .get(format!("{base}/board/api/me"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let answered = http
        .post(format!("{base}/board/api/tasks/{id}/answer"))
        .header("x-csrf-token", me["csrf"].as_str().expect("a csrf token"))
        .json(&json!({"key": key, "action": "accept", "content": {"ok": true}}))
        .send()
        .await
        .unwrap();
    assert!(
        answered.status().is_success(),
        "{:?}",
        answered.text().await
    );

    // The rmcp client reads the result the answer led to.
    let outcome = handle.result().await.unwrap();
    assert_eq!(outcome.status(), TaskStatus::Completed);
    assert_eq!(outcome.text().as_deref(), Some("shipped"));
    event(&mut events, id.as_str(), "completed").await;

    client.close().await;
    server.shutdown();
    serving.abort();
}
