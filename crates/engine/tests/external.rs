//! External jobs: a tool starts a job in another system (here a fake one, see
//! `external_support`) and the engine polls it when the task is read, records its
//! progress and outcome, and cancels it.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;
mod external_support;

use external_support::*;
use mcp_tasks_engine::EXTERNAL_STARTED_MESSAGE;
use mcp_tasks_engine::{EngineConfig, Outcome};
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::MemoryStore;
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

#[tokio::test(start_paused = true)]
async fn reads_poll_the_job_and_record_its_progress_and_outcome() {
    let fake = Fake::new();
    let engine = memory_engine(Duration::from_millis(50), &fake).await;
    let (record, state) = start(&engine, &fake).await;
    assert_eq!(record.status, TaskStatus::Working);
    assert_eq!(
        record.status_message.as_deref(),
        Some(EXTERNAL_STARTED_MESSAGE)
    );
    assert_eq!(record.external.as_ref().unwrap().kind, KIND);
    // No process holds the task once the start is over (the start's work is
    // forgotten just after the job was attached).
    eventually(WAIT, || async { engine.running_count() == 0 }).await;

    // Progress: a new state and message are stored.
    fake.set(&state, Job::Running { page: 3 });
    let progressed = read_until(&engine, &record.id, |r| {
        r.status_message.as_deref() != Some(EXTERNAL_STARTED_MESSAGE)
    })
    .await;
    assert_eq!(progressed.status, TaskStatus::Working);
    assert_eq!(progressed.status_message.as_deref(), Some("3 pages read"));
    assert_eq!(
        progressed.external.as_ref().unwrap().state,
        json!({"job": state["job"], "page": 3})
    );
    assert!(progressed.version > record.version);

    // Done: the outcome is recorded.
    fake.set(&state, Job::Done(rows("42 rows")));
    let done = read_until(&engine, &record.id, |r| r.status.is_terminal()).await;
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.outcome.as_deref(), Some(&rows("42 rows")));
    let waited = engine.wait_terminal(&record.id, &caller()).await.unwrap();
    assert_eq!(waited, done);

    // Terminal tasks are not polled any more.
    let polls = fake.polls();
    // Nothing signals a poll that does not happen: let the poll interval (of the
    // stored change time, on the engine's clock) pass on paused time, so that one
    // would be due.
    tokio::time::advance(Duration::from_millis(60)).await;
    engine.get(&record.id, &caller()).await.unwrap();
    assert_eq!(fake.polls(), polls);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_jobs_fail_the_task_and_tool_errors_are_flagged() {
    let fake = Fake::new();
    let engine = engine_with(
        Arc::new(mcp_tasks_store::MemoryStore::new()),
        config(Duration::from_millis(20)),
        mcp_tasks_engine::EngineHooks::default().reader(Arc::new(IsErrorReader)),
        &fake,
    )
    .await;
    let (a, a_state) = start(&engine, &fake).await;
    let (b, b_state) = start(&engine, &fake).await;
    let error = Outcome::Error {
        code: -32603,
        message: "the query ran out of memory".into(),
        data: None,
    };
    fake.set(&a_state, Job::Done(error.clone()));
    let tool_error = Outcome::Result {
        value: json!({"content": [{"type": "text", "text": "syntax error"}], "isError": true}),
    };
    fake.set(&b_state, Job::Done(tool_error.clone()));
    let a = engine.wait_terminal(&a.id, &caller()).await.unwrap();
    assert_eq!(
        (a.status, a.outcome.map(|o| *o)),
        (TaskStatus::Failed, Some(error.clone()))
    );
    // Recorded exactly as a tool error of in-process work: stored `completed` with the
    // tool-error flag of the view (the 2025-11-25 codec renders that as `failed`).
    let b = engine.wait_terminal(&b.id, &caller()).await.unwrap();
    assert!(engine.view(&b).tool_error);
    assert_eq!(
        b.status_message.as_deref(),
        Some("the tool reported an error: syntax error")
    );
    assert_eq!(
        (b.status, b.outcome.map(|o| *o)),
        (TaskStatus::Completed, Some(tool_error))
    );
}

