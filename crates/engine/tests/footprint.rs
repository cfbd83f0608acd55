//! What a task costs the engine's memory: a finished task leaves nothing behind in this
//! process (no running entry, no quota slot), on the memory store and on SQLite, where
//! its record lives only in the database; and a running task is one tokio task, however
//! it was started.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_engine::{
    Caller, CreateParams, Engine, EngineConfig, EngineHooks, Outcome, TaskEvent,
};
use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{MemoryStore, SqliteStore, TaskStore};
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;

mod common;

use mcp_tasks_testkit::{eventually, WAIT};

/// Tasks per round; also the quota, so a round leaking even one slot fails the next.
const ROUND: usize = 20;

fn params() -> CreateParams {
    CreateParams {
        caller: Caller::anonymous("owner-a", Some("session-a".into())),
        method: "tools/call".into(),
        request: json!({"name": "t", "arguments": {"n": 1}}),
        requested_ttl: None,
        client_capabilities: json!({"elicitation": {}}),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_tasks_leave_nothing_running_here() {
    for backend in ["memory", "sqlite"] {
        let dir = tempfile::tempdir().unwrap();
        let store = open_store(backend, dir.path()).await;
        let config = EngineConfig {
            max_active_tasks: ROUND,
            max_tasks_per_principal: ROUND,
            ..EngineConfig::default()
        };
        let engine = Engine::start(store, config, EngineHooks::default())
            .await
            .unwrap();
        let mut events = engine.subscribe();
        for round in 0..3 {
            let mut pending = HashSet::<TaskId>::new();
            for _ in 0..ROUND {
                let record = engine
                    .create(params(), |_ctx| {
                        Box::pin(async {
                            Outcome::Result {
                                value: json!({"content": []}),
                            }
                        })
                    })
                    .await
                    .unwrap_or_else(|e| {
                        panic!("{backend}, round {round}: a finished task kept its slot: {e}")
                    });
                pending.insert(record.id);
            }
            while !pending.is_empty() {
                if let TaskEvent::Changed(record) = events.recv().await.unwrap() {
                    if record.status.is_terminal() {
                        pending.remove(&record.id);
                    }
                }
            }
            // The running entry goes right after the outcome is recorded.
            eventually(WAIT, || async { engine.running_count() == 0 }).await;
        }
    }
}

/// The store of `backend` ("memory", or "sqlite": a file in `dir`).
async fn open_store(backend: &str, dir: &std::path::Path) -> Arc<dyn TaskStore> {
    if backend == "memory" {
        Arc::new(MemoryStore::new())
    } else {
        let url = format!("sqlite://{}", dir.join("t.db").display());
        Arc::new(SqliteStore::open(&url).await.unwrap())
    }
}

/// Work that runs until it is stopped.
fn forever(_ctx: mcp_tasks_engine::TaskContext) -> mcp_tasks_engine::Work {
    Box::pin(std::future::pending())
}

/// Launched, committed from provisional work, or made a task when the call outlived its
/// window: each running task is exactly one tokio task (the work and the recording of
/// its end), with nothing else left running for it once the creation is done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_task_is_one_tokio_task_however_it_started() {
    let engine = Engine::start(
        Arc::new(MemoryStore::new()),
        EngineConfig::default(),
        EngineHooks::default(),
    )
    .await
    .unwrap();
    let alive = || {
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks()
    };
    let before = alive();
    const EACH: usize = 5;
    for _ in 0..EACH {
        engine.create(params(), forever).await.unwrap();
        let provisional = engine.begin(params()).unwrap().start(forever);
        provisional.commit().await.unwrap();
        let provisional = engine.begin(params()).unwrap().start(forever);
        match provisional.settle(std::time::Duration::ZERO).await.unwrap() {
            mcp_tasks_engine::Settled::Task(_) => {}
            other => panic!("pending work settled as {other:?}"),
        }
    }
    assert_eq!(engine.running_count(), 3 * EACH);
    eventually(WAIT, || async { alive() == before + 3 * EACH }).await;
}

/// A heartbeat looks at the tasks running here only on a store other processes write:
/// on the in-memory store the change feed already sees every write, and re-reading a
/// million running tasks every heartbeat cost a core. On SQLite it looks at each
/// task's mark on the change board, in memory, and re-reads a task only the first time
/// it sees it. And a heartbeat is one store write per process, whatever the number of
/// running tasks: no lease is renewed task by task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_cost_no_store_work_per_running_task() {
    const RUNNING: usize = 30;
    let dir = tempfile::tempdir().unwrap();
    for backend in ["memory", "sqlite"] {
        let store = open_store(backend, dir.path()).await;
        let config = EngineConfig {
            heartbeat: std::time::Duration::from_millis(10),
            reread_interval: std::time::Duration::from_millis(10),
            lease_ttl: Some(std::time::Duration::from_secs(30)),
            ..EngineConfig::default()
        };
        let calls = Arc::new(StoreCalls::default());
        let hooks = EngineHooks::default().store_observer(Arc::clone(&calls) as _);
        let engine = Engine::start(store, config, hooks).await.unwrap();
        for _ in 0..RUNNING {
            engine.create(params(), forever).await.unwrap();
        }
        let mut activity = engine.activity();
        // Counted from now, once all run (the services started with the engine).
        let start = *activity.borrow_and_update();
        let beats_before = calls.count("heartbeat");
        // The heartbeat runs on both (leases are on); the change bridge's look
        // only where another process may write.
        tokio::time::timeout(
            WAIT,
            activity.wait_for(|a| {
                a.lease_renewal_rounds >= start.lease_renewal_rounds + 4
                    && (backend == "memory" || a.reread_rounds >= start.reread_rounds + 4)
            }),
        )
        .await
        .expect("maintenance stopped")
        .unwrap();
        let rounds = activity.borrow().lease_renewal_rounds - start.lease_renewal_rounds;
        // Of four rounds, at most the first two began before every task was seen.
        let rereads = activity.borrow().rereads - start.rereads;
        let skips = activity.borrow().reread_skips - start.reread_skips;
        if backend == "memory" {
            assert_eq!(rereads, 0, "memory: heartbeats re-read running tasks");
        } else {
            assert!(
                rereads <= RUNNING as u64 && skips >= 2 * RUNNING as u64,
                "sqlite: {rereads} re-reads and {skips} unchanged in 4 rounds of {RUNNING} tasks"
            );
        }
        let beats = calls.count("heartbeat") - beats_before;
        assert!(
            beats >= 3 && beats <= rounds + 1,
            "{backend}: {beats} heartbeat writes in {rounds} rounds"
        );
        assert_eq!(
            calls.count("renew_lease"),
            0,
            "{backend}: a running task costs no write per heartbeat"
        );
        engine.shutdown().await;
    }
}

