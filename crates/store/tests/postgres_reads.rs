//! Batched reads on PostgreSQL (`postgres/reader.rs`): concurrent gets share one
//! statement, each waiter still gets its own row (or none, with its own expiry), and
//! a get never returns a record older than another replica's change that committed
//! before the get began. Skipped without `MCP_TASKS_TEST_PG_URL`.

#![allow(clippy::unwrap_used)]

use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::suite::postgres::{test_url, TestSchema};
use mcp_tasks_store::suite::{at, record, to_status};
use mcp_tasks_store::{PgStore, StoreError, StoreObserver, TaskRecord, TaskStore};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

/// Remembers the size of every read batch by kind (`check`, `read`), and counts the
/// batches of each kind flushers have taken (told as each takes one, before its
/// statement is sent): the signal the tests wait on.
#[derive(Debug)]
struct ReadBatches {
    sizes: Mutex<Vec<(&'static str, usize)>>,
    taken: tokio::sync::watch::Sender<usize>,
}

impl ReadBatches {
    fn new() -> Arc<Self> {
        Arc::new(ReadBatches {
            sizes: Mutex::new(Vec::new()),
            taken: tokio::sync::watch::Sender::new(0),
        })
    }

    /// The sizes of the batches of `kind` taken so far.
    fn sizes(&self, kind: &str) -> Vec<usize> {
        let sizes = self.sizes.lock().unwrap();
        sizes
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|&(_, n)| n)
            .collect()
    }

    /// Waits (at most ten seconds) until `n` batches in all were taken.
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

impl StoreObserver for ReadBatches {
    fn observe(&self, _: &'static str, _: &'static str, _: Duration, _: bool) {}

