//! Group commit of `create`s: one transaction (so one `fsync` of the WAL) for every
//! create that is queued at the same moment.
//!
//! With `synchronous = FULL` each commit waits for the disk, and that wait, not the
//! insert, bounds how many tasks per second one database file accepts. Callers of
//! `SqliteStore::create` put their record on a bounded queue; one writer task takes
//! whatever is queued (at least one, at most [`MAX_BATCH`]), inserts it all in one
//! transaction, commits, and only then answers each caller. So a `create` still
//! returns only after its record is on disk; many concurrent creates share the wait.
//! A lone create pays nothing extra: the writer does not linger for company.

use super::row::{classify, insert};
use crate::error::StoreError;
use crate::observed::ObserverSlot;
use crate::record::TaskRecord;
use sqlx::SqlitePool;
use tokio::sync::{mpsc, oneshot};

/// The most creates committed in one transaction.
pub const MAX_BATCH: usize = 256;

/// Creates that may wait for the writer before callers wait to enqueue.
const QUEUE_CAPACITY: usize = 4 * MAX_BATCH;

/// One queued create and where its answer goes.
#[derive(Debug)]
struct Pending {
    record: TaskRecord,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// The queue into the writer task. Cloned with the store; the task ends when the last
/// clone is dropped.
#[derive(Debug, Clone)]
pub(super) struct Writer {
    queue: mpsc::Sender<Pending>,
}

impl Writer {
    /// Starts the writer task on the current tokio runtime.
    /// Each batch's size goes to the observer in `observer`, once one is set.
    pub(super) fn spawn(pool: SqlitePool, observer: ObserverSlot) -> Self {
        let (queue, rx) = mpsc::channel(QUEUE_CAPACITY);
        tokio::spawn(run(pool, rx, observer));
        Self { queue }
    }

    /// Inserts `record` in the next batch and waits until that batch committed. A
    /// caller that stops waiting does not withdraw the record: it may still be written.
    pub(super) async fn create(&self, record: &TaskRecord) -> Result<(), StoreError> {
        let (done, answer) = oneshot::channel();
        let pending = Pending {
            record: record.clone(),
            done,
        };
        self.queue.send(pending).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

/// The writer is gone: its runtime shut down, or it panicked.
fn stopped() -> StoreError {
    StoreError::Unavailable("the SQLite writer task has stopped".to_string())
}

async fn run(pool: SqlitePool, mut rx: mpsc::Receiver<Pending>, observer: ObserverSlot) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let told = observer.read().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(told) = told {
            told.observe_batch("sqlite", batch.len());
        }
        write(&pool, std::mem::take(&mut batch)).await;
    }
}

/// Writes one batch and answers every caller in it.
async fn write(pool: &SqlitePool, batch: Vec<Pending>) {
    let records: Vec<&TaskRecord> = batch.iter().map(|p| &p.record).collect();
    let answers = match insert_all(pool, &records).await {
        Ok(answers) => answers,
        Err(err) => {
            tracing::warn!(batch = batch.len(), error = %err, "SQLite create batch failed");
            batch.iter().map(|_| Err(same_error(&err))).collect()
        }
    };
    for (pending, answer) in batch.into_iter().zip(answers) {
        // A caller that stopped waiting does not want its answer.
        let _ = pending.done.send(answer);
    }
}

/// Inserts every record in one transaction and commits it. A record that cannot be
/// stored (a duplicate id, a value out of range) gets its own error and the others go
/// on; any other failure rolls the whole batch back.
async fn insert_all(
    pool: &SqlitePool,
    records: &[&TaskRecord],
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    let mut tx = pool.begin().await.map_err(classify)?;
    let mut answers = Vec::with_capacity(records.len());
    for record in records {
        let answer = match insert(record) {
            // SQLite undoes only the failed statement of a constraint violation; the
            // transaction and the other inserts stay.
            Ok(query) => match query.execute(&mut *tx).await.map_err(classify) {
                Ok(_) => Ok(()),
                Err(StoreError::Duplicate) => Err(StoreError::Duplicate),
                Err(err) => return Err(err),
            },
            Err(err) => Err(err),
        };
        answers.push(answer);
    }
    tx.commit().await.map_err(classify)?;
    Ok(answers)
}

/// The batch's error once per caller (a [`StoreError`] is not `Clone`: backend
/// errors keep only their message).
fn same_error(err: &StoreError) -> StoreError {
    match err {
        StoreError::Unavailable(message) => StoreError::Unavailable(message.clone()),
        other => StoreError::Backend(other.to_string().into()),
    }
}
