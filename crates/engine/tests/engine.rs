//! Engine behaviour on real stores: races, recovery after a restart, waiters, events.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_engine::{
    Caller, Engine, EngineConfig, EngineError, EngineHooks, Outcome, TaskEvent,
};
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::{MemoryStore, SqliteStore, TaskStore};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

mod common;

use common::{caller, params};

use mcp_tasks_testkit::{eventually, WAIT};

fn done(text: &str) -> Outcome {
    Outcome::Result {
        value: json!({"content": [{"type": "text", "text": text}]}),
    }
}

async fn memory_engine() -> Engine {
    Engine::start(
        Arc::new(MemoryStore::new()),
        EngineConfig::default(),
        EngineHooks::default(),
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_racing_completion_has_exactly_one_winner() {
    for backend in ["memory", "sqlite"] {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn TaskStore> = if backend == "memory" {
            Arc::new(MemoryStore::new())
        } else {
            Arc::new(
                SqliteStore::open(&format!("sqlite://{}", dir.path().join("t.db").display()))
                    .await
                    .unwrap(),
            )
        };
        let engine = Engine::start(store, EngineConfig::default(), EngineHooks::default())
            .await
            .unwrap();
        for _ in 0..100 {
            let (tx, rx) = oneshot::channel::<()>();
            let record = engine
                .create(params(), move |_ctx| {
                    Box::pin(async move {
                        let _ = rx.await;
                        done("finished")
                    })
                })
                .await
                .unwrap();
            let id = record.id.clone();
            let e2 = engine.clone();
            let canceller = tokio::spawn(async move { e2.cancel(&id, &caller()).await });
            let _ = tx.send(());
            let cancel_result = canceller.await.unwrap();
            let final_record = engine.wait_terminal(&record.id, &caller()).await.unwrap();
            match cancel_result {
                Ok(r) => {
                    assert_eq!(r.status, TaskStatus::Cancelled);
                    assert_eq!(
                        final_record.status,
                        TaskStatus::Cancelled,
                        "{backend}: cancel won, must stay cancelled"
                    );
                }
                Err(EngineError::AlreadyTerminal(s)) => {
                    assert_eq!(s, TaskStatus::Completed);
                    assert_eq!(
                        final_record.status,
                        TaskStatus::Completed,
                        "{backend}: completion won"
                    );
                }
                Err(e) => panic!("{backend}: unexpected {e}"),
            }
            // whatever happens later, the status never moves again
            tokio::task::yield_now().await;
            assert_eq!(
                engine.get(&record.id, &caller()).await.unwrap().status,
                final_record.status
            );
        }
    }
}

#[tokio::test]
async fn restart_fails_tasks_left_running_by_the_previous_process() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tasks.db").display());
    // A file may be shared by live processes, so a task is an orphan only once the
    // lease of the process that ran it has run out.
    const LEASE: Duration = Duration::from_millis(100);
    let config = || EngineConfig {
        lease_ttl: Some(LEASE),
        ..EngineConfig::default()
    };
    let (running_id, done_id) = {
        let engine = Engine::start(
            Arc::new(SqliteStore::open(&url).await.unwrap()),
            config(),
            EngineHooks::default(),
        )
        .await
        .unwrap();
        let finished = engine
            .create(params(), |_ctx| Box::pin(async { done("kept") }))
            .await
            .unwrap();
        engine.wait_terminal(&finished.id, &caller()).await.unwrap();
        let running = engine
            .create(params(), |_ctx| {
                Box::pin(futures::future::pending::<Outcome>())
            })
            .await
            .unwrap();
        // The process stops: no lease is renewed after this.
        engine.shutdown().await;
        (running.id, finished.id)
    };
    // The lease is an expiry written in the file, on the engine's clock: paused time
    // (frozen against jumps while SQLite works) makes it pass.
    let _frozen = common::freeze(true);
    tokio::time::advance(LEASE + Duration::from_millis(50)).await;
    // a new engine on the same file plays the restarted process
    let engine = Engine::start(
        Arc::new(SqliteStore::open(&url).await.unwrap()),
        config(),
        EngineHooks::default(),
    )
    .await
    .unwrap();
    // With leases the start takes over what a process that is no longer alive left
    // (its tool is not resumable: failed) before it answers anything.
    let interrupted = engine.get(&running_id, &caller()).await.unwrap();
    assert_eq!(interrupted.status, TaskStatus::Failed);
    assert_eq!(
        interrupted.status_message.as_deref(),
        Some(mcp_tasks_engine::LOST_RUNNER_MESSAGE)
    );
    assert!(matches!(
        interrupted.outcome.as_deref(),
        Some(Outcome::Failed {
            failure: mcp_tasks_engine::Failure::LeaseLost,
            ..
        })
    ));
    let kept = engine.get(&done_id, &caller()).await.unwrap();
    assert_eq!(kept.status, TaskStatus::Completed);
    assert_eq!(kept.outcome.as_deref(), Some(&done("kept")));
}

#[tokio::test]
async fn waiters_are_released_by_the_completion_event() {
    let engine = memory_engine().await;
    let (tx, rx) = oneshot::channel::<()>();
    let record = engine
        .create(params(), move |_ctx| {
            Box::pin(async move {
                let _ = rx.await;
                done("ok")
            })
        })
        .await
        .unwrap();
    let e2 = engine.clone();
    let id = record.id.clone();
    let waiter = tokio::spawn(async move { e2.wait_terminal(&id, &caller()).await });
    tokio::task::yield_now().await;
    assert!(!waiter.is_finished());
    tx.send(()).unwrap();
    let r = waiter.await.unwrap().unwrap();
    assert_eq!(r.status, TaskStatus::Completed);
    assert_eq!(r.outcome.as_deref(), Some(&done("ok")));
}

#[tokio::test]
async fn status_messages_are_stored_and_published() {
    let engine = memory_engine().await;
    let mut events = engine.subscribe();
    let (tx, rx) = oneshot::channel::<()>();
    let record = engine
        .create(params(), move |ctx| {
            Box::pin(async move {
                ctx.set_status_message("step 1 of 2").await;
                let _ = rx.await;
                done("ok")
            })
        })
        .await
        .unwrap();
    loop {
        match events.recv().await.unwrap() {
            TaskEvent::Changed(r) if r.status_message.as_deref() == Some("step 1 of 2") => {
                assert_eq!(r.status, TaskStatus::Working);
                break;
            }
            _ => {}
        }
    }
    let got = engine.get(&record.id, &caller()).await.unwrap();
    assert_eq!(got.status_message.as_deref(), Some("step 1 of 2"));
    tx.send(()).unwrap();
}

/// The grace period is a tokio timer: with time paused, a realistic one passes at once
/// (the runtime jumps to it when nothing else can run) and its length can be checked.
#[tokio::test(start_paused = true)]
async fn cancelled_work_that_ignores_the_token_is_aborted_after_the_grace_period() {
    const GRACE: Duration = Duration::from_secs(30);
    let config = EngineConfig {
        cancel_grace: GRACE,
        ..EngineConfig::default()
    };
    let engine = Engine::start(Arc::new(MemoryStore::new()), config, EngineHooks::default())
        .await
        .unwrap();
    let (dropped_tx, dropped_rx) = oneshot::channel::<()>();
    struct OnDrop(Option<oneshot::Sender<()>>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            if let Some(tx) = self.0.take() {
                let _ = tx.send(());
            }
        }
    }
    let record = engine
        .create(params(), move |_ctx| {
            Box::pin(async move {
                let _guard = OnDrop(Some(dropped_tx));
                futures::future::pending::<Outcome>().await
            })
        })
        .await
        .unwrap();
    engine.cancel(&record.id, &caller()).await.unwrap();
    let cancelled_at = tokio::time::Instant::now();
    dropped_rx
        .await
        .expect("the work future was dropped (aborted)");
    assert!(
        cancelled_at.elapsed() >= GRACE,
        "aborted {:?} after the cancel, before the grace period ended",
        cancelled_at.elapsed()
    );
    assert_eq!(
        engine.get(&record.id, &caller()).await.unwrap().status,
        TaskStatus::Cancelled
    );
}

