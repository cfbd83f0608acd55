//! Shared test helpers: a server with test tools on a real loopback port, a small
//! JSON-RPC-over-HTTP client, and readers for SSE responses.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

pub mod stateless;

use futures::StreamExt;
use mcp_tasks_engine::EngineConfig;
use mcp_tasks_protocol::RpcError;
use mcp_tasks_server::transport::http;
use mcp_tasks_server::{
    AskClient, Server, ServerConfig, TaskSupport, Tool, ToolRegistry, ToolResult,
};
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::{json, Value};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

pub struct TestServer {
    pub url: String,
    pub server: Server,
    pub cancelled_flag: Arc<AtomicBool>,
    /// How many runs of the `sleep` tool began.
    pub sleeps_started: Arc<AtomicUsize>,
    stop: Option<oneshot::Sender<()>>,
}

impl TestServer {
    /// Waits until a test tool saw its cancellation (it sets `cancelled_flag`).
    #[track_caller]
    pub fn saw_cancellation(&self) -> impl Future<Output = ()> {
        let flag = self.cancelled_flag.clone();
        eventually(WAIT, move || {
            let seen = flag.load(Ordering::SeqCst);
            async move { seen }
        })
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

pub fn test_tools(flag: Arc<AtomicBool>, sleeps_started: Arc<AtomicUsize>) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    let flag2 = flag.clone();
    let sleep_schema = json!({"type":"object","properties":{"ms":{"type":"integer","minimum":0}},"required":["ms"]});
    r.register(
        Tool::new("sleep", "sleeps ms milliseconds", sleep_schema.clone(), move |args, ctx| {
            let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
            let flag = flag.clone();
            let started = sleeps_started.clone();
            Box::pin(async move {
                started.fetch_add(1, Ordering::SeqCst);
                ctx.report_progress(0.0, Some(1.0), Some("started".into()));
                tokio::select! {
                    _ = ctx.cancelled() => { flag.store(true, Ordering::SeqCst); Ok(ToolResult::error("cancelled").into()) }
                    // The tool's work: taking `ms` is what it is for.
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => {
                        ctx.set_status_message("slept").await;
                        Ok(ToolResult::text(format!("slept {ms} ms")).into())
                    }
                }
            })
        })
        .unwrap()
        .task_support(TaskSupport::Optional),
    )
    .unwrap();
    // Ignores cancellation entirely: proves a cancelled task stays cancelled.
    r.register(
        Tool::new(
            "stubborn",
            "ignores cancellation",
            sleep_schema,
            |args, _ctx| {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                Box::pin(async move {
                    // The tool's work: taking `ms` is what it is for.
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(ToolResult::text("finished anyway").into())
                })
            },
        )
        .unwrap()
        .task_support(TaskSupport::Optional),
    )
    .unwrap();
    let empty = json!({"type":"object"});
    r.register(
        Tool::new(
            "ask_ops",
            "asks the group 'ops' (not the client) one question",
            empty.clone(),
            |_args, ctx| {
                Box::pin(async move {
                    let params = json!({"mode": "form", "message": "Go ahead?", "requestedSchema": {"type": "object", "properties": {"answer": {"type": "string"}}}});
                    let ask = mcp_tasks_engine::Ask::new().assign_to(["ops"]);
                    match ctx.request_input_with("elicitation/create", params, ask).await {
                        Ok(a) => Ok(ToolResult::text(format!(
                            "ops said: {}",
                            a["content"]["answer"].as_str().unwrap_or("none")
                        ))
                        .into()),
                        Err(e) => Ok(ToolResult::error(e.to_string()).into()),
                    }
                })
            },
        )
        .unwrap()
        .task_support(TaskSupport::Optional),
    )
    .unwrap();
    r.register(
        Tool::new("ask", "asks the user one question", empty.clone(), move |_args, ctx| {
            let flag = flag2.clone();
            Box::pin(async move {
                let schema = json!({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]});
                match ctx.elicit("Your answer?", schema).await {
                    Ok(r) => {
                        let answer = r.content.and_then(|c| c.get("answer").cloned()).unwrap_or(Value::Null);
                        Ok(ToolResult::text(format!("answer: {}", answer.as_str().unwrap_or("none"))).into())
                    }
                    Err(e) => {
                        if matches!(e, mcp_tasks_engine::InputError::Cancelled) {
                            flag.store(true, Ordering::SeqCst);
                        }
                        Ok(ToolResult::error(e.to_string()).into())
                    }
                }
            })
        })
        .unwrap()
        .task_support(TaskSupport::Optional),
    )
    .unwrap();
    r.register(
        Tool::new(
            "ask_briefly",
            "asks one question that waits 300 ms at most",
            empty.clone(),
            move |_args, ctx| {
                Box::pin(async move {
                    let schema =
                        json!({"type": "object", "properties": {"answer": {"type": "string"}}});
                    let asked = ctx
                        .elicit_until(
                            "Your answer, quickly?",
                            schema,
                            std::time::Duration::from_millis(300),
                            mcp_tasks_engine::DeadlineOutcome::Fail,
                        )
                        .await;
                    match asked {
                        Ok(r) => Ok(ToolResult::text(format!("{:?}", r.action)).into()),
                        Err(e) => Ok(ToolResult::error(e.to_string()).into()),
                    }
                })
            },
        )
        .unwrap()
        .task_support(TaskSupport::Optional),
    )
    .unwrap();
    r.register(
        Tool::new("echo", "sync only", empty.clone(), |args, _ctx| {
            Box::pin(async move { Ok(ToolResult::text(Value::Object(args).to_string()).into()) })
        })
        .unwrap(),
    )
    .unwrap();
    r.register(
        Tool::new("tool_error", "isError result", empty.clone(), |_a, _c| {
            Box::pin(async { Ok(ToolResult::error("it went wrong").into()) })
        })
        .unwrap()
        .task_support(TaskSupport::Required),
    )
    .unwrap();
    r.register(
        Tool::new(
            "protocol_error",
            "JSON-RPC error",
            empty.clone(),
            |_a, _c| {
                Box::pin(async {
                    Err(RpcError::new(-32603, "backend unavailable")
                        .with_data(json!({"retry": true})))
                })
            },
        )
        .unwrap()
        .task_support(TaskSupport::Optional),
    )
    .unwrap();
    r.register(
        Tool::new(
            "named",
            "asks a name first, then greets",
            empty.clone(),
            |_a, ctx| {
                Box::pin(async move {
                    let name = ctx
                        .answer("who")
                        .and_then(|a| a["content"]["name"].as_str().map(String::from))
                        .unwrap_or_default();
                    Ok(ToolResult::text(format!("hi {name}")).into())
                })
            },
        )
        .unwrap()
        .ask_first(
            "who",
            "Name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        )
        .task_support(TaskSupport::Required),
    )
    .unwrap();
    r.register(
        Tool::new("panics", "panics", empty, |_a, _c| {
            Box::pin(async {
                if std::env::var_os("NEVER_SET_IN_TESTS_9f2c").is_none() {
                    panic!("deliberate panic in a test tool");
                }
                Ok(ToolResult::text("unreachable").into())
            })
        })
        .unwrap()
        .task_support(TaskSupport::Optional),
    )
    .unwrap();
    r
}

pub fn test_engine_config() -> EngineConfig {
    EngineConfig {
        max_ttl: Duration::from_secs(3600),
        // Below the default minimum, so the expiry tests can ask for short ttls.
        min_ttl: Duration::from_millis(100),
        cancel_grace: Duration::from_millis(200),
        sweep_interval: Duration::from_millis(50),
        list_page_size: 3,
        ..EngineConfig::default()
    }
}

pub async fn start_server() -> TestServer {
    start_server_with(ServerConfig {
        max_body_bytes: 64 * 1024,
        ..ServerConfig::default()
    })
    .await
}

pub async fn start_server_with(config: ServerConfig) -> TestServer {
    start_server_with_engine(test_engine_config(), config).await
}

pub async fn start_server_with_engine(
    engine_config: EngineConfig,
    config: ServerConfig,
) -> TestServer {
    let store = mcp_tasks_store::open("memory:").await.unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let sleeps_started = Arc::new(AtomicUsize::new(0));
    let server = Server::start(
        store,
        engine_config,
        test_tools(flag.clone(), sleeps_started.clone()),
        config,
        Vec::new(),
    )
    .await
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let s = server.clone();
    tokio::spawn(async move {
        http::serve(s, listener, async move {
            let _ = rx.await;
        })
        .await
        .unwrap();
    });
    TestServer {
        url: format!("http://{addr}/mcp"),
        server,
        cancelled_flag: flag,
        sleeps_started,
        stop: Some(tx),
    }
}

/// A JSON-RPC client over plain HTTP POSTs with JSON answers.
pub struct Client {
    pub http: reqwest::Client,
    pub url: String,
    pub session: Option<String>,
    pub token: Option<String>,
    next_id: i64,
}

pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Client {
    pub fn new(url: &str) -> Self {
        Client {
            http: reqwest::Client::new(),
            url: url.to_string(),
            session: None,
            token: None,
            next_id: 1,
        }
    }

    /// A client on an existing session, without initializing.
    pub fn on_session(url: &str, session: Option<String>) -> Self {
        let mut c = Self::new(url);
        c.session = session;
        c
    }

    pub async fn connect(url: &str) -> Self {
        Self::connect_with_version(url, "2025-11-25").await
    }

    pub async fn connect_with_version(url: &str, version: &str) -> Self {
        Self::connect_full(url, version, json!({})).await
    }

    pub async fn connect_with_capabilities(url: &str, capabilities: Value) -> Self {
        Self::connect_full(url, "2025-11-25", capabilities).await
    }

    /// A 2025-11-25 session that declares the elicitation capability.
    pub async fn connect_eliciting(url: &str) -> Self {
        Self::connect_with_capabilities(url, json!({"elicitation": {}})).await
    }

    pub async fn connect_full(url: &str, version: &str, capabilities: Value) -> Self {
        Self::connect_as(url, version, capabilities, None).await
    }

    pub async fn connect_with_token(url: &str, token: &str) -> Self {
        Self::connect_as(url, "2025-11-25", json!({}), Some(token.to_string())).await
    }

    pub async fn connect_as(
        url: &str,
        version: &str,
        capabilities: Value,
        token: Option<String>,
    ) -> Self {
        let mut c = Self::new(url);
        c.token = token;
        let r = c
            .request("initialize", json!({"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "test", "version": "0"}}))
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        c.session = Some(
            r.headers
                .get("mcp-session-id")
                .expect("session id")
                .to_str()
                .unwrap()
                .to_string(),
        );
        c.notify("notifications/initialized", json!({})).await;
        c
    }

    pub async fn post_raw(&self, body: impl Into<reqwest::Body>) -> Reply {
        let mut req = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        if let Some(t) = &self.token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let is_sse = is_event_stream(&headers);
        let text = resp.text().await.unwrap();
        let body = if is_sse {
            // the last `data:` line is the response
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .rfind(|d| d.contains("\"id\""))
                .map(|d| serde_json::from_str(d.trim()).unwrap())
                .unwrap_or(Value::Null)
        } else if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Reply {
        let id = self.next_id;
        self.next_id += 1;
        self.post_raw(
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        )
        .await
    }

    /// The `result`, panicking with the error if there is one.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let r = self.request(method, params).await;
        assert!(
            r.body.get("result").is_some(),
            "{method} failed: {}",
            r.body
        );
        r.body["result"].clone()
    }

    /// The error code of a request expected to fail.
    pub async fn error_code(&mut self, method: &str, params: Value) -> i64 {
        let r = self.request(method, params).await;
        r.body["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("{method} should fail: {}", r.body))
    }

    pub async fn notify(&self, method: &str, params: Value) -> Reply {
        self.post_raw(json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string())
            .await
    }

    /// The `status` tasks/get reports for the task.
    pub async fn status_of(&mut self, id: &str) -> Value {
        self.call("tasks/get", json!({"taskId": id})).await["status"].clone()
    }

    /// Reads the task with tasks/get until it has `status`; returns it then.
    pub async fn wait_status(&mut self, id: &str, status: &str) -> Value {
        let client = tokio::sync::Mutex::new(self);
        eventually(WAIT, || async {
            let t = client
                .lock()
                .await
                .call("tasks/get", json!({"taskId": id}))
                .await;
            (t["status"] == status).then_some(t)
        })
        .await
    }

    /// A `method` request to the endpoint carrying the session id.
    fn session_request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        self.http
            .request(method, &self.url)
            .header("mcp-session-id", self.session.clone().unwrap())
    }

    /// Starts a streaming POST (SSE accepted) and returns the response to read.
    pub async fn stream_request(&self, id: i64, method: &str, params: Value) -> reqwest::Response {
        self.session_request(reqwest::Method::POST)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
            )
            .send()
            .await
            .unwrap()
    }

    /// Opens the session's GET stream of server-sent messages.
    pub async fn open_event_stream(&self) -> reqwest::Response {
        self.session_request(reqwest::Method::GET)
            .header("accept", "text/event-stream")
            .send()
            .await
            .unwrap()
    }

    /// Ends the session with a DELETE.
    pub async fn delete_session(&self) -> reqwest::Response {
        self.session_request(reqwest::Method::DELETE)
            .send()
            .await
            .unwrap()
    }

    pub async fn create_task(&mut self, tool: &str, args: Value) -> String {
        let r = self
            .call(
                "tools/call",
                json!({"name": tool, "arguments": args, "task": {}}),
            )
            .await;
        r["task"]["taskId"].as_str().expect("taskId").to_string()
    }
}

/// Whether a response's `content-type` is `text/event-stream`.
pub fn is_event_stream(headers: &reqwest::header::HeaderMap) -> bool {
    headers
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap_or("").starts_with("text/event-stream"))
}

/// Reads the `data:` payloads of an SSE response in order, handing each to `on`, until
/// `on` returns true (then `true`), or the stream ends or 10 s pass (then `false`). A
/// payload that is not JSON fails the test.
pub async fn read_sse(resp: reqwest::Response, mut on: impl FnMut(&Value) -> bool) -> bool {
    let mut buf = String::new();
    let mut stream = resp.bytes_stream();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while let Ok(Some(Ok(chunk))) = tokio::time::timeout_at(deadline, stream.next()).await {
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(pos) = buf.find("\n\n") {
            let event: String = buf.drain(..pos + 2).collect();
            for data in event.lines().filter_map(|l| l.strip_prefix("data:")) {
                let v: Value = serde_json::from_str(data.trim())
                    .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {data}"));
                if on(&v) {
                    return true;
                }
            }
        }
    }
    false
}

/// Like [`read_sse`], failing the test if the stream ends before `on` returns true.
pub async fn read_stream(resp: reqwest::Response, on: impl FnMut(&Value) -> bool) {
    assert!(
        read_sse(resp, on).await,
        "stream ended before the expected message"
    );
}

/// Collects the SSE payloads until `pred` matches one (kept, last), or the stream ends
/// or 10 s pass.
pub async fn read_until(resp: reqwest::Response, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut seen = Vec::new();
    read_sse(resp, |v| {
        seen.push(v.clone());
        pred(v)
    })
    .await;
    seen
}
