//! Batched creation on PostgreSQL (`postgres/writer.rs`): creations queued together
//! share one statement, each still returns only once committed, a duplicate id fails
//! only its own creation, an end offered with a creation is committed with it, and the
//! change feed reports every created id. Skipped without `MCP_TASKS_TEST_PG_URL`.

#![allow(clippy::unwrap_used)]

use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::suite::postgres::{test_url, TestSchema};
use mcp_tasks_store::suite::{at, ok_outcome, record, to_status};
use mcp_tasks_store::{PendingCreate, PgStore, StoreError, StoreObserver, TaskRecord, TaskStore};
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::{Duration, Instant};

/// Remembers the size of every batch, and counts the batches flushers have taken
/// (told as each takes one, before it writes): the signal the test waits on.
#[derive(Debug)]
struct Batches {
    sizes: Mutex<Vec<usize>>,
    taken: tokio::sync::watch::Sender<usize>,
}

impl Batches {
    fn new() -> Self {
        Batches {
            sizes: Mutex::new(Vec::new()),
            taken: tokio::sync::watch::Sender::new(0),
        }
    }

    /// Waits (at most ten seconds) until `n` batches in all were taken by flushers.
    async fn until_taken(&self, n: usize) {
        let mut taken = self.taken.subscribe();
        let seen = tokio::time::timeout(Duration::from_secs(10), taken.wait_for(|&t| t >= n)).await;
        assert!(
            matches!(seen, Ok(Ok(_))),
            "{} of {n} batches taken",
            *self.taken.borrow()
        );
    }
}

impl StoreObserver for Batches {
    fn observe(&self, _: &'static str, _: &'static str, _: Duration, _: bool) {}

    fn observe_batch(&self, _backend: &'static str, size: usize) {
        self.sizes.lock().unwrap().push(size);
        self.taken.send_modify(|n| *n += 1);
    }
}

type Creating = Pin<Box<dyn Future<Output = Result<TaskRecord, StoreError>> + Send>>;