/// A task's question waits as long as the task lives: the input timeout bounds only
/// plain calls (which hold a connection), not tasks (durable execution, issue #30).
#[tokio::test(start_paused = true)]
async fn a_task_question_outlives_the_input_timeout() {
    const TIMEOUT: Duration = Duration::from_secs(600);
    let config = EngineConfig {
        input_timeout: TIMEOUT,
        ..EngineConfig::default()
    };
    let engine = Engine::start(Arc::new(MemoryStore::new()), config, EngineHooks::default())
        .await
        .unwrap();
    let record = engine
        .create(params(), move |ctx| {
            Box::pin(async move {
                let answer = common::ask(&ctx, "still there?").await;
                done(&format!("{answer:?}"))
            })
        })
        .await
        .unwrap();
    eventually(WAIT, || async {
        engine.get(&record.id, &caller()).await.unwrap().status == TaskStatus::InputRequired
    })
    .await;
    tokio::time::advance(TIMEOUT * 3).await;
    let waiting = engine.get(&record.id, &caller()).await.unwrap();
    assert_eq!(waiting.status, TaskStatus::InputRequired, "{waiting:?}");
}

#[tokio::test]
async fn foreign_tasks_look_unknown_to_authenticated_callers() {
    let engine = memory_engine().await;
    let owner = Caller::authenticated("alice", None);
    let other = Caller::authenticated("bob", None);
    let mut p = params();
    p.caller = owner.clone();
    let r = engine
        .create(p, |_ctx| Box::pin(async { done("x") }))
        .await
        .unwrap();
    assert!(engine.get(&r.id, &owner).await.is_ok());
    assert!(matches!(
        engine.get(&r.id, &other).await,
        Err(EngineError::NotFound)
    ));
    assert!(matches!(
        engine.cancel(&r.id, &other).await,
        Err(EngineError::NotFound)
    ));
    assert!(engine.list(&other, None).await.unwrap().tasks.is_empty());
}

