//! Runner liveness (see [`crate::runner`]): a task stays with a runner that heartbeats,
//! whatever its `lease_until`; it is up for takeover once the runner is gone (its row
//! lapsed, retired or reaped) or the lease was released, fenced by generation.

use super::{at, ok_outcome, record, to_status};
use crate::record::{ClaimExpiredParams, Outcome, TaskRecord};
use crate::runner::{ReleaseLeasesParams, RunnerRecord};
use crate::TaskStore;
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::sync::Arc;

/// A running record held by `runner` at generation 1 until `until_ms`.
fn leased(i: i64, runner: &str, until_ms: i64) -> TaskRecord {
    TaskRecord {
        runner: Some(runner.to_string()),
        lease_until: Some(at(until_ms)),
        lease_generation: 1,
        ..record("alice", None, at(i))
    }
}

/// The row of `id` on `host`, alive until `alive_ms`.
fn runner(id: &str, host: &str, pid: u32, alive_ms: i64) -> RunnerRecord {
    RunnerRecord {
        id: id.to_string(),
        host: host.to_string(),
        pid,
        process_start: format!("boot:{pid}00"),
        started_at: at(0),
        alive_until: at(alive_ms),
    }
}

/// Whether the store keeps runner rows (the trait's defaults keep none: a store for a
/// single process needs no liveness); the cases are skipped, saying so, when not.
async fn keeps_runners(store: &dyn TaskStore) -> bool {
    let probe = runner("suite-probe", "suite-probe-host", 1, 1_000);
    store.heartbeat(&probe).await.unwrap();
    let kept = !store
        .runners_on_host("suite-probe-host")
        .await
        .unwrap()
        .is_empty();
    store.retire(&probe.id).await.unwrap();
    if !kept {
        eprintln!("runner cases skipped: this store keeps no runner rows (TaskStore::heartbeat's default)");
    }
    kept
}

fn takeover(runner: &str, now_ms: i64) -> ClaimExpiredParams {
    ClaimExpiredParams {
        runner: runner.to_string(),
        until: at(now_ms + 6_000),
        now: at(now_ms),
        limit: 100,
    }
}

/// The ids claimed, sorted.
async fn claimed(store: &dyn TaskStore, runner: &str, now_ms: i64) -> Vec<TaskId> {
    let mut ids: Vec<TaskId> = store
        .claim_expired_leases(&takeover(runner, now_ms))
        .await
        .unwrap()
        .into_iter()
        .map(|r| {
            assert_eq!(r.runner.as_deref(), Some(runner));
            r.id
        })
        .collect();
    ids.sort();
    ids
}

fn sorted(mut ids: Vec<TaskId>) -> Vec<TaskId> {
    ids.sort();
    ids
}

/// Tasks of a runner that heartbeats stay with it after their `lease_until` passed
/// (no per-task renewal), neither claimed nor failed as orphans; once its
/// `alive_until` passes they are claimed, each once, under the next generation. A
/// retired runner's tasks are claimable as soon as their lease passed.
pub async fn live_runners_keep_their_tasks_without_renewals(store: Arc<dyn TaskStore>) {
    if !keeps_runners(&*store).await {
        return;
    }
    let a = [leased(0, "a", 10), leased(1, "a", 10)];
    let c = leased(2, "c", 10);
    for rec in a.iter().chain([&c]) {
        store.create(rec).await.unwrap();
    }
    store
        .heartbeat(&runner("a", "h1", 11, 1_000))
        .await
        .unwrap();
    store
        .heartbeat(&runner("c", "h1", 12, 1_000))
        .await
        .unwrap();
    // A second heartbeat moves `alive_until` on and keeps the row's other fields.
    let mut later = runner("a", "h1", 11, 2_000);
    later.started_at = at(900);
    store.heartbeat(&later).await.unwrap();
    let rows = store.runners_on_host("h1").await.unwrap();
    assert_eq!(
        rows,
        vec![runner("a", "h1", 11, 2_000), runner("c", "h1", 12, 1_000)]
    );

    assert_eq!(claimed(&*store, "b", 500).await, Vec::<TaskId>::new());
    let error = Outcome::failed(crate::record::Failure::ServerRestarted, "restarted");
    let failed = store
        .fail_orphaned("b", "restarted", &error, at(500))
        .await
        .unwrap();
    assert_eq!(failed, 0, "a live runner's tasks are no orphans");

    // "c" exits cleanly: its task is free at once (its lease passed long ago).
    store.retire("c").await.unwrap();
    assert_eq!(claimed(&*store, "b", 600).await, vec![c.id.clone()]);
    // "a" lives until 2 000: still its own at 1 999, taken at 2 000, each once.
    assert_eq!(claimed(&*store, "b", 1_999).await, Vec::<TaskId>::new());
    let taken = store
        .claim_expired_leases(&takeover("b", 2_000))
        .await
        .unwrap();
    assert_eq!(
        sorted(taken.iter().map(|r| r.id.clone()).collect()),
        sorted(a.iter().map(|r| r.id.clone()).collect())
    );
    for rec in &taken {
        assert_eq!(rec.lease_generation, 2);
        assert_eq!(rec.lease_until, Some(at(8_000)));
    }
    assert_eq!(claimed(&*store, "d", 2_001).await, Vec::<TaskId>::new());
}