/// On SQLite, once the change bridge has seen them, a thousand running tasks cost no
/// store read per round: each round compares their marks on the change board.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_running_tasks_cost_no_store_read_per_round_on_sqlite() {
    const RUNNING: usize = 1000;
    let dir = tempfile::tempdir().unwrap();
    let store = open_store("sqlite", dir.path()).await;
    let config = EngineConfig {
        reread_interval: std::time::Duration::from_millis(20),
        max_active_tasks: RUNNING,
        max_tasks_per_principal: RUNNING,
        max_tasks_per_session: RUNNING,
        ..EngineConfig::default()
    };
    let calls = Arc::new(StoreCalls::default());
    let hooks = EngineHooks::default().store_observer(Arc::clone(&calls) as _);
    let engine = Arc::new(Engine::start(store, config, hooks).await.unwrap());
    let creates = (0..RUNNING).map(|_| {
        let engine = Arc::clone(&engine);
        tokio::spawn(async move { engine.create(params(), forever).await.unwrap() })
    });
    for create in creates.collect::<Vec<_>>() {
        create.await.unwrap();
    }
    let mut activity = engine.activity();
    let created = *activity.borrow_and_update();
    // Two rounds later every task has been seen once (the first may have begun before).
    let wait_rounds = |after: u64| {
        let mut activity = engine.activity();
        async move {
            tokio::time::timeout(WAIT, activity.wait_for(|a| a.reread_rounds >= after))
                .await
                .expect("the change bridge stopped")
                .map(|a| *a)
                .unwrap()
        }
    };
    let seen = wait_rounds(created.reread_rounds + 2).await;
    let gets = calls.count("get");
    let later = wait_rounds(seen.reread_rounds + 3).await;
    let rounds = later.reread_rounds - seen.reread_rounds;
    assert_eq!(
        later.rereads - seen.rereads,
        0,
        "{rounds} rounds of {RUNNING} unchanged tasks re-read some"
    );
    assert!(
        later.reread_skips - seen.reread_skips >= rounds.saturating_sub(1) * RUNNING as u64,
        "{} unchanged in {rounds} rounds",
        later.reread_skips - seen.reread_skips
    );
    assert_eq!(calls.count("get"), gets, "the rounds read the store");
    engine.shutdown().await;
}

/// Counts the store's operations by name.
#[derive(Debug, Default)]
struct StoreCalls(std::sync::Mutex<std::collections::HashMap<&'static str, u64>>);

impl StoreCalls {
    fn count(&self, operation: &str) -> u64 {
        self.0.lock().unwrap().get(operation).copied().unwrap_or(0)
    }
}

impl mcp_tasks_store::StoreObserver for StoreCalls {
    fn observe(
        &self,
        operation: &'static str,
        _backend: &'static str,
        _took: std::time::Duration,
        _ok: bool,
    ) {
        *self.0.lock().unwrap().entry(operation).or_default() += 1;
    }
}
