//! External jobs: a tool starts a job in another system (here a fake one, a map of job
//! states behind a mutex) and the engine polls it when the task is read, cancels it,
//! and keeps serving it across a restart and from another replica.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use async_trait::async_trait;
use mcp_tasks_engine::external::EXTERNAL_STARTED_MESSAGE;
use mcp_tasks_engine::{
    Caller, CreateParams, Engine, EngineConfig, ExternalPoller, JobPoll, Outcome, TaskRecord,
};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{MemoryStore, SqliteStore, TaskStore};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

mod common;

use common::{eventually, WAIT};

const KIND: &str = "query";

/// A job of the fake external system.
#[derive(Debug, Clone, PartialEq)]
enum Job {
    Running { page: u64 },
    Done(Outcome),
    Cancelled,
}

/// The fake external system, and its poller.
#[derive(Debug, Default)]
struct Fake {
    jobs: Mutex<HashMap<String, Job>>,
    next: AtomicUsize,
    polls: AtomicUsize,
    /// The states `cancel` was called with.
    cancels: Mutex<Vec<Value>>,
    /// When set, `cancel` fails with this reason.
    cancel_error: Mutex<Option<String>>,
    /// While set, each poll first waits for a permit of it: the system is slow (or
    /// silent) to answer until the test adds permits or closes it.
    poll_gate: Mutex<Option<Arc<Semaphore>>>,
}

impl Fake {
    fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Starts a job; returns its state as a tool would hand it to the engine.
    fn start_job(&self) -> Value {
        let id = format!("job-{}", self.next.fetch_add(1, Ordering::SeqCst));
        self.jobs
            .lock()
            .unwrap()
            .insert(id.clone(), Job::Running { page: 0 });
        json!({"job": id, "page": 0})
    }

    fn set(&self, state: &Value, job: Job) {
        let id = state["job"].as_str().unwrap().to_string();
        self.jobs.lock().unwrap().insert(id, job);
    }

    fn job(&self, state: &Value) -> Option<Job> {
        self.jobs
            .lock()
            .unwrap()
            .get(state["job"].as_str().unwrap())
            .cloned()
    }

    fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }

    /// Holds every poll from now on until the returned gate is closed.
    fn hold_polls(&self) -> Arc<Semaphore> {
        let gate = Arc::new(Semaphore::new(0));
        *self.poll_gate.lock().unwrap() = Some(gate.clone());
        gate
    }
}

#[async_trait]
impl ExternalPoller for Fake {
    async fn poll(&self, state: &Value) -> Result<JobPoll, String> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        let gate = self.poll_gate.lock().unwrap().clone();
        if let Some(gate) = gate {
            // Closed: the system answers again.
            let _ = gate.acquire().await;
        }
        let id = state["job"].as_str().ok_or("state without a job id")?;
        match self.job(state) {
            Some(Job::Running { page }) => Ok(JobPoll::Running {
                state: Some(json!({"job": id, "page": page})),
                status_message: Some(format!("{page} pages read")),
            }),
            Some(Job::Done(outcome)) => Ok(JobPoll::Finished(outcome)),
            Some(Job::Cancelled) => Ok(JobPoll::Finished(Outcome::Error {
                code: -32603,
                message: "the job was cancelled".into(),
                data: None,
            })),
            None => Err(format!("no job {id}")),
        }
    }

    async fn cancel(&self, state: &Value) -> Result<(), String> {
        self.cancels.lock().unwrap().push(state.clone());
        if let Some(reason) = self.cancel_error.lock().unwrap().clone() {
            return Err(reason);
        }
        self.set(state, Job::Cancelled);
        Ok(())
    }
}

fn caller() -> Caller {
    Caller::anonymous("owner", Some("session".into()))
}

fn params() -> CreateParams {
    CreateParams {
        caller: caller(),
        method: "tools/call".into(),
        request: json!({"name": KIND, "arguments": {"sql": "SELECT 1"}}),
        requested_ttl: None,
        client_capabilities: json!({}),
    }
}

fn config(poll_interval: Duration) -> EngineConfig {
    EngineConfig {
        poll_interval,
        ..EngineConfig::default()
    }
}

/// A lease short enough for a restart test to outlive.
const SHORT_LEASE: Duration = Duration::from_millis(100);

fn short_lease(config: EngineConfig) -> EngineConfig {
    EngineConfig {
        lease_ttl: Some(SHORT_LEASE),
        ..config
    }
}

fn rows(text: &str) -> Outcome {
    Outcome::Result {
        value: json!({"content": [{"type": "text", "text": text}], "isError": false}),
    }
}

async fn engine_on(store: Arc<dyn TaskStore>, config: EngineConfig, fake: &Arc<Fake>) -> Engine {
    let engine = Engine::start(store, config).await.unwrap();
    engine.register_external(KIND, fake.clone());
    engine
}

/// An engine on a fresh memory store polling every `poll_interval`.
async fn memory_engine(poll_interval: Duration, fake: &Arc<Fake>) -> Engine {
    engine_on(Arc::new(MemoryStore::new()), config(poll_interval), fake).await
}

/// Creates a task whose start starts a job of `fake`; returns the record once the job
/// is attached, with the job's state.
async fn start(engine: &Engine, fake: &Arc<Fake>) -> (TaskRecord, Value) {
    let system = fake.clone();
    let record = engine
        .create_external(params(), KIND, move |_ctx| {
            Box::pin(async move { Ok(system.start_job()) })
        })
        .await
        .unwrap();
    assert_eq!(record.status, TaskStatus::Working);
    let attached = attached(engine, &record.id).await;
    let state = attached.external.clone().unwrap().state;
    (attached, state)
}