#[tokio::test(start_paused = true)]
async fn polls_are_rate_limited_to_one_per_interval_and_single_flight() {
    let fake = Fake::new();
    let gate = fake.hold_polls();
    let interval = Duration::from_millis(1_000);
    let engine = memory_engine(interval, &fake).await;
    let (record, _) = start(&engine, &fake).await;
    // Freshly attached: the change is younger than the interval, nobody polls yet.
    for _ in 0..10 {
        engine.get(&record.id, &caller()).await.unwrap();
    }
    assert_eq!(fake.polls(), 0, "polled a job that just started");

    // A poll is due only once an interval passed since the stored change (a
    // timestamp in the record, from the engine's clock, which paused time drives).
    tokio::time::advance(interval + Duration::from_millis(50)).await;
    let began = Instant::now();
    // Concurrent reads while the poll is held: one polls, the others get the record.
    let reads: Vec<_> = (0..20)
        .map(|_| {
            let engine = engine.clone();
            let id = record.id.clone();
            tokio::spawn(async move { engine.get(&id, &caller()).await.unwrap() })
        })
        .collect();
    eventually(WAIT, || async {
        reads.iter().filter(|r| r.is_finished()).count() == 19
    })
    .await;
    assert_eq!(fake.polls(), 1);
    // And sequential ones meanwhile, within the same interval.
    for _ in 0..20 {
        engine.get(&record.id, &caller()).await.unwrap();
    }
    gate.close();
    for read in reads {
        assert_eq!(read.await.unwrap().status, TaskStatus::Working);
    }
    assert!(
        began.elapsed() < interval,
        "the reads took longer than a poll interval; the test proves nothing"
    );
    assert_eq!(fake.polls(), 1);

    // A poll interval later, reads poll again.
    eventually(WAIT, || async {
        engine.get(&record.id, &caller()).await.unwrap();
        fake.polls() == 2
    })
    .await;
    assert!(
        began.elapsed() >= interval,
        "polled again within the interval"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_terminal_polls_until_the_job_finishes() {
    let fake = Fake::new();
    let engine = memory_engine(Duration::from_millis(50), &fake).await;
    let (record, state) = start(&engine, &fake).await;
    let waiter = {
        let engine = engine.clone();
        let id = record.id.clone();
        tokio::spawn(async move { engine.wait_terminal(&id, &caller()).await })
    };
    eventually(WAIT, || async { fake.polls() >= 2 }).await;
    assert!(!waiter.is_finished());
    fake.set(&state, Job::Done(rows("done")));
    let done = tokio::time::timeout(Duration::from_secs(3), waiter)
        .await
        .expect("wait_terminal did not notice the finished job")
        .unwrap()
        .unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.outcome.as_deref(), Some(&rows("done")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_terminal_from_before_the_job_started_polls_it() {
    let fake = Fake::new();
    let engine = memory_engine(Duration::from_millis(50), &fake).await;
    let system = fake.clone();
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let record = engine
        .create_external(params(), KIND, move |_ctx| {
            Box::pin(async move {
                let _ = released.await;
                let state = system.start_job();
                // A job so quick it is done before the engine first polls it.
                system.set(&state, Job::Done(rows("quick")));
                Ok(state)
            })
        })
        .await
        .unwrap();
    // Waiting starts while the job is not attached yet: no poll interval applies then,
    // the wait must switch to polling once the job is attached.
    let who = caller();
    let waiting = engine.wait_terminal(&record.id, &who);
    tokio::pin!(waiting);
    assert!(futures::poll!(&mut waiting).is_pending());
    release.send(()).unwrap();
    let done = tokio::time::timeout(Duration::from_secs(3), waiting)
        .await
        .expect("wait_terminal did not poll the job attached while it waited")
        .unwrap();
    assert_eq!(done.outcome.as_deref(), Some(&rows("quick")));
}

#[tokio::test(start_paused = true)]
async fn cancel_cancels_the_job_and_a_failed_job_cancel_still_cancels_the_task() {
    let fake = Fake::new();
    let engine = memory_engine(Duration::from_millis(50), &fake).await;
    let (record, state) = start(&engine, &fake).await;
    let cancelled = engine.cancel(&record.id, &caller()).await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert_eq!(
        cancelled.status_message.as_deref(),
        Some("cancelled by the client")
    );
    assert_eq!(*fake.cancels.lock().unwrap(), vec![state.clone()]);
    assert_eq!(fake.job(&state), Some(Job::Cancelled));
    // The outcome stays the cancellation, whatever a later read finds. Nothing
    // signals a poll that does not happen: let the poll interval pass on paused time,
    // so that one would be due.
    tokio::time::advance(Duration::from_millis(60)).await;
    let read = engine.get(&record.id, &caller()).await.unwrap();
    assert_eq!(read, cancelled);

    *fake.cancel_error.lock().unwrap() = Some("the cluster is unreachable".into());
    let (record, state) = start(&engine, &fake).await;
    let cancelled = engine.cancel(&record.id, &caller()).await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    let message = cancelled.status_message.unwrap();
    assert!(
        message.contains("the cluster is unreachable"),
        "the reason is not in the status message: {message}"
    );
    assert_eq!(fake.cancels.lock().unwrap().last(), Some(&state));
    assert_eq!(fake.job(&state), Some(Job::Running { page: 0 }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_started_after_its_task_was_cancelled_is_cancelled() {
    let fake = Fake::new();
    let engine = memory_engine(Duration::from_millis(50), &fake).await;
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let system = fake.clone();
    let record = engine
        .create_external(params(), KIND, move |_ctx| {
            Box::pin(async move {
                // Ignores cancellation, as a blocking job submission would.
                let _ = released.await;
                Ok(system.start_job())
            })
        })
        .await
        .unwrap();
    let cancelled = engine.cancel(&record.id, &caller()).await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    release.send(()).unwrap();
    eventually(WAIT, || async { !fake.cancels.lock().unwrap().is_empty() }).await;
    let state = fake.cancels.lock().unwrap()[0].clone();
    assert_eq!(fake.job(&state), Some(Job::Cancelled));
    let read = engine.get(&record.id, &caller()).await.unwrap();
    assert_eq!(read.status, TaskStatus::Cancelled);
    assert_eq!(
        read.external, None,
        "a job of a cancelled task was attached"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_that_fails_or_panics_fails_the_task() {
    let fake = Fake::new();
    let engine = memory_engine(Duration::from_millis(50), &fake).await;
    let refused = Outcome::Error {
        code: -32602,
        message: "the query does not parse".into(),
        data: None,
    };
    let outcome = refused.clone();
    let record = engine
        .create_external(params(), KIND, move |_ctx| {
            Box::pin(async move { Err(outcome) })
        })
        .await
        .unwrap();
    let done = engine.wait_terminal(&record.id, &caller()).await.unwrap();
    assert_eq!(done.status, TaskStatus::Failed);
    assert_eq!(done.outcome.as_deref(), Some(&refused));
    assert_eq!(done.external, None);

    let record = engine
        .create_external(params(), KIND, |_ctx| {
            Box::pin(async move {
                if std::hint::black_box(true) {
                    panic!("the job client crashed");
                }
                Ok(json!({}))
            })
        })
        .await
        .unwrap();
    let done = engine.wait_terminal(&record.id, &caller()).await.unwrap();
    assert_eq!(done.status, TaskStatus::Failed);
    assert!(
        matches!(
            done.outcome.as_deref(),
            Some(Outcome::Failed { failure: mcp_tasks_engine::Failure::ToolPanicked, message })
                if message.contains("crashed")
        ),
        "{done:?}"
    );
    assert_eq!(fake.polls(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poll_that_hangs_does_not_hold_up_reads() {
    let fake = Fake::new();
    let config = EngineConfig {
        external_call_timeout: Duration::from_millis(200),
        ..config(Duration::from_millis(20))
    };
    let engine = engine_on(Arc::new(MemoryStore::new()), config, &fake).await;
    let (record, _) = start(&engine, &fake).await;
    // The external system stops answering: polls never return.
    let _gate = fake.hold_polls();
    // Read until a read (once the poll is due) tried to poll; none may hang.
    eventually(WAIT, || async {
        let began = Instant::now();
        let read = engine.get(&record.id, &caller()).await.unwrap();
        assert_eq!(read.status, TaskStatus::Working);
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "tasks/get waited {:?} for a poll that never answers",
            began.elapsed()
        );
        fake.polls() >= 1
    })
    .await;
}
