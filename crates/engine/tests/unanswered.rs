//! No question vanishes with its task (issue 43): a question still unanswered shortly
//! before its task expires (a tenth of the TTL, at most an hour) fails the task with an
//! outcome its client can read ("nobody decided before the task's time ran out"), and
//! the failed task stays readable until the expiry, instead of being deleted while it
//! waits and read as "task not found". A question's own earlier deadline still comes
//! first. On paused time, with the memory and SQLite stores.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_engine::config::settle_before_expiry;
use mcp_tasks_engine::{
    DeadlineOutcome, Engine, EngineConfig, EngineError, EngineHooks, Failure, Outcome, TaskContext,
    Work,
};
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::{MemoryStore, SqliteStore, TaskRecord, TaskStore};
use std::sync::Arc;
use std::time::Duration;

mod common;

use common::{caller, params};

/// The TTL of every task here: 10 minutes, so its question is settled a minute before.
const TTL: Duration = Duration::from_secs(600);

fn config() -> EngineConfig {
    EngineConfig {
        sweep_interval: Duration::from_secs(1),
        heartbeat: Duration::from_secs(1),
        lease_ttl: Some(Duration::from_secs(3600)),
        ..EngineConfig::default()
    }
}

async fn store(backend: &str, dir: &std::path::Path) -> Arc<dyn TaskStore> {
    match backend {
        "memory" => Arc::new(MemoryStore::new()),
        _ => Arc::new(
            SqliteStore::open(&format!("sqlite://{}", dir.join("t.db").display()))
                .await
                .unwrap(),
        ),
    }
}

/// Work that asks one form question, with `deadline` (after, outcome) if given, and
/// ends with what it was answered.
fn asks(deadline: Option<Duration>) -> impl FnOnce(TaskContext) -> Work {
    move |ctx: TaskContext| {
        Box::pin(async move {
            let form = serde_json::json!({"mode": "form", "message": "go?", "requestedSchema": {"type": "object", "properties": {}}});
            let asked = match deadline {
                Some(after) => {
                    ctx.request_input_until(
                        "elicitation/create",
                        form,
                        after,
                        DeadlineOutcome::Decline,
                    )
                    .await
                }
                None => ctx.request_input("elicitation/create", form).await,
            };
            match asked {
                Ok(answer) => Outcome::Result {
                    value: serde_json::json!({"content": [{"type": "text", "text": answer["action"].to_string()}]}),
                },
                Err(e) => Outcome::failed(Failure::InputTimedOut, e.to_string()),
            }
        }) as Work
    }
}

