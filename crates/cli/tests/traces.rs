//! Traces over OTLP, on the real binary: an OTLP/HTTP receiver runs in this test,
//! `serve --otlp-endpoint` exports to it, and the spans of a tool call made as a task
//! are checked: names and attributes after OpenTelemetry's MCP conventions, the remote
//! parent from `_meta.traceparent`, and the task's execution and store calls nested
//! under the request that created the task.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::mpsc;

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";
const EXT: &str = "io.modelcontextprotocol/tasks";

/// One exported span, flattened for assertions.
#[derive(Debug, Clone)]
struct Seen {
    name: String,
    kind: i32,
    trace_id: String,
    span_id: String,
    parent: String,
    attributes: HashMap<String, String>,
    status_code: i32,
}

impl Seen {
    fn from_proto(span: &Span) -> Self {
        let attributes = span
            .attributes
            .iter()
            .map(|kv| {
                let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                    Some(AnyValue::StringValue(s)) => s.clone(),
                    Some(AnyValue::IntValue(i)) => i.to_string(),
                    Some(AnyValue::BoolValue(b)) => b.to_string(),
                    Some(AnyValue::DoubleValue(d)) => d.to_string(),
                    other => format!("{other:?}"),
                };
                (kv.key.clone(), value)
            })
            .collect();
        Seen {
            name: span.name.clone(),
            kind: span.kind,
            trace_id: hex(&span.trace_id),
            span_id: hex(&span.span_id),
            parent: hex(&span.parent_span_id),
            attributes,
            status_code: span.status.as_ref().map_or(0, |s| s.code),
        }
    }

    fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `POST /v1/traces`: every span of the request goes to the test.
async fn receive(State(spans): State<mpsc::UnboundedSender<Seen>>, body: Bytes) -> Vec<u8> {
    let request = ExportTraceServiceRequest::decode(body).expect("an OTLP protobuf body");
    for resource in &request.resource_spans {
        let service = resource
            .resource
            .as_ref()
            .and_then(|r| r.attributes.iter().find(|kv| kv.key == "service.name"))
            .and_then(|kv| kv.value.as_ref())
            .and_then(|v| v.value.as_ref());
        assert_eq!(
            service,
            Some(&AnyValue::StringValue("mcp-tasks".into())),
            "service.name defaults to mcp-tasks"
        );
        for scope in &resource.scope_spans {
            for span in &scope.spans {
                let _ = spans.send(Seen::from_proto(span));
            }
        }
    }
    Vec::new() // an empty ExportTraceServiceResponse: everything accepted
}

/// A stateless (2026-07-28) request with the Tasks extension and `extra_meta`.
async fn stateless(
    url: &str,
    id: i64,
    method: &str,
    mut params: Value,
    extra_meta: Value,
) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}},
    });
    for (k, v) in extra_meta.as_object().cloned().unwrap_or_default() {
        meta[k] = v;
    }
    params["_meta"] = meta;
    let name = ["name", "taskId"]
        .iter()
        .find_map(|k| params.get(*k).and_then(Value::as_str).map(String::from));
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        req = req.header("mcp-name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let resp = req.body(body.to_string()).send().await.unwrap();
    let answer: Value = resp.json().await.unwrap();
    answer["result"].clone()
}

/// An OTLP/HTTP receiver on a free loopback port: its base URL, the spans it receives,
/// and its task (abort it at the end).
async fn collector() -> (
    String,
    mpsc::UnboundedReceiver<Seen>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new()
        .route("/v1/traces", post(receive))
        .with_state(tx);
    let task = tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), rx, task)
}

