//! Outstanding input requests: stored with the record, replaced atomically, cleared on
//! recovery.

use super::{at, base_time, record, to_status};
use crate::record::{InputRequest, InputRequests, Outcome};
use crate::TaskStore;
use mcp_tasks_protocol::TaskStatus;
use serde_json::json;
use std::sync::Arc;

fn one(key: &str) -> InputRequests {
    let mut m = InputRequests::new();
    m.insert(
        key.to_string(),
        InputRequest {
            method: "elicitation/create".into(),
            params: json!({"message": format!("question {key}"), "requestedSchema": {"type": "object"}}),
            answer: None,
            deadline: None,
            assignment: None,
            answered_by: None,
        },
    );
    m
}

/// A transition can set and later clear the requests; reads return exactly what was
/// written, and a transition without `input_requests` keeps them.
pub async fn input_requests_are_stored_replaced_and_kept(store: Arc<dyn TaskStore>) {
    let rec = record("alice", Some("s1"), base_time());
    store.create(&rec).await.unwrap();
    let asking = to_status(&rec.id, TaskStatus::InputRequired, at(10)).questions(one("q1"));
    let r = store.transition(&asking).await.unwrap();
    assert_eq!(r.input_requests, one("q1"));
    let got = store.get(&rec.id, at(11)).await.unwrap().unwrap();
    assert_eq!(got.input_requests, one("q1"));

    let message_only = to_status(&rec.id, TaskStatus::InputRequired, at(12));
    let r = store.transition(&message_only).await.unwrap();
    assert_eq!(r.input_requests, one("q1"), "None keeps the requests");

    let answered = to_status(&rec.id, TaskStatus::Working, at(13)).questions(InputRequests::new());
    let r = store.transition(&answered).await.unwrap();
    assert!(r.input_requests.is_empty());
    assert_eq!(store.get(&rec.id, at(14)).await.unwrap().unwrap(), r);
}

/// Recovery fails a task that waited on input and drops its questions.
pub async fn fail_orphaned_clears_input_requests(store: Arc<dyn TaskStore>) {
    let mut rec = record("alice", Some("s1"), base_time());
    rec.runner = Some("old".into());
    store.create(&rec).await.unwrap();
    let asking = to_status(&rec.id, TaskStatus::InputRequired, at(10)).questions(one("q1"));
    store.transition(&asking).await.unwrap();
    let error = Outcome::Error {
        code: -32603,
        message: "restarted".into(),
        data: None,
    };
    assert_eq!(
        store
            .fail_orphaned("new", "restarted", &error, at(20))
            .await
            .unwrap(),
        1
    );
    let got = store.get(&rec.id, at(21)).await.unwrap().unwrap();
    assert_eq!(got.status, TaskStatus::Failed);
    assert!(got.input_requests.is_empty());
}

/// A task that ends while it waits for input, with no message of its own, drops the
/// message of its wait ("waiting for …" must not outlive `input_required`); an end that
/// brings a message sets it, and an end from `working` keeps the work's last word.
pub async fn ending_a_wait_drops_its_message(store: Arc<dyn TaskStore>) {
    let waits = |id| {
        to_status(id, TaskStatus::InputRequired, at(10))
            .message("waiting for the approval")
            .questions(one("q1"))
    };
    let rec = record("alice", None, base_time());
    store.create(&rec).await.unwrap();
    store.transition(&waits(&rec.id)).await.unwrap();
    let done = to_status(&rec.id, TaskStatus::Completed, at(20))
        .outcome(Outcome::Result {
            value: json!({"content": []}),
        })
        .questions(InputRequests::new());
    let r = store.transition(&done).await.unwrap();
    assert_eq!(
        r.status_message, None,
        "the wait's message went with the wait"
    );
    assert_eq!(
        store
            .get(&rec.id, at(21))
            .await
            .unwrap()
            .unwrap()
            .status_message,
        None
    );

    let said = record("alice", None, base_time());
    store.create(&said).await.unwrap();
    store.transition(&waits(&said.id)).await.unwrap();
    let cancelled =
        to_status(&said.id, TaskStatus::Cancelled, at(20)).message("cancelled by alice");
    let r = store.transition(&cancelled).await.unwrap();
    assert_eq!(r.status_message.as_deref(), Some("cancelled by alice"));

    let working = record("alice", None, base_time());
    store.create(&working).await.unwrap();
    let last_word = to_status(&working.id, TaskStatus::Working, at(10)).message("all done");
    store.transition(&last_word).await.unwrap();
    let finished = to_status(&working.id, TaskStatus::Completed, at(20)).outcome(Outcome::Result {
        value: json!({"content": []}),
    });
    let r = store.transition(&finished).await.unwrap();
    assert_eq!(r.status_message.as_deref(), Some("all done"));
}

