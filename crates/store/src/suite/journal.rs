//! The journal of finished steps: recorded once, read back in order, fenced by status
//! and lease generation, deleted with the task.

use super::{at, ok_outcome, record};
use crate::error::StoreError;
use crate::journal::{RecordStep, Recorded, StepJournal};
use crate::record::{ClaimLeaseParams, TaskRecord, TransitionParams};
use crate::TaskStore;
use mcp_tasks_protocol::TaskId;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// The store's journal; `None` (the case is skipped, saying so) for a store that
/// keeps none: durable execution then re-runs every step, which is allowed.
fn journal_of(store: &Arc<dyn TaskStore>) -> Option<&dyn StepJournal> {
    let journal = store.journal();
    if journal.is_none() {
        eprintln!(
            "journal cases skipped: this store keeps no journal (TaskStore::journal is None)"
        );
    }
    journal
}

fn step(
    id: &TaskId,
    name: &str,
    output: serde_json::Value,
    fence: Option<u64>,
    ms: i64,
) -> RecordStep {
    RecordStep {
        id: id.clone(),
        step: name.to_string(),
        attempt: 1,
        output,
        lease_generation: fence,
        now: at(ms),
    }
}

/// Steps come back in the order they were recorded, with their outputs; a second
/// recording of a step changes nothing (the first wins).
pub async fn journal_records_steps_once_in_order(store: Arc<dyn TaskStore>) {
    let rec = record("alice", None, at(0));
    store.create(&rec).await.unwrap();
    let Some(journal) = journal_of(&store) else {
        return;
    };
    assert!(journal.steps(&rec.id).await.unwrap().is_empty());
    let first = journal
        .record_step(&step(&rec.id, "fetch#0", json!({"rows": 3}), None, 10))
        .await
        .unwrap();
    assert_eq!(first, Recorded::New);
    journal
        .record_step(&RecordStep {
            attempt: 2,
            ..step(&rec.id, "store#0", json!("done"), None, 20)
        })
        .await
        .unwrap();
    let again = journal
        .record_step(&step(&rec.id, "fetch#0", json!({"rows": 99}), None, 30))
        .await
        .unwrap();
    assert_eq!(again, Recorded::AlreadyThere);
    let steps = journal.steps(&rec.id).await.unwrap();
    let seen: Vec<_> = steps
        .iter()
        .map(|e| (e.step.as_str(), e.attempt, e.output.clone(), e.recorded_at))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("fetch#0", 1, json!({"rows": 3}), at(10)),
            ("store#0", 2, json!("done"), at(20)),
        ]
    );
    // Another task's journal is its own.
    let other = record("alice", None, at(1));
    store.create(&other).await.unwrap();
    assert!(journal.steps(&other.id).await.unwrap().is_empty());
}

/// A runner whose lease was taken over cannot write into the journal; one holding the
/// current generation can. An ended or unknown task takes no steps.
pub async fn journal_writes_are_fenced(store: Arc<dyn TaskStore>) {
    let rec = TaskRecord {
        runner: Some("a".into()),
        lease_until: Some(at(100)),
        lease_generation: 1,
        ..record("alice", None, at(0))
    };
    store.create(&rec).await.unwrap();
    let Some(journal) = journal_of(&store) else {
        return;
    };
    // Shared stores hand the lease over; single-process stores keep generation 1.
    let claimed = store
        .claim_lease(&ClaimLeaseParams {
            id: rec.id.clone(),
            runner: "b".into(),
            until: at(1_000),
            now: at(200),
        })
        .await
        .unwrap();
    if claimed.lease_generation != rec.lease_generation {
        let stale = journal
            .record_step(&step(
                &rec.id,
                "late#0",
                json!(1),
                Some(rec.lease_generation),
                210,
            ))
            .await;
        assert!(
            matches!(stale, Err(StoreError::LeaseConflict { .. })),
            "a stale runner's step must be refused, got {stale:?}"
        );
    }
    let current = journal
        .record_step(&step(
            &rec.id,
            "now#0",
            json!(2),
            Some(claimed.lease_generation),
            220,
        ))
        .await
        .unwrap();
    assert_eq!(current, Recorded::New);
    let names: Vec<_> = journal
        .steps(&rec.id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.step)
        .collect();
    assert_eq!(names, vec!["now#0".to_string()]);

    store
        .transition(&TransitionParams::finish(
            rec.id.clone(),
            ok_outcome("ok"),
            at(300),
        ))
        .await
        .unwrap();
    let after_end = journal
        .record_step(&step(&rec.id, "after#0", json!(3), None, 310))
        .await;
    assert!(
        matches!(after_end, Err(StoreError::Conflict { .. })),
        "{after_end:?}"
    );
    let unknown = journal
        .record_step(&step(&TaskId::generate(), "x#0", json!(4), None, 320))
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound)), "{unknown:?}");
}

/// Deleting a task (expiry) deletes its journal.
pub async fn journal_is_deleted_with_the_task(store: Arc<dyn TaskStore>) {
    let rec = TaskRecord {
        ttl: Some(Duration::from_secs(1)),
        expires_at: Some(at(1_000)),
        ..record("alice", None, at(0))
    };
    store.create(&rec).await.unwrap();
    let Some(journal) = journal_of(&store) else {
        return;
    };
    journal
        .record_step(&step(&rec.id, "a#0", json!(1), None, 10))
        .await
        .unwrap();
    assert_eq!(journal.steps(&rec.id).await.unwrap().len(), 1);
    let deleted = store.delete_expired(at(2_000), 10).await.unwrap();
    assert_eq!(deleted.len(), 1);
    assert!(journal.steps(&rec.id).await.unwrap().is_empty());
}
