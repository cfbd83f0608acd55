//! The engine's one answer entry point: an answer the reader refuses never reaches the
//! work and leaves the question open; and a status message never outlives its status
//! (no "waiting for …" on an answered or finished task).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_engine::{Engine, EngineConfig, EngineError, EngineHooks, Outcome, ResultReading};
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::MemoryStore;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::sync::oneshot;

mod common;

use common::{caller, params};

use mcp_tasks_testkit::{eventually, WAIT};

/// A reader that takes only answers whose `content.n` is a number.
struct NumbersOnly;

impl ResultReading for NumbersOnly {
    fn progress_token(&self, _request: &Value) -> Option<Value> {
        None
    }

    fn result_error_message(&self, _result: &Value) -> Option<String> {
        None
    }

    fn check_answer(&self, method: &str, _params: &Value, answer: &Value) -> Result<(), String> {
        assert_eq!(method, "elicitation/create");
        if answer["content"]["n"].is_number() {
            Ok(())
        } else {
            Err(format!(
                "'n' must be a number, not {}",
                answer["content"]["n"]
            ))
        }
    }
}

/// Starts a task that says it waits, asks one question, reports what it got (through
/// `got`), says it goes on (unless `quiet_after`), then completes; returns the engine,
/// the task and the question's key once it is asked.
async fn asking_task(
    quiet_after: bool,
) -> (
    Engine,
    mcp_tasks_protocol::TaskId,
    String,
    oneshot::Receiver<Value>,
    oneshot::Sender<()>,
) {
    let engine = Engine::start(
        Arc::new(MemoryStore::new()),
        EngineConfig::default(),
        EngineHooks::default().reader(Arc::new(NumbersOnly)),
    )
    .await
    .unwrap();
    let (got_tx, got_rx) = oneshot::channel();
    let (finish_tx, finish_rx) = oneshot::channel::<()>();
    let record = engine
        .create(params(), move |ctx| {
            Box::pin(async move {
                ctx.set_status_message("waiting for the number").await;
                let params = json!({"mode": "form", "message": "n?", "requestedSchema": {}});
                let answer = ctx.request_input("elicitation/create", params).await;
                let _ = got_tx.send(answer.unwrap_or(Value::Null));
                if !quiet_after {
                    ctx.set_status_message("adding up").await;
                }
                let _ = finish_rx.await;
                Outcome::Result {
                    value: json!({"content": [{"type": "text", "text": "done"}]}),
                }
            })
        })
        .await
        .unwrap();
    let id = record.id.clone();
    let key = eventually(WAIT, || async {
        let r = engine.get(&id, &caller()).await.unwrap();
        (r.status == TaskStatus::InputRequired)
            .then(|| r.input_requests.keys().next().cloned())
            .flatten()
    })
    .await;
    (engine, id, key, got_rx, finish_tx)
}

#[tokio::test]
async fn a_refused_answer_leaves_the_question_open_and_a_fitting_one_is_taken() {
    let (engine, id, key, mut got, finish) = asking_task(false).await;
    let wrong = Outcome::Result {
        value: json!({"action": "accept", "content": {"n": "abc"}}),
    };
    let refused = engine
        .answer_input(&id, &key, wrong, &caller())
        .await
        .unwrap_err();
    let EngineError::InvalidInput(message) = refused else {
        panic!("a wrong answer is invalid input, got {refused:?}")
    };
    assert!(message.contains("'n' must be a number"), "{message}");
    assert!(message.contains(&key), "{message}");
    // The work did not see it, and the question is still open.
    assert!(got.try_recv().is_err(), "the work saw a refused answer");
    let r = engine.get(&id, &caller()).await.unwrap();
    assert_eq!(r.status, TaskStatus::InputRequired);
    assert!(r.input_requests[&key].is_outstanding());

    let right = json!({"action": "accept", "content": {"n": 4}});
    let taken = engine
        .answer_input(
            &id,
            &key,
            Outcome::Result {
                value: right.clone(),
            },
            &caller(),
        )
        .await
        .unwrap();
    assert!(taken);
    assert_eq!(got.await.unwrap(), right);
    let _ = finish.send(());
    let r = eventually(WAIT, || async {
        let r = engine.get(&id, &caller()).await.unwrap();
        r.status.is_terminal().then_some(r)
    })
    .await;
    assert_eq!(r.status, TaskStatus::Completed);
}

#[tokio::test]
async fn an_error_answer_is_not_checked_against_the_form() {
    let (engine, id, key, got, _finish) = asking_task(false).await;
    let declined = Outcome::Error {
        code: -1,
        message: "the user said no".into(),
        data: None,
    };
    assert!(engine
        .answer_input(&id, &key, declined, &caller())
        .await
        .unwrap());
    // The work learns of the refusal (an error, so it gets no value).
    assert_eq!(got.await.unwrap(), Value::Null);
}

#[tokio::test]
async fn the_waiting_message_ends_with_the_wait_and_no_message_outlives_the_end() {
    let (engine, id, key, got, finish) = asking_task(true).await;
    let r = engine.get(&id, &caller()).await.unwrap();
    assert_eq!(r.status_message.as_deref(), Some("waiting for the number"));
    let answer = Outcome::Result {
        value: json!({"action": "accept", "content": {"n": 1}}),
    };
    assert!(engine
        .answer_input(&id, &key, answer, &caller())
        .await
        .unwrap());
    got.await.unwrap();
    // Answered: working again, and no longer "waiting for …".
    let r = engine.get(&id, &caller()).await.unwrap();
    assert_eq!(r.status, TaskStatus::Working);
    assert_eq!(
        r.status_message, None,
        "an answered task still says it waits"
    );
    let _ = finish.send(());
    let r = eventually(WAIT, || async {
        let r = engine.get(&id, &caller()).await.unwrap();
        r.status.is_terminal().then_some(r)
    })
    .await;
    assert_eq!(r.status, TaskStatus::Completed);
    assert_eq!(r.status_message, None);
}

#[tokio::test]
async fn a_finished_task_keeps_the_last_word_of_its_work_not_of_its_wait() {
    let (engine, id, key, got, finish) = asking_task(false).await;
    let answer = Outcome::Result {
        value: json!({"action": "accept", "content": {"n": 1}}),
    };
    assert!(engine
        .answer_input(&id, &key, answer, &caller())
        .await
        .unwrap());
    got.await.unwrap();
    eventually(WAIT, || async {
        let r = engine.get(&id, &caller()).await.unwrap();
        r.status_message.as_deref() == Some("adding up")
    })
    .await;
    let _ = finish.send(());
    let r = eventually(WAIT, || async {
        let r = engine.get(&id, &caller()).await.unwrap();
        r.status.is_terminal().then_some(r)
    })
    .await;
    assert_eq!(r.status, TaskStatus::Completed);
    assert_eq!(r.status_message.as_deref(), Some("adding up"));
}
