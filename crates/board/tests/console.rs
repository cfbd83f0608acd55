//! The board as a console over HTTP (no browser): a bulk cancel stops at its limit and
//! says how many remain, the counts per state follow, and "run again" makes a task of
//! the owner's that names the old one, or is refused for a tool the server no longer
//! offers. The browser side of the same is `tests/board/console.py`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use mcp_tasks_board::{Board, BoardConfig};
use mcp_tasks_engine::{Caller, TaskContext};
use mcp_tasks_server::{NoArgs, Server, TaskSupport, Tool, ToolRegistry};
use mcp_tasks_store::MemoryStore;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// A tool that works until it is cancelled.
fn hold(name: &str) -> Tool {
    Tool::from_fn(
        name.to_string(),
        "Works until cancelled.",
        |_: NoArgs, ctx: TaskContext| async move {
            ctx.cancelled().await;
            Err::<String, _>("cancelled")
        },
    )
    .task_support(TaskSupport::Optional)
}

struct Running {
    server: Server,
    base: String,
    http: reqwest::Client,
    csrf: String,
    serving: tokio::task::JoinHandle<()>,
}

impl Running {
    /// A server with `hold` and `gone` tools and its board, without authentication
    /// (the local user is an operator), on a free loopback port.
    async fn start() -> Self {
        let server = Server::builder()
            .store(Arc::new(MemoryStore::new()))
            .tool(hold("hold"))
            .tool(hold("gone"))
            .build()
            .await
            .unwrap();
        let board = Board::new(server.clone(), BoardConfig::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let router = board.router();
        let serving = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        let me: Value = http
            .get(format!("{base}/board/api/me"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let csrf = me["csrf"].as_str().unwrap().to_string();
        Running {
            server,
            base,
            http,
            csrf,
            serving,
        }
    }

    async fn start_task(&self, tool: &str) -> String {
        self.server
            .start_tool_task(
                Caller::anonymous("client-1", None),
                json!({"name": tool, "arguments": {}}),
            )
            .await
            .unwrap()
            .id
            .to_string()
    }

    async fn get(&self, path: &str) -> Value {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "GET {path}");
        response.json().await.unwrap()
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .header("x-csrf-token", &self.csrf)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_cancel_stops_at_its_limit_and_says_how_many_remain() {
    let run = Running::start().await;
    let mut held = Vec::new();
    for _ in 0..501 {
        held.push(run.start_task("hold").await);
    }
    let other = run.start_task("gone").await;
    let counts = run.get("/board/api/counts?tool=hold").await;
    assert_eq!(counts["working"], 501, "{counts}");
    assert_eq!(counts["all"], 501, "{counts}");

    let filter = json!({"status": "", "tool": "hold", "q": ""});
    let (status, first) = run.post("/board/api/bulk-cancel", filter.clone()).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["cancelled"], 500, "{first}");
    assert_eq!(first["remaining"], 1, "{first}");
    let said = first["message"].as_str().unwrap();
    assert!(
        said.contains("500 tasks cancelled") && said.contains("1 more match"),
        "{said}"
    );
    let (_, second) = run.post("/board/api/bulk-cancel", filter).await;
    assert_eq!(second["cancelled"], 1, "{second}");
    assert_eq!(second["remaining"], 0, "{second}");
    assert_eq!(second["message"], "1 task cancelled");

    let counts = run.get("/board/api/counts?tool=hold").await;
    assert_eq!(counts["working"], 0, "{counts}");
    assert_eq!(counts["cancelled"], 501, "{counts}");
    // Only the filter's tasks: the other tool's task still works.
    let detail = run.get(&format!("/board/api/tasks/{other}")).await;
    assert_eq!(detail["status"], "working");
    let detail = run.get(&format!("/board/api/tasks/{}", held[0])).await;
    assert_eq!(
        detail["statusMessage"],
        "cancelled on the task board by local-user (bulk)"
    );
    // A terminal status filter cancels nothing.
    let (status, none) = run
        .post("/board/api/bulk-cancel", json!({"status": "completed"}))
        .await;
    assert_eq!((status, none["cancelled"].as_u64()), (200, Some(0)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_again_names_the_old_task_and_is_refused_for_a_tool_now_gone() {
    let run = Running::start().await;
    let old = run.start_task("hold").await;
    let (status, refused) = run
        .post(&format!("/board/api/tasks/{old}/rerun"), json!({}))
        .await;
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused["error"].as_str().unwrap().contains("still working"),
        "{refused}"
    );
    run.post(&format!("/board/api/tasks/{old}/cancel"), json!({}))
        .await;
    let detail = run.get(&format!("/board/api/tasks/{old}")).await;
    assert_eq!(detail["canRunAgain"], true, "{detail}");

    let (status, made) = run
        .post(&format!("/board/api/tasks/{old}/rerun"), json!({}))
        .await;
    assert_eq!(status, 200, "{made}");
    let new = made["id"].as_str().unwrap().to_string();
    let record = run
        .server
        .engine()
        .get(
            &mcp_tasks_protocol::TaskId::from_string(new.clone()),
            &Caller::anonymous("client-1", None),
        )
        .await
        .unwrap();
    assert_eq!(record.owner, "client-1", "the owner's, not the operator's");
    let detail = run.get(&format!("/board/api/tasks/{new}")).await;
    assert_eq!(detail["relatedTaskIds"], json!([old]));
    assert_eq!(detail["status"], "working");
    let detail = run.get(&format!("/board/api/tasks/{old}")).await;
    assert_eq!(detail["reruns"], json!([new]));

    // A tool the server no longer offers cannot run again.
    let gone = run.start_task("gone").await;
    run.post(&format!("/board/api/tasks/{gone}/cancel"), json!({}))
        .await;
    let mut tools = ToolRegistry::new();
    tools.register(hold("hold")).unwrap();
    run.server.set_tools(tools);
    let (status, refused) = run
        .post(&format!("/board/api/tasks/{gone}/rerun"), json!({}))
        .await;
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("'gone' is no longer offered"),
        "{refused}"
    );
}
