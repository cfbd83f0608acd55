//! The heartbeat under paused time: a process that keeps beating keeps its task long
//! after the lease its creation granted (no per-task renewal), and a process that could
//! not beat for a whole alive window (frozen, as a paused VM is) stops its work at once
//! when it wakes, since another process may have taken the task over.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_engine::{Engine, EngineConfig, EngineHooks, Outcome, LOST_RUNNER_MESSAGE};
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::MemoryStore;
use std::sync::Arc;
use std::time::Duration;

mod common;

use common::{caller, params};
use mcp_tasks_testkit::WAIT;

/// Tells when the work holding it is dropped (stopped or aborted).
struct Dropped(Option<tokio::sync::oneshot::Sender<()>>);

impl Drop for Dropped {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

#[tokio::test]
async fn a_beating_process_keeps_its_task_and_a_frozen_one_stops_its_work() {
    let _frozen = common::freeze(false);
    const ALIVE: Duration = Duration::from_millis(300);
    let config = EngineConfig {
        lease_ttl: Some(ALIVE),
        heartbeat: Duration::from_millis(100),
        rescue_interval: Duration::from_millis(100),
        ..EngineConfig::default()
    };
    let engine = Engine::start(Arc::new(MemoryStore::new()), config, EngineHooks::default())
        .await
        .unwrap();
    let (tx, mut dropped) = tokio::sync::oneshot::channel();
    let guard = Dropped(Some(tx));
    let record = engine
        .create(params(), move |_ctx| {
            Box::pin(async move {
                let _guard = guard;
                futures::future::pending::<Outcome>().await
            })
        })
        .await
        .unwrap();

    // Ten alive windows in small steps: the heartbeat alone keeps the task here.
    for _ in 0..60 {
        tokio::time::advance(Duration::from_millis(50)).await;
        tokio::task::yield_now().await;
    }
    let task = engine.get(&record.id, &caller()).await.unwrap();
    assert_eq!(task.status, TaskStatus::Working);
    assert!(dropped.try_recv().is_err(), "the work was stopped");
    assert_eq!(engine.activity().borrow().lease_losses, 0);

    // Frozen for three alive windows: on waking, the work stops at once and the task
    // (not resumable) is failed by whoever takes it, here this very process.
    tokio::time::advance(ALIVE * 3).await;
    tokio::time::timeout(WAIT, &mut dropped)
        .await
        .expect("the work of a process that missed its alive window still runs")
        .unwrap();
    assert!(engine.activity().borrow().lease_losses >= 1);
    let ended = tokio::time::timeout(WAIT, engine.wait_terminal(&record.id, &caller()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ended.status, TaskStatus::Failed);
    assert_eq!(ended.status_message.as_deref(), Some(LOST_RUNNER_MESSAGE));
    engine.shutdown().await;
}
