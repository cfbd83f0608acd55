//! Leases: one runner holds a running task until an expiry; the generation fences out
//! a runner whose lease was taken over.

use super::{at, ok_outcome, record, to_status};
use crate::error::StoreError;
use crate::record::{ClaimExpiredParams, ClaimLeaseParams, RenewLeaseParams, TaskRecord};
use crate::TaskStore;
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// How many tasks each race runs at once.
const RACES: usize = 50;

/// A running record of nobody, with no lease.
fn unleased(i: i64) -> TaskRecord {
    TaskRecord {
        runner: None,
        ..record("alice", None, at(i))
    }
}

/// A running record held by `runner` at generation 1 until `until_ms`.
fn leased(i: i64, runner: &str, until_ms: i64) -> TaskRecord {
    TaskRecord {
        runner: Some(runner.to_string()),
        lease_until: Some(at(until_ms)),
        lease_generation: 1,
        ..record("alice", None, at(i))
    }
}

fn claim(id: &TaskId, runner: &str, until_ms: i64, now_ms: i64) -> ClaimLeaseParams {
    ClaimLeaseParams {
        id: id.clone(),
        runner: runner.to_string(),
        until: at(until_ms),
        now: at(now_ms),
    }
}

fn renew(
    id: &TaskId,
    runner: &str,
    generation: u64,
    until_ms: i64,
    now_ms: i64,
) -> RenewLeaseParams {
    RenewLeaseParams {
        id: id.clone(),
        runner: runner.to_string(),
        generation,
        until: at(until_ms),
        now: at(now_ms),
    }
}

/// `rec` as held by `runner` until `until_ms` at `generation`, nothing else changed.
fn held(rec: &TaskRecord, runner: &str, until_ms: i64, generation: u64) -> TaskRecord {
    TaskRecord {
        runner: Some(runner.to_string()),
        lease_until: Some(at(until_ms)),
        lease_generation: generation,
        ..rec.clone()
    }
}

#[track_caller]
fn assert_lease_conflict(result: Result<TaskRecord, StoreError>, current: &TaskRecord) {
    match result {
        Err(StoreError::LeaseConflict { current: got }) => assert_eq!(&*got, current),
        other => panic!("expected a lease conflict carrying {current:?}, got {other:?}"),
    }
}

/// Two runners claim the free lease of each of many tasks at once: exactly one wins,
/// gets generation 1 and the lease (version and `last_updated_at` unchanged), and the
/// other sees a lease conflict carrying the winner's record. A live lease, a terminal
/// task and an unknown id cannot be claimed.
pub async fn claim_lease_race_has_one_winner(store: Arc<dyn TaskStore>) {
    let mut recs = Vec::new();
    for i in 0..RACES {
        let rec = unleased(i as i64);
        store.create(&rec).await.unwrap();
        recs.push(rec);
    }
    let mut races = Vec::new();
    for rec in &recs {
        races.push(["a", "b"].map(|runner| {
            let store = Arc::clone(&store);
            let params = claim(&rec.id, runner, 60_000, 1_000);
            tokio::spawn(async move { store.claim_lease(&params).await })
        }));
    }
    for (rec, handles) in recs.iter().zip(races) {
        let mut results = Vec::new();
        for handle in handles {
            results.push(handle.await.unwrap());
        }
        let winners: Vec<&TaskRecord> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1, "task {}: {results:?}", rec.id);
        let winner = winners[0];
        let runner = winner.runner.as_deref().unwrap();
        assert_eq!(winner, &held(rec, runner, 60_000, 1));
        for loser in results.iter().filter_map(|r| r.as_ref().err()) {
            match loser {
                StoreError::LeaseConflict { current } => assert_eq!(&**current, winner),
                other => panic!("task {}: the loser failed with {other:?}", rec.id),
            }
        }
        assert_eq!(
            store.get(&rec.id, at(2_000)).await.unwrap().as_ref(),
            Some(winner)
        );
    }

    // Still live one millisecond before the expiry: a conflict, nothing changes.
    let holder = store.get(&recs[0].id, at(0)).await.unwrap().unwrap();
    assert_lease_conflict(
        store
            .claim_lease(&claim(&recs[0].id, "c", 90_000, 59_999))
            .await,
        &holder,
    );
    // At the expiry it is free again, under the next generation.
    let taken = store
        .claim_lease(&claim(&recs[0].id, "c", 90_000, 60_000))
        .await
        .unwrap();
    assert_eq!(taken, held(&holder, "c", 90_000, 2));

    let done = store
        .transition(&to_status(&recs[1].id, TaskStatus::Cancelled, at(3_000)))
        .await
        .unwrap();
    match store
        .claim_lease(&claim(&recs[1].id, "c", 90_000, 70_000))
        .await
    {
        Err(StoreError::Conflict { current }) => assert_eq!(*current, done),
        other => panic!("claiming a terminal task: {other:?}"),
    }
    let err = store
        .claim_lease(&claim(&TaskId::generate(), "c", 90_000, 70_000))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound), "{err:?}");
}

