//! External jobs across processes and time: the sweeper cancels the jobs of expired
//! tasks, a restarted engine keeps serving a started job, and another replica serves
//! it without a lease takeover.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;
mod external_support;

use external_support::*;
use mcp_tasks_engine::{CreateParams, Engine, EngineConfig, EngineHooks};
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::{MemoryStore, SqliteStore, TaskStore};
use mcp_tasks_testkit::{eventually, WAIT};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweeper_cancels_the_jobs_of_expired_tasks_only() {
    let fake = Fake::new();
    let config = EngineConfig {
        sweep_interval: Duration::from_millis(20),
        ..config(Duration::from_millis(50))
    };
    let engine = engine_on(Arc::new(MemoryStore::new()), config, &fake).await;
    let short = || CreateParams {
        requested_ttl: Some(Duration::from_millis(1_000)),
        ..params()
    };
    let create = |params: CreateParams| {
        let system = fake.clone();
        engine.create_external(params, KIND, move |_ctx| {
            Box::pin(async move { Ok(system.start_job()) })
        })
    };
    // Still running when it expires: its job must be cancelled.
    let running = create(short()).await.unwrap();
    let running_state = attached(&engine, &running.id).await.external.unwrap().state;
    // Finished (and read, so the task is completed) before it expires: left alone.
    let finished = create(short()).await.unwrap();
    let finished_state = attached(&engine, &finished.id)
        .await
        .external
        .unwrap()
        .state;
    fake.set(&finished_state, Job::Done(rows("done")));
    let read = read_until(&engine, &finished.id, |r| r.status.is_terminal()).await;
    assert_eq!(read.status, TaskStatus::Completed);
    // No ttl of its own beyond the default: outlives the test, never cancelled.
    let (kept, kept_state) = start(&engine, &fake).await;

    // Both expire (a wall-clock ttl in the store): the sweeper deletes them.
    eventually(WAIT, || async {
        engine.get(&running.id, &caller()).await.is_err()
            && engine.get(&finished.id, &caller()).await.is_err()
            && !fake.cancels.lock().unwrap().is_empty()
    })
    .await;
    // A wrong cancel of the finished task's job would be requested by the sweep that
    // deleted it: wait for a later sweep to finish (so that one has), then for every
    // requested cancel to be done, and count them.
    let mut activity = engine.activity();
    let sweeps = activity.borrow().sweeps;
    activity.wait_for(|a| a.sweeps > sweeps).await.unwrap();
    // (Copied out: a held `watch::Ref` would block the engine's next count.)
    let done = *activity
        .wait_for(|a| a.job_cancels_done == a.job_cancels_requested)
        .await
        .unwrap();
    assert_eq!(done.job_cancels_requested, 1, "{done:?}");
    assert_eq!(*fake.cancels.lock().unwrap(), vec![running_state.clone()]);
    assert_eq!(fake.job(&running_state), Some(Job::Cancelled));
    assert_eq!(fake.job(&finished_state), Some(Job::Done(rows("done"))));
    assert!(engine.get(&running.id, &caller()).await.is_err());
    assert!(engine.get(&finished.id, &caller()).await.is_err());
    let kept = engine.get(&kept.id, &caller()).await.unwrap();
    assert_eq!(kept.status, TaskStatus::Working);
    assert_eq!(fake.job(&kept_state), Some(Job::Running { page: 0 }));
}

#[tokio::test]
async fn external_tasks_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let fake = Fake::new();
    let first = engine_on(
        Arc::new(SqliteStore::open(&url).await.unwrap()),
        short_lease(config(Duration::from_millis(50))),
        &fake,
    )
    .await;
    let (record, state) = start(&first, &fake).await;
    // A plain task of the same process, to show recovery did run.
    let plain = first
        .create(params(), |ctx| {
            Box::pin(async move {
                ctx.cancelled().await;
                rows("never")
            })
        })
        .await
        .unwrap();
    // (A slow machine may have let the first engine poll once while it attached.)
    let polls_before = fake.polls();
    // The process stops: no lease is renewed after this.
    first.shutdown().await;
    drop(first);

    // The file may be shared by live processes: the plain task is an orphan only once
    // the first engine's lease on it ran out (an expiry in the file, on the engine's
    // clock: paused time, frozen against jumps while SQLite works, makes it pass).
    let _frozen = common::freeze(true);
    tokio::time::advance(SHORT_LEASE + Duration::from_millis(50)).await;
    let second = Engine::start(
        Arc::new(SqliteStore::open(&url).await.unwrap()),
        short_lease(config(Duration::from_millis(50))),
        EngineHooks::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        second.get(&plain.id, &caller()).await.unwrap().status,
        TaskStatus::Failed,
        "recovery did not run"
    );
    // Before the poller is registered the task is served as stored (a poll interval
    // passed since its last change while the lease ran out).
    let stored = second.get(&record.id, &caller()).await.unwrap();
    assert_eq!(stored.status, TaskStatus::Working);
    assert_eq!(stored.external, record.external);
    assert_eq!(fake.polls(), polls_before);

    second.register_external(KIND, fake.clone());
    fake.set(&state, Job::Done(rows("after the restart")));
    let done = second.get(&record.id, &caller()).await.unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.outcome.as_deref(), Some(&rows("after the restart")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_replica_serves_the_task_and_leases_do_not_take_it_over() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryStore::new());
    let fake = Fake::new();
    let replica = EngineConfig {
        lease_ttl: Some(Duration::from_millis(200)),
        heartbeat: Duration::from_millis(50),
        ..config(Duration::from_millis(50))
    };
    let a = engine_on(store.clone(), replica.clone(), &fake).await;
    let (record, state) = start(&a, &fake).await;

    // Well past the lease (200 ms): ten rounds of A's lease rescuer (50 ms apart) each
    // looked for expired leases. B starts now, so its recovery runs over the task too;
    // then six rounds of B's rescuer look again. Waiting on the rounds, not on time.
    wait_heartbeats(&a, 10).await;
    let b = engine_on(store.clone(), replica, &fake).await;
    wait_heartbeats(&b, 6).await;
    let on_b = b.get(&record.id, &caller()).await.unwrap();
    assert_eq!(on_b.status, TaskStatus::Working, "{on_b:?}");
    assert_eq!(on_b.external, record.external);

    // A waits while B's read finds the job finished.
    let waiter = {
        let a = a.clone();
        let id = record.id.clone();
        tokio::spawn(async move { a.wait_terminal(&id, &caller()).await })
    };
    fake.set(&state, Job::Done(rows("from b")));
    let done = read_until(&b, &record.id, |r| r.status.is_terminal()).await;
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.outcome.as_deref(), Some(&rows("from b")));
    let on_a = tokio::time::timeout(Duration::from_secs(3), waiter)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(on_a, done);
}

/// Waits until `engine`'s lease rescuer finished `n` more rounds than it had when
/// called.
async fn wait_heartbeats(engine: &Engine, n: u64) {
    let mut activity = engine.activity();
    let start = activity.borrow().rescue_rounds;
    tokio::time::timeout(WAIT, activity.wait_for(|a| a.rescue_rounds >= start + n))
        .await
        .expect("the lease rescuer stopped")
        .unwrap();
}
