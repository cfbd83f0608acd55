//! Two engines on one store, as two replicas on one database: a cancel on one stops the
//! work running on the other, and a `tasks/result` waiting on one is released when the
//! other completes the task. Runs on the shared memory store always, and on PostgreSQL
//! (LISTEN/NOTIFY) when `MCP_TASKS_TEST_PG_URL` is set (required under CI).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_engine::{Caller, CreateParams, Engine, EngineConfig, EngineHooks, Outcome};
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::suite::postgres::{test_url, TestSchema};
use mcp_tasks_store::{MemoryStore, PgStore, TaskStore};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

mod common;

use mcp_tasks_testkit::{eventually, WAIT};

fn caller() -> Caller {
    Caller::anonymous("owner", None)
}

fn params() -> CreateParams {
    CreateParams {
        caller: caller(),
        method: "tools/call".into(),
        request: json!({"name": "t"}),
        requested_ttl: None,
        client_capabilities: json!({}),
    }
}

async fn pair(a: Arc<dyn TaskStore>, b: Arc<dyn TaskStore>) -> (Engine, Engine) {
    // both start before any task exists: a starting replica fails tasks nobody holds
    let config = EngineConfig {
        heartbeat: Duration::from_millis(200),
        ..EngineConfig::default()
    };
    (
        Engine::start(a, config.clone(), EngineHooks::default())
            .await
            .unwrap(),
        Engine::start(b, config, EngineHooks::default())
            .await
            .unwrap(),
    )
}

/// Creates a task on `engine` whose work runs until it is cancelled.
async fn create_until_cancelled(engine: &Engine) {
    engine
        .create(params(), |ctx| {
            Box::pin(async move {
                ctx.cancelled().await;
                Outcome::Result {
                    value: json!({"content": []}),
                }
            })
        })
        .await
        .unwrap();
}

async fn cancel_on_b_stops_work_on_a(a: Engine, b: Engine) {
    let (tx, rx) = oneshot::channel::<()>();
    let record = a
        .create(params(), move |ctx| {
            Box::pin(async move {
                ctx.cancelled().await;
                let _ = tx.send(());
                Outcome::Result {
                    value: json!({"content": []}),
                }
            })
        })
        .await
        .unwrap();
    let cancelled = b.cancel(&record.id, &caller()).await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    tokio::time::timeout(Duration::from_secs(10), rx)
        .await
        .expect("the work on replica A saw the cancel made on replica B")
        .unwrap();
    assert_eq!(
        a.get(&record.id, &caller()).await.unwrap().status,
        TaskStatus::Cancelled
    );
}

async fn completion_on_a_releases_waiter_on_b(a: Engine, b: Engine) {
    let (tx, rx) = oneshot::channel::<()>();
    let record = a
        .create(params(), move |_ctx| {
            Box::pin(async move {
                let _ = rx.await;
                Outcome::Result {
                    value: json!({"content": [{"type": "text", "text": "from A"}]}),
                }
            })
        })
        .await
        .unwrap();
    let who = caller();
    let waiter = b.wait_terminal(&record.id, &who);
    tokio::pin!(waiter);
    // B's wait has begun (it subscribes to events first thing) and is not over.
    assert!(futures::poll!(&mut waiter).is_pending());
    tx.send(()).unwrap();
    let done = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("released by the change feed, well before the 10 s re-check")
        .unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
}

async fn answer_on_b_reaches_work_on_a(a: Engine, b: Engine) {
    let mut p = params();
    p.client_capabilities = json!({"elicitation": {}});
    let record = a
        .create(p, move |ctx| {
            Box::pin(async move {
                let answer = common::ask(&ctx, "Proceed?").await;
                let text = match answer {
                    Ok(action) => action,
                    Err(e) => format!("error: {e}"),
                };
                Outcome::Result {
                    value: json!({"content": [{"type": "text", "text": text}]}),
                }
            })
        })
        .await
        .unwrap();
    let key = eventually(WAIT, || async {
        let r = b.get(&record.id, &caller()).await.unwrap();
        r.input_requests.keys().next().cloned()
    })
    .await;
    let accept = Outcome::Result {
        value: json!({"action": "accept", "content": {}}),
    };
    assert!(b
        .answer_input(&record.id, &key, accept, &caller())
        .await
        .unwrap());
    let done = tokio::time::timeout(
        Duration::from_secs(10),
        b.wait_terminal(&record.id, &caller()),
    )
    .await
    .expect("the work on A got the answer given on B")
    .unwrap();
    assert_eq!(
        done.outcome.as_deref(),
        Some(&Outcome::Result {
            value: json!({"content": [{"type": "text", "text": "accept"}]})
        })
    );
}