/// Receives spans until `complete` says the ones needed are there (30 s bound, only
/// reached when a test fails).
async fn spans_until(
    rx: &mut mpsc::UnboundedReceiver<Seen>,
    complete: impl Fn(&[Seen]) -> bool,
) -> Vec<Seen> {
    // One deadline for the whole wait: spans the server exports on its own (periodic
    // work) keep arriving, so a timeout per span would never fire and a missing span
    // would hang the test instead of failing it.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut seen: Vec<Seen> = Vec::new();
    while !complete(&seen) {
        let span = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .unwrap_or_else(|_| panic!("spans missing after 30 s; got {seen:#?}"))
            .expect("the receiver runs");
        seen.push(span);
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_traced_from_the_request_through_its_execution() {
    let (endpoint, mut rx, receiver) = collector().await;
    let server = common::spawn_listening_with_env(
        &[
            "serve",
            "--demo",
            "--database",
            "memory:",
            "--listen",
            "127.0.0.1:0",
            "--log",
            "warn",
            "--otlp-endpoint",
            &endpoint,
            // A quick call on the extension wire a task too: its trace is the subject.
            "--task-after",
            "0s",
        ],
        // Export each batch within 50 ms rather than the default 5 s.
        &[("OTEL_BSP_SCHEDULE_DELAY", "50")],
    );

    // A task on the stateless wire, in the caller's trace.
    let traceparent = format!("00-{TRACE_ID}-{CLIENT_SPAN}-01");
    let created = stateless(
        &server.url,
        7,
        "tools/call",
        // Not instant: work that ends at once is written with its creation, and this
        // test follows the final write the task's execution makes itself.
        json!({"name": "slow_compute", "arguments": {"seconds": 0.1}}),
        json!({"traceparent": traceparent}),
    )
    .await;
    assert_eq!(created["resultType"], "task", "{created}");
    let task_id = created["taskId"].as_str().unwrap().to_string();

    // A plain call in a 2025-11-25 session, which has a session id.
    let client = mcp_tasks_client::Client::builder()
        .wire(mcp_tasks_client::WirePreference::V2025_11_25)
        .connect(&mcp_tasks_client::Target::Http(server.url.clone()))
        .await
        .unwrap();
    client
        .call_tool("greet", json!({"name": "Ada"}))
        .await
        .unwrap();

    // Spans arrive as the exporter sends them; wait for the ones this test needs.
    let complete = |seen: &[Seen]| {
        let has = |name: &str| seen.iter().any(|s| s.name == name);
        has("tools/call slow_compute")
            && has("execute_tool slow_compute")
            && has("tools/call greet")
            && seen
                .iter()
                .any(|s| s.name == "transition tasks" && s.trace_id == TRACE_ID)
    };
    let seen = spans_until(&mut rx, complete).await;
    let find = |name: &str| {
        seen.iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no span {name}"))
            .clone()
    };

    // The request: a server span in the caller's trace, under the caller's span.
    let request = find("tools/call slow_compute");
    assert_eq!(request.kind, 2, "SPAN_KIND_SERVER");
    assert_eq!(request.trace_id, TRACE_ID);
    assert_eq!(request.parent, CLIENT_SPAN);
    assert_eq!(request.attr("mcp.method.name"), Some("tools/call"));
    assert_eq!(request.attr("mcp.protocol.version"), Some("2026-07-28"));
    assert_eq!(request.attr("gen_ai.tool.name"), Some("slow_compute"));
    assert_eq!(request.attr("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(request.attr("jsonrpc.request.id"), Some("7"));
    assert_eq!(request.attr("mcp_tasks.task.id"), Some(task_id.as_str()));
    assert_eq!(
        request.attr("mcp.session.id"),
        None,
        "no sessions on 2026-07-28"
    );
    assert_eq!(request.attr("error.type"), None);

    // The task's execution: a child of the request that created it.
    let task = find("execute_tool slow_compute");
    assert_eq!(task.trace_id, TRACE_ID);
    assert_eq!(task.parent, request.span_id);
    assert_eq!(task.attr("mcp_tasks.task.id"), Some(task_id.as_str()));
    assert_eq!(task.attr("mcp_tasks.task.status"), Some("completed"));
    assert_eq!(task.attr("gen_ai.tool.name"), Some("slow_compute"));

    // Store calls: the create inside the request, the final write inside the task.
    let create = seen
        .iter()
        .find(|s| s.name == "create tasks" && s.trace_id == TRACE_ID)
        .expect("the create of the task is traced");
    assert_eq!(create.parent, request.span_id);
    assert_eq!(create.kind, 3, "SPAN_KIND_CLIENT");
    assert_eq!(create.attr("db.operation.name"), Some("create"));
    assert_eq!(create.attr("mcp_tasks.store.backend"), Some("memory"));
    let finish = seen
        .iter()
        .find(|s| s.name == "transition tasks" && s.trace_id == TRACE_ID)
        .unwrap();
    assert_eq!(finish.parent, task.span_id);

    // The 2025-11-25 call: its own trace (no traceparent sent), with the session.
    let greet = find("tools/call greet");
    assert_ne!(greet.trace_id, TRACE_ID);
    assert_eq!(greet.parent, "", "a root span");
    assert_eq!(greet.attr("mcp.protocol.version"), Some("2025-11-25"));
    assert!(greet.attr("mcp.session.id").is_some_and(|s| !s.is_empty()));
    assert_eq!(greet.status_code, 0, "unset: the call succeeded");

    drop(server);
    receiver.abort();
}

/// A gateway's upstream call is a client span under the task, and its context reaches
/// the upstream: here another mcp-tasks over stdio, exporting to the same receiver,
/// whose request span is the child of the gateway's client span in the same trace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_call_carries_the_trace_to_the_upstream() {
    let (endpoint, mut rx, receiver) = collector().await;
    let server = common::spawn_listening_with_env(
        &[
            "wrap",
            "--database",
            "memory:",
            "--listen",
            "127.0.0.1:0",
            "--log",
            "warn",
            "--otlp-endpoint",
            &endpoint,
            // A quick call on the extension wire a task too: its trace is the subject.
            "--task-after",
            "0s",
            "--",
            common::BIN,
            "serve",
            "--stdio",
            "--demo",
            "--database",
            "memory:",
            "--log",
            "warn",
            "--otlp-endpoint",
            &endpoint,
        ],
        &[("OTEL_BSP_SCHEDULE_DELAY", "50")],
    );
    let traceparent = format!("00-{TRACE_ID}-{CLIENT_SPAN}-01");
    let created = stateless(
        &server.url,
        1,
        "tools/call",
        // Not instant: work that ends at once is written with its creation, and this
        // test follows the final write the task's execution makes itself.
        json!({"name": "slow_compute", "arguments": {"seconds": 0.1}}),
        json!({"traceparent": traceparent}),
    )
    .await;
    assert_eq!(created["resultType"], "task", "{created}");

    let calls = |seen: &[Seen]| {
        seen.iter()
            .filter(|s| s.name == "tools/call slow_compute" && s.trace_id == TRACE_ID)
            .count()
    };
    // Ours (server), the upstream call (client), the upstream's own request (server).
    // The gateway's task span, under its request (the upstream, running the plain
    // call it gets as a task of its own under its sync budget, has one too).
    let gateway_task = |seen: &[Seen]| {
        seen.iter()
            .filter(|s| s.name == "tools/call slow_compute" && s.parent == CLIENT_SPAN)
            .any(|ours| {
                seen.iter()
                    .any(|s| s.name == "execute_tool slow_compute" && s.parent == ours.span_id)
            })
    };
    let seen = spans_until(&mut rx, |seen| calls(seen) >= 3 && gateway_task(seen)).await;
    let ours = seen
        .iter()
        .find(|s| s.name == "tools/call slow_compute" && s.parent == CLIENT_SPAN)
        .expect("the gateway's request span, under the caller's");
    let task = seen
        .iter()
        .find(|s| s.name == "execute_tool slow_compute" && s.parent == ours.span_id)
        .expect("the gateway's task span, under its request");
    let upstream_call = seen
        .iter()
        .find(|s| s.kind == 3 && s.name == "tools/call slow_compute")
        .expect("a client span for the upstream call");
    assert_eq!(upstream_call.parent, task.span_id);
    assert_eq!(upstream_call.trace_id, TRACE_ID);
    assert_eq!(
        upstream_call.attr("mcp_tasks.upstream.name"),
        Some("mcp-tasks")
    );
    let theirs = seen
        .iter()
        .find(|s| s.kind == 2 && s.parent == upstream_call.span_id)
        .expect("the upstream's request span, under the gateway's call");
    assert_eq!(theirs.name, "tools/call slow_compute");
    assert_eq!(theirs.attr("mcp.protocol.version"), Some("2025-11-25"));

    drop(server);
    receiver.abort();
}
