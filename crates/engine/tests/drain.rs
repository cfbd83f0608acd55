//! Drain and takeover between two engines on one SQLite file (two processes on one
//! database, in one test process): a draining engine refuses new tasks, hands its
//! resumable work to the other at once, lets the rest run until the drain timeout and
//! then fails it saying why (but never waits for a task that waits for an answer: it
//! stays in the store, waiting, for the next start); and a task whose runner stops proving it is alive is
//! taken over by the other within its alive window, with no per-task renewal.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_engine::{
    Caller, CreateParams, Engine, EngineConfig, EngineError, EngineHooks, Outcome, Resumer,
    DRAIN_FAILED_MESSAGE, DRAIN_WAITING_MESSAGE,
};
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::SqliteStore;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

use mcp_tasks_testkit::WAIT;

fn caller() -> Caller {
    Caller::anonymous("owner", None)
}

fn params(tool: &str) -> CreateParams {
    CreateParams {
        caller: caller(),
        method: "tools/call".into(),
        request: json!({"name": tool}),
        requested_ttl: None,
        client_capabilities: json!({}),
    }
}

fn done(text: &str) -> Outcome {
    Outcome::Result {
        value: json!({"content": [{"type": "text", "text": text}]}),
    }
}

/// Tool `resumable` runs again (and finishes at once, naming the engine); any other
/// tool cannot be resumed.
fn resumer(name: &'static str) -> Resumer {
    Arc::new(move |record| {
        if record.request.name().as_deref() != Some("resumable") {
            return None;
        }
        Some(mcp_tasks_engine::Resumption::new(move |_ctx| {
            Box::pin(async move { done(name) })
        }))
    })
}

async fn engine(url: &str, name: &'static str) -> Engine {
    let config = EngineConfig {
        heartbeat: Duration::from_millis(50),
        lease_ttl: Some(Duration::from_millis(300)),
        rescue_interval: Duration::from_millis(50),
        ..EngineConfig::default()
    };
    Engine::start(
        Arc::new(SqliteStore::open(url).await.unwrap()),
        config,
        EngineHooks::default().resumer(resumer(name)),
    )
    .await
    .unwrap()
}