/// A record that expired while still `input_required` (no process ran to settle it) is
/// settled, not deleted: `failed` with the given message and outcome, its questions
/// dropped, a timeline entry for `failed`, and readable until the new expiry; so the
/// next `delete_expired` leaves it. A record that expired in another status, and one
/// still waiting that has not expired, are left alone; a second call settles nothing.
pub async fn expired_waiting_records_are_settled_not_deleted(store: Arc<dyn TaskStore>) {
    let waiting = |ttl_ms: i64| {
        let mut rec = record("alice", None, base_time());
        rec.ttl = Some(std::time::Duration::from_millis(ttl_ms as u64));
        rec.expires_at = Some(at(ttl_ms));
        rec
    };
    let expired = waiting(1_000);
    let later = waiting(50_000);
    let working = waiting(1_000);
    for rec in [&expired, &later, &working] {
        store.create(rec).await.unwrap();
    }
    for rec in [&expired, &later] {
        let asking = to_status(&rec.id, TaskStatus::InputRequired, at(10)).questions(one("q1"));
        store.transition(&asking).await.unwrap();
    }
    let error = Outcome::failed(crate::Failure::InputTimedOut, "nobody answered");
    let params = crate::SettleExpiredParams {
        now: at(2_000),
        status_message: "nobody answered".into(),
        error: error.clone(),
        readable_until: at(100_000),
        limit: 10,
    };
    let settled = store.settle_expired_waiting(&params).await.unwrap();
    assert_eq!(settled, vec![expired.id.clone()]);
    let got = store
        .get(&expired.id, at(2_001))
        .await
        .unwrap()
        .expect("readable");
    assert_eq!(got.status, TaskStatus::Failed);
    assert_eq!(got.status_message.as_deref(), Some("nobody answered"));
    assert_eq!(got.outcome.as_deref(), Some(&error));
    assert!(got.input_requests.is_empty());
    assert_eq!(got.expires_at, Some(at(100_000)));
    let last = store.timeline(&expired.id).await.unwrap();
    assert_eq!(last.last().map(|e| e.status), Some(TaskStatus::Failed));

    // The sweep after deletes the working one only; the still-waiting one is untouched.
    let gone: Vec<_> = store
        .delete_expired(at(2_001), 10)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(gone, vec![working.id.clone()]);
    let still = store.get(&later.id, at(2_001)).await.unwrap().unwrap();
    assert_eq!(still.status, TaskStatus::InputRequired);
    assert!(store
        .settle_expired_waiting(&params)
        .await
        .unwrap()
        .is_empty());
    // Readable until the new expiry, then deleted like any other (with `later`, which
    // expired meanwhile and was not settled: `delete_expired` alone deletes whatever
    // expired; settling first is the sweeper's order).
    assert!(store.get(&expired.id, at(100_000)).await.unwrap().is_none());
    let gone: Vec<_> = store
        .delete_expired(at(100_000), 10)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert!(gone.contains(&expired.id), "{gone:?}");
    assert_eq!(gone.len(), 2);
}
