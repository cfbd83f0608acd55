//! The compare-and-set of status changes: outcomes, versions, terminal finality, races.

use super::{at, base_time, ok_outcome, record, to_status};
use crate::error::StoreError;
use crate::record::{Outcome, TaskRecord};
use crate::TaskStore;
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::sync::Arc;

/// Asserts `result` is a conflict carrying exactly `current`.
#[track_caller]
fn assert_conflict(result: Result<TaskRecord, StoreError>, current: &TaskRecord) {
    match result {
        Err(StoreError::Conflict { current: got }) => assert_eq!(&*got, current),
        other => panic!("expected a conflict carrying {current:?}, got {other:?}"),
    }
}

/// A terminal transition records status, message and outcome, stamps the time, and
/// bumps the version; the stored record equals the returned one.
pub async fn transition_to_terminal_records_outcome_and_bumps_version(store: Arc<dyn TaskStore>) {
    let rec = record("alice", Some("s1"), base_time());
    store.create(&rec).await.unwrap();

    let outcome = ok_outcome("done");
    let updated = store
        .transition(
            &to_status(&rec.id, TaskStatus::Completed, at(250))
                .expecting(rec.version)
                .message("finished")
                .outcome(outcome.clone()),
        )
        .await
        .unwrap();

    let expected = TaskRecord {
        status: TaskStatus::Completed,
        status_message: Some("finished".to_string()),
        outcome: Some(Box::new(outcome)),
        last_updated_at: at(250),
        version: rec.version + 1,
        ..rec.clone()
    };
    assert_eq!(updated, expected);
    assert_eq!(store.get(&rec.id, at(300)).await.unwrap(), Some(expected));
}

/// Transitioning an id that does not exist is `NotFound`.
pub async fn unknown_id_transition_is_not_found(store: Arc<dyn TaskStore>) {
    store
        .create(&record("alice", None, base_time()))
        .await
        .unwrap();
    let err = store
        .transition(&to_status(
            &TaskId::generate(),
            TaskStatus::Cancelled,
            at(1),
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound), "{err:?}");
}

/// From each terminal status, every attempted status (with or without a version)
/// is a conflict carrying the unchanged record.
pub async fn no_transition_out_of_terminal(store: Arc<dyn TaskStore>) {
    for (i, terminal) in TaskStatus::ALL
        .into_iter()
        .filter(|s| s.is_terminal())
        .enumerate()
    {
        let rec = record("alice", None, at(i as i64));
        store.create(&rec).await.unwrap();
        let done = store
            .transition(
                &to_status(&rec.id, terminal, at(100))
                    .outcome(ok_outcome("first"))
                    .message(terminal.as_str().to_string()),
            )
            .await
            .unwrap();
        assert_eq!(done.status, terminal);

        for next in TaskStatus::ALL {
            for expected_version in [None, Some(done.version)] {
                let attempt = to_status(&rec.id, next, at(200))
                    .expecting(expected_version)
                    .message("late")
                    .outcome(Outcome::Error {
                        code: -1,
                        message: "late".to_string(),
                        data: None,
                    });
                assert_conflict(store.transition(&attempt).await, &done);
            }
        }
        assert_eq!(store.get(&rec.id, at(300)).await.unwrap(), Some(done));
    }
}

/// With `expected_version`, a stale version is a conflict carrying the current record,
/// and the current version succeeds (also between the two non-terminal statuses).
pub async fn expected_version_mismatch_is_conflict(store: Arc<dyn TaskStore>) {
    let rec = record("alice", None, base_time());
    store.create(&rec).await.unwrap();

    let ahead = to_status(&rec.id, TaskStatus::InputRequired, at(1)).expecting(rec.version + 1);
    assert_conflict(store.transition(&ahead).await, &rec);

    let waiting = store
        .transition(&to_status(&rec.id, TaskStatus::InputRequired, at(2)).expecting(rec.version))
        .await
        .unwrap();
    assert_eq!(waiting.status, TaskStatus::InputRequired);
    assert_eq!(waiting.version, rec.version + 1);

    let stale = to_status(&rec.id, TaskStatus::Cancelled, at(3)).expecting(rec.version);
    assert_conflict(store.transition(&stale).await, &waiting);

    let back = store
        .transition(&to_status(&rec.id, TaskStatus::Working, at(4)).expecting(waiting.version))
        .await
        .unwrap();
    assert_eq!(back.status, TaskStatus::Working);
    assert_eq!(back.version, rec.version + 2);
    assert_eq!(store.get(&rec.id, at(5)).await.unwrap(), Some(back));
}

