//! `DurableTasks::wrap` around an rmcp server of its own (a resource, a prompt, a tool
//! of its own), behind rmcp's Streamable HTTP service, driven by our client on both
//! wires: the wrapped handler keeps its `serverInfo`, resources, prompts and tool;
//! the durable tool's question reaches a 2025-11-25 client as `elicitation/create`
//! (never the `-32600` rmcp gives an input-required result on that wire) and on
//! 2026-07-28 inside a task; the task tools are listed only to clients without the
//! Tasks extension; and a task waiting for its answer on SQLite is answered after a
//! restart and finishes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_tasks::prelude::*;
use mcp_tasks_client::{input, Client, Target, TaskOptions, TaskStatus, WirePreference};
use mcp_tasks_rmcp::DurableTasks;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities,
    ServerConfig, Tool as RmcpTool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{json, Value};
use std::sync::Arc;

/// The answer the tool waits for.
#[derive(Deserialize, JsonSchema)]
struct GoOn {
    /// Go on?
    go_on: bool,
}

/// Asks one question and says what it was told.
async fn ask(_: NoArgs, ctx: TaskContext) -> String {
    ctx.set_status_message("asking").await;
    match ctx.elicit_as::<GoOn>("Go on?").await {
        Ok(Elicited::Accepted(GoOn { go_on: true })) => "went on".into(),
        Ok(_) => "stopped".into(),
        Err(e) => format!("no answer: {e}"),
    }
}

/// An rmcp server of its own: one resource, one prompt, one tool.
#[derive(Clone)]
struct Own;

impl ServerHandler for Own {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_prompts()
            .enable_tools()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new("own", "7.0.0"))
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            "own://about",
            "about",
        )]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let text = ResourceContents::text(format!("read {}", request.uri), request.uri);
        Ok(ReadResourceResult::new(vec![text]).into())
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompt = Prompt::new("greet", Some("Greets."), None);
        Ok(ListPromptsResult::with_all_items(vec![prompt]))
    }

    async fn get_prompt(
        &self,
        _: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let hello = PromptMessage::new_text(Role::User, "hello");
        Ok(GetPromptResult::new(vec![hello]).into())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = serde_json::from_value(json!({"type": "object"})).unwrap();
        let tool = RmcpTool::new("own_tool", "The wrapped server's own.", Arc::new(schema));
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = format!("{} answered by its own server", request.name);
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![
            ContentBlock::text(text),
        ])))
    }
}

