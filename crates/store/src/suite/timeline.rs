//! Timelines: one entry per creation and status change, written with the change, gone
//! with the task.

use super::{at, ok_outcome, record, to_status};
use crate::record::{ClaimExpiredParams, ClaimLeaseParams, Outcome, TaskRecord, TimelineEntry};
use crate::TaskStore;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::sync::Arc;

/// The entry a change to `status` (with `message`) at `when` should leave at `version`.
fn entry(
    task: &TaskId,
    version: u64,
    when: DateTime<Utc>,
    status: TaskStatus,
    message: Option<&str>,
) -> TimelineEntry {
    TimelineEntry {
        task: task.clone(),
        version,
        at: when,
        status,
        status_message: message.map(str::to_string),
    }
}

/// A status (and message) change of `id` at `ms`.
async fn change(
    store: &dyn TaskStore,
    id: &TaskId,
    status: TaskStatus,
    message: &str,
    ms: i64,
) -> TaskRecord {
    store
        .transition(
            &to_status(id, status, at(ms))
                .message(message.to_string())
                .outcome(status.is_terminal().then(|| ok_outcome("done"))),
        )
        .await
        .unwrap()
}

/// Creation writes the first entry (the record's own version, time, status and
/// message); every status change appends one with the new version, the transition's
/// time, status and message; updates that keep the status (progress), lease claims
/// and refused transitions append nothing. Entries come back by version, per task.
pub async fn timeline_records_creation_and_status_changes_only(store: Arc<dyn TaskStore>) {
    let rec = TaskRecord {
        status_message: Some("queued".to_string()),
        version: 5,
        ..record("alice", None, at(0))
    };
    let other = record("bob", None, at(1));
    store.create(&rec).await.unwrap();
    store.create(&other).await.unwrap();
    let id = &rec.id;
    let mut expected = vec![entry(id, 5, at(0), TaskStatus::Working, Some("queued"))];
    assert_eq!(store.timeline(id).await.unwrap(), expected);

    // Progress keeps the status: no entry, however many.
    for (n, ms) in [(1, 10), (2, 11), (3, 12)] {
        change(&*store, id, TaskStatus::Working, &format!("{n}/10"), ms).await;
    }
    assert_eq!(store.timeline(id).await.unwrap(), expected);

    let waiting = change(&*store, id, TaskStatus::InputRequired, "need input", 20).await;
    assert_eq!(waiting.version, 9);
    expected.push(entry(
        id,
        9,
        at(20),
        TaskStatus::InputRequired,
        Some("need input"),
    ));
    change(&*store, id, TaskStatus::InputRequired, "still waiting", 25).await;

    // Leases are no status change.
    let claimed = store
        .claim_lease(&ClaimLeaseParams {
            id: id.clone(),
            runner: "r1".to_string(),
            until: at(30),
            now: at(26),
        })
        .await
        .unwrap();
    store
        .claim_expired_leases(&ClaimExpiredParams {
            runner: "r2".to_string(),
            until: at(60),
            now: at(31),
            limit: 10,
        })
        .await
        .unwrap();
    assert_eq!(claimed.status, TaskStatus::InputRequired);

    change(&*store, id, TaskStatus::Working, "answered", 40).await;
    expected.push(entry(id, 11, at(40), TaskStatus::Working, Some("answered")));
    change(&*store, id, TaskStatus::Completed, "done", 50).await;
    expected.push(entry(id, 12, at(50), TaskStatus::Completed, Some("done")));
    // Out of a terminal status nothing applies, so nothing is recorded.
    assert!(store
        .transition(&to_status(id, TaskStatus::Cancelled, at(60)))
        .await
        .is_err());

    assert_eq!(store.timeline(id).await.unwrap(), expected);
    assert_eq!(
        store.timeline(&other.id).await.unwrap(),
        [entry(&other.id, 1, at(1), TaskStatus::Working, None)]
    );
    assert_eq!(
        store.timeline(&TaskId::generate()).await.unwrap(),
        Vec::new()
    );
}

