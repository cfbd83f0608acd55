//! The engine's deadlines on paused time, on every backend: a task's TTL, a lease that
//! runs out when its process stops renewing, and a question's input deadline. The
//! engine reads one clock that tokio's paused time drives, so a test advances time by
//! the hour instead of sleeping, and waits on the maintenance services' signals
//! (`Activity`) or the task's own end.
//!
//! Paused time normally jumps to the next timer whenever the runtime waits, also on a
//! database's I/O, which would fire a pool's acquire timeout or a maintenance round at
//! a moment the test did not choose. `common::freeze` keeps a blocking task alive for
//! the test, which tokio counts as work under way: time then moves only when the test
//! advances it, on SQLite and PostgreSQL. The memory store waits on no I/O, so there
//! paused time's own jumps (to the next timer) are exactly the rounds the test drives.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_engine::{
    DeadlineOutcome, Engine, EngineConfig, EngineError, EngineHooks, Failure, Outcome, TaskContext,
    Work,
};
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::suite::postgres::{test_url, TestSchema};
use mcp_tasks_store::{MemoryStore, PgStore, SqliteStore, TaskStore};
use std::sync::Arc;
use std::time::Duration;

mod common;

use common::{caller, params};

/// How long, in real time, a step waits for the maintenance round it started.
const REAL_BOUND: Duration = Duration::from_secs(2);

/// Every deadline tested is a minute; maintenance runs every second.
const DEADLINE: Duration = Duration::from_secs(60);

/// Maintenance every second; leases far longer than any step a test takes at once, so
/// that a task's own lease never runs out under it (the lease test sets its own).
fn config() -> EngineConfig {
    EngineConfig {
        sweep_interval: Duration::from_secs(1),
        heartbeat: Duration::from_secs(1),
        lease_ttl: Some(Duration::from_secs(3600)),
        min_ttl: Duration::from_secs(1),
        input_timeout: DEADLINE,
        ..EngineConfig::default()
    }
}

/// Two stores on one database of `backend` (`None`: PostgreSQL is not configured).
async fn stores(
    backend: &str,
    dir: &std::path::Path,
) -> Option<(Arc<dyn TaskStore>, Arc<dyn TaskStore>, Option<TestSchema>)> {
    match backend {
        "memory" => {
            let store: Arc<dyn TaskStore> = Arc::new(MemoryStore::new());
            Some((store.clone(), store, None))
        }
        "sqlite" => {
            let url = format!("sqlite://{}", dir.join("t.db").display());
            Some((
                Arc::new(SqliteStore::open(&url).await.unwrap()),
                Arc::new(SqliteStore::open(&url).await.unwrap()),
                None,
            ))
        }
        _ => {
            let server = test_url()?;
            let schema = TestSchema::create(&server).await;
            Some((
                Arc::new(PgStore::open(schema.url()).await.unwrap()),
                Arc::new(PgStore::open(schema.url()).await.unwrap()),
                Some(schema),
            ))
        }
    }
}

/// Moves paused time a maintenance interval at a time until `done` holds of
/// `engine`'s activity (every round the services run then is one the test chose).
/// `frozen`: time was frozen for a store's I/O (see `common::freeze`).
async fn run_until(
    engine: &Engine,
    frozen: bool,
    done: impl Fn(&mcp_tasks_engine::Activity) -> bool,
) {
    let mut activity = engine.activity();
    for _ in 0..600 {
        if done(&activity.borrow_and_update()) {
            return;
        }
        tokio::time::advance(Duration::from_secs(1)).await;
        // The sweeper runs every second: wait for a round the advance started (and
        // its I/O) to be counted. On the memory store that is all there is to wait
        // for. With frozen time the bound is real time: a round still under way after
        // it is seen at the next step.
        if !frozen {
            let _ = activity.changed().await;
            continue;
        }
        let bound = tokio::task::spawn_blocking(|| std::thread::park_timeout(REAL_BOUND));
        tokio::select! {
            _ = activity.changed() => {}
            _ = bound => {}
        }
    }
    panic!("the maintenance services did not get there in 600 rounds");
}

fn forever(_ctx: TaskContext) -> Work {
    Box::pin(std::future::pending())
}

