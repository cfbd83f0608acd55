//! Creating and reading records.

use super::{at, base_time, record};
use crate::error::StoreError;
use crate::record::Outcome;
use crate::TaskStore;
use mcp_tasks_protocol::{TaskId, TaskStatus};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Every field survives a create and a get, for a full record and a minimal one.
pub async fn create_then_get_round_trips(store: Arc<dyn TaskStore>) {
    let mut full = record("alice", Some("session-1"), base_time());
    full.status = TaskStatus::InputRequired;
    full.status_message = Some("waiting for an answer — ü".to_string());
    full.last_updated_at = at(1_500);
    full.ttl = Some(Duration::from_millis(3_600_000));
    full.expires_at = Some(at(3_600_000));
    full.poll_interval = Some(Duration::from_millis(1_250));
    full.request = json!({"name": "deploy", "arguments": {"env": "prod", "dry": false,
        "targets": [1, 2, 3], "nested": {"a": null}}, "_meta": {"k": "v"}})
    .into();
    full.outcome = Some(Box::new(Outcome::Error {
        code: -32603,
        message: "boom".to_string(),
        data: Some(json!({"detail": "disk full"})),
    }));
    full.runner = Some("runner-a".to_string());
    full.version = 7;
    full.lease_until = Some(at(90_000));
    full.lease_generation = 3;

    let mut minimal = record("bob", None, at(1));
    minimal.poll_interval = None;
    minimal.runner = None;
    minimal.request = json!({}).into();

    for rec in [&full, &minimal] {
        store.create(rec).await.unwrap();
    }
    for rec in [&full, &minimal] {
        let got = store.get(&rec.id, at(2)).await.unwrap();
        assert_eq!(got.as_ref(), Some(rec));
    }
}

/// Creating an id that exists fails with `Duplicate` and leaves the first record alone.
pub async fn create_duplicate_id_is_duplicate(store: Arc<dyn TaskStore>) {
    let first = record("alice", None, base_time());
    store.create(&first).await.unwrap();

    let mut second = record("mallory", Some("s"), at(5));
    second.id = first.id.clone();
    let err = store.create(&second).await.unwrap_err();
    assert!(matches!(err, StoreError::Duplicate), "{err:?}");
    assert_eq!(store.get(&first.id, at(10)).await.unwrap(), Some(first));
}

/// An id never created reads as absent, not as an error.
pub async fn get_unknown_is_none(store: Arc<dyn TaskStore>) {
    store
        .create(&record("alice", None, base_time()))
        .await
        .unwrap();
    for id in [
        TaskId::generate(),
        TaskId::from_string(""),
        TaskId::from_string("'; DROP"),
    ] {
        assert_eq!(store.get(&id, at(1)).await.unwrap(), None);
    }
}

/// Many ids, each created by three callers at once: exactly one create per id
/// succeeds, the others are `Duplicate`, and the stored record is the winner's (group
/// commit must keep this when duplicates share a batch).
pub async fn concurrent_creates_of_one_id_have_one_winner(store: Arc<dyn TaskStore>) {
    let mut attempts = Vec::new();
    for i in 0..40 {
        let first = record("alice", None, at(i));
        let rivals: Vec<_> = ["bob", "carol", "dave"]
            .iter()
            .map(|owner| {
                let mut rec = record(owner, Some("s"), at(i));
                rec.id = first.id.clone();
                rec
            })
            .collect();
        let handles: Vec<_> = rivals
            .into_iter()
            .map(|rec| {
                let store = Arc::clone(&store);
                tokio::spawn(async move {
                    let result = store.create(&rec).await;
                    (rec, result)
                })
            })
            .collect();
        attempts.push((first.id, handles));
    }
    for (id, handles) in attempts {
        let mut winners = Vec::new();
        for handle in handles {
            match handle.await.unwrap() {
                (rec, Ok(())) => winners.push(rec),
                (_, Err(StoreError::Duplicate)) => {}
                (_, Err(other)) => panic!("{id}: {other:?}"),
            }
        }
        assert_eq!(winners.len(), 1, "{id}: {winners:?}");
        assert_eq!(
            store.get(&id, at(1_000)).await.unwrap().as_ref(),
            Some(&winners[0])
        );
    }
}