/// A runs a task and "dies" (never renews its lease); B takes it over: fails it when no
/// resumer is registered, re-runs it when one is. A's late outcome is refused (fenced).
async fn takeover_after_a_dead_replica(a_store: Arc<dyn TaskStore>, b_store: Arc<dyn TaskStore>) {
    let leased = EngineConfig {
        lease_ttl: Some(Duration::from_millis(300)),
        heartbeat: Duration::from_millis(100),
        ..EngineConfig::default()
    };
    let a = Engine::start(a_store, leased.clone(), EngineHooks::default())
        .await
        .unwrap();
    // B re-runs taken-over work once `resume` is set (the second half), and fails it
    // before.
    let resume = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let resuming = Arc::clone(&resume);
    let hooks = EngineHooks::default().resumer(Arc::new(move |_record| {
        if !resuming.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        Some(mcp_tasks_engine::Resumption::new(|_ctx| {
            Box::pin(async {
                Outcome::Result {
                    value: json!({"content": [{"type": "text", "text": "re-run on B"}]}),
                }
            }) as mcp_tasks_engine::Work
        }))
    }));
    let b = Engine::start(b_store, leased, hooks).await.unwrap();
    // A's maintenance stops: it never renews a lease again, so it has died as far as
    // the others can tell (its work still runs, and its late writes are fenced off).
    a.shutdown().await;
    let (finish_a, finished) = oneshot::channel::<()>();
    let doomed = a
        .create(params(), move |_ctx| {
            Box::pin(async move {
                let _ = finished.await;
                Outcome::Result {
                    value: json!({"content": [{"type": "text", "text": "late from A"}]}),
                }
            })
        })
        .await
        .unwrap();
    let failed = tokio::time::timeout(
        Duration::from_secs(10),
        b.wait_terminal(&doomed.id, &caller()),
    )
    .await
    .expect("B took the task over")
    .unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(
        failed.status_message.as_deref(),
        Some(mcp_tasks_engine::LOST_RUNNER_MESSAGE)
    );
    let _ = finish_a.send(());
    // A's work ended and A tried to store its outcome (it stops counting the task as
    // running only after that).
    eventually(WAIT, || async { a.running_count() == 0 }).await;
    assert_eq!(
        b.get(&doomed.id, &caller()).await.unwrap().status,
        TaskStatus::Failed,
        "A's late outcome was fenced off"
    );

    // with a resumer, B re-runs the work instead
    resume.store(true, std::sync::atomic::Ordering::SeqCst);
    let resumed = a
        .create(params(), |_ctx| {
            Box::pin(futures::future::pending::<Outcome>())
        })
        .await
        .unwrap();
    let done = tokio::time::timeout(
        Duration::from_secs(10),
        b.wait_terminal(&resumed.id, &caller()),
    )
    .await
    .expect("B re-ran the task")
    .unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(
        done.outcome.as_deref(),
        Some(&Outcome::Result {
            value: json!({"content": [{"type": "text", "text": "re-run on B"}]})
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_replica_takeover() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryStore::new());
    takeover_after_a_dead_replica(store.clone(), store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_replica_takeover() {
    let Some(server) = test_url() else { return };
    let schema = TestSchema::create(&server).await;
    let a: Arc<dyn TaskStore> = Arc::new(PgStore::open(schema.url()).await.unwrap());
    let b: Arc<dyn TaskStore> = Arc::new(PgStore::open(schema.url()).await.unwrap());
    takeover_after_a_dead_replica(a, b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_replicas_share_cancels_and_completions() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryStore::new());
    let (a, b) = pair(store.clone(), store.clone()).await;
    cancel_on_b_stops_work_on_a(a.clone(), b.clone()).await;
    answer_on_b_reaches_work_on_a(a.clone(), b.clone()).await;
    completion_on_a_releases_waiter_on_b(a, b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_replicas_share_cancels_and_completions() {
    let Some(server) = test_url() else { return };
    let schema = TestSchema::create(&server).await;
    let a: Arc<dyn TaskStore> = Arc::new(PgStore::open(schema.url()).await.unwrap());
    let b: Arc<dyn TaskStore> = Arc::new(PgStore::open(schema.url()).await.unwrap());
    let (a, b) = pair(a, b).await;
    cancel_on_b_stops_work_on_a(a.clone(), b.clone()).await;
    answer_on_b_reaches_work_on_a(a.clone(), b.clone()).await;
    completion_on_a_releases_waiter_on_b(a.clone(), b).await;
    own_creations_are_not_read_back(a).await;
}

/// On PostgreSQL every creation notifies the feed, the creating replica's own too: the
/// notification carries the version, and a replica that wrote that version skips the
/// re-read (one read per creation, before).
async fn own_creations_are_not_read_back(a: Engine) {
    const N: u64 = 20;
    let before = *a.activity().borrow();
    for _ in 0..N {
        create_until_cancelled(&a).await;
    }
    let mut activity = a.activity();
    tokio::time::timeout(
        WAIT,
        activity.wait_for(|now| now.feed_skips >= before.feed_skips + N),
    )
    .await
    .unwrap_or_else(|_| {
        panic!(
            "every creation's notification came back and was skipped: {:?}",
            *a.activity().borrow()
        )
    })
    .unwrap();
}

/// A burst of creations on B (2,000 from 32 callers at once): A re-reads each of them
/// once, never loses an event, and reads them in batches (the events that pile up
/// while one batch is read go together), so it keeps up with the feed rather than
/// falling more than the feed's capacity behind and re-reading everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_burst_on_one_replica_is_followed_in_batches() {
    const N: usize = 2_000;
    const CALLERS: usize = 32;
    let Some(server) = test_url() else { return };
    let schema = TestSchema::create(&server).await;
    let a: Arc<dyn TaskStore> = Arc::new(PgStore::open(schema.url()).await.unwrap());
    let b: Arc<dyn TaskStore> = Arc::new(PgStore::open(schema.url()).await.unwrap());
    let (a, b) = pair(a, b).await;
    let before = *a.activity().borrow();
    let callers: Vec<_> = (0..CALLERS)
        .map(|_| {
            let b = b.clone();
            tokio::spawn(async move {
                for _ in 0..N / CALLERS + 1 {
                    create_until_cancelled(&b).await;
                }
            })
        })
        .collect();
    for caller in callers {
        caller.await.unwrap();
    }
    let created = (N / CALLERS + 1) * CALLERS;
    let mut activity = a.activity();
    tokio::time::timeout(
        Duration::from_secs(60),
        activity.wait_for(|now| now.feed_rereads >= before.feed_rereads + created as u64),
    )
    .await
    .unwrap_or_else(|_| {
        panic!(
            "A re-read each of B's {created} creations: {:?}",
            *a.activity().borrow()
        )
    })
    .unwrap();
    let after = *a.activity().borrow();
    assert_eq!(
        after.feed_missed, before.feed_missed,
        "no event lost: {after:?}"
    );
    assert_eq!(
        after.feed_rereads - before.feed_rereads,
        created as u64,
        "each creation read once: {after:?}"
    );
    let batches = after.feed_batches - before.feed_batches;
    assert!(
        batches < created as u64,
        "{created} re-reads went out in {batches} batches: one per event means no batching"
    );
}

/// Two processes on one SQLite file (two stores opened apart: their own connections
/// and caches, one change board). SQLite has no change feed: A's change bridge finds
/// B's cancel and answer through the board, whether the task started long before or
/// just before B's change, and re-reads nothing else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_processes_share_cancels_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("shared.db").display());
    let config = EngineConfig {
        heartbeat: Duration::from_millis(200),
        reread_interval: Duration::from_millis(20),
        ..EngineConfig::default()
    };
    let open = || async {
        let store: Arc<dyn TaskStore> =
            Arc::new(mcp_tasks_store::SqliteStore::open(&url).await.unwrap());
        Engine::start(store, config.clone(), EngineHooks::default())
            .await
            .unwrap()
    };
    let (a, b) = (open().await, open().await);
    for _ in 0..5 {
        cancel_on_b_stops_work_on_a(a.clone(), b.clone()).await;
    }
    answer_on_b_reaches_work_on_a(a.clone(), b.clone()).await;
    // Nothing running on A now: later rounds read nothing.
    eventually(WAIT, || async { a.running_count() == 0 }).await;
    let mut activity = a.activity();
    let idle = *activity.borrow_and_update();
    tokio::time::timeout(
        WAIT,
        activity.wait_for(|x| x.reread_rounds >= idle.reread_rounds + 3),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(activity.borrow().rereads, idle.rereads);
}
