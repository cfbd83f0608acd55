//! Durable execution in the engine: journaled steps replayed when work runs again
//! after a takeover, questions answered once, questions that outlive their process,
//! deadlines with an outcome instead of a global input timeout, and retries. Takeovers
//! use two engines on one store ("replicas"); replica A "dies" when its maintenance
//! stops (no more heartbeats) while its work keeps running, so its late writes are
//! fenced off like those of a paused process. On the memory store always, on a
//! shared SQLite file, and on PostgreSQL when `MCP_TASKS_TEST_PG_URL` is set.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_engine::{
    Caller, DeadlineOutcome, Engine, EngineConfig, EngineHooks, Outcome, Resumption, Retry,
    RetryPolicy, TaskContext, Work,
};
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::suite::postgres::{test_url, TestSchema};
use mcp_tasks_store::{MemoryStore, PgStore, SqliteStore, TaskStore};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

mod common;

use common::{caller, params};
use mcp_tasks_testkit::{eventually, WAIT};

/// Which step bodies ran, in which attempt, and what the work tells the test.
#[derive(Clone)]
struct Probe {
    runs: Arc<Mutex<Vec<(u32, u32)>>>,
    said: mpsc::UnboundedSender<String>,
}

impl Probe {
    fn new() -> (Probe, mpsc::UnboundedReceiver<String>) {
        let (said, heard) = mpsc::unbounded_channel();
        (
            Probe {
                runs: Arc::default(),
                said,
            },
            heard,
        )
    }

    fn runs(&self) -> Vec<(u32, u32)> {
        self.runs.lock().unwrap().clone()
    }
}

fn text(value: impl Into<String>) -> Outcome {
    Outcome::Result {
        value: json!({"content": [{"type": "text", "text": value.into()}]}),
    }
}

/// Three journaled steps, optionally with a question after the first; the second
/// step's body never ends in attempt 1 (the process "dies" in it).
async fn three_steps(ctx: TaskContext, probe: Probe, ask: bool) -> Outcome {
    let mut total = 0_u32;
    let mut answer = String::from("none");
    for i in 0..3_u32 {
        let attempt = ctx.attempt();
        let p = probe.clone();
        let step = ctx
            .step("s", async move {
                p.runs.lock().unwrap().push((i, attempt));
                if i == 1 && attempt == 1 {
                    let _ = p.said.send("in step 1".into());
                    std::future::pending::<()>().await;
                }
                i * 10
            })
            .await;
        match step {
            Ok(v) => total += v,
            Err(e) => return text(format!("step error: {e}")),
        }
        if i == 0 {
            let _ = probe.said.send(format!("step 0 done in attempt {attempt}"));
            if ask {
                answer = match common::ask(&ctx, "Proceed?").await {
                    Ok(a) => a,
                    Err(e) => return text(format!("ask error: {e}")),
                };
            }
        }
    }
    text(format!(
        "total {total}, answer {answer}, attempt {}",
        ctx.attempt()
    ))
}

fn resumer_for(probe: Probe, ask: bool) -> EngineHooks {
    EngineHooks::default().resumer(Arc::new(move |_record| {
        let probe = probe.clone();
        Some(Resumption::new(move |ctx| {
            Box::pin(three_steps(ctx, probe, ask)) as Work
        }))
    }))
}

fn leased() -> EngineConfig {
    EngineConfig {
        lease_ttl: Some(Duration::from_millis(400)),
        heartbeat: Duration::from_millis(100),
        ..EngineConfig::default()
    }
}

async fn heard(rx: &mut mpsc::UnboundedReceiver<String>, what: &str) {
    loop {
        let said = tokio::time::timeout(WAIT, rx.recv())
            .await
            .unwrap_or_else(|_| panic!("waited for the work to say '{what}'"))
            .expect("the work's channel is open");
        if said == what {
            return;
        }
    }
}

