//! The engine's deadlines on paused time, on every backend: a task's TTL, a lease that
//! runs out when its process stops renewing, and a question's input deadline. The
//! engine reads one clock that tokio's paused time drives, so a test advances time by
//! the hour instead of sleeping, and waits on the maintenance services' signals
//! (`Activity`) or the task's own end.
//!
//! Paused time normally jumps to the next timer whenever the runtime waits, also on a
//! database's I/O, which would fire a pool's acquire timeout or a maintenance round at
//! a moment the test did not choose. [`Frozen`] keeps a blocking task alive for the
//! test, which tokio counts as work under way: time then moves only when the test
//! advances it, on SQLite and PostgreSQL. The memory store waits on no I/O, so there
//! paused time's own jumps (to the next timer) are exactly the rounds the test drives.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_engine::{
    Engine, EngineConfig, EngineError, EngineHooks, Failure, Outcome, TaskContext, Work,
};
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::suite::postgres::{test_url, TestSchema};
use mcp_tasks_store::{MemoryStore, PgStore, SqliteStore, TaskStore};
use std::sync::Arc;
use std::time::Duration;

mod common;

use common::{caller, params};

/// Every deadline tested is a minute; maintenance runs every second.
const DEADLINE: Duration = Duration::from_secs(60);

fn config() -> EngineConfig {
    EngineConfig {
        sweep_interval: Duration::from_secs(1),
        heartbeat: Duration::from_secs(1),
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

/// Pauses time and keeps it from moving on its own until dropped (see the module docs).
struct Frozen(Option<std::sync::mpsc::Sender<()>>);

async fn freeze(backend: &str) -> Frozen {
    tokio::time::pause();
    if backend == "memory" {
        // No I/O to wait on: paused time moves only to timers, as the test means.
        return Frozen(None);
    }
    let (release, held) = std::sync::mpsc::channel::<()>();
    tokio::task::spawn_blocking(move || {
        let _ = held.recv();
    });
    Frozen(Some(release))
}

impl Drop for Frozen {
    fn drop(&mut self) {
        if let Some(release) = self.0.take() {
            let _ = release.send(());
        }
    }
}

/// Moves frozen time a maintenance interval at a time until `done` holds of
/// `engine`'s activity (every round the services run then is one the test chose).
async fn run_until(engine: &Engine, done: impl Fn(&mcp_tasks_engine::Activity) -> bool) {
    let mut activity = engine.activity();
    for _ in 0..600 {
        if done(&activity.borrow_and_update()) {
            return;
        }
        tokio::time::advance(Duration::from_secs(1)).await;
        // The sweeper runs every second: wait for the round the advance started (and
        // its I/O) to be counted.
        let _ = activity.changed().await;
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
    let _frozen = freeze(backend).await;
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
    run_until(&engine, |a| a.sweeps > seen).await;
    assert!(
        engine.get(&task.id, &caller()).await.is_ok(),
        "{backend}: expired before its TTL"
    );
    // Past it, the next sweep deletes it and stops its work.
    tokio::time::advance(DEADLINE + Duration::from_secs(1)).await;
    let seen = engine.activity().borrow().sweeps;
    run_until(&engine, |a| a.sweeps > seen).await;
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
    run_until(&engine, |a| a.sweeps > seen + rounds).await;
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
    let _frozen = freeze(backend).await;
    let task = a.create(params(), forever).await.unwrap();
    // While A renews, B's rescuer finds nothing to take.
    let seen = b.activity().borrow().rescue_rounds;
    run_until(&b, |x| x.rescue_rounds > seen + 2).await;
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
    run_until(&b, |x| x.lease_takeovers >= 1).await;
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
    let _frozen = freeze(backend).await;
    let task = engine
        .create(params(), |ctx| {
            Box::pin(async move {
                match common::ask(&ctx, "name?").await {
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
    tokio::time::advance(DEADLINE + Duration::from_secs(1)).await;
    let ended = engine.wait_terminal(&task.id, &caller()).await.unwrap();
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