/// Reads the task until its job is attached (the start runs in the background).
async fn attached(engine: &Engine, id: &TaskId) -> TaskRecord {
    eventually(WAIT, || async {
        let record = engine.get(id, &caller()).await.unwrap();
        record.external.is_some().then_some(record)
    })
    .await
}

/// Reads the task (each read polls the job when due) until `done` holds for it.
async fn read_until(
    engine: &Engine,
    id: &TaskId,
    done: impl Fn(&TaskRecord) -> bool,
) -> TaskRecord {
    eventually(WAIT, || async {
        let record = engine.get(id, &caller()).await.unwrap();
        done(&record).then_some(record)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
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
    assert_eq!(done.outcome, Some(rows("42 rows")));
    let waited = engine.wait_terminal(&record.id, &caller()).await.unwrap();
    assert_eq!(waited, done);

    // Terminal tasks are not polled any more.
    let polls = fake.polls();
    // Nothing signals a poll that does not happen: let the wall-clock poll interval
    // (of the stored change time) pass, so that one would be due.
    tokio::time::sleep(Duration::from_millis(60)).await;
    engine.get(&record.id, &caller()).await.unwrap();
    assert_eq!(fake.polls(), polls);
}

/// What the server's reader says of MCP tool results, enough for this test: the
/// engine itself never reads `isError`.
struct IsErrorReader;

impl mcp_tasks_engine::WireReader for IsErrorReader {
    fn progress_token(&self, _request: &serde_json::Value) -> Option<serde_json::Value> {
        None
    }

    fn result_error_message(&self, result: &serde_json::Value) -> Option<String> {
        (result["isError"] == true).then(|| {
            format!(
                "the tool reported an error: {}",
                result["content"][0]["text"].as_str().unwrap_or("")
            )
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_jobs_fail_the_task_and_tool_errors_are_flagged() {
    let fake = Fake::new();
    let engine = memory_engine(Duration::from_millis(20), &fake).await;
    engine.set_reader(Arc::new(IsErrorReader));
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
        (a.status, a.outcome),
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
        (b.status, b.outcome),
        (TaskStatus::Completed, Some(tool_error))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
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

    // A poll is due only once a wall-clock interval passed since the stored change
    // (a chrono timestamp in the record): no tokio signal or paused clock marks it.
    tokio::time::sleep(interval + Duration::from_millis(50)).await;
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
    assert_eq!(done.outcome, Some(rows("done")));
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
    assert_eq!(done.outcome, Some(rows("quick")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
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
    // signals a poll that does not happen: let the wall-clock poll interval pass, so
    // that one would be due.
    tokio::time::sleep(Duration::from_millis(60)).await;
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
async fn the_sweeper_cancels_the_jobs_of_expired_tasks_only() {
    let fake = Fake::new();
    let config = EngineConfig {
        sweep_interval: Duration::from_millis(20),
        ..config(Duration::from_millis(50))
    };
    let engine = engine_on(Arc::new(MemoryStore::new()), config, &fake).await;
    let sweeper = engine.clone();
    tokio::spawn(async move { sweeper.run_sweeper(std::future::pending()).await });
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
    // A wrong cancel of the finished task's job would run in a task the sweep spawns
    // after the deletion; nothing signals one that does not happen, so give it time.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(*fake.cancels.lock().unwrap(), vec![running_state.clone()]);
    assert_eq!(fake.job(&running_state), Some(Job::Cancelled));
    assert_eq!(fake.job(&finished_state), Some(Job::Done(rows("done"))));
    assert!(engine.get(&running.id, &caller()).await.is_err());
    assert!(engine.get(&finished.id, &caller()).await.is_err());
    let kept = engine.get(&kept.id, &caller()).await.unwrap();
    assert_eq!(kept.status, TaskStatus::Working);
    assert_eq!(fake.job(&kept_state), Some(Job::Running { page: 0 }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
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
    drop(first);

    // The file may be shared by live processes: the plain task is an orphan only once
    // the first engine's lease on it ran out (a wall-clock expiry in the file, which
    // no tokio signal or paused clock can stand in for).
    tokio::time::sleep(SHORT_LEASE + Duration::from_millis(50)).await;
    let second = Engine::start(
        Arc::new(SqliteStore::open(&url).await.unwrap()),
        short_lease(config(Duration::from_millis(50))),
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
    assert_eq!(done.outcome, Some(rows("after the restart")));
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
    let sweeper = a.clone();
    tokio::spawn(async move { sweeper.run_sweeper(std::future::pending()).await });
    let (record, state) = start(&a, &fake).await;

    // Well past the lease: A's heartbeats looked for expired leases several times. B
    // starts now, so its recovery runs over the task too. Leases expire by the wall
    // clock (a chrono time in the store) and nothing signals a takeover that does not
    // happen, so time has to pass here.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let b = engine_on(store.clone(), replica, &fake).await;
    let sweeper = b.clone();
    tokio::spawn(async move { sweeper.run_sweeper(std::future::pending()).await });
    // Several heartbeats of B (every 50 ms), for the same reason.
    tokio::time::sleep(Duration::from_millis(300)).await;
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
    assert_eq!(done.outcome, Some(rows("from b")));
    let on_a = tokio::time::timeout(Duration::from_secs(3), waiter)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(on_a, done);
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
    assert_eq!(done.outcome, Some(refused));
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
            &done.outcome,
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
