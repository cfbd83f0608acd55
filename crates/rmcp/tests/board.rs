//! The task board on top of an rmcp server: rmcp's Streamable HTTP service (with
//! [`DurableTasks`] as its handler) and our board share one axum app and one
//! `Server`. A client (ours, on the extension wire, through rmcp) starts a task that
//! asks a question; the board lists the task, a person answers on the board, and the
//! client reads the result the answer led to.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_tasks::engine::{Caller, EngineConfig};
use mcp_tasks::prelude::*;
use mcp_tasks_board::{Board, BoardConfig};
use mcp_tasks_client::{Client, Target, TaskOptions, TaskStatus};
use mcp_tasks_rmcp::DurableTasks;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// Polls `check` every 50 ms until it gives a value, for at most ten seconds.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn the_board_sees_and_answers_the_tasks_of_an_rmcp_server() {
    let server = Server::builder()
        // The client declares no elicitation: the question is for people (the board).
        .engine_config(EngineConfig {
            people_answer_questions: true,
            ..EngineConfig::default()
        })
        .tool(
            Tool::from_fn("release", "Ships after a go.", release)
                .task_support(TaskSupport::Required),
        )
        .build()
        .await
        .unwrap();
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
    eventually("the question", || async {
        let view = client.get(&id).await.unwrap();
        (view.status == TaskStatus::InputRequired).then_some(())
    })
    .await;

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

    client.close().await;
    server.shutdown();
    serving.abort();
}