/// Released leases are claimable at once although their runner is alive and their
/// lease had not passed; a release naming a stale generation, another runner or an
/// ended task changes nothing, so the holder keeps it.
pub async fn released_leases_are_claimable_at_once_and_fenced(store: Arc<dyn TaskStore>) {
    if !keeps_runners(&*store).await {
        return;
    }
    let recs: Vec<TaskRecord> = (0..4).map(|i| leased(i, "a", 10_000)).collect();
    for rec in &recs {
        store.create(rec).await.unwrap();
    }
    store
        .heartbeat(&runner("a", "h1", 11, 10_000))
        .await
        .unwrap();
    let done = store
        .transition(
            &to_status(&recs[3].id, TaskStatus::Completed, at(50))
                .outcome(Some(ok_outcome("done"))),
        )
        .await
        .unwrap();
    let released = store
        .release_leases(&ReleaseLeasesParams {
            runner: "a".to_string(),
            leases: vec![
                (recs[0].id.clone(), 1),
                (recs[1].id.clone(), 7),
                (recs[3].id.clone(), 1),
                (TaskId::generate(), 1),
            ],
            now: at(100),
        })
        .await
        .unwrap();
    assert_eq!(released, 1);
    let stranger = store
        .release_leases(&ReleaseLeasesParams {
            runner: "z".to_string(),
            leases: vec![(recs[2].id.clone(), 1)],
            now: at(100),
        })
        .await
        .unwrap();
    assert_eq!(stranger, 0);
    let free = store.get(&recs[0].id, at(100)).await.unwrap().unwrap();
    assert_eq!(free.runner, None);
    assert_eq!(free.lease_generation, 1);

    let taken = store
        .claim_expired_leases(&takeover("b", 100))
        .await
        .unwrap();
    assert_eq!(taken.len(), 1, "{taken:?}");
    assert_eq!(taken[0].id, recs[0].id);
    assert_eq!(taken[0].lease_generation, 2);
    assert_eq!(taken[0].runner.as_deref(), Some("b"));
    // The others stay with "a"; the ended task stays as it ended.
    for rec in &recs[1..3] {
        let now = store.get(&rec.id, at(100)).await.unwrap().unwrap();
        assert_eq!(now.runner.as_deref(), Some("a"));
    }
    assert_eq!(store.get(&recs[3].id, at(100)).await.unwrap(), Some(done));
}

/// A reaped runner (dead, found by a process on its host) loses its row, and its
/// tasks become claimable at once, before their lease and its `alive_until` pass;
/// other runners of the host and of other hosts are untouched. Rows dead since a
/// moment are forgotten.
pub async fn reaped_runners_hand_their_tasks_over_at_once(store: Arc<dyn TaskStore>) {
    if !keeps_runners(&*store).await {
        return;
    }
    let dead = leased(0, "dead", 10_000);
    let alive = leased(1, "alive", 10_000);
    store.create(&dead).await.unwrap();
    store.create(&alive).await.unwrap();
    store
        .heartbeat(&runner("dead", "h1", 11, 10_000))
        .await
        .unwrap();
    store
        .heartbeat(&runner("alive", "h1", 12, 10_000))
        .await
        .unwrap();
    store
        .heartbeat(&runner("far", "h2", 11, 10_000))
        .await
        .unwrap();
    assert_eq!(
        store.runners_on_host("h2").await.unwrap(),
        vec![runner("far", "h2", 11, 10_000)]
    );
    assert_eq!(claimed(&*store, "new", 100).await, Vec::<TaskId>::new());

    let cut = store.reap_runner("dead", at(100)).await.unwrap();
    assert_eq!(cut, 1);
    assert_eq!(
        store.runners_on_host("h1").await.unwrap(),
        vec![runner("alive", "h1", 12, 10_000)]
    );
    assert_eq!(claimed(&*store, "new", 100).await, vec![dead.id.clone()]);
    // Reaping again finds nothing to do.
    assert_eq!(store.reap_runner("dead", at(200)).await.unwrap(), 0);
    assert_eq!(claimed(&*store, "new", 200).await, Vec::<TaskId>::new());

    // Rows not alive since a moment are forgotten, whatever their host; live ones stay.
    store
        .heartbeat(&runner("gone", "h3", 13, 5_000))
        .await
        .unwrap();
    assert_eq!(store.forget_dead_runners(at(5_000)).await.unwrap(), 1);
    assert_eq!(store.runners_on_host("h3").await.unwrap(), vec![]);
    assert_eq!(
        store.runners_on_host("h1").await.unwrap(),
        vec![runner("alive", "h1", 12, 10_000)]
    );
}