async fn ttl_expires_on_paused_time(backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    let Some((store, _, _schema)) = stores(backend, dir.path()).await else {
        return;
    };
    let engine = Engine::start(store, config(), EngineHooks::default())
        .await
        .unwrap();
    let _frozen = common::freeze(backend != "memory");
    let task = engine
        .create(
            mcp_tasks_engine::CreateParams {
                requested_ttl: Some(DEADLINE),
                ..params()
            },
            forever,
        )
        .await
        .unwrap();
    assert_eq!(task.ttl, Some(DEADLINE), "{backend}");
    // A sweep well inside the TTL keeps it.
    let seen = engine.activity().borrow().sweeps;
    run_until(&engine, backend != "memory", |a| a.sweeps > seen).await;
    assert!(
        engine.get(&task.id, &caller()).await.is_ok(),
        "{backend}: expired before its TTL"
    );
    // Past it, the next sweep deletes it and stops its work.
    tokio::time::advance(DEADLINE + Duration::from_secs(1)).await;
    let seen = engine.activity().borrow().sweeps;
    run_until(&engine, backend != "memory", |a| a.sweeps > seen).await;
    assert!(
        matches!(
            engine.get(&task.id, &caller()).await,
            Err(EngineError::NotFound)
        ),
        "{backend}: still there after its TTL"
    );
    // The work ignores cancellation: it is aborted after the grace period.
    let grace = engine.config().cancel_grace;
    let seen = engine.activity().borrow().sweeps;
    let rounds = grace.as_secs() + 2;
    run_until(&engine, backend != "memory", |a| a.sweeps > seen + rounds).await;
    assert_eq!(
        engine.running_count(),
        0,
        "{backend}: work outlived its task"
    );
}

async fn a_lease_runs_out_on_paused_time(backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    let Some((a_store, b_store, _schema)) = stores(backend, dir.path()).await else {
        return;
    };
    let leased = EngineConfig {
        lease_ttl: Some(DEADLINE),
        ..config()
    };
    let a = Engine::start(a_store, leased.clone(), EngineHooks::default())
        .await
        .unwrap();
    let b = Engine::start(b_store, leased, EngineHooks::default())
        .await
        .unwrap();
    let _frozen = common::freeze(backend != "memory");
    let task = a.create(params(), forever).await.unwrap();
    // While A renews, B's rescuer finds nothing to take.
    let seen = b.activity().borrow().rescue_rounds;
    run_until(&b, backend != "memory", |x| x.rescue_rounds > seen + 2).await;
    assert_eq!(
        b.get(&task.id, &caller()).await.unwrap().status,
        TaskStatus::Working,
        "{backend}: taken over while its lease was renewed"
    );
    // A stops renewing (its maintenance ends, as when its process stops); a minute
    // later the lease has run out and B takes the task over (and fails it: nothing
    // resumes it).
    a.shutdown().await;
    tokio::time::advance(DEADLINE + Duration::from_secs(1)).await;
    run_until(&b, backend != "memory", |x| x.lease_takeovers >= 1).await;
    let failed = b.wait_terminal(&task.id, &caller()).await.unwrap();
    assert_eq!(failed.status, TaskStatus::Failed, "{backend}");
    assert_eq!(
        failed.status_message.as_deref(),
        Some(mcp_tasks_engine::LOST_RUNNER_MESSAGE),
        "{backend}"
    );
    assert!(b.activity().borrow().lease_takeovers >= 1, "{backend}");
}

async fn an_unanswered_question_times_out_on_paused_time(backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    let Some((store, _, _schema)) = stores(backend, dir.path()).await else {
        return;
    };
    let engine = Engine::start(store, config(), EngineHooks::default())
        .await
        .unwrap();
    let _frozen = common::freeze(backend != "memory");
    let task = engine
        .create(params(), |ctx| {
            Box::pin(async move {
                let form = serde_json::json!({"mode": "form", "message": "name?", "requestedSchema": {"type": "object", "properties": {}}});
                let asked = ctx
                    .request_input_until("elicitation/create", form, DEADLINE, DeadlineOutcome::Fail)
                    .await
                    .map(|a| a["action"].as_str().unwrap_or("none").to_string());
                match asked {
                    Ok(action) => Outcome::Result {
                        value: serde_json::json!({"content": [{"type": "text", "text": action}]}),
                    },
                    Err(e) => Outcome::failed(Failure::InputTimedOut, e.to_string()),
                }
            })
        })
        .await
        .unwrap();
    let mut events = engine.subscribe();
    loop {
        let record = engine.get(&task.id, &caller()).await.unwrap();
        if record.status == TaskStatus::InputRequired {
            break;
        }
        let _ = events.recv().await;
    }
    // A second at a time (the work sets its deadline once its question is stored,
    // which may be a moment after the record shows it), until the task ends.
    let frozen = backend != "memory";
    let mut ended = None;
    for _ in 0..(DEADLINE.as_secs() * 2) {
        let record = engine.get(&task.id, &caller()).await.unwrap();
        if record.status.is_terminal() {
            ended = Some(record);
            break;
        }
        tokio::time::advance(Duration::from_secs(1)).await;
        if frozen {
            // Most seconds change nothing: a short real-time bound lets the store's
            // I/O of those that do finish.
            let bound = tokio::task::spawn_blocking(|| {
                std::thread::park_timeout(Duration::from_millis(50))
            });
            tokio::select! {
                _ = events.recv() => {}
                _ = bound => {}
            }
        } else {
            let _ = tokio::time::timeout(Duration::from_millis(10), events.recv()).await;
        }
    }
    let ended = ended.unwrap_or_else(|| panic!("{backend}: the question never timed out"));
    assert_eq!(ended.status, TaskStatus::Failed, "{backend}");
    assert!(
        matches!(
            ended.outcome.as_deref(),
            Some(Outcome::Failed {
                failure: Failure::InputTimedOut,
                ..
            })
        ),
        "{backend}: {:?}",
        ended.outcome
    );
}