#[tokio::test]
async fn several_questions_can_be_outstanding_and_answers_count_once() {
    let config = EngineConfig {
        max_input_requests: 2,
        ..EngineConfig::default()
    };
    let engine = Engine::start(Arc::new(MemoryStore::new()), config, EngineHooks::default())
        .await
        .unwrap();
    let (seen_tx, seen_rx) = oneshot::channel::<String>();
    let reader = engine.clone();
    let record = engine
        .create(params(), move |ctx| {
            Box::pin(async move {
                let a = common::ask(&ctx, "first?");
                let b = common::ask(&ctx, "second?");
                let id = ctx.task_id().cloned().unwrap();
                let third = async {
                    // once the first two are stored, try a third
                    eventually(WAIT, || async {
                        let r = reader.get(&id, &caller()).await.unwrap();
                        r.input_requests.len() == 2
                    })
                    .await;
                    let refused = common::ask(&ctx, "third?").await;
                    let _ = seen_tx.send(format!("{:?}", refused.err()));
                };
                let (a, b, ()) = tokio::join!(a, b, third);
                assert_eq!((a.unwrap(), b.unwrap()), ("accept".into(), "accept".into()));
                done("both answered")
            })
        })
        .await
        .unwrap();
    let limit = seen_rx.await.unwrap();
    assert!(limit.contains("TooMany"), "{limit}");
    let r = engine.get(&record.id, &caller()).await.unwrap();
    assert_eq!(r.status, TaskStatus::InputRequired);
    let keys: Vec<String> = r.input_requests.keys().cloned().collect();
    assert_eq!(keys.len(), 2);
    let accept = Outcome::Result {
        value: json!({"action": "accept", "content": {}}),
    };
    assert!(engine
        .answer_input(&record.id, &keys[0], accept.clone(), &caller())
        .await
        .unwrap());
    assert!(
        !engine
            .answer_input(&record.id, &keys[0], accept.clone(), &caller())
            .await
            .unwrap(),
        "second answer ignored"
    );
    let r = engine.get(&record.id, &caller()).await.unwrap();
    assert_eq!(
        r.status,
        TaskStatus::InputRequired,
        "one question still open"
    );
    assert_eq!(
        r.input_requests
            .values()
            .filter(|q| q.is_outstanding())
            .count(),
        1
    );
    assert!(engine
        .answer_input(&record.id, &keys[1], accept, &caller())
        .await
        .unwrap());
    let end = engine.wait_terminal(&record.id, &caller()).await.unwrap();
    assert_eq!(end.status, TaskStatus::Completed);
    assert!(end.input_requests.is_empty());
}

