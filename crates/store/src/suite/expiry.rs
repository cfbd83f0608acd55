//! Expiry: expired records look absent at once and are deleted in bounded batches.

use super::{at, record, to_status};
use crate::error::StoreError;
use crate::record::{ListParams, TaskRecord};
use crate::TaskStore;
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// A record of alice created at `created_ms` that expires `ttl_ms` later (or never).
fn expiring(created_ms: i64, ttl_ms: Option<u64>) -> TaskRecord {
    let mut rec = record("alice", Some("s1"), at(created_ms));
    if let Some(ttl) = ttl_ms {
        rec.ttl = Some(Duration::from_millis(ttl));
        rec.expires_at = Some(at(created_ms + ttl as i64));
    }
    rec
}

/// Lists all of alice's visible records at `now` in one page.
async fn visible(store: &dyn TaskStore, now_ms: i64) -> (Vec<TaskId>, bool) {
    let page = store
        .list(&ListParams {
            owner: "alice".to_string(),
            session: None,
            after: None,
            limit: 100,
            now: at(now_ms),
        })
        .await
        .unwrap();
    (
        page.records.into_iter().map(|r| r.id).collect(),
        page.has_more,
    )
}

/// Records are invisible to `get`, `list` and `transition` from `expires_at` on, even
/// before deletion; `delete_expired` removes at most `limit` per call and returns their
/// ids; records without a ttl are never deleted.
pub async fn expired_records_are_invisible_and_deleted_in_batches(store: Arc<dyn TaskStore>) {
    // Created first, so they come first in lists: never expire.
    let keep: Vec<TaskRecord> = (0..2).map(|i| expiring(i, None)).collect();
    // Expire at 10_010..10_012 (soon).
    let soon: Vec<TaskRecord> = (10..15)
        .map(|i| expiring(i, Some(10_000 - (i as u64 % 3))))
        .collect();
    // Expire at 60_020.
    let later: Vec<TaskRecord> = (20..23).map(|i| expiring(i, Some(60_000))).collect();
    for rec in keep.iter().chain(&soon).chain(&later) {
        store.create(rec).await.unwrap();
    }
    let ids = |recs: &[TaskRecord]| recs.iter().map(|r| r.id.clone()).collect::<Vec<_>>();

    // Before any expiry everything is visible and nothing is deleted.
    for rec in keep.iter().chain(&soon).chain(&later) {
        assert_eq!(
            store.get(&rec.id, at(10_007)).await.unwrap().as_ref(),
            Some(rec)
        );
    }
    assert!(store
        .delete_expired(at(10_007), 100)
        .await
        .unwrap()
        .is_empty());

    // At 10_020 every `soon` record has expired (expires_at <= now counts as expired).
    let now = 10_020;
    for rec in &soon {
        assert_eq!(store.get(&rec.id, at(now)).await.unwrap(), None);
        let err = store
            .transition(&to_status(&rec.id, TaskStatus::Cancelled, at(now)))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::NotFound), "{err:?}");
    }
    let edge = &soon[0];
    assert_eq!(
        store.get(&edge.id, edge.expires_at.unwrap()).await.unwrap(),
        None
    );
    let (listed, has_more) = visible(&*store, now).await;
    assert_eq!(listed, [ids(&keep), ids(&later)].concat());
    assert!(!has_more);
    // Expired records at the end of a page do not count as "more".
    let page = store
        .list(&ListParams {
            owner: "alice".to_string(),
            session: Some("s1".to_string()),
            after: None,
            limit: keep.len(),
            now: at(70_000),
        })
        .await
        .unwrap();
    assert_eq!(page.records, keep);
    assert!(!page.has_more);

    // Deleted in batches of at most two, each id once.
    let mut deleted = HashSet::new();
    for expected_len in [2, 2, 1, 0] {
        let batch = store.delete_expired(at(now), 2).await.unwrap();
        assert_eq!(batch.len(), expected_len, "{batch:?}");
        for gone in batch {
            // Reported as they were: working, waiting on no external job.
            assert_eq!(gone.status, TaskStatus::Working, "{gone:?}");
            assert_eq!(gone.external, None, "{gone:?}");
            assert!(deleted.insert(gone.id));
        }
    }
    assert_eq!(deleted, ids(&soon).into_iter().collect());

    // Far in the future only the ttl records go; the others stay.
    let mut last: Vec<TaskId> = store
        .delete_expired(at(1_000_000_000), 100)
        .await
        .unwrap()
        .into_iter()
        .map(|gone| gone.id)
        .collect();
    last.sort();
    let mut expected = ids(&later);
    expected.sort();
    assert_eq!(last, expected);
    assert!(store
        .delete_expired(at(1_000_000_000_000), 100)
        .await
        .unwrap()
        .is_empty());
    for rec in &keep {
        assert_eq!(
            store
                .get(&rec.id, at(1_000_000_000))
                .await
                .unwrap()
                .as_ref(),
            Some(rec)
        );
    }
    // A deleted id may be created again.
    store.create(&soon[0]).await.unwrap();
}

/// Several sweepers run `delete_expired` at once in small batches until nothing is
/// left (replicas sharing a database do): every expired record is deleted and reported
/// exactly once, and nothing else is touched.
pub async fn concurrent_sweeps_delete_each_record_once(store: Arc<dyn TaskStore>) {
    let expired: Vec<TaskRecord> = (0..60).map(|i| expiring(i, Some(1_000))).collect();
    let kept: Vec<TaskRecord> = (0..10)
        .map(|i| expiring(100 + i, if i % 2 == 0 { None } else { Some(9_000) }))
        .collect();
    for rec in expired.iter().chain(&kept) {
        store.create(rec).await.unwrap();
    }

    let sweepers: Vec<_> = (0..4)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let batch = store.delete_expired(at(5_000), 7).await.unwrap();
                    assert!(batch.len() <= 7, "{batch:?}");
                    if batch.is_empty() {
                        return mine;
                    }
                    mine.extend(batch.into_iter().map(|gone| gone.id));
                }
            })
        })
        .collect();
    let mut reported = Vec::new();
    for sweeper in sweepers {
        reported.extend(sweeper.await.unwrap());
    }
    let unique: HashSet<TaskId> = reported.iter().cloned().collect();
    assert_eq!(unique.len(), reported.len(), "an id was reported twice");
    assert_eq!(unique, expired.iter().map(|r| r.id.clone()).collect());
    for rec in &kept {
        assert_eq!(
            store.get(&rec.id, at(5_000)).await.unwrap().as_ref(),
            Some(rec)
        );
    }
}