#[tokio::test]
async fn ttl_memory() {
    ttl_expires_on_paused_time("memory").await;
}

#[tokio::test]
async fn ttl_sqlite() {
    ttl_expires_on_paused_time("sqlite").await;
}

#[tokio::test]
async fn ttl_postgres() {
    ttl_expires_on_paused_time("postgres").await;
}

#[tokio::test]
async fn lease_memory() {
    a_lease_runs_out_on_paused_time("memory").await;
}

#[tokio::test]
async fn lease_sqlite() {
    a_lease_runs_out_on_paused_time("sqlite").await;
}

#[tokio::test]
async fn lease_postgres() {
    a_lease_runs_out_on_paused_time("postgres").await;
}

#[tokio::test]
async fn input_deadline_memory() {
    an_unanswered_question_times_out_on_paused_time("memory").await;
}

#[tokio::test]
async fn input_deadline_sqlite() {
    an_unanswered_question_times_out_on_paused_time("sqlite").await;
}

#[tokio::test]
async fn input_deadline_postgres() {
    an_unanswered_question_times_out_on_paused_time("postgres").await;
}

/// Sessions shared by replicas (only PostgreSQL keeps them): one nobody used for the
/// idle timeout is swept, one a replica still holds is kept, on paused time.
async fn idle_sessions_are_swept_on_paused_time(backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    let Some((store, _, _schema)) = stores(backend, dir.path()).await else {
        return;
    };
    let engine = Engine::start(store, config(), EngineHooks::default())
        .await
        .unwrap();
    let _frozen = common::freeze(backend != "memory");
    let session = |id: &str| mcp_tasks_engine::SessionRecord {
        id: id.to_string(),
        principal: format!("session:{id}"),
        authenticated: false,
        protocol_version: "2025-11-25".into(),
        client_capabilities: serde_json::json!({}),
        created_at: engine.now(),
    };
    engine.save_session(&session("idle")).await.unwrap();
    engine.save_session(&session("held")).await.unwrap();
    if backend != "postgres" {
        // Memory and SQLite keep no shared sessions (one process serves them all).
        assert_eq!(
            engine.load_session("idle").await.unwrap(),
            None,
            "{backend}"
        );
        assert_eq!(engine.sweep_sessions(&[], DEADLINE).await.unwrap(), 0);
        return;
    }
    assert_eq!(engine.sweep_sessions(&[], DEADLINE).await.unwrap(), 0);
    // Half the timeout: a replica still holds "held" and marks it in use.
    tokio::time::advance(DEADLINE / 2).await;
    engine
        .sweep_sessions(&["held".to_string()], DEADLINE)
        .await
        .unwrap();
    // Past the timeout for "idle", not for "held" (marked half a timeout ago).
    tokio::time::advance(DEADLINE / 2 + Duration::from_secs(1)).await;
    assert_eq!(engine.sweep_sessions(&[], DEADLINE).await.unwrap(), 1);
    assert_eq!(engine.load_session("idle").await.unwrap(), None);
    assert!(engine.load_session("held").await.unwrap().is_some());
}

#[tokio::test]
async fn idle_sessions_memory() {
    idle_sessions_are_swept_on_paused_time("memory").await;
}

#[tokio::test]
async fn idle_sessions_sqlite() {
    idle_sessions_are_swept_on_paused_time("sqlite").await;
}

#[tokio::test]
async fn idle_sessions_postgres() {
    idle_sessions_are_swept_on_paused_time("postgres").await;
}