/// `fail_orphaned` records the failure it writes (at its `now`, with its message);
/// expiry deletes a task's timeline with it and leaves the others.
pub async fn timeline_is_written_by_fail_orphaned_and_deleted_with_the_task(
    store: Arc<dyn TaskStore>,
) {
    let orphan = TaskRecord {
        runner: Some("dead".to_string()),
        ..record("alice", None, at(0))
    };
    let expiring = TaskRecord {
        ttl: Some(std::time::Duration::from_millis(100)),
        expires_at: Some(at(101)),
        ..record("alice", None, at(1))
    };
    store.create(&orphan).await.unwrap();
    store.create(&expiring).await.unwrap();
    store
        .transition(&to_status(&expiring.id, TaskStatus::InputRequired, at(5)))
        .await
        .unwrap();
    assert_eq!(store.timeline(&expiring.id).await.unwrap().len(), 2);

    let error = Outcome::Error {
        code: -32603,
        message: "restarted".to_string(),
        data: None,
    };
    assert_eq!(
        store
            .fail_orphaned("current", "server restarted", &error, at(50))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store.timeline(&orphan.id).await.unwrap(),
        [
            entry(&orphan.id, 1, at(0), TaskStatus::Working, None),
            entry(
                &orphan.id,
                2,
                at(50),
                TaskStatus::Failed,
                Some("server restarted")
            ),
        ]
    );

    let gone = store.delete_expired(at(200), 10).await.unwrap();
    assert_eq!(gone.len(), 1);
    assert_eq!(store.timeline(&expiring.id).await.unwrap(), Vec::new());
    assert_eq!(store.timeline(&orphan.id).await.unwrap().len(), 2);

    // An id created again after its task was deleted starts a fresh history.
    let again = TaskRecord {
        id: expiring.id.clone(),
        ..record("alice", None, at(300))
    };
    store.create(&again).await.unwrap();
    assert_eq!(
        store.timeline(&again.id).await.unwrap(),
        [entry(&again.id, 1, at(300), TaskStatus::Working, None)]
    );
}

/// Racing writers record each status change once: eight transitions to the same status
/// at once change it once (the others only rewrite the message) and leave one entry;
/// eight to a terminal status have one winner and one entry.
pub async fn racing_status_changes_are_recorded_once(store: Arc<dyn TaskStore>) {
    let rec = record("alice", None, at(0));
    store.create(&rec).await.unwrap();
    for (round, status) in [
        TaskStatus::InputRequired,
        TaskStatus::Working,
        TaskStatus::Completed,
    ]
    .into_iter()
    .enumerate()
    {
        let racers: Vec<_> = (0..8_i64)
            .map(|n| {
                let (store, id) = (store.clone(), rec.id.clone());
                tokio::spawn(async move {
                    let ms = 10 * (round as i64 + 1) + n;
                    store
                        .transition(
                            &to_status(&id, status, at(ms))
                                .message(format!("racer {n}"))
                                .outcome(status.is_terminal().then(|| ok_outcome("done"))),
                        )
                        .await
                        .is_ok()
                })
            })
            .collect();
        let mut applied = 0;
        for racer in racers {
            applied += usize::from(racer.await.unwrap());
        }
        assert_eq!(applied, if status.is_terminal() { 1 } else { 8 });
    }
    let timeline = store.timeline(&rec.id).await.unwrap();
    let statuses: Vec<TaskStatus> = timeline.iter().map(|e| e.status).collect();
    assert_eq!(
        statuses,
        [
            TaskStatus::Working,
            TaskStatus::InputRequired,
            TaskStatus::Working,
            TaskStatus::Completed
        ],
        "{timeline:#?}"
    );
    assert!(timeline.windows(2).all(|w| w[0].version < w[1].version));
    let last = store.get(&rec.id, at(100)).await.unwrap().unwrap();
    assert_eq!(timeline.last().map(|e| e.version), Some(last.version));
}

/// A creation offered its end before the store sealed it ([`crate::PendingCreate`])
/// stores both, as if created and then ended: the record comes back ended, a read finds
/// it ended, and the timeline has the creation and the end. An end offered after the
/// store sealed is refused, and the record comes back as created.
pub async fn a_pending_creation_takes_its_end_along(store: Arc<dyn TaskStore>) {
    let rec = record("alice", None, at(0));
    let pending = Arc::new(crate::PendingCreate::new(rec.clone()));
    let end = to_status(&rec.id, TaskStatus::Completed, at(1)).outcome(ok_outcome("done"));
    assert!(pending.amend(end.clone()), "open until the store seals it");
    let stored = store.create_pending(Arc::clone(&pending)).await.unwrap();
    assert_eq!(stored.status, TaskStatus::Completed);
    assert_eq!(stored.outcome.as_deref(), Some(&ok_outcome("done")));
    let read = store.get(&rec.id, at(2)).await.unwrap().unwrap();
    assert_eq!(read, stored);
    assert_eq!(
        store.timeline(&rec.id).await.unwrap(),
        vec![
            entry(&rec.id, rec.version, at(0), TaskStatus::Working, None),
            entry(&rec.id, stored.version, at(1), TaskStatus::Completed, None),
        ]
    );
    assert!(!pending.amend(end), "sealed once stored");

    let plain = record("bob", None, at(5));
    let stored = store
        .create_pending(Arc::new(crate::PendingCreate::new(plain.clone())))
        .await
        .unwrap();
    assert_eq!(stored, plain);
}
