//! `/healthz` and `/readyz`: no credentials needed, the store and registered checks
//! decide readiness, and a stopped store makes the server not ready.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_engine::EngineConfig;
use mcp_tasks_server::auth::{AuthMode, StaticTokens};
use mcp_tasks_server::transport::http;
use mcp_tasks_server::{Server, ServerConfig, ToolRegistry};
use mcp_tasks_store::{SqliteStore, TaskStore};
use serde_json::Value;
use std::sync::Arc;

/// Serves `store` over HTTP with `config`; returns the server and its base URL.
async fn serve(store: Arc<dyn TaskStore>, config: ServerConfig) -> (Server, String) {
    let server = Server::start(
        store,
        EngineConfig::default(),
        ToolRegistry::new(),
        config,
        Vec::new(),
    )
    .await
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let s = server.clone();
    tokio::spawn(async move { http::serve(s, listener, std::future::pending()).await });
    (server, format!("http://{addr}"))
}

async fn get(url: &str) -> (u16, Value) {
    let r = reqwest::get(url).await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn health_and_readiness_answer_without_credentials() {
    let config = ServerConfig {
        auth: AuthMode::Required(Arc::new(StaticTokens::new(
            [("secret".to_string(), "alice".to_string())].into(),
        ))),
        ..ServerConfig::default()
    };
    let (server, base) = serve(mcp_tasks_store::open("memory:").await.unwrap(), config).await;
    assert_eq!(get(&format!("{base}/healthz")).await.0, 200);
    let (status, body) = get(&format!("{base}/readyz")).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("ready")),
        "{body}"
    );
    // The MCP endpoint itself still wants the token.
    let mcp = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status().as_u16(), 401);

    // A registered check that fails makes the server not ready, naming it.
    server.add_readiness_check("upstream demo", Arc::new(|| Some("not started".into())));
    let (status, body) = get(&format!("{base}/readyz")).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["problems"][0]["check"], "upstream demo", "{body}");
    assert_eq!(
        get(&format!("{base}/healthz")).await.0,
        200,
        "alive all the same"
    );
    server.shutdown();
}

#[tokio::test]
async fn a_stopped_store_makes_the_server_not_ready() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let store = Arc::new(SqliteStore::open(&url).await.unwrap());
    let (server, base) = serve(store.clone(), ServerConfig::default()).await;
    assert_eq!(get(&format!("{base}/readyz")).await.0, 200);
    store.pool().close().await;
    let (status, body) = get(&format!("{base}/readyz")).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["problems"][0]["check"], "store", "{body}");
    server.shutdown();
}