/// Moves paused time a second at a time (at most `limit`) until task `id` ended; the
/// record then. `frozen`: the store does I/O (see `common::freeze`).
async fn until_ended(
    engine: &Engine,
    id: &mcp_tasks_protocol::TaskId,
    limit: u64,
    frozen: bool,
) -> TaskRecord {
    let mut events = engine.subscribe();
    for _ in 0..limit {
        let record = engine.get(id, &caller()).await.unwrap();
        if record.status.is_terminal() {
            return record;
        }
        tokio::time::advance(Duration::from_secs(1)).await;
        if frozen {
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
    panic!("task {id} did not end within {limit} s");
}

async fn waiting(engine: &Engine, id: &mcp_tasks_protocol::TaskId) {
    let mut events = engine.subscribe();
    loop {
        if engine.get(id, &caller()).await.unwrap().status == TaskStatus::InputRequired {
            return;
        }
        let _ = events.recv().await;
    }
}

async fn an_unanswered_question_fails_its_task_before_it_expires(backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(
        store(backend, dir.path()).await,
        config(),
        EngineHooks::default(),
    )
    .await
    .unwrap();
    let frozen = backend != "memory";
    let _frozen = common::freeze(frozen);
    let task = engine
        .create(
            mcp_tasks_engine::CreateParams {
                requested_ttl: Some(TTL),
                ..params()
            },
            asks(None),
        )
        .await
        .unwrap();
    waiting(&engine, &task.id).await;
    let settle = settle_before_expiry(TTL);
    assert_eq!(settle, Duration::from_secs(60), "a tenth of the TTL");
    // Nothing happens well before the settling time.
    tokio::time::advance(TTL - settle - Duration::from_secs(5)).await;
    assert_eq!(
        engine.get(&task.id, &caller()).await.unwrap().status,
        TaskStatus::InputRequired,
        "{backend}"
    );
    let ended = until_ended(&engine, &task.id, 10, frozen).await;
    assert_eq!(ended.status, TaskStatus::Failed, "{backend}");
    let message = ended.status_message.clone().unwrap_or_default();
    assert!(
        message.contains("Nobody decided before the task's time ran out")
            && message.contains("the client")
            && message.contains("stays readable until it expires at"),
        "{backend}: {message}"
    );
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
    // Readable, failed, until its expiry; then gone as any expired task.
    tokio::time::advance(settle - Duration::from_secs(10)).await;
    assert_eq!(
        engine.get(&task.id, &caller()).await.unwrap().status,
        TaskStatus::Failed,
        "{backend}: the outcome stays readable until the expiry"
    );
    tokio::time::advance(Duration::from_secs(15)).await;
    assert!(
        matches!(
            engine.get(&task.id, &caller()).await,
            Err(EngineError::NotFound)
        ),
        "{backend}: expired"
    );
}

async fn an_earlier_deadline_of_the_question_comes_first(backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(
        store(backend, dir.path()).await,
        config(),
        EngineHooks::default(),
    )
    .await
    .unwrap();
    let frozen = backend != "memory";
    let _frozen = common::freeze(frozen);
    let task = engine
        .create(
            mcp_tasks_engine::CreateParams {
                requested_ttl: Some(TTL),
                ..params()
            },
            asks(Some(Duration::from_secs(60))),
        )
        .await
        .unwrap();
    waiting(&engine, &task.id).await;
    let ended = until_ended(&engine, &task.id, 120, frozen).await;
    assert_eq!(
        ended.status,
        TaskStatus::Completed,
        "{backend}: declined at its own deadline"
    );
}

async fn a_later_deadline_of_the_question_gives_way_to_the_task_s_end(backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(
        store(backend, dir.path()).await,
        config(),
        EngineHooks::default(),
    )
    .await
    .unwrap();
    let frozen = backend != "memory";
    let _frozen = common::freeze(frozen);
    let task = engine
        .create(
            mcp_tasks_engine::CreateParams {
                requested_ttl: Some(TTL),
                ..params()
            },
            // Past the task's expiry: it would never be reached.
            asks(Some(TTL * 2)),
        )
        .await
        .unwrap();
    waiting(&engine, &task.id).await;
    tokio::time::advance(TTL - settle_before_expiry(TTL) - Duration::from_secs(5)).await;
    let ended = until_ended(&engine, &task.id, 10, frozen).await;
    assert_eq!(ended.status, TaskStatus::Failed, "{backend}");
    assert!(
        ended
            .status_message
            .as_deref()
            .is_some_and(|m| m.contains("before the task's time ran out")),
        "{backend}: {:?}",
        ended.status_message
    );
}

#[tokio::test]
async fn unanswered_question_settles_before_expiry_memory() {
    an_unanswered_question_fails_its_task_before_it_expires("memory").await;
}

#[tokio::test]
async fn unanswered_question_settles_before_expiry_sqlite() {
    an_unanswered_question_fails_its_task_before_it_expires("sqlite").await;
}

#[tokio::test]
async fn earlier_question_deadline_first_memory() {
    an_earlier_deadline_of_the_question_comes_first("memory").await;
}

#[tokio::test]
async fn later_question_deadline_gives_way_memory() {
    a_later_deadline_of_the_question_gives_way_to_the_task_s_end("memory").await;
}

#[tokio::test]
async fn later_question_deadline_gives_way_sqlite() {
    a_later_deadline_of_the_question_gives_way_to_the_task_s_end("sqlite").await;
}

/// No server ran over the task's last stretch (every process down): the record
/// expired while it still waited for an answer. The next engine's sweeper must not
/// delete it silently: it fails it ("nobody answered") and keeps it readable for
/// `SETTLED_READABLE_FOR`, on wall-clock time. Without leases the start-up fails an
/// earlier process's tasks as interrupted: this one must still read as unanswered.
async fn an_expired_waiting_task_found_by_the_sweeper_is_settled(backend: &str, leases: bool) {
    let dir = tempfile::tempdir().unwrap();
    let store = store(backend, dir.path()).await;
    let now = chrono::Utc::now();
    let mut rec = mcp_tasks_store::suite::record(
        "owner-a",
        Some("session-a"),
        mcp_tasks_store::suite::truncate_ms(now - chrono::Duration::minutes(20)),
    );
    rec.runner = Some("a-process-long-gone".into());
    rec.ttl = Some(TTL);
    rec.expires_at = rec
        .created_at
        .checked_add_signed(chrono::Duration::minutes(10));
    store.create(&rec).await.unwrap();
    let mut asking = mcp_tasks_store::TransitionParams::to(
        rec.id.clone(),
        TaskStatus::InputRequired,
        rec.created_at + chrono::Duration::seconds(1),
    );
    let mut questions = mcp_tasks_store::InputRequests::new();
    questions.insert(
        "approve".into(),
        serde_json::from_value(serde_json::json!({
            "method": "elicitation/create",
            "params": {"message": "deploy?", "requestedSchema": {"type": "object"}}
        }))
        .unwrap(),
    );
    asking = asking.questions(questions);
    store.transition(&asking).await.unwrap();

    let engine = Engine::start(
        store.clone(),
        EngineConfig {
            sweep_interval: Duration::from_millis(20),
            lease_ttl: if leases { config().lease_ttl } else { None },
            ..config()
        },
        EngineHooks::default(),
    )
    .await
    .unwrap();
    let mut activity = engine.activity();
    let seen = activity.borrow().sweeps;
    activity.wait_for(|a| a.sweeps > seen).await.unwrap();
    let read = engine.get(&rec.id, &caller()).await.unwrap();
    assert_eq!(read.status, TaskStatus::Failed, "{backend}");
    let message = read.status_message.clone().unwrap_or_default();
    assert!(
        message.contains("Nobody answered before the task's time ran out")
            && message.contains("stays readable until"),
        "{backend}: {message}"
    );
    assert!(
        matches!(
            read.outcome.as_deref(),
            Some(Outcome::Failed {
                failure: Failure::InputTimedOut,
                ..
            })
        ),
        "{backend}: {:?}",
        read.outcome
    );
    let readable_for = read.expires_at.unwrap() - chrono::Utc::now();
    let hour = chrono::Duration::from_std(mcp_tasks_engine::config::SETTLED_READABLE_FOR).unwrap();
    assert!(
        readable_for > hour - chrono::Duration::minutes(1) && readable_for <= hour,
        "{backend}: readable for {readable_for}"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn expired_waiting_task_is_settled_by_the_sweeper_memory() {
    an_expired_waiting_task_found_by_the_sweeper_is_settled("memory", true).await;
}

#[tokio::test]
async fn expired_waiting_task_is_settled_by_the_sweeper_sqlite() {
    an_expired_waiting_task_found_by_the_sweeper_is_settled("sqlite", true).await;
}

#[tokio::test]
async fn expired_waiting_task_is_settled_at_a_start_without_leases_memory() {
    an_expired_waiting_task_found_by_the_sweeper_is_settled("memory", false).await;
}