/// Same status with a message changes only the message (and time, version);
/// `FieldChange::Keep` keeps the message and `FieldChange::Clear` clears it.
pub async fn message_only_update_keeps_status(store: Arc<dyn TaskStore>) {
    let rec = record("alice", None, base_time());
    store.create(&rec).await.unwrap();

    let halfway = store
        .transition(&to_status(&rec.id, TaskStatus::Working, at(10)).message("halfway"))
        .await
        .unwrap();
    assert_eq!(
        halfway,
        TaskRecord {
            status_message: Some("halfway".to_string()),
            last_updated_at: at(10),
            version: rec.version + 1,
            ..rec.clone()
        }
    );

    let kept = store
        .transition(&to_status(&rec.id, TaskStatus::Working, at(20)))
        .await
        .unwrap();
    assert_eq!(kept.status_message.as_deref(), Some("halfway"));
    assert_eq!(kept.status, TaskStatus::Working);
    assert_eq!(kept.version, rec.version + 2);

    let cleared = store
        .transition(&to_status(&rec.id, TaskStatus::Working, at(30)).clear_message())
        .await
        .unwrap();
    assert_eq!(cleared.status_message, None);
    assert_eq!(cleared.outcome, None);
    assert_eq!(store.get(&rec.id, at(40)).await.unwrap(), Some(cleared));
}

/// How many tasks each race case runs at once.
const RACES: usize = 50;

/// A cancel and a completion race on each of many tasks: exactly one wins per task,
/// the loser sees a conflict carrying the winner's record, and the winner's status sticks.
pub async fn cancel_vs_complete_race_has_one_winner(store: Arc<dyn TaskStore>) {
    let mut ids = Vec::new();
    for i in 0..RACES {
        let rec = record("alice", None, at(i as i64));
        store.create(&rec).await.unwrap();
        ids.push(rec.id);
    }

    let mut races = Vec::new();
    for id in &ids {
        let cancel = to_status(id, TaskStatus::Cancelled, at(1_000)).message("cancelled by client");
        let complete =
            to_status(id, TaskStatus::Completed, at(1_001)).outcome(ok_outcome("finished"));
        let (a, b) = (Arc::clone(&store), Arc::clone(&store));
        races.push((
            tokio::spawn(async move { a.transition(&cancel).await }),
            tokio::spawn(async move { b.transition(&complete).await }),
        ));
    }

    for (id, (cancel, complete)) in ids.iter().zip(races) {
        let results = [cancel.await.unwrap(), complete.await.unwrap()];
        let winners: Vec<&TaskRecord> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1, "task {id}: {results:?}");
        let winner = winners[0];
        assert!(winner.status.is_terminal());
        for loser in results.iter().filter_map(|r| r.as_ref().err()) {
            match loser {
                StoreError::Conflict { current } => assert_eq!(&**current, winner),
                other => panic!("task {id}: the loser failed with {other:?}"),
            }
        }
        let stored = store.get(id, at(2_000)).await.unwrap().unwrap();
        assert_eq!(&stored, winner);
        assert_eq!(
            stored.outcome.is_some(),
            stored.status == TaskStatus::Completed
        );
    }
}

/// Two non-terminal updates expecting the same version race on each of many tasks:
/// exactly one applies.
pub async fn compare_and_set_race_has_one_winner(store: Arc<dyn TaskStore>) {
    let mut ids = Vec::new();
    for i in 0..RACES {
        let rec = record("alice", None, at(i as i64));
        store.create(&rec).await.unwrap();
        ids.push((rec.id, rec.version));
    }

    let mut races = Vec::new();
    for (id, version) in &ids {
        let attempts = ["a", "b"].map(|who| {
            to_status(id, TaskStatus::InputRequired, at(1_000))
                .expecting(*version)
                .message(who.to_string())
        });
        races.push(attempts.map(|attempt| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.transition(&attempt).await })
        }));
    }

    for ((id, version), handles) in ids.iter().zip(races) {
        let mut results = Vec::new();
        for handle in handles {
            results.push(handle.await.unwrap());
        }
        let winners: Vec<&TaskRecord> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1, "task {id}: {results:?}");
        assert_eq!(winners[0].version, version + 1);
        let stored = store.get(id, at(2_000)).await.unwrap().unwrap();
        assert_eq!(&stored, winners[0]);
    }
}