/// A server on `store` with the resumable `ask` (tasks optional), wrapped around
/// [`Own`] and served by rmcp on a free port.
async fn serve(store: &str) -> (Server, String, tokio::task::JoinHandle<()>) {
    let server = Server::builder()
        .store_url(store)
        .tool(
            Tool::from_fn("ask", "Asks whether to go on.", ask)
                .task_support(TaskSupport::Optional)
                .resumable(),
        )
        .build()
        .await
        .unwrap();
    let handler = DurableTasks::new(server.clone()).wrap(Own);
    let mcp = StreamableHttpService::new(
        move || Ok(handler.clone()),
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

/// A client on `wire` that answers every elicitation with `go_on: true`.
async fn client(url: &str, wire: WirePreference) -> Client {
    Client::builder()
        .wire(wire)
        .on_elicitation(|q: input::InputRequest| async move {
            assert_eq!(q.message(), Some("Go on?"), "{:?}", q.params);
            Ok(input::accept(json!({"go_on": true})))
        })
        .connect(&Target::Http(url.to_string()))
        .await
        .unwrap()
}

fn names(tools: &[mcp_tasks_client::ToolInfo]) -> Vec<String> {
    tools.iter().map(|t| t.name.clone()).collect()
}

/// What the wrapped server keeps, on `client`'s wire.
async fn the_wrapped_server_is_kept(client: &Client) {
    assert_eq!(client.server().name.as_deref(), Some("own"));
    assert_eq!(client.server().version.as_deref(), Some("7.0.0"));
    let read = client
        .request("resources/read", json!({"uri": "own://about"}))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "read own://about", "{read}");
    let listed = client.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(listed["prompts"][0]["name"], "greet", "{listed}");
    let prompt = client
        .request("prompts/get", json!({"name": "greet"}))
        .await
        .unwrap();
    assert_eq!(
        prompt["messages"][0]["content"]["text"], "hello",
        "{prompt}"
    );
    let own: Value = client.call_tool("own_tool", json!({})).await.unwrap();
    assert_eq!(
        own["content"][0]["text"], "own_tool answered by its own server",
        "{own}"
    );
}

#[tokio::test]
async fn on_2025_11_25_the_question_goes_out_as_elicitation_create() {
    let (server, url, serving) = serve("memory:").await;
    let client = client(&url, WirePreference::V2025_11_25).await;
    assert_eq!(client.server().protocol_version, "2025-11-25");
    the_wrapped_server_is_kept(&client).await;

    let tools = names(&client.tools().await.unwrap());
    assert_eq!(tools[0], "ask", "{tools:?}");
    assert!(tools.contains(&"own_tool".to_string()), "{tools:?}");
    // rmcp's model has no `tasks` capability: such a client is offered the task tools.
    assert!(tools.contains(&"task_wait".to_string()), "{tools:?}");

    let result = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(result["content"][0]["text"], "went on", "{result}");
    assert_ne!(result["isError"], true, "{result}");
    client.close().await;
    server.shutdown();
    serving.abort();
}

#[tokio::test]
async fn on_2026_07_28_the_question_is_asked_inside_the_task() {
    let (server, url, serving) = serve("memory:").await;
    let client = client(&url, WirePreference::V2026_07_28).await;
    the_wrapped_server_is_kept(&client).await;
    let tools = names(&client.tools().await.unwrap());
    assert!(!tools.contains(&"task_wait".to_string()), "{tools:?}");
    assert!(tools.contains(&"own_tool".to_string()), "{tools:?}");

    let handle = client
        .call_tool_as_task("ask", json!({}), TaskOptions::default())
        .await
        .unwrap();
    assert!(handle.task_id().is_some(), "a task on the extension wire");
    let outcome = handle.result().await.unwrap();
    assert_eq!(outcome.text().as_deref(), Some("went on"));
    client.close().await;
    server.shutdown();
    serving.abort();
}

#[tokio::test]
async fn a_question_asked_before_a_restart_is_answered_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let (first, url, serving) = serve(&store).await;
    // The client can answer, but does not follow the task: it waits for its answer.
    let silent = client(&url, WirePreference::V2026_07_28).await;
    let handle = silent
        .call_tool_as_task("ask", json!({}), TaskOptions::default())
        .await
        .unwrap();
    let id = handle.task_id().cloned().expect("a task");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while silent.get(&id).await.unwrap().status != TaskStatus::InputRequired {
        assert!(tokio::time::Instant::now() < deadline, "never asked");
        tokio::task::yield_now().await;
    }
    silent.close().await;
    first.shutdown();
    serving.abort();

    let (second, url, serving) = serve(&store).await;
    let answering = client(&url, WirePreference::V2026_07_28).await;
    let outcome = answering.resume(&id).await.unwrap().result().await.unwrap();
    assert_eq!(outcome.text().as_deref(), Some("went on"));
    answering.close().await;
    second.shutdown();
    serving.abort();
}

#[tokio::test]
async fn on_2025_11_25_a_client_that_cannot_answer_gets_the_handle() {
    let (server, url, serving) = serve("memory:").await;
    // No elicitation handler: the client declares no elicitation capability.
    let client = Client::builder()
        .wire(WirePreference::V2025_11_25)
        .connect(&Target::Http(url))
        .await
        .unwrap();
    let handle = client.call_tool("ask", json!({})).await.unwrap();
    let text = handle["content"][0]["text"].as_str().unwrap_or_default();
    assert_ne!(handle["isError"], true, "{handle}");
    assert!(
        text.contains("task_wait"),
        "the handle names the task tools: {handle}"
    );
    // The task tools see the task waiting for its answer.
    let status = client.call_tool("task_list", json!({})).await.unwrap();
    let listed = status["content"][0]["text"].as_str().unwrap_or_default();
    assert!(listed.contains("input_required"), "{status}");
    client.close().await;
    server.shutdown();
    serving.abort();
}
