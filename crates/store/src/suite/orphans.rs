//! Start-up recovery: tasks left running by a previous process are failed.

use super::{at, ok_outcome, record, to_status};
use crate::record::{Outcome, TaskRecord};
use crate::TaskStore;
use mcp_tasks_protocol::TaskStatus;
use std::sync::Arc;

/// Moves `rec` to `status` and returns it as stored.
async fn set(
    store: &dyn TaskStore,
    rec: &TaskRecord,
    status: TaskStatus,
    outcome: Option<Outcome>,
) -> TaskRecord {
    store
        .transition(&to_status(&rec.id, status, at(10)).outcome(outcome))
        .await
        .unwrap()
}

/// Non-terminal records of any other runner (or none) become `failed` with the given
/// message and outcome; the current runner's and terminal records are untouched; the
/// count is returned, and a second call finds nothing.
pub async fn fail_orphaned_fails_only_other_runners(store: Arc<dyn TaskStore>) {
    let make = |i: i64, runner: Option<&str>| TaskRecord {
        runner: runner.map(str::to_string),
        ..record("alice", None, at(i))
    };
    let mut orphans = vec![make(0, Some("old")), make(1, Some("old")), make(2, None)];
    let mut untouched = vec![
        make(3, Some("current")),
        make(4, Some("current")),
        make(5, Some("old")),
    ];
    for rec in orphans.iter().chain(&untouched) {
        store.create(rec).await.unwrap();
    }
    // An orphan and a current task waiting for input; an old task already finished.
    orphans[1] = set(&*store, &orphans[1], TaskStatus::InputRequired, None).await;
    untouched[1] = set(&*store, &untouched[1], TaskStatus::InputRequired, None).await;
    untouched[2] = set(
        &*store,
        &untouched[2],
        TaskStatus::Completed,
        Some(ok_outcome("done")),
    )
    .await;

    let error = Outcome::Error {
        code: -32603,
        message: "the server restarted while the task was running".to_string(),
        data: None,
    };
    let message = "server restarted";
    let failed = store
        .fail_orphaned("current", message, &error, at(100))
        .await
        .unwrap();
    assert_eq!(failed, orphans.len() as u64);

    for rec in &orphans {
        let expected = TaskRecord {
            status: TaskStatus::Failed,
            status_message: Some(message.to_string()),
            outcome: Some(Box::new(error.clone())),
            last_updated_at: at(100),
            version: rec.version + 1,
            ..rec.clone()
        };
        assert_eq!(store.get(&rec.id, at(200)).await.unwrap(), Some(expected));
    }
    for rec in &untouched {
        assert_eq!(
            store.get(&rec.id, at(200)).await.unwrap().as_ref(),
            Some(rec)
        );
    }
    assert_eq!(
        store
            .fail_orphaned("current", message, &error, at(300))
            .await
            .unwrap(),
        0
    );
}

/// Records of another runner under a live lease (`lease_until > now`) are running
/// elsewhere and are spared; those whose lease expired (`lease_until <= now`) are
/// orphans like unleased ones.
pub async fn fail_orphaned_spares_live_leases(store: Arc<dyn TaskStore>) {
    let leased = |i: i64, until: Option<i64>| TaskRecord {
        runner: Some("elsewhere".to_string()),
        lease_until: until.map(at),
        lease_generation: u64::from(until.is_some()),
        ..record("alice", None, at(i))
    };
    let live = leased(0, Some(101));
    let orphans = [leased(1, Some(100)), leased(2, Some(50)), leased(3, None)];
    for rec in std::iter::once(&live).chain(&orphans) {
        store.create(rec).await.unwrap();
    }
    let error = Outcome::Error {
        code: -32603,
        message: "lost".to_string(),
        data: None,
    };
    let failed = store
        .fail_orphaned("current", "runner lost", &error, at(100))
        .await
        .unwrap();
    assert_eq!(failed, orphans.len() as u64);
    assert_eq!(
        store.get(&live.id, at(100)).await.unwrap().as_ref(),
        Some(&live)
    );
    for rec in &orphans {
        let got = store.get(&rec.id, at(100)).await.unwrap().unwrap();
        assert_eq!(got.status, TaskStatus::Failed, "{rec:?}");
        assert_eq!(
            (got.runner, got.lease_until, got.lease_generation),
            (rec.runner.clone(), rec.lease_until, rec.lease_generation),
            "failing an orphan leaves its lease fields"
        );
    }
}
