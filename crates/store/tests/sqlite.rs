//! The parity suite on the SQLite backend (a fresh file per test, and in memory), plus
//! what only a durable backend promises.

#![allow(clippy::unwrap_used)]

use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::suite::{at, base_time, new_delivery, ok_outcome, record, to_status};
use mcp_tasks_store::{
    ClaimDeliveriesParams, DeliveryOutbox, DeliveryResult, ListParams, SqliteStore, StoreError,
    TaskRecord, TaskStore,
};
use std::sync::Arc;
use std::time::Duration;
use tempfile::TempDir;

/// A store on a file in a temporary directory, and the directory (keep it while the
/// store is used).
async fn file_store() -> (SqliteStore, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let store = SqliteStore::open(&url).await.unwrap();
    (store, dir)
}

mod file {
    use super::*;

    async fn fresh_store() -> (Arc<dyn TaskStore>, TempDir) {
        let (store, dir) = file_store().await;
        (Arc::new(store), dir)
    }

    mcp_tasks_store::store_suite!(fresh_store);
}

mod in_memory {
    use super::*;

    mcp_tasks_store::store_suite!(|| async {
        Arc::new(SqliteStore::open("sqlite::memory:").await.unwrap()) as Arc<dyn TaskStore>
    });
}

/// Reads every record back by id.
async fn read_all(store: &dyn TaskStore, ids: &[TaskId]) -> Vec<TaskRecord> {
    let mut out = Vec::new();
    for id in ids {
        out.push(store.get(id, at(10_000)).await.unwrap().unwrap());
    }
    out
}

#[tokio::test]
async fn records_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("durable.db");
    let url = format!("sqlite://{}", path.display());

    let store = SqliteStore::open(&url).await.unwrap();
    let mut ids = Vec::new();
    for i in 0..6 {
        let mut rec = record("alice", Some("s1"), at(i));
        rec.ttl = Some(std::time::Duration::from_secs(3_600));
        rec.expires_at = Some(at(i + 3_600_000));
        store.create(&rec).await.unwrap();
        ids.push(rec.id);
    }
    store
        .transition(
            &to_status(&ids[0], TaskStatus::Completed, at(50))
                .outcome(ok_outcome("done"))
                .message("finished"),
        )
        .await
        .unwrap();
    store
        .transition(&to_status(&ids[1], TaskStatus::Cancelled, at(60)))
        .await
        .unwrap();
    store
        .transition(&to_status(&ids[2], TaskStatus::InputRequired, at(70)))
        .await
        .unwrap();
    let before = read_all(&store, &ids).await;
    // No orderly close: the data must already be on disk when calls return.
    drop(store);

    // Both URL spellings reach the same file.
    for url in [url.clone(), format!("sqlite:{}", path.display())] {
        let reopened = SqliteStore::open(&url).await.unwrap();
        assert_eq!(read_all(&reopened, &ids).await, before);
        let page = reopened
            .list(&ListParams {
                owner: "alice".to_string(),
                session: None,
                after: None,
                limit: 10,
                now: at(100),
            })
            .await
            .unwrap();
        assert_eq!(page.records, before);
    }
}

/// The outbox and the timelines are on disk when calls return: after a reopen (no
/// orderly close) a claimed delivery is still claimed (hidden until its claim expires,
/// then due with its attempts counted), a retried one keeps its error and due time, a
/// delivered one stays finished with its key taken, and a task's history is intact.
#[tokio::test]
async fn deliveries_and_timelines_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("outbox.db").display());
    let claim = |runner: &str, now: i64, limit: usize| ClaimDeliveriesParams {
        runner: runner.to_string(),
        now: at(now),
        until: at(now + 100),
        limit,
    };

    let store = SqliteStore::open(&url).await.unwrap();
    for key in ["claimed", "delivered", "retried"] {
        assert!(store.enqueue_delivery(&new_delivery(key, 0)).await.unwrap());
    }
    let claimed = store.claim_deliveries(&claim("r1", 1, 3)).await.unwrap();
    assert_eq!(claimed.len(), 3);
    store
        .finish_delivery("delivered", "r1", &DeliveryResult::Delivered { at: at(2) })
        .await
        .unwrap();
    let retry = DeliveryResult::Retry {
        next_attempt_at: at(500),
        error: "timeout".to_string(),
    };
    store
        .finish_delivery("retried", "r1", &retry)
        .await
        .unwrap();
    let rec = record("alice", None, at(0));
    store.create(&rec).await.unwrap();
    store
        .transition(&to_status(&rec.id, TaskStatus::InputRequired, at(3)))
        .await
        .unwrap();
    let timeline = store.timeline(&rec.id).await.unwrap();
    assert_eq!(timeline.len(), 2);
    drop(store);

    let reopened = SqliteStore::open(&url).await.unwrap();
    assert_eq!(reopened.timeline(&rec.id).await.unwrap(), timeline);
    assert_eq!(reopened.pending_deliveries().await.unwrap(), 2);
    assert!(!reopened
        .enqueue_delivery(&new_delivery("delivered", 0))
        .await
        .unwrap());
    // r1's claim on "claimed" lives until 101.
    assert!(reopened
        .claim_deliveries(&claim("r2", 100, 10))
        .await
        .unwrap()
        .is_empty());
    let taken = reopened
        .claim_deliveries(&claim("r2", 101, 10))
        .await
        .unwrap();
    assert_eq!(
        taken
            .iter()
            .map(|d| (d.key.as_str(), d.attempts))
            .collect::<Vec<_>>(),
        [("claimed", 2)]
    );
    reopened
        .finish_delivery("claimed", "r2", &DeliveryResult::Delivered { at: at(102) })
        .await
        .unwrap();
    let retried = reopened
        .claim_deliveries(&claim("r2", 500, 10))
        .await
        .unwrap();
    assert_eq!(retried.len(), 1);
    assert_eq!(
        (
            retried[0].key.as_str(),
            retried[0].attempts,
            retried[0].last_error.as_deref()
        ),
        ("retried", 2, Some("timeout"))
    );
    assert_eq!(retried[0].next_attempt_at, at(500));
}