/// A holder renews with its generation (only the expiry moves); once another runner
/// has claimed the expired lease, the old holder's renewal is a lease conflict, as is a
/// renewal naming the right generation but another runner. A terminal task cannot be
/// renewed (a conflict), nor an expired or unknown one (not found).
pub async fn renew_with_stale_generation_is_lease_conflict(store: Arc<dyn TaskStore>) {
    let rec = unleased(0);
    store.create(&rec).await.unwrap();
    let a = store
        .claim_lease(&claim(&rec.id, "a", 1_000, 0))
        .await
        .unwrap();
    assert_eq!(a, held(&rec, "a", 1_000, 1));

    let renewed = store
        .renew_lease(&renew(&rec.id, "a", 1, 2_000, 500))
        .await
        .unwrap();
    assert_eq!(renewed, held(&rec, "a", 2_000, 1));

    // "a" stalls past its expiry; "b" takes over.
    let b = store
        .claim_lease(&claim(&rec.id, "b", 5_000, 2_500))
        .await
        .unwrap();
    assert_eq!(b, held(&rec, "b", 5_000, 2));
    assert_lease_conflict(
        store
            .renew_lease(&renew(&rec.id, "a", 1, 9_000, 2_600))
            .await,
        &b,
    );
    assert_lease_conflict(
        store
            .renew_lease(&renew(&rec.id, "a", 2, 9_000, 2_600))
            .await,
        &b,
    );
    let b = store
        .renew_lease(&renew(&rec.id, "b", 2, 6_000, 2_700))
        .await
        .unwrap();
    assert_eq!(b, held(&rec, "b", 6_000, 2));
    assert_eq!(
        store.get(&rec.id, at(2_800)).await.unwrap(),
        Some(b.clone())
    );

    let done = store
        .transition(&to_status(&rec.id, TaskStatus::Completed, at(3_000)))
        .await
        .unwrap();
    assert_eq!(
        done.lease_generation, 2,
        "a transition leaves the lease alone"
    );
    match store
        .renew_lease(&renew(&rec.id, "b", 2, 7_000, 3_100))
        .await
    {
        Err(StoreError::Conflict { current }) => assert_eq!(*current, done),
        other => panic!("renewing a terminal task: {other:?}"),
    }

    let mut short = unleased(1);
    short.ttl = Some(Duration::from_millis(10_000));
    short.expires_at = Some(at(10_001));
    store.create(&short).await.unwrap();
    store
        .claim_lease(&claim(&short.id, "a", 20_000, 0))
        .await
        .unwrap();
    for id in [&short.id, &TaskId::generate()] {
        let err = store
            .renew_lease(&renew(id, "a", 1, 30_000, 10_001))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::NotFound), "{err:?}");
    }
}

/// A transition carrying the writer's lease generation applies while that generation
/// is current (leaving the lease alone) and is a lease conflict once the task was taken
/// over, even towards a terminal status; the new holder's fenced write applies, and an
/// unfenced write (a client's cancel) ignores leases.
pub async fn fenced_transition_with_stale_generation_is_lease_conflict(store: Arc<dyn TaskStore>) {
    let rec = leased(0, "a", 1_000);
    let other = leased(1, "a", 1_000);
    for r in [&rec, &other] {
        store.create(r).await.unwrap();
    }
    let fenced = |generation: u64, status: TaskStatus, now_ms: i64| {
        to_status(&rec.id, status, at(now_ms))
            .fenced(generation)
            .message(format!("by generation {generation}"))
    };

    let progress = store
        .transition(&fenced(1, TaskStatus::Working, 500))
        .await
        .unwrap();
    assert_eq!(
        progress,
        TaskRecord {
            status_message: Some("by generation 1".to_string()),
            last_updated_at: at(500),
            version: rec.version + 1,
            ..rec.clone()
        }
    );

    // "a" stalls; "b" rescues both tasks.
    let rescued = store
        .claim_expired_leases(&ClaimExpiredParams {
            runner: "b".to_string(),
            until: at(9_000),
            now: at(1_000),
            limit: 10,
        })
        .await
        .unwrap();
    assert_eq!(rescued.len(), 2, "{rescued:?}");
    let taken = store.get(&rec.id, at(1_000)).await.unwrap().unwrap();
    assert_eq!(taken, held(&progress, "b", 9_000, 2));

    let late = fenced(1, TaskStatus::Completed, 1_100).outcome(ok_outcome("stale work"));
    assert_lease_conflict(store.transition(&late).await, &taken);
    assert_lease_conflict(
        store
            .transition(&fenced(1, TaskStatus::Working, 1_100))
            .await,
        &taken,
    );

    let finished = store
        .transition(&fenced(2, TaskStatus::Completed, 1_200).outcome(ok_outcome("fresh work")))
        .await
        .unwrap();
    assert_eq!(finished.status, TaskStatus::Completed);
    assert_eq!(finished.outcome.as_deref(), Some(&ok_outcome("fresh work")));
    assert_eq!(finished.lease_generation, 2);
    // Even against a terminal task a stale generation reports the lost lease first.
    assert_lease_conflict(store.transition(&late).await, &finished);

    let cancelled = store
        .transition(&to_status(&other.id, TaskStatus::Cancelled, at(1_300)))
        .await
        .unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
}

