//! Plain calls that ask on the 2026-07-28 wire: the input-required round (SEP-2322).
//! A plain call whose tool asks mid-call answers with the questions and a sealed
//! `requestState`; the client calls again with the answers and the state, and the work
//! goes on where it stopped (nothing before the question runs twice). The state is
//! refused when altered, another principal's, for another call, or expired.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use mcp_tasks_client::{input, Client, Target, WirePreference};
use mcp_tasks_engine::TaskContext;
use mcp_tasks_protocol::{RequestId, Secret};
use mcp_tasks_server::wire::v2026_07_28::{self, RoutingHeaders};
use mcp_tasks_server::{ElicitAs, Elicited, Server, ServerConfig, TaskSupport, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Deserialize, JsonSchema)]
struct Count {
    n: u32,
}

#[derive(Deserialize, JsonSchema)]
struct Confirm {
    confirm: bool,
}

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Colour {
    colour: String,
}

/// How often each tool's work before its first question ran.
#[derive(Clone, Default)]
struct Runs {
    confirm: Arc<AtomicUsize>,
    two: Arc<AtomicUsize>,
}

fn tools(runs: &Runs) -> Vec<Tool> {
    let confirm = Arc::clone(&runs.confirm);
    let two = Arc::clone(&runs.two);
    vec![
        Tool::from_fn(
            "confirm_count",
            "Prepares (a journaled step), asks to go on, counts.",
            move |args: Count, ctx: TaskContext| {
                let runs = Arc::clone(&confirm);
                async move {
                    let n = ctx
                        .step("prepare", async {
                            runs.fetch_add(1, Ordering::SeqCst);
                            args.n
                        })
                        .await
                        .map_err(|e| e.to_string())?;
                    let answer = ctx
                        .elicit_as::<Confirm>(&format!("Count to {n}?"))
                        .await
                        .map_err(|e| e.to_string())?;
                    Ok::<_, String>(match answer {
                        Elicited::Accepted(c) if c.confirm => format!("counted to {n}"),
                        Elicited::Accepted(_) => "not confirmed".to_string(),
                        Elicited::Declined => "declined".to_string(),
                        Elicited::Cancelled => "cancelled".to_string(),
                    })
                }
            },
        )
        .task_support(TaskSupport::Optional)
        // Run again from its journal by the next process when this one drains.
        .resumable(),
        Tool::from_fn(
            "two_questions",
            "A step, a question, a step, another question.",
            move |_: mcp_tasks_server::NoArgs, ctx: TaskContext| {
                let runs = Arc::clone(&two);
                async move {
                    ctx.step("first", async {
                        runs.fetch_add(1, Ordering::SeqCst);
                    })
                    .await
                    .map_err(|e| e.to_string())?;
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
        .task_support(TaskSupport::Optional),
    ]
}

fn config(ttl: Duration) -> ServerConfig {
    ServerConfig {
        request_state_key: Some(Secret::new(b"input rounds test key".to_vec())),
        request_state_ttl: ttl,
        ..ServerConfig::default()
    }
}

async fn server(runs: &Runs, config: ServerConfig) -> Server {
    Server::builder()
        .store_url("memory:")
        .tools(tools(runs))
        .server_config(config)
        .build()
        .await
        .unwrap()
}

/// Serves `server` on a free loopback port; stops it when dropped.
struct Running {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

async fn serve(server: Server) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.serve_http_on(listener, async move {
        let _ = rx.await;
    }));
    Running {
        url,
        stop: Some(tx),
    }
}

/// Our client on the 2026-07-28 wire, answering elicitations with `answer` (and
/// counting the questions it was asked).
async fn client(url: &str, answer: Value, asked: Arc<AtomicUsize>) -> Client {
    Client::builder()
        .wire(WirePreference::V2026_07_28)
        .on_elicitation(move |q| {
            let answer = answer.clone();
            let asked = Arc::clone(&asked);
            async move {
                // A plain call's question: no task named.
                assert!(q.task_id.is_none(), "{:?}", q.task_id);
                asked.fetch_add(1, Ordering::SeqCst);
                Ok(answer)
            }
        })
        .connect(&Target::Http(url.into()))
        .await
        .unwrap()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn our_client_answers_and_the_work_before_the_question_runs_once() {
    let runs = Runs::default();
    let running = serve(server(&runs, config(Duration::from_secs(60))).await).await;
    let asked = Arc::new(AtomicUsize::new(0));
    let c = client(
        &running.url,
        input::accept(json!({"confirm": true})),
        Arc::clone(&asked),
    )
    .await;
    let r = c.call_tool("confirm_count", json!({"n": 3})).await.unwrap();
    assert_eq!(text(&r), "counted to 3", "{r}");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(runs.confirm.load(Ordering::SeqCst), 1, "the step ran again");
    c.close().await;
}

#[tokio::test]
async fn two_rounds_each_with_its_own_state() {
    let runs = Runs::default();
    let running = serve(server(&runs, config(Duration::from_secs(60))).await).await;
    let asked = Arc::new(AtomicUsize::new(0));
    // One handler for both forms: each takes the field it asks for.
    let c = client(
        &running.url,
        input::accept(json!({"name": "Ada", "colour": "teal"})),
        Arc::clone(&asked),
    )
    .await;
    let r = c.call_tool("two_questions", json!({})).await.unwrap();
    assert_eq!(text(&r), "Ada likes teal", "{r}");
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    assert_eq!(
        runs.two.load(Ordering::SeqCst),
        1,
        "the first step ran again"
    );
    c.close().await;
}

#[tokio::test]
async fn declined_and_cancelled_reach_the_tool() {
    let runs = Runs::default();
    let running = serve(server(&runs, config(Duration::from_secs(60))).await).await;
    for (answer, said) in [
        (input::decline(), "declined"),
        (input::cancel(), "cancelled"),
    ] {
        let c = client(&running.url, answer, Arc::new(AtomicUsize::new(0))).await;
        let r = c.call_tool("confirm_count", json!({"n": 1})).await.unwrap();
        assert_eq!(text(&r), said, "{r}");
        c.close().await;
    }
    assert_eq!(runs.confirm.load(Ordering::SeqCst), 2);
}

// The wire itself, as any client (or forger) sends it: `subject` plays the
// authenticated principal.

const CAN_ANSWER: &str = r#"{"elicitation": {}}"#;

async fn call(server: &Server, subject: &str, caps: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": serde_json::from_str::<Value>(caps).unwrap(),
    });
    let headers = RoutingHeaders {
        method: Some("tools/call".into()),
        name: params["name"].as_str().map(String::from),
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

/// The first round of `confirm_count {n: 2}` by alice: the question's key and the state.
async fn first_round(server: &Server) -> (String, String) {
    let body = call(
        server,
        "alice",
        CAN_ANSWER,
        json!({"name": "confirm_count", "arguments": {"n": 2}}),
    )
    .await;
    let r = &body["result"];
    assert_eq!(r["resultType"], "input_required", "{body}");
    let requests = r["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{body}");
    let (key, q) = requests.iter().next().unwrap();
    assert_eq!(q["method"], "elicitation/create");
    assert_eq!(q["params"]["message"], "Count to 2?");
    (key.clone(), r["requestState"].as_str().unwrap().to_string())
}

fn retry(key: &str, state: &str, n: u32) -> Value {
    json!({
        "name": "confirm_count",
        "arguments": {"n": n},
        "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}},
        "requestState": state,
    })
}

fn refusal(body: &Value) -> String {
    assert_eq!(body["error"]["code"], -32602, "{body}");
    body["error"]["message"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn altered_foreign_and_other_call_states_are_refused_and_the_right_one_completes() {
    let runs = Runs::default();
    let s = server(&runs, config(Duration::from_secs(60))).await;
    let (key, state) = first_round(&s).await;

    let mut altered = state.clone().into_bytes();
    let at = altered.len() / 3;
    altered[at] = if altered[at] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    for bad in [altered, format!("{state}-TAMPERED")] {
        let m = refusal(&call(&s, "alice", CAN_ANSWER, retry(&key, &bad, 2)).await);
        assert!(
            m.contains("altered") && m.contains("without requestState"),
            "{m}"
        );
    }
    let m = refusal(&call(&s, "mallory", CAN_ANSWER, retry(&key, &state, 2)).await);
    assert!(m.contains("another principal"), "{m}");
    let m = refusal(&call(&s, "alice", CAN_ANSWER, retry(&key, &state, 5)).await);
    assert!(m.contains("another call"), "{m}");

    let done = call(&s, "alice", CAN_ANSWER, retry(&key, &state, 2)).await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(text(&done["result"]), "counted to 2", "{done}");
    assert_eq!(runs.confirm.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_expired_state_is_refused() {
    let runs = Runs::default();
    // Honoured for no time at all: expired when it comes back.
    let s = server(&runs, config(Duration::ZERO)).await;
    let (key, state) = first_round(&s).await;
    let m = refusal(&call(&s, "alice", CAN_ANSWER, retry(&key, &state, 2)).await);
    assert!(m.contains("expired"), "{m}");
}

#[tokio::test]
async fn a_state_from_a_server_with_another_key_is_refused() {
    let runs = Runs::default();
    let a = server(&runs, config(Duration::from_secs(60))).await;
    let b = server(
        &runs,
        ServerConfig {
            request_state_key: Some(Secret::new(b"another key".to_vec())),
            ..ServerConfig::default()
        },
    )
    .await;
    let (key, state) = first_round(&a).await;
    let m = refusal(&call(&b, "alice", CAN_ANSWER, retry(&key, &state, 2)).await);
    assert!(m.contains("altered"), "{m}");
}

#[tokio::test]
async fn a_client_that_cannot_answer_gets_the_handle() {
    let runs = Runs::default();
    let s = server(&runs, config(Duration::from_secs(60))).await;
    let body = call(
        &s,
        "alice",
        "{}",
        json!({"name": "confirm_count", "arguments": {"n": 2}}),
    )
    .await;
    let r = &body["result"];
    assert_eq!(r["resultType"], "complete", "{body}");
    assert!(r.get("requestState").is_none(), "{body}");
    assert!(text(r).contains("waiting for an answer"), "{body}");
}

/// Replicas sharing a store and a key honour each other's states: the call comes back
/// to another replica, which gives the task (still running on the first) the answer
/// through the store and waits for its result. Nothing before the question runs again.
#[tokio::test]
async fn another_replica_with_the_same_key_completes_the_round() {
    let runs = Runs::default();
    let store: Arc<dyn mcp_tasks_store::TaskStore> = Arc::new(mcp_tasks_store::MemoryStore::new());
    let replica = |runs: Runs, store: Arc<dyn mcp_tasks_store::TaskStore>| async move {
        Server::builder()
            .store(store)
            .tools(tools(&runs))
            .server_config(config(Duration::from_secs(60)))
            .build()
            .await
            .unwrap()
    };
    let a = replica(runs.clone(), Arc::clone(&store)).await;
    let b = replica(runs.clone(), Arc::clone(&store)).await;
    let (key, state) = first_round(&a).await;
    let done = tokio::time::timeout(
        Duration::from_secs(30),
        call(&b, "alice", CAN_ANSWER, retry(&key, &state, 2)),
    )
    .await
    .expect("the other replica answered within 30 s");
    assert_eq!(text(&done["result"]), "counted to 2", "{done}");
    assert_eq!(runs.confirm.load(Ordering::SeqCst), 1);
}

/// The round survives the server: a server drains while the question is open (its task
/// handed over), the next one on the same store and key takes the task over and runs the
/// tool again from its journal; the call comes back to it with the answer, the finished
/// step returns from the journal, and the question is answered once.
#[tokio::test]
async fn the_round_survives_a_drain_and_the_next_server_replays_the_journal() {
    let runs = Runs::default();
    let store: Arc<dyn mcp_tasks_store::TaskStore> = Arc::new(mcp_tasks_store::MemoryStore::new());
    let engine = mcp_tasks_engine::EngineConfig {
        lease_ttl: Some(Duration::from_millis(600)),
        rescue_interval: Duration::from_millis(50),
        ..mcp_tasks_engine::EngineConfig::default()
    };
    let start = |store: Arc<dyn mcp_tasks_store::TaskStore>| {
        let (runs, engine) = (runs.clone(), engine.clone());
        async move {
            Server::builder()
                .store(store)
                .engine_config(engine)
                .tools(tools(&runs))
                .server_config(config(Duration::from_secs(60)))
                .build()
                .await
                .unwrap()
        }
    };
    let first = start(Arc::clone(&store)).await;
    let (key, state) = first_round(&first).await;
    let report = first.engine().drain(Duration::from_secs(5)).await;
    assert_eq!(report.handed_over, 1, "{report:?}");
    drop(first);

    let next = start(Arc::clone(&store)).await;
    let done = tokio::time::timeout(
        Duration::from_secs(30),
        call(&next, "alice", CAN_ANSWER, retry(&key, &state, 2)),
    )
    .await
    .expect("the next server answered within 30 s");
    assert_eq!(text(&done["result"]), "counted to 2", "{done}");
    assert_eq!(runs.confirm.load(Ordering::SeqCst), 1, "the step ran again");
}
