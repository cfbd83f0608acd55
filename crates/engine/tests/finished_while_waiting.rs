//! A task that ends while it waits for an answer does not keep its "waiting for …"
//! status message as its current text: a cancel says who cancelled it, a failure says
//! what failed, and work that gives up waiting and returns a result ends without it.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_engine::{Engine, EngineConfig, EngineHooks, Outcome};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{MemoryStore, TaskRecord};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::oneshot;

mod common;

use common::{caller, params};

use mcp_tasks_testkit::{eventually, WAIT};

/// How the work ends once its question is open.
enum End {
    /// It waits for the answer (until cancelled).
    Wait,
    /// It stops waiting when told and fails.
    Fail(oneshot::Receiver<()>),
    /// It stops waiting when told and returns a result.
    GiveUp(oneshot::Receiver<()>),
}

/// A task that says it waits, then asks one question; returns once it is asked.
async fn waiting_task(end: End) -> (Engine, TaskId) {
    let engine = Engine::start(
        Arc::new(MemoryStore::new()),
        EngineConfig::default(),
        EngineHooks::default(),
    )
    .await
    .unwrap();
    let record = engine
        .create(params(), move |ctx| {
            Box::pin(async move {
                ctx.set_status_message("waiting for the number").await;
                let params = json!({"mode": "form", "message": "n?", "requestedSchema": {}});
                let asked = ctx.request_input("elicitation/create", params);
                match end {
                    End::Wait => {
                        let _ = asked.await;
                        Outcome::Result {
                            value: json!({"content": [{"type": "text", "text": "answered"}]}),
                        }
                    }
                    End::Fail(told) => {
                        tokio::select! {
                            _ = asked => {}
                            _ = told => {}
                        }
                        Outcome::Error {
                            code: -32603,
                            message: "the number service is down".into(),
                            data: None,
                        }
                    }
                    End::GiveUp(told) => {
                        tokio::select! {
                            _ = asked => {}
                            _ = told => {}
                        }
                        Outcome::Result {
                            value: json!({"content": [{"type": "text", "text": "went on without it"}]}),
                        }
                    }
                }
            })
        })
        .await
        .unwrap();
    let id = record.id.clone();
    eventually(WAIT, || async {
        let r = engine.get(&id, &caller()).await.unwrap();
        (r.status == TaskStatus::InputRequired).then_some(())
    })
    .await;
    let r = engine.get(&id, &caller()).await.unwrap();
    assert_eq!(r.status_message.as_deref(), Some("waiting for the number"));
    (engine, id)
}

async fn ended(engine: &Engine, id: &TaskId) -> TaskRecord {
    eventually(WAIT, || async {
        let r = engine.get(id, &caller()).await.unwrap();
        r.status.is_terminal().then_some(r)
    })
    .await
}

#[tokio::test]
async fn a_task_cancelled_while_waiting_says_who_cancelled_it() {
    let (engine, id) = waiting_task(End::Wait).await;
    engine
        .cancel_saying(&id, &caller(), "cancelled on the task board by ops")
        .await
        .unwrap();
    let r = ended(&engine, &id).await;
    assert_eq!(r.status, TaskStatus::Cancelled);
    assert_eq!(
        r.status_message.as_deref(),
        Some("cancelled on the task board by ops")
    );
    let r = engine.get(&id, &caller()).await.unwrap();
    assert!(r.input_requests.is_empty(), "{:?}", r.input_requests);
}

#[tokio::test]
async fn a_task_failing_while_waiting_says_what_failed() {
    let (tell, told) = oneshot::channel();
    let (engine, id) = waiting_task(End::Fail(told)).await;
    tell.send(()).unwrap();
    let r = ended(&engine, &id).await;
    assert_eq!(r.status, TaskStatus::Failed);
    assert_eq!(
        r.status_message.as_deref(),
        Some("the number service is down")
    );
}

#[tokio::test]
async fn work_giving_up_its_question_ends_without_the_waiting_message() {
    let (tell, told) = oneshot::channel();
    let (engine, id) = waiting_task(End::GiveUp(told)).await;
    tell.send(()).unwrap();
    let r = ended(&engine, &id).await;
    assert_eq!(r.status, TaskStatus::Completed);
    assert_eq!(r.status_message, None, "a stale message: {r:?}");
}