/// Expired leases of running, visible tasks are taken over in bounded batches, oldest
/// first, with the generation bumped (version untouched); claimers running at once
/// never get the same task; live leases, unleased, terminal and expired records are
/// left alone.
pub async fn expired_leases_are_claimed_once(store: Arc<dyn TaskStore>) {
    let expired: Vec<TaskRecord> = (0..30).map(|i| leased(i, "dead", 100 + i)).collect();
    let live: Vec<TaskRecord> = (30..35).map(|i| leased(i, "alive", 10_000)).collect();
    let unleased_recs: Vec<TaskRecord> = (35..38).map(unleased).collect();
    let terminal: Vec<TaskRecord> = (38..40).map(|i| leased(i, "dead", 100)).collect();
    let gone: Vec<TaskRecord> = (40..42)
        .map(|i| TaskRecord {
            ttl: Some(Duration::from_millis(500)),
            expires_at: Some(at(i + 500)),
            ..leased(i, "dead", 100)
        })
        .collect();
    for rec in expired
        .iter()
        .chain(&live)
        .chain(&unleased_recs)
        .chain(&terminal)
        .chain(&gone)
    {
        store.create(rec).await.unwrap();
    }
    for rec in &terminal {
        store
            .transition(&to_status(&rec.id, TaskStatus::Failed, at(50)))
            .await
            .unwrap();
    }
    let params = |runner: &str, limit: usize| ClaimExpiredParams {
        runner: runner.to_string(),
        until: at(60_000),
        now: at(1_000),
        limit,
    };

    // The two oldest leases first.
    let first = store.claim_expired_leases(&params("x", 2)).await.unwrap();
    let ids = |recs: &[TaskRecord]| recs.iter().map(|r| r.id.clone()).collect::<HashSet<_>>();
    assert_eq!(ids(&first), ids(&expired[..2]));
    for got in &first {
        let before = expired.iter().find(|r| r.id == got.id).unwrap();
        assert_eq!(got, &held(before, "x", 60_000, 2));
    }

    let claimers: Vec<_> = ["x", "y", "z"]
        .into_iter()
        .map(|runner| {
            let store = Arc::clone(&store);
            let params = params(runner, 4);
            tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let batch = store.claim_expired_leases(&params).await.unwrap();
                    assert!(batch.len() <= 4, "{batch:?}");
                    if batch.is_empty() {
                        return mine;
                    }
                    assert!(batch
                        .iter()
                        .all(|r| r.runner.as_deref() == Some(params.runner.as_str())));
                    mine.extend(batch);
                }
            })
        })
        .collect();
    let mut claimed = first;
    for claimer in claimers {
        claimed.extend(claimer.await.unwrap());
    }
    assert_eq!(claimed.len(), expired.len(), "a task was claimed twice");
    assert_eq!(ids(&claimed), ids(&expired));
    for got in &claimed {
        let before = expired.iter().find(|r| r.id == got.id).unwrap();
        let runner = got.runner.as_deref().unwrap();
        assert_eq!(got, &held(before, runner, 60_000, 2));
        assert_eq!(
            store.get(&got.id, at(1_000)).await.unwrap().as_ref(),
            Some(got)
        );
    }
    for rec in live.iter().chain(&unleased_recs) {
        assert_eq!(
            store.get(&rec.id, at(1_000)).await.unwrap().as_ref(),
            Some(rec)
        );
    }
    for rec in &terminal {
        let now = store.get(&rec.id, at(1_000)).await.unwrap().unwrap();
        assert_eq!(now.runner.as_deref(), Some("dead"));
        assert_eq!(now.lease_generation, 1);
    }
    assert!(store
        .claim_expired_leases(&params("x", 100))
        .await
        .unwrap()
        .is_empty());
}