/// Work whose future cannot even be made (the handler panics before returning it)
/// fails its task as a crash, whether the task was launched (committed first) or started provisionally.
#[tokio::test]
async fn work_that_panics_while_being_made_fails_its_task() {
    let engine = Engine::start(
        Arc::new(MemoryStore::new()),
        EngineConfig::default(),
        EngineHooks::default(),
    )
    .await
    .unwrap();
    fn boom(_ctx: mcp_tasks_engine::TaskContext) -> mcp_tasks_engine::Work {
        panic!("deliberate panic while making the work")
    }
    let launched = engine.create(params(), boom).await.unwrap();
    let provisional = engine
        .begin(params())
        .unwrap()
        .start(boom)
        .commit()
        .await
        .unwrap();
    for id in [launched.id, provisional.id] {
        let failed = eventually(WAIT, || async {
            let r = engine.store().get(&id, chrono::Utc::now()).await.unwrap()?;
            (r.status == TaskStatus::Failed).then_some(r)
        })
        .await;
        match failed.outcome.as_deref() {
            Some(mcp_tasks_engine::Outcome::Failed { failure, .. }) => {
                assert_eq!(*failure, mcp_tasks_engine::Failure::ToolPanicked)
            }
            other => panic!("{other:?}"),
        }
    }
}

/// `TaskContext::task_created` waits for the task's commit: work started provisionally
/// (it runs before its task exists) finds its task in the store once the wait ends;
/// work of a launched task is told at once.
#[tokio::test]
async fn work_learns_when_its_task_is_committed() {
    let engine = memory_engine().await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let work = {
        let (tx, engine) = (tx.clone(), engine.clone());
        move |ctx: mcp_tasks_engine::TaskContext| -> mcp_tasks_engine::Work {
            Box::pin(async move {
                let id = ctx
                    .task_id()
                    .cloned()
                    .expect("a task id, even before the commit");
                let stored_before = engine.store().get(&id, chrono::Utc::now()).await.unwrap();
                let created = ctx.task_created().await;
                let stored_after = engine.store().get(&id, chrono::Utc::now()).await.unwrap();
                let _ = tx.send((stored_before.is_some(), created, stored_after.is_some()));
                done("ok")
            })
        }
    };
    let settled = engine
        .begin(params())
        .unwrap()
        .start(work)
        .settle(Duration::from_millis(20))
        .await
        .unwrap();
    assert!(matches!(settled, mcp_tasks_engine::Settled::Task(_)));
    let seen = tokio::time::timeout(WAIT, rx.recv()).await.unwrap();
    assert_eq!(seen, Some((false, true, true)));

    let launched = move |ctx: mcp_tasks_engine::TaskContext| -> mcp_tasks_engine::Work {
        Box::pin(async move {
            let _ = tx.send((true, ctx.task_created().await, true));
            done("ok")
        })
    };
    engine.create(params(), launched).await.unwrap();
    let seen = tokio::time::timeout(WAIT, rx.recv()).await.unwrap();
    assert_eq!(seen, Some((true, true, true)));
}