#[tokio::test]
async fn open_by_url_creates_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    assert!(!path.exists());
    let store = mcp_tasks_store::open(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let rec = record("alice", None, base_time());
    store.create(&rec).await.unwrap();
    assert!(path.exists());
    assert_eq!(store.get(&rec.id, at(1)).await.unwrap(), Some(rec));
}

/// Hosts start the same stdio server twice at once, on one default file: both
/// processes migrate a new database at the same moment, and both must open it (the
/// second used to fail on a column the first had just added).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_opened_at_once_on_a_new_file_both_open() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("new.db").display());
        let opens: Vec<_> = (0..3)
            .map(|_| {
                let url = url.clone();
                tokio::spawn(async move { SqliteStore::open(&url).await })
            })
            .collect();
        let mut stores = Vec::new();
        for open in opens {
            let store = open.await.unwrap();
            stores.push(store.unwrap_or_else(|e| panic!("round {round}: {e}")));
        }
        let rec = record("alice", None, base_time());
        stores[0].create(&rec).await.unwrap();
        assert_eq!(stores[2].get(&rec.id, at(1)).await.unwrap(), Some(rec));
    }
}

#[tokio::test]
async fn journal_is_wal_with_full_sync() {
    let (store, _guard) = file_store().await;
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    let sync: i64 = sqlx::query_scalar("PRAGMA synchronous")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(sync, 2, "synchronous = FULL");
}

#[tokio::test]
async fn opening_in_a_missing_directory_fails() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}",
        dir.path().join("no/such/dir/tasks.db").display()
    );
    let err = SqliteStore::open(&url).await.unwrap_err();
    assert!(matches!(err, StoreError::Backend(_)), "{err:?}");
    // Named, with the folder that is missing; not SQLite's bare "code: 14".
    let text = err.to_string();
    let missing = dir.path().join("no/such/dir");
    assert!(
        text.contains(&format!(
            "cannot open {}: the folder {} does not exist",
            missing.join("tasks.db").display(),
            missing.display()
        )),
        "{text}"
    );
}

#[tokio::test]
async fn opening_under_a_file_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "not a folder").unwrap();
    let under_file = file.join("tasks.db");
    let err = SqliteStore::open(&format!("sqlite://{}", under_file.display()))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "cannot open {}: {} is a file, not a folder",
            under_file.display(),
            file.display()
        )),
        "{text}"
    );
}

/// Group commit: concurrent creates share one transaction, yet each returns only after
/// its commit. 32 creators on one file: every record is visible to another connection
/// (a second store on the file, as another process would open it) the moment its create
/// returns, and all of them are there at the end. (The rates are measured by the
/// `sqlite_group_commit` bench.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_are_committed_when_they_return() {
    const CREATORS: usize = 32;
    const EACH: usize = 10;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let store = SqliteStore::open(&url).await.unwrap();
    let other = SqliteStore::open(&url).await.unwrap();
    let handles: Vec<_> = (0..CREATORS)
        .map(|c| {
            let (store, other) = (store.clone(), other.clone());
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for i in 0..EACH {
                    let rec = record("alice", None, at((c * EACH + i) as i64));
                    store.create(&rec).await.unwrap();
                    assert!(
                        other.get(&rec.id, at(10_000)).await.unwrap().is_some(),
                        "a create returned before its commit"
                    );
                    ids.push(rec.id);
                }
                ids
            })
        })
        .collect();
    let mut ids = Vec::new();
    for handle in handles {
        ids.extend(handle.await.unwrap());
    }
    assert_eq!(read_all(&store, &ids).await.len(), CREATORS * EACH);
}