fn forever(_ctx: mcp_tasks_engine::TaskContext) -> mcp_tasks_engine::Work {
    Box::pin(futures::future::pending::<Outcome>())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_hands_resumable_work_over_and_fails_the_rest_after_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let a = engine(&url, "a").await;
    let b = engine(&url, "b").await;
    let resumable = a.create(params("resumable"), forever).await.unwrap();
    let plain = a.create(params("plain"), forever).await.unwrap();
    // Ends by itself within the drain timeout.
    let (finish, finished) = tokio::sync::oneshot::channel::<()>();
    let quick = a
        .create(params("plain"), move |_ctx| {
            Box::pin(async move {
                let _ = finished.await;
                done("quick")
            })
        })
        .await
        .unwrap();

    let timeout = Duration::from_millis(1_500);
    let drain = tokio::spawn({
        let a = a.clone();
        async move { a.drain(timeout).await }
    });
    // The resumable task runs again on B and finishes there, long before A's drain
    // timeout (and its alive window) pass.
    let started = std::time::Instant::now();
    let resumed = tokio::time::timeout(WAIT, b.wait_terminal(&resumable.id, &caller()))
        .await
        .expect("the handed-over task did not finish on the other engine")
        .unwrap();
    assert_eq!(resumed.outcome.as_deref(), Some(&done("b")));
    assert!(started.elapsed() < timeout, "{:?}", started.elapsed());
    // A takes no new task while it drains.
    match a.create(params("plain"), forever).await {
        Err(EngineError::Draining) => {}
        other => panic!("a draining engine created a task: {other:?}"),
    }
    let _ = finish.send(());

    let report = tokio::time::timeout(WAIT, drain).await.unwrap().unwrap();
    assert_eq!(report.handed_over, 1, "{report:?}");
    assert_eq!(report.finished, 1, "{report:?}");
    assert_eq!(report.failed, 1, "{report:?}");
    assert!(started.elapsed() >= timeout, "{:?}", started.elapsed());
    let quick = b.get(&quick.id, &caller()).await.unwrap();
    assert_eq!(quick.status, TaskStatus::Completed);
    let plain = b.get(&plain.id, &caller()).await.unwrap();
    assert_eq!(plain.status, TaskStatus::Failed);
    assert_eq!(plain.status_message.as_deref(), Some(DRAIN_FAILED_MESSAGE));
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_that_stops_its_heartbeat_loses_its_tasks_within_its_alive_window() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let a = engine(&url, "a").await;
    let b = engine(&url, "b").await;
    let resumable = a.create(params("resumable"), forever).await.unwrap();
    // Well past the lease the creation granted: A's heartbeat alone keeps it.
    let mut activity = a.activity();
    let seen = activity.borrow_and_update().lease_renewal_rounds;
    tokio::time::timeout(
        WAIT,
        activity.wait_for(|x| x.lease_renewal_rounds >= seen + 10),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(
        b.get(&resumable.id, &caller()).await.unwrap().status,
        TaskStatus::Working,
        "taken from a live runner"
    );
    // A stops beating (as a process that froze or died): B resumes the task.
    a.shutdown().await;
    let resumed = tokio::time::timeout(WAIT, b.wait_terminal(&resumable.id, &caller()))
        .await
        .expect("the task of a runner that stopped beating was not taken over")
        .unwrap();
    assert_eq!(resumed.outcome.as_deref(), Some(&done("b")));
    b.shutdown().await;
}

/// Work that asks its client one form question (once `go` fires, if given) and ends
/// with the answer.
fn asking(
    go: Option<tokio::sync::oneshot::Receiver<()>>,
) -> impl FnOnce(mcp_tasks_engine::TaskContext) -> mcp_tasks_engine::Work {
    move |ctx| {
        Box::pin(async move {
            if let Some(go) = go {
                let _ = go.await;
            }
            let form = json!({"mode": "form", "message": "go?", "requestedSchema": {"type": "object", "properties": {}}});
            match ctx.request_input("elicitation/create", form).await {
                Ok(_) => done("answered"),
                Err(e) => done(&e.to_string()),
            }
        })
    }
}

fn asking_params() -> CreateParams {
    CreateParams {
        client_capabilities: json!({"elicitation": {}}),
        ..params("plain")
    }
}

async fn until_waiting(engine: &Engine, id: &mcp_tasks_protocol::TaskId) {
    let mut events = engine.subscribe();
    tokio::time::timeout(WAIT, async {
        while engine.get(id, &caller()).await.unwrap().status != TaskStatus::InputRequired {
            let _ = events.recv().await;
        }
    })
    .await
    .expect("the task never asked its question");
}

/// A drain whose timeout a test must never wait out.
const LONG_DRAIN: Duration = Duration::from_secs(600);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_does_not_wait_for_a_task_waiting_for_an_answer_and_keeps_it_waiting_in_the_store()
{
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let a = engine(&url, "a").await;
    let waiting = a.create(asking_params(), asking(None)).await.unwrap();
    until_waiting(&a, &waiting.id).await;
    // Another one starts waiting only once the drain began.
    let (go, gone) = tokio::sync::oneshot::channel();
    let later = a.create(asking_params(), asking(Some(gone))).await.unwrap();

    let drain = tokio::spawn({
        let a = a.clone();
        async move { a.drain(LONG_DRAIN).await }
    });
    let _ = go.send(());
    let report = tokio::time::timeout(WAIT, drain)
        .await
        .expect("the drain waited for tasks that wait for an answer")
        .unwrap();
    assert_eq!(report.parked, 2, "{report:?}");
    assert_eq!(report.failed, 0, "{report:?}");
    assert_eq!(a.running_count(), 0);
    a.shutdown().await;
    // The file keeps both, still waiting, for the next start.
    let store = SqliteStore::open(&url).await.unwrap();
    for id in [&waiting.id, &later.id] {
        let record = mcp_tasks_store::TaskStore::get(&store, id, chrono::Utc::now())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(record.status, TaskStatus::InputRequired, "{record:?}");
        assert_eq!(record.input_requests.len(), 1, "{record:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_store_that_keeps_nothing_a_drain_fails_a_task_waiting_for_an_answer_at_once() {
    let a = Engine::start(
        Arc::new(mcp_tasks_store::MemoryStore::new()),
        EngineConfig::default(),
        EngineHooks::default(),
    )
    .await
    .unwrap();
    let waiting = a.create(asking_params(), asking(None)).await.unwrap();
    until_waiting(&a, &waiting.id).await;
    let report = tokio::time::timeout(WAIT, a.drain(LONG_DRAIN))
        .await
        .expect("the drain waited for a task that waits for an answer");
    assert_eq!(report.failed, 1, "{report:?}");
    let failed = a.get(&waiting.id, &caller()).await.unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(
        failed.status_message.as_deref(),
        Some(DRAIN_WAITING_MESSAGE)
    );
    a.shutdown().await;
}