/// Polls every future until all ended; `polled` hears when each was polled once (so
/// every creation is queued).
async fn join_all(
    mut futures: Vec<Creating>,
    polled: tokio::sync::oneshot::Sender<()>,
) -> Vec<Result<TaskRecord, StoreError>> {
    let mut results: Vec<Option<Result<TaskRecord, StoreError>>> =
        futures.iter().map(|_| None).collect();
    let mut polled = Some(polled);
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, result) in futures.iter_mut().zip(results.iter_mut()) {
            if result.is_some() {
                continue;
            }
            match future.as_mut().poll(cx) {
                Poll::Ready(r) => *result = Some(r),
                Poll::Pending => pending = true,
            }
        }
        if let Some(polled) = polled.take() {
            let _ = polled.send(());
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    results.into_iter().map(Option::unwrap).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn creations_queued_together_share_a_batch_and_fail_alone() {
    let Some(server) = test_url() else {
        return;
    };
    let schema = TestSchema::create(&server).await;
    let store = PgStore::open(schema.url()).await.unwrap();
    let batches = Arc::new(Batches::new());
    store.set_store_observer(Arc::clone(&batches) as Arc<dyn StoreObserver>);
    let mut feed = store.subscribe_changes().await.unwrap().unwrap();

    // Already stored: their ids come back as duplicates in the batch.
    let existing: Vec<TaskRecord> = (0..3).map(|i| record("alice", None, at(i))).collect();
    for rec in &existing {
        store.create(rec).await.unwrap();
    }

    // Inserts wait while another session holds the table: both flushers get stuck on
    // their first creation, and everything after queues behind them.
    let mut locker = store.pool().begin().await.unwrap();
    sqlx::query("LOCK TABLE tasks IN SHARE MODE")
        .execute(&mut *locker)
        .await
        .unwrap();
    let first: Vec<TaskRecord> = (0..2).map(|i| record("bob", None, at(10 + i))).collect();
    let mut blocked = Vec::new();
    let before = *batches.taken.borrow();
    for (n, rec) in first.iter().enumerate() {
        let (store2, rec) = (store.clone(), rec.clone());
        blocked.push(tokio::spawn(async move { store2.create(&rec).await }));
        // One at a time: each flusher takes one creation (the observer hears it) and
        // then waits for the lock with it.
        batches.until_taken(before + n + 1).await;
    }

    let fresh: Vec<TaskRecord> = (0..100)
        .map(|i| record("carol", None, at(20 + i)))
        .collect();
    let twin = record("dave", None, at(200));
    let twin_again = TaskRecord {
        owner: "erin".to_string(),
        ..twin.clone()
    };
    let unstorable = TaskRecord {
        version: u64::MAX,
        ..record("frank", None, at(201))
    };
    let ending: Vec<TaskRecord> = (0..2).map(|i| record("grace", None, at(300 + i))).collect();
    let mut creating: Vec<Creating> = Vec::new();
    for rec in fresh
        .iter()
        .chain(&existing)
        .chain([&twin, &twin_again, &unstorable])
    {
        let pending = Arc::new(PendingCreate::new(rec.clone()));
        let store = store.clone();
        creating.push(Box::pin(async move { store.create_pending(pending).await }));
    }
    for rec in &ending {
        let pending = Arc::new(PendingCreate::new(rec.clone()));
        let end = to_status(&rec.id, TaskStatus::Completed, at(400)).outcome(ok_outcome("done"));
        assert!(pending.amend(end));
        let store = store.clone();
        creating.push(Box::pin(async move { store.create_pending(pending).await }));
    }
    let (polled, queued_all) = tokio::sync::oneshot::channel();
    let all = tokio::spawn(join_all(creating, polled));
    // Every creation is queued once the join was polled: then let the inserts through.
    queued_all.await.unwrap();
    locker.commit().await.unwrap();

    for handle in blocked {
        handle.await.unwrap().unwrap();
    }
    let results = tokio::time::timeout(Duration::from_secs(30), all)
        .await
        .unwrap()
        .unwrap();
    let (fresh_results, rest) = results.split_at(fresh.len());
    let (existing_results, rest) = rest.split_at(existing.len());
    for (rec, result) in fresh.iter().zip(fresh_results) {
        assert_eq!(result.as_ref().unwrap(), rec);
    }
    for result in existing_results {
        assert!(matches!(result, Err(StoreError::Duplicate)), "{result:?}");
    }
    // Of two creations with one id, the first queued wins.
    assert_eq!(rest[0].as_ref().unwrap(), &twin);
    assert!(
        matches!(rest[1], Err(StoreError::Duplicate)),
        "{:?}",
        rest[1]
    );
    assert!(
        matches!(&rest[2], Err(e) if !matches!(e, StoreError::Duplicate)),
        "{:?}",
        rest[2]
    );
    for (rec, result) in ending.iter().zip(&rest[3..]) {
        let stored = result.as_ref().unwrap();
        assert_eq!(stored.id, rec.id);
        assert_eq!(
            stored.status,
            TaskStatus::Completed,
            "committed with its end"
        );
        let read = store.get(&rec.id, at(500)).await.unwrap().unwrap();
        assert_eq!(&read, stored);
        assert_eq!(store.timeline(&rec.id).await.unwrap().len(), 2);
    }

    // Every creation that succeeded is stored, with its timeline entry.
    let created: Vec<&TaskRecord> = first
        .iter()
        .chain(&fresh)
        .chain([&twin])
        .chain(&ending)
        .collect();
    for rec in &created {
        let read = store.get(&rec.id, at(150)).await.unwrap().unwrap();
        assert_eq!(read.owner, rec.owner);
        assert!(!store.timeline(&rec.id).await.unwrap().is_empty());
    }
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM tasks")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(stored as usize, existing.len() + created.len());

    // The queued creations went in one batch, not one by one.
    let sizes = batches.sizes.lock().unwrap().clone();
    let queued = fresh.len() + existing.len() + 3 + ending.len();
    assert!(sizes.contains(&queued), "batch sizes {sizes:?}");

    // The feed reports every created id (and nothing made it fail).
    let mut unseen: HashSet<TaskId> = created.iter().map(|r| r.id.clone()).collect();
    unseen.extend(existing.iter().map(|r| r.id.clone()));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !unseen.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, feed.recv()).await {
            Ok(Some(change)) if change.task_id().is_some() => {
                unseen.remove(change.task_id().expect("a task's event"));
            }
            Ok(other) => panic!("unexpected feed event {other:?}"),
            Err(_) => panic!("{} created ids never reached the feed", unseen.len()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_concurrent_creations_are_all_committed_and_readable() {
    let Some(server) = test_url() else {
        return;
    };
    let schema = TestSchema::create(&server).await;
    let store = PgStore::open(schema.url()).await.unwrap();
    let records: Vec<TaskRecord> = (0..500).map(|i| record("alice", None, at(i))).collect();
    let handles: Vec<_> = records
        .iter()
        .map(|rec| {
            let (store, rec) = (store.clone(), rec.clone());
            tokio::spawn(async move { store.create(&rec).await })
        })
        .collect();
    for handle in handles {
        handle.await.unwrap().unwrap();
    }
    // Each returned only once committed: a read from another connection finds it.
    let other = PgStore::open(schema.url()).await.unwrap();
    for rec in &records {
        assert_eq!(
            other.get(&rec.id, at(1_000)).await.unwrap().as_ref(),
            Some(rec)
        );
    }
}