/// A duplicate id fails only its own create, however the writer groups them: ids
/// already stored and an id created twice at once come back [`StoreError::Duplicate`]
/// (one of the twins wins), every other concurrent create is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_duplicate_in_a_group_commit_fails_alone() {
    let (store, _guard) = file_store().await;
    let existing: Vec<TaskRecord> = (0..3).map(|i| record("alice", None, at(i))).collect();
    for rec in &existing {
        store.create(rec).await.unwrap();
    }
    let fresh: Vec<TaskRecord> = (0..200).map(|i| record("bob", None, at(10 + i))).collect();
    let twin = record("carol", None, at(500));
    let twin_again = TaskRecord {
        owner: "dave".to_string(),
        ..twin.clone()
    };
    let all: Vec<TaskRecord> = fresh
        .iter()
        .chain(&existing)
        .chain([&twin, &twin_again])
        .cloned()
        .collect();
    let handles: Vec<_> = all
        .into_iter()
        .map(|rec| {
            let store = store.clone();
            tokio::spawn(async move { store.create(&rec).await })
        })
        .collect();
    let mut results = Vec::new();
    for handle in handles {
        results.push(handle.await.unwrap());
    }
    let (fresh_results, rest) = results.split_at(fresh.len());
    assert!(fresh_results.iter().all(Result::is_ok), "{fresh_results:?}");
    for result in &rest[..existing.len()] {
        assert!(matches!(result, Err(StoreError::Duplicate)), "{result:?}");
    }
    let twins = &rest[existing.len()..];
    assert_eq!(twins.iter().filter(|r| r.is_ok()).count(), 1, "{twins:?}");
    assert_eq!(
        twins
            .iter()
            .filter(|r| matches!(r, Err(StoreError::Duplicate)))
            .count(),
        1,
        "{twins:?}"
    );
    assert_eq!(
        read_all(
            &store,
            &fresh.iter().map(|r| r.id.clone()).collect::<Vec<_>>()
        )
        .await,
        fresh
    );
    let stored = store.get(&twin.id, at(1_000)).await.unwrap().unwrap();
    assert!(
        stored.owner == "carol" || stored.owner == "dave",
        "{stored:?}"
    );
}

/// A create answered `Ok` is on disk: many concurrent creates, then the database is
/// reopened (no orderly close) and every record is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("batch.db").display());
    let store = SqliteStore::open(&url).await.unwrap();
    let handles: Vec<_> = (0..100)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut rec = record("alice", Some("s"), at(i));
                rec.ttl = Some(Duration::from_secs(3_600));
                rec.expires_at = Some(at(i + 3_600_000));
                store.create(&rec).await.unwrap();
                rec
            })
        })
        .collect();
    let mut created = Vec::new();
    for handle in handles {
        created.push(handle.await.unwrap());
    }
    drop(store);
    let reopened = SqliteStore::open(&url).await.unwrap();
    for rec in &created {
        assert_eq!(
            reopened.get(&rec.id, at(10)).await.unwrap().as_ref(),
            Some(rec)
        );
    }
}

/// The sweep's rows are already deleted when they are read back, so one whose job state
/// no longer decodes is reported without its job rather than failing the whole batch.
#[tokio::test]
async fn an_unreadable_external_job_does_not_lose_an_expiry_batch() {
    let (store, _guard) = file_store().await;
    let expiring = |i: i64| TaskRecord {
        ttl: Some(Duration::from_millis(1_000)),
        expires_at: Some(at(i + 1_000)),
        external: Some(Box::new(mcp_tasks_store::StoredJob {
            kind: "batch".to_string(),
            state: serde_json::json!({"job": i}),
        })),
        ..record("alice", None, at(i))
    };
    let (good, bad) = (expiring(0), expiring(1));
    store.create(&good).await.unwrap();
    store.create(&bad).await.unwrap();
    sqlx::query("UPDATE tasks SET external = 'not json' WHERE id = ?1")
        .bind(bad.id.as_str())
        .execute(store.pool())
        .await
        .unwrap();
    let mut gone = store.delete_expired(at(5_000), 10).await.unwrap();
    gone.sort_by_key(|g| g.id.to_string());
    let mut expected = vec![
        (good.id.clone(), good.external.clone().map(|job| *job)),
        (bad.id.clone(), None),
    ];
    expected.sort_by_key(|(id, _)| id.to_string());
    let got: Vec<_> = gone.into_iter().map(|g| (g.id, g.external)).collect();
    assert_eq!(got, expected);
}