    fn observe_read_batch(&self, backend: &'static str, kind: &'static str, size: usize) {
        assert_eq!(backend, "postgresql");
        self.sizes.lock().unwrap().push((kind, size));
        self.taken.send_modify(|n| *n += 1);
    }
}

type Getting = Pin<Box<dyn Future<Output = Result<Option<TaskRecord>, StoreError>> + Send>>;

/// Polls every future until all ended; `polled` hears when each was polled once (so
/// every get is queued).
async fn join_all(
    mut futures: Vec<Getting>,
    polled: tokio::sync::oneshot::Sender<()>,
) -> Vec<Result<Option<TaskRecord>, StoreError>> {
    let mut results: Vec<Option<Result<Option<TaskRecord>, StoreError>>> =
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

/// Runs the gets `asks` (id, now) on `store` while another session holds the table, so
/// that both flushers of `kind` are stuck on a get of their own (`blockers`, one each)
/// and every get of `asks` queues behind them; then lets them through. Returns the
/// answers of `asks`, in order.
async fn queued_behind_a_lock(
    store: &PgStore,
    batches: &ReadBatches,
    blockers: [&TaskId; 2],
    asks: &[(TaskId, chrono::DateTime<chrono::Utc>)],
) -> Vec<Result<Option<TaskRecord>, StoreError>> {
    let mut locker = store.pool().begin().await.unwrap();
    sqlx::query("LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE")
        .execute(&mut *locker)
        .await
        .unwrap();
    let mut blocked = Vec::new();
    let before = *batches.taken.borrow();
    for (n, id) in blockers.into_iter().enumerate() {
        let (store, id) = (store.clone(), id.clone());
        blocked.push(tokio::spawn(async move { store.get(&id, at(0)).await }));
        // One at a time: each flusher takes one get (the observer hears it) and then
        // waits for the lock with it.
        batches.until_taken(before + n + 1).await;
    }
    let getting: Vec<Getting> = asks
        .iter()
        .map(|(id, now)| {
            let (store, id, now) = (store.clone(), id.clone(), *now);
            Box::pin(async move { store.get(&id, now).await }) as Getting
        })
        .collect();
    let (polled, queued_all) = tokio::sync::oneshot::channel();
    let all = tokio::spawn(join_all(getting, polled));
    queued_all.await.unwrap();
    locker.commit().await.unwrap();
    for handle in blocked {
        assert!(handle.await.unwrap().unwrap().is_some());
    }
    tokio::time::timeout(Duration::from_secs(30), all)
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_gets_share_a_statement_and_each_gets_its_own_row() {
    let Some(server) = test_url() else {
        return;
    };
    let schema = TestSchema::create(&server).await;
    let store = PgStore::open(schema.url()).await.unwrap();
    let other = PgStore::open(schema.url()).await.unwrap();
    let batches = ReadBatches::new();
    store.set_store_observer(Arc::clone(&batches) as Arc<dyn StoreObserver>);

    let tasks: Vec<TaskRecord> = (0..100).map(|i| record("alice", None, at(i))).collect();
    // Visible until at(500): one get before, one after, in the same batch.
    let expiring = TaskRecord {
        ttl: Some(Duration::from_millis(400)),
        expires_at: Some(at(500)),
        ..record("alice", None, at(100))
    };
    // Deleted by the other replica once its expiry passed: gone.
    let deleted = TaskRecord {
        ttl: Some(Duration::from_millis(200)),
        expires_at: Some(at(300)),
        ..record("alice", None, at(100))
    };
    // Changed by the other replica: the check misses, the row is read whole.
    let changed = record("bob", None, at(100));
    for rec in tasks.iter().chain([&expiring, &deleted, &changed]) {
        store.create(rec).await.unwrap();
        // Cached: the gets below are checks.
        assert_eq!(
            store.get(&rec.id, at(200)).await.unwrap().as_ref(),
            Some(rec)
        );
    }
    let gone = other.delete_expired(at(400), 10).await.unwrap();
    assert_eq!(gone.len(), 1);
    let written = other
        .transition(&to_status(&changed.id, TaskStatus::Working, at(150)).message("moved"))
        .await
        .unwrap();

    let mut asks: Vec<(TaskId, chrono::DateTime<chrono::Utc>)> =
        tasks.iter().map(|r| (r.id.clone(), at(200))).collect();
    asks.push((tasks[7].id.clone(), at(200))); // asked twice
    asks.push((expiring.id.clone(), at(499)));
    asks.push((expiring.id.clone(), at(500)));
    asks.push((deleted.id.clone(), at(200)));
    asks.push((changed.id.clone(), at(200)));
    let reads_before = batches.sizes("read").len();
    let results = queued_behind_a_lock(&store, &batches, [&tasks[0].id, &tasks[1].id], &asks).await;

    for (rec, result) in tasks.iter().zip(&results) {
        assert_eq!(result.as_ref().unwrap().as_ref(), Some(rec));
    }
    let rest = &results[tasks.len()..];
    assert_eq!(rest[0].as_ref().unwrap().as_ref(), Some(&tasks[7]));
    assert_eq!(rest[1].as_ref().unwrap().as_ref(), Some(&expiring));
    assert_eq!(rest[2].as_ref().unwrap(), &None, "expired at its own now");
    assert_eq!(rest[3].as_ref().unwrap(), &None, "deleted");
    assert_eq!(rest[4].as_ref().unwrap().as_ref(), Some(&written));

    // Every queued check went in one statement (behind the two that held the lock):
    // three statements for the checks of 107 gets.
    let checks = batches.sizes("check");
    let queued = asks.len();
    assert!(
        checks.ends_with(&[1, 1, queued]),
        "check batches {checks:?}"
    );
    // The changed task's whole row was read after its check.
    assert_eq!(batches.sizes("read")[reads_before..], [1]);

    // Whole reads batch the same way: a replica with nothing cached reads every row.
    let cold = PgStore::open(schema.url()).await.unwrap();
    let cold_batches = ReadBatches::new();
    cold.set_store_observer(Arc::clone(&cold_batches) as Arc<dyn StoreObserver>);
    let asks: Vec<(TaskId, chrono::DateTime<chrono::Utc>)> = tasks
        .iter()
        .map(|r| (r.id.clone(), at(200)))
        .chain([
            (TaskId::generate(), at(200)), // never created
            (expiring.id.clone(), at(600)),
        ])
        .collect();
    let results =
        queued_behind_a_lock(&cold, &cold_batches, [&tasks[0].id, &tasks[1].id], &asks).await;
    for (rec, result) in tasks.iter().zip(&results) {
        assert_eq!(result.as_ref().unwrap().as_ref(), Some(rec));
    }
    assert_eq!(results[tasks.len()].as_ref().unwrap(), &None);
    assert_eq!(results[tasks.len() + 1].as_ref().unwrap(), &None);
    assert_eq!(cold_batches.sizes("read"), [1, 1, asks.len()]);
    assert!(cold_batches.sizes("check").is_empty());
    let n_gets = asks.len() + 2;
    let n_statements = cold_batches.sizes("read").len();
    assert!(
        n_statements < n_gets,
        "{n_statements} statements for {n_gets} gets"
    );
}

/// Replica A serves gets of a few tasks from many concurrent readers (so batches are
/// always in flight, some started before any given commit); replica B changes the
/// tasks. A get on A that starts after B's change committed returns that change (or a
/// later one), never the record before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_get_after_another_replicas_commit_never_returns_the_old_record() {
    let Some(server) = test_url() else {
        return;
    };
    let schema = TestSchema::create(&server).await;
    let a = PgStore::open(schema.url()).await.unwrap();
    let b = PgStore::open(schema.url()).await.unwrap();
    let batches = ReadBatches::new();
    a.set_store_observer(Arc::clone(&batches) as Arc<dyn StoreObserver>);
    let now = at(1_000_000);

    const WRITERS: usize = 4;
    const TASKS_PER_WRITER: usize = 2;
    const ROUNDS: usize = 100;
    let tasks: Vec<TaskRecord> = (0..WRITERS * TASKS_PER_WRITER)
        .map(|i| record("alice", None, at(i as i64)))
        .collect();
    for rec in &tasks {
        b.create(rec).await.unwrap();
    }
    let ids: Arc<Vec<TaskId>> = Arc::new(tasks.iter().map(|r| r.id.clone()).collect());

    // Readers that keep A's batches busy with the same tasks, caching every version.
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..12)
        .map(|r| {
            let (a, ids, stop) = (a.clone(), Arc::clone(&ids), Arc::clone(&stop));
            tokio::spawn(async move {
                let mut i = r;
                while !stop.load(Ordering::Relaxed) {
                    assert!(a.get(&ids[i % ids.len()], now).await.unwrap().is_some());
                    i += 1;
                }
            })
        })
        .collect();

    // Each writer owns its tasks: after its change to one committed on B, its get on
    // A must return exactly that version.
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (a, b) = (a.clone(), b.clone());
            let mine: Vec<TaskId> = ids[w * TASKS_PER_WRITER..(w + 1) * TASKS_PER_WRITER].to_vec();
            tokio::spawn(async move {
                for round in 0..ROUNDS {
                    let id = &mine[round % mine.len()];
                    let message = format!("writer {w} round {round}");
                    let change = to_status(id, TaskStatus::Working, at(1_000 + round as i64))
                        .message(message.clone());
                    let written = b.transition(&change).await.unwrap();
                    let read = a.get(id, now).await.unwrap().unwrap();
                    assert_eq!(
                        (read.version, read.status_message.as_deref()),
                        (written.version, Some(message.as_str())),
                        "writer {w} round {round}: a get after the commit returned another version"
                    );
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for reader in readers {
        reader.await.unwrap();
    }
    // The gets did share statements while this ran (else the rule was not tested
    // under batching).
    let checks = batches.sizes("check");
    assert!(
        checks.iter().any(|&n| n > 1),
        "no check batch of more than one get: {checks:?}"
    );
}