fn outcome_text(record: &mcp_tasks_engine::TaskRecord) -> String {
    match record.outcome.as_deref() {
        Some(Outcome::Result { value }) => value["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        other => panic!("expected a result, got {other:?}"),
    }
}

/// Work interrupted in its second step runs again on B: the first step returns its
/// recorded output without running, the second runs again (it never finished), and the
/// task completes with the outputs of both attempts' steps.
async fn steps_are_not_run_again_after_a_takeover(a: Arc<dyn TaskStore>, b: Arc<dyn TaskStore>) {
    let (probe, mut said) = Probe::new();
    let engine_a = Engine::start(a, leased(), resumer_for(probe.clone(), false))
        .await
        .unwrap();
    let engine_b = Engine::start(b, leased(), resumer_for(probe.clone(), false))
        .await
        .unwrap();
    let p = probe.clone();
    let record = engine_a
        .create(params(), move |ctx| Box::pin(three_steps(ctx, p, false)))
        .await
        .unwrap();
    heard(&mut said, "in step 1").await;
    engine_a.shutdown().await; // A "dies": its lease lapses, B takes the task over
    let done = tokio::time::timeout(WAIT, engine_b.wait_terminal(&record.id, &caller()))
        .await
        .expect("B ran the task again and finished it")
        .unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(outcome_text(&done), "total 30, answer none, attempt 2");
    assert_eq!(
        probe.runs(),
        vec![(0, 1), (1, 1), (1, 2), (2, 2)],
        "step 0 ran once; step 1 (in flight at the takeover) twice; step 2 once"
    );
}

/// A question answered in attempt 1 is not asked again in attempt 2: its answer comes
/// from the task's record.
async fn an_answered_question_is_not_asked_again(a: Arc<dyn TaskStore>, b: Arc<dyn TaskStore>) {
    let (probe, mut said) = Probe::new();
    let engine_a = Engine::start(a, leased(), resumer_for(probe.clone(), true))
        .await
        .unwrap();
    let engine_b = Engine::start(b, leased(), resumer_for(probe.clone(), true))
        .await
        .unwrap();
    let p = probe.clone();
    let record = engine_a
        .create(params(), move |ctx| Box::pin(three_steps(ctx, p, true)))
        .await
        .unwrap();
    let key = eventually(WAIT, || async {
        let r = engine_b.get(&record.id, &caller()).await.unwrap();
        r.input_requests.keys().next().cloned()
    })
    .await;
    let accept = Outcome::Result {
        value: json!({"action": "accept", "content": {}}),
    };
    assert!(engine_b
        .answer_input(&record.id, &key, accept, &caller())
        .await
        .unwrap());
    heard(&mut said, "in step 1").await;
    engine_a.shutdown().await;
    let done = tokio::time::timeout(WAIT, engine_b.wait_terminal(&record.id, &caller()))
        .await
        .expect("B finished the task")
        .unwrap();
    assert_eq!(outcome_text(&done), "total 30, answer accept, attempt 2");
    assert_eq!(probe.runs(), vec![(0, 1), (1, 1), (1, 2), (2, 2)]);
    let timeline = engine_b.timeline(&done).await.unwrap();
    let waits = timeline
        .iter()
        .filter(|e| e.status == TaskStatus::InputRequired)
        .count();
    assert_eq!(waits, 1, "the question was asked once: {timeline:?}");
    assert!(engine_b.activity().borrow().answers_replayed >= 1);
}

/// A task waiting for a person when its process dies stays `input_required` with its
/// question open; an answer given while nobody runs it reaches the next attempt.
async fn an_open_question_outlives_its_process(a: Arc<dyn TaskStore>, b: Arc<dyn TaskStore>) {
    let (probe, _said) = Probe::new();
    let engine_a = Engine::start(a, leased(), resumer_for(probe.clone(), true))
        .await
        .unwrap();
    let engine_b = Engine::start(b, leased(), resumer_for(probe.clone(), true))
        .await
        .unwrap();
    let p = probe.clone();
    let record = engine_a
        .create(params(), move |ctx| Box::pin(three_steps(ctx, p, true)))
        .await
        .unwrap();
    let key = eventually(WAIT, || async {
        let r = engine_b.get(&record.id, &caller()).await.unwrap();
        r.input_requests.keys().next().cloned()
    })
    .await;
    engine_a.shutdown().await;
    // B took it over and runs attempt 2, which waits on the same open question.
    eventually(WAIT, || async {
        (engine_b.activity().borrow().reruns >= 1).then_some(())
    })
    .await;
    let waiting = engine_b.get(&record.id, &caller()).await.unwrap();
    assert_eq!(waiting.status, TaskStatus::InputRequired);
    assert_eq!(waiting.input_requests.len(), 1);
    assert!(waiting.input_requests[&key].answer.is_none());
    let accept = Outcome::Result {
        value: json!({"action": "accept", "content": {}}),
    };
    assert!(engine_b
        .answer_input(&record.id, &key, accept, &caller())
        .await
        .unwrap());
    let done = tokio::time::timeout(WAIT, engine_b.wait_terminal(&record.id, &caller()))
        .await
        .expect("attempt 2 got the answer and finished")
        .unwrap();
    assert_eq!(outcome_text(&done), "total 30, answer accept, attempt 2");
    assert_eq!(
        probe.runs(),
        vec![(0, 1), (1, 2), (2, 2)],
        "step 0 replayed; attempt 1 never reached step 1"
    );
}

async fn all_durable_cases(make: impl Fn() -> (Arc<dyn TaskStore>, Arc<dyn TaskStore>)) {
    let (a, b) = make();
    steps_are_not_run_again_after_a_takeover(a, b).await;
    let (a, b) = make();
    an_answered_question_is_not_asked_again(a, b).await;
    let (a, b) = make();
    an_open_question_outlives_its_process(a, b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_on_the_memory_store() {
    all_durable_cases(|| {
        let store: Arc<dyn TaskStore> = Arc::new(MemoryStore::new());
        (store.clone(), store)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_on_a_shared_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    for (n, case) in ["steps", "answered", "open"].iter().enumerate() {
        let url = format!("sqlite://{}", dir.path().join(format!("{n}.db")).display());
        let a: Arc<dyn TaskStore> = Arc::new(SqliteStore::open(&url).await.unwrap());
        let b: Arc<dyn TaskStore> = Arc::new(SqliteStore::open(&url).await.unwrap());
        match *case {
            "steps" => steps_are_not_run_again_after_a_takeover(a, b).await,
            "answered" => an_answered_question_is_not_asked_again(a, b).await,
            _ => an_open_question_outlives_its_process(a, b).await,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_on_postgres() {
    let Some(server) = test_url() else { return };
    for case in ["steps", "answered", "open"] {
        let schema = TestSchema::create(&server).await;
        let a: Arc<dyn TaskStore> = Arc::new(PgStore::open(schema.url()).await.unwrap());
        let b: Arc<dyn TaskStore> = Arc::new(PgStore::open(schema.url()).await.unwrap());
        match case {
            "steps" => steps_are_not_run_again_after_a_takeover(a, b).await,
            "answered" => an_answered_question_is_not_asked_again(a, b).await,
            _ => an_open_question_outlives_its_process(a, b).await,
        }
    }
}

/// Work that asks to be retried until its third attempt: with attempts left it runs
/// again (the task stays `working` with a message saying so); without, its error is
/// the result.
fn flaky_until(third: u32) -> impl Fn(TaskContext) -> Work + Clone + Send + Sync + 'static {
    move |ctx: TaskContext| {
        Box::pin(async move {
            let attempt = ctx.attempt();
            let _: u32 = ctx.step("before", async { 1 }).await.unwrap();
            if attempt < third {
                let why = ctx.retry(
                    Retry::because(format!("flaky in attempt {attempt}"))
                        .after(Duration::from_millis(20)),
                );
                return Outcome::Result {
                    value: json!({"content": [{"type": "text", "text": why.to_string()}], "isError": true}),
                };
            }
            text(format!("worked in attempt {attempt}"))
        }) as Work
    }
}

async fn retried(store: Arc<dyn TaskStore>, max_attempts: u32) -> mcp_tasks_engine::TaskRecord {
    let work = flaky_until(3);
    let again = work.clone();
    let policy = RetryPolicy {
        max_attempts,
        ..RetryPolicy::default()
    };
    let hooks = EngineHooks::default().resumer(Arc::new(move |_record| {
        let again = again.clone();
        Some(Resumption::new(move |ctx| again(ctx)).with_retry(policy))
    }));
    let engine = Engine::start(store, EngineConfig::default(), hooks)
        .await
        .unwrap();
    let record = engine.create(params(), work).await.unwrap();
    tokio::time::timeout(WAIT, engine.wait_terminal(&record.id, &caller()))
        .await
        .expect("the task ended")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retryable_failure_runs_again_until_it_works_or_the_policy_gives_up() {
    let done = retried(Arc::new(MemoryStore::new()), 5).await;
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(outcome_text(&done), "worked in attempt 3");

    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("retry.db").display());
    let store: Arc<dyn TaskStore> = Arc::new(SqliteStore::open(&url).await.unwrap());
    let done = retried(Arc::clone(&store), 5).await;
    assert_eq!(outcome_text(&done), "worked in attempt 3");
    let journal = store.journal().unwrap().steps(&done.id).await.unwrap();
    let attempts: Vec<_> = journal
        .iter()
        .filter(|e| e.step.starts_with("@attempt#"))
        .map(|e| (e.step.clone(), e.output["reason"].clone()))
        .collect();
    assert_eq!(
        attempts,
        vec![
            ("@attempt#2".to_string(), json!("retry")),
            ("@attempt#3".to_string(), json!("retry")),
        ]
    );
    // The step before the failure ran once, in attempt 1.
    assert_eq!(
        journal
            .iter()
            .filter(|e| e.step == "before#0")
            .map(|e| e.attempt)
            .collect::<Vec<_>>(),
        vec![1]
    );

    let gave_up = retried(Arc::new(MemoryStore::new()), 2).await;
    assert_eq!(
        gave_up.status,
        TaskStatus::Completed,
        "a tool error is a result"
    );
    assert_eq!(outcome_text(&gave_up), "flaky in attempt 2");
}

async fn ask_with_deadline(ctx: TaskContext, outcome: DeadlineOutcome) -> Outcome {
    let params = json!({"mode": "form", "message": "Approve?", "requestedSchema": {"type": "object", "properties": {}}});
    match ctx
        .request_input_until(
            "elicitation/create",
            params,
            Duration::from_secs(1800),
            outcome,
        )
        .await
    {
        Ok(answer) => text(answer.to_string()),
        Err(e) => text(format!("error: {e}")),
    }
}

/// A question's deadline: declined, answered with its default, or the task failed,
/// each recorded in the timeline; a question without one waits past the old global
/// input timeout.
#[tokio::test(flavor = "current_thread")]
async fn a_question_deadline_applies_its_outcome() {
    let _frozen = common::freeze(false);
    let config = EngineConfig {
        input_timeout: Duration::from_secs(5),
        ..EngineConfig::default()
    };
    let engine = Engine::start(Arc::new(MemoryStore::new()), config, EngineHooks::default())
        .await
        .unwrap();
    let cases = [
        (DeadlineOutcome::Decline, Some(r#"{"action":"decline"}"#)),
        (
            DeadlineOutcome::Answer {
                value: json!({"action": "accept", "content": {"ok": true}}),
            },
            Some(r#"{"action":"accept","content":{"ok":true}}"#),
        ),
        (DeadlineOutcome::Fail, None),
    ];
    for (outcome, expected) in cases {
        let record = engine
            .create(params(), move |ctx| {
                Box::pin(ask_with_deadline(ctx, outcome))
            })
            .await
            .unwrap();
        eventually(WAIT, || async {
            let r = engine.get(&record.id, &caller()).await.unwrap();
            (r.status == TaskStatus::InputRequired).then_some(())
        })
        .await;
        // Past the old global input timeout: still waiting.
        tokio::time::advance(Duration::from_secs(600)).await;
        let r = engine.get(&record.id, &caller()).await.unwrap();
        assert_eq!(r.status, TaskStatus::InputRequired);
        tokio::time::advance(Duration::from_secs(1201)).await;
        let done = engine.wait_terminal(&record.id, &caller()).await.unwrap();
        let timeline = engine.timeline(&done).await.unwrap();
        let said: Vec<String> = timeline
            .iter()
            .filter_map(|e| e.status_message.clone())
            .collect();
        assert!(
            said.iter().any(|m| m.contains("by its deadline")),
            "the timeline records the deadline: {said:?}"
        );
        match expected {
            Some(answer) => {
                assert_eq!(done.status, TaskStatus::Completed);
                assert_eq!(outcome_text(&done), answer);
            }
            None => assert_eq!(done.status, TaskStatus::Failed),
        }
    }
}

#[allow(dead_code)]
fn unused(_: Value, _: Caller) {}

/// Work that asks, in its first attempt, to be retried in half an hour.
fn retry_in_half_an_hour(ctx: TaskContext) -> Work {
    Box::pin(async move {
        let attempt = ctx.attempt();
        if attempt >= 2 {
            return text(format!("ran attempt {attempt}"));
        }
        let why = ctx.retry(Retry::because("try later").after(Duration::from_secs(1800)));
        Outcome::Result {
            value: json!({"content": [{"type": "text", "text": why.to_string()}], "isError": true}),
        }
    })
}

fn retrying_hooks() -> EngineHooks {
    EngineHooks::default().resumer(Arc::new(|_record| {
        Some(Resumption::new(retry_in_half_an_hour))
    }))
}

/// During a retry's backoff the task stays `working`, saying which attempt comes when;
/// a cancel then ends it, and the wait's end does not run it again.
#[tokio::test(flavor = "current_thread")]
async fn a_task_waiting_for_its_retry_is_working_and_can_be_cancelled() {
    let _frozen = common::freeze(false);
    let engine = Engine::start(
        Arc::new(MemoryStore::new()),
        EngineConfig::default(),
        retrying_hooks(),
    )
    .await
    .unwrap();
    let record = engine
        .create(params(), retry_in_half_an_hour)
        .await
        .unwrap();
    eventually(WAIT, || async {
        (engine.activity().borrow().retries_scheduled == 1).then_some(())
    })
    .await;
    let waiting = engine.get(&record.id, &caller()).await.unwrap();
    assert_eq!(waiting.status, TaskStatus::Working);
    let said = waiting.status_message.unwrap_or_default();
    assert!(
        said.contains("attempt 1 of 10 failed: try later; attempt 2 in 1800.0 s"),
        "{said}"
    );
    engine.cancel(&record.id, &caller()).await.unwrap();
    tokio::time::advance(Duration::from_secs(1801)).await;
    tokio::task::yield_now().await;
    let done = engine.get(&record.id, &caller()).await.unwrap();
    assert_eq!(done.status, TaskStatus::Cancelled);
    assert_eq!(
        engine.activity().borrow().reruns,
        0,
        "a cancelled task is not run again"
    );
}

/// A process that dies while its task waits for a retry leaves it `working`; the
/// replica that takes it over runs the next attempt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_survives_the_death_of_its_process() {
    // (The next attempt runs at the takeover, without waiting out the backoff.)
    let store: Arc<dyn TaskStore> = Arc::new(MemoryStore::new());
    let a = Engine::start(Arc::clone(&store), leased(), retrying_hooks())
        .await
        .unwrap();
    let b = Engine::start(store, leased(), retrying_hooks())
        .await
        .unwrap();
    let record = a.create(params(), retry_in_half_an_hour).await.unwrap();
    eventually(WAIT, || async {
        (a.activity().borrow().retries_scheduled == 1).then_some(())
    })
    .await;
    a.shutdown().await; // dies during the backoff
    let done = tokio::time::timeout(WAIT, b.wait_terminal(&record.id, &caller()))
        .await
        .expect("B ran the next attempt")
        .unwrap();
    assert_eq!(outcome_text(&done), "ran attempt 2");
}
