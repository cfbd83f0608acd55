//! `DurableTasks` behind rmcp's Streamable HTTP service, driven by our client: a task
//! kept in SQLite outlives the server that ran it (a second server on the same file
//! answers `tasks/get` for it through rmcp), an unknown task is refused as our own
//! server refuses it, a client on 2025-11-25 (where rmcp has no tasks) gets the
//! tool as a plain call, and with a principal named from the request's HTTP headers
//! one caller cannot read another's task.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_tasks::prelude::*;
use mcp_tasks::TaskId;
use mcp_tasks_client::{Client, Target, TaskOptions, TaskStatus, WirePreference};
use mcp_tasks_rmcp::DurableTasks;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use std::sync::Arc;

#[derive(Deserialize, JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

async fn add(args: Add, ctx: TaskContext) -> String {
    ctx.set_status_message("adding").await;
    (args.a + args.b).to_string()
}

/// A server on `store`, served by rmcp on a free port, with `add` twice: tasks
/// optional (a quick call ends inline), and `add_task`, always a task.
async fn serve(store: &str) -> (Server, String, tokio::task::JoinHandle<()>) {
    serve_with(store, |tasks| tasks).await
}

/// [`serve`] with the handler adjusted by `adjust`.
async fn serve_with(
    store: &str,
    adjust: impl FnOnce(DurableTasks) -> DurableTasks,
) -> (Server, String, tokio::task::JoinHandle<()>) {
    let server = Server::builder()
        .store_url(store)
        .tool(Tool::from_fn("add", "Adds.", add).task_support(TaskSupport::Optional))
        .tool(Tool::from_fn("add_task", "Adds in a task.", add).task_support(TaskSupport::Required))
        .build()
        .await
        .unwrap();
    let tasks = adjust(DurableTasks::new(server.clone()));
    let mcp = StreamableHttpService::new(
        move || Ok(tasks.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().with_cancellation_token(server.shutdown_token()),
    );
    let app = axum::Router::new().nest_service("/mcp", mcp);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let serving = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (server, url, serving)
}

#[tokio::test]
async fn a_task_in_sqlite_outlives_the_server_that_ran_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("tasks.db").display());

    let (first, url, serving) = serve(&store).await;
    let client = Client::connect(&Target::Http(url)).await.unwrap();
    let handle = client
        .call_tool_as_task("add_task", json!({"a": 2, "b": 3}), TaskOptions::default())
        .await
        .unwrap();
    let id = handle
        .task_id()
        .cloned()
        .expect("a task: the client declared the extension");
    let outcome = handle.result().await.unwrap();
    assert_eq!(outcome.text().as_deref(), Some("5"));
    client.close().await;
    first.shutdown();
    serving.abort();

    let (second, url, serving) = serve(&store).await;
    let client = Client::connect(&Target::Http(url)).await.unwrap();
    let view = client.get(&id).await.unwrap();
    assert_eq!(view.status, TaskStatus::Completed);
    let again = client.resume(&id).await.unwrap().result().await.unwrap();
    assert_eq!(again.text().as_deref(), Some("5"));

    let err = client
        .get(&TaskId::from_string("no-such-task"))
        .await
        .expect_err("an unknown task");
    assert_eq!(err.code(), Some(-32602), "{err}");
    client.close().await;
    second.shutdown();
    serving.abort();
}

#[tokio::test]
async fn a_client_without_the_extension_gets_a_plain_call() {
    let (server, url, serving) = serve("memory:").await;
    let client = Client::builder()
        .wire(WirePreference::V2025_11_25)
        .connect(&Target::Http(url))
        .await
        .unwrap();
    let result = client
        .call_tool("add", json!({"a": 20, "b": 22}))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "42", "{result}");
    let refused = client
        .call_tool("add", json!({"a": "twenty"}))
        .await
        .expect_err("arguments that do not fit the schema");
    assert_eq!(refused.code(), Some(-32602), "{refused}");
    client.close().await;
    server.shutdown();
    serving.abort();
}

/// The principal: the bearer token rmcp's HTTP transport saw (a stand-in for what an
/// authentication layer in front of rmcp would have checked).
fn bearer(context: &rmcp::service::RequestContext<rmcp::service::RoleServer>) -> Option<String> {
    let parts = context.extensions.get::<http::request::Parts>()?;
    let value = parts
        .headers
        .get(http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    value.strip_prefix("Bearer ").map(str::to_string)
}

#[tokio::test]
async fn a_task_is_private_to_the_principal_that_created_it() {
    let (server, url, serving) = serve_with("memory:", |t| t.with_principal(bearer)).await;
    let connect = |token: &'static str| {
        let url = url.clone();
        async move {
            Client::builder()
                .bearer_token(token)
                .connect(&Target::Http(url))
                .await
                .unwrap()
        }
    };
    let alice = connect("alice").await;
    let handle = alice
        .call_tool_as_task("add_task", json!({"a": 1, "b": 1}), TaskOptions::default())
        .await
        .unwrap();
    let id = handle.task_id().cloned().expect("a task");
    assert_eq!(handle.result().await.unwrap().text().as_deref(), Some("2"));
    assert_eq!(alice.get(&id).await.unwrap().status, TaskStatus::Completed);

    let bob = connect("bob").await;
    let err = bob.get(&id).await.expect_err("alice's task is not bob's");
    assert_eq!(err.code(), Some(-32602), "{err}");
    let record = server
        .engine()
        .get(&id, &mcp_tasks_engine::Caller::authenticated("alice", None))
        .await
        .unwrap();
    assert_eq!(record.owner, "alice");
    alice.close().await;
    bob.close().await;
    server.shutdown();
    serving.abort();
}
