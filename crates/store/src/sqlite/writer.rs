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
//!
//! A step of a task's work ([`crate::journal`]) is written by the same writer, so a
//! step's recording shares its commit with whatever else is queued.
//!
//! A creation whose work already runs ([`PendingCreate`]) is sealed only after every
//! insert of its batch ran, just before the commit: when the work ended by then (an
//! instant tool), its end is applied in the same transaction, so creation and result
//! share one fsync and the first `tasks/get` after the reply finds the result.

use super::queries::STATEMENTS;
use super::row::{classify, query};
use crate::error::StoreError;
use crate::journal::RecordStep;
use crate::observed::ObserverSlot;
use crate::pending::PendingCreate;
use crate::record::TaskRecord;
use crate::sql::values::row_to_record;
use crate::sql::Call;
use sqlx::{Row as _, SqlitePool};
use std::collections::HashSet;
use std::sync::{Arc, LazyLock};
use tokio::sync::{mpsc, oneshot};

/// The most creates committed in one transaction.
pub const MAX_BATCH: usize = 256;

/// The most records one `INSERT` statement carries: a batch is inserted with a few
/// multi-row statements (each statement is a round trip to the sqlx connection's
/// thread, the cost that bounded a batch of one-row inserts).
const ROWS: usize = 32;

/// `INSERT_ROWS[k]` inserts `2^k` records (the values of the one-row insert of each,
/// one after the other), skipping an id that exists, and returns the ids it inserted.
/// A batch takes the largest that fits what is left, so any batch is a few statements
/// and only six shapes are ever prepared: each connection keeps every statement it
/// prepared, and an insert's program grows with its rows (every index and trigger of
/// `tasks` per row), so one statement per size from 1 to 32 would keep 528 rows'
/// worth of program per connection instead of 63.
///
/// The parameters are anonymous (`?`), bound in order: sqlx looks each numbered
/// parameter's name up, and SQLite finds a name by walking the statement's list of
/// names, so 600 numbered parameters cost 600 walks of 600 names per statement (6% of
/// the server's CPU while creating, by profile).
static INSERT_ROWS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let columns = crate::sql::statements::columns!();
    let width = columns.split(',').count();
    let row = format!("({})", vec!["?"; width].join(", "));
    std::iter::successors(Some(1_usize), |n| Some(n * 2))
        .take_while(|n| *n <= ROWS)
        .map(|n| {
            let rows = vec![row.as_str(); n];
            format!(
                "INSERT INTO tasks ({columns}) VALUES {} ON CONFLICT (id) DO NOTHING RETURNING id",
                rows.join(", ")
            )
        })
        .collect()
});

/// The index into [`INSERT_ROWS`] of the largest statement for `left` (> 0) records.
fn shape(left: usize) -> usize {
    let fits = left.min(ROWS);
    (usize::BITS - 1 - fits.leading_zeros()) as usize
}

/// Creates that may wait for the writer before callers wait to enqueue.
const QUEUE_CAPACITY: usize = 4 * MAX_BATCH;

/// What one queued create inserts.
#[derive(Debug)]
enum Job {
    /// A record, as it is.
    Record(Box<TaskRecord>),
    /// A record whose work runs: its end may come along (see [`PendingCreate`]).
    Pending(Arc<PendingCreate>),
    /// A finished step for the journal.
    Step(Box<RecordStep>),
}

impl Job {
    /// The record a create inserts (`None` for a step).
    fn record(&self) -> Option<&TaskRecord> {
        match self {
            Job::Record(r) => Some(r),
            Job::Pending(p) => Some(p.record()),
            Job::Step(_) => None,
        }
    }
}

/// What a job answers: for a create, `Some` record when an amendment was committed
/// with it; for a step, whether it inserted a row.
#[derive(Debug)]
enum Done {
    Created(Option<Box<TaskRecord>>),
    Step(bool),
}

type Answer = Result<Done, StoreError>;

/// One queued create and where its answer goes.
#[derive(Debug)]
struct Pending {
    job: Job,
    done: oneshot::Sender<Answer>,
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
        self.enqueue(Job::Record(Box::new(record.clone())))
            .await
            .map(|_| ())
    }

    /// Inserts a step into the journal in the next batch and waits until that batch
    /// committed: true when a row was inserted, false when the fenced insert changed
    /// nothing (the caller learns why with a read).
    pub(super) async fn record_step(&self, step: &RecordStep) -> Result<bool, StoreError> {
        match self.enqueue(Job::Step(Box::new(step.clone()))).await? {
            Done::Step(inserted) => Ok(inserted),
            Done::Created(_) => Ok(true),
        }
    }

    /// [`Writer::create`] of a creation whose work runs; returns the record as
    /// committed (after the work's end, when that came before the seal).
    pub(super) async fn create_pending(
        &self,
        pending: Arc<PendingCreate>,
    ) -> Result<TaskRecord, StoreError> {
        let record = pending.record().clone();
        match self.enqueue(Job::Pending(pending)).await? {
            Done::Created(amended) => Ok(amended.map_or(record, |r| *r)),
            Done::Step(_) => Ok(record),
        }
    }

    async fn enqueue(&self, job: Job) -> Answer {
        let (done, answer) = oneshot::channel();
        self.queue
            .send(Pending { job, done })
            .await
            .map_err(|_| stopped())?;
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
        crate::sql::batch::tell_size(&observer, "sqlite", batch.len());
        write(&pool, std::mem::take(&mut batch)).await;
    }
}

/// Writes one batch and answers every caller in it.
async fn write(pool: &SqlitePool, batch: Vec<Pending>) {
    let jobs: Vec<&Job> = batch.iter().map(|p| &p.job).collect();
    let answers = match insert_all(pool, &jobs).await {
        Ok(answers) => answers,
        Err(err) => {
            tracing::warn!(batch = batch.len(), error = %err, "SQLite create batch failed");
            batch
                .iter()
                .map(|_| Err(crate::sql::batch::same_error(&err)))
                .collect()
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
///
/// Creations whose work runs are sealed after all inserts, right before the commit:
/// an end offered by then is applied in the transaction. One that does not apply
/// leaves its creation as it was inserted (the answer is then the record as created,
/// and the creator, seeing it unfinished, writes the end as an ordinary transition).
async fn insert_all(pool: &SqlitePool, jobs: &[&Job]) -> Result<Vec<Answer>, StoreError> {
    let mut tx = pool.begin().await.map_err(classify)?;
    let mut answers = Vec::with_capacity(jobs.len());
    // The records that convert, with the index of their answer, inserted a few
    // statements at a time.
    let mut rows: Vec<(usize, Call<'_>)> = Vec::with_capacity(jobs.len());
    for (i, job) in jobs.iter().enumerate() {
        let Some(record) = job.record() else {
            answers.push(Ok(Done::Step(false)));
            continue;
        };
        match crate::sql::store::insert(&STATEMENTS, record) {
            Ok(call) => {
                rows.push((i, call));
                answers.push(Ok(Done::Created(None)));
            }
            Err(err) => answers.push(Err(err)),
        }
    }
    while !rows.is_empty() {
        let k = shape(rows.len());
        let chunk: Vec<(usize, Call<'_>)> = rows.drain(..1 << k).collect();
        let mut call = Call::new(INSERT_ROWS[k].as_str());
        let mut ids = Vec::with_capacity(chunk.len());
        for (i, row) in chunk {
            ids.push(i);
            call.args.extend(row.args);
        }
        let inserted = query(call).fetch_all(&mut *tx).await.map_err(classify)?;
        let mut inserted: HashSet<String> = inserted
            .iter()
            .map(|row| row.try_get::<String, _>(0))
            .collect::<Result<_, _>>()
            .map_err(classify)?;
        // Each inserted id answers the first create that carried it; every other
        // create (its id existed, or came twice in the batch) is a duplicate.
        for i in ids {
            let id = jobs[i].record().map(|r| r.id.as_str()).unwrap_or_default();
            if !inserted.remove(id) {
                answers[i] = Err(StoreError::Duplicate);
            }
        }
    }
    // Steps after the creates of the same batch: a step of a task created in it finds
    // its task.
    for (job, answer) in jobs.iter().zip(answers.iter_mut()) {
        let Job::Step(step) = job else { continue };
        *answer = match crate::sql::journal::record_call(&STATEMENTS.journal, step) {
            Ok(call) => match query(call).execute(&mut *tx).await.map_err(classify) {
                Ok(done) => Ok(Done::Step(done.rows_affected() > 0)),
                Err(err) => return Err(err),
            },
            Err(err) => Err(err),
        };
    }
    for (job, answer) in jobs.iter().zip(answers.iter_mut()) {
        let Job::Pending(pending) = job else { continue };
        let Some(end) = pending.seal() else { continue };
        if answer.is_ok() {
            let conn = &mut *tx;
            let applied = crate::sql::batch::apply_end(&STATEMENTS, &end, |call| async move {
                let row = query(call).fetch_optional(conn).await.map_err(classify)?;
                row.as_ref().map(row_to_record).transpose()
            });
            match applied.await {
                Ok(record) => *answer = Ok(Done::Created(Some(Box::new(record)))),
                Err(err) => {
                    tracing::warn!(task_id = %end.id, error = %err, "the end of a task created in the same batch did not apply; it is written on its own");
                }
            }
        }
    }
    tx.commit().await.map_err(classify)?;
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_takes_the_largest_statement_that_fits() {
        assert_eq!(INSERT_ROWS.len(), 6);
        let rows = |k: usize| INSERT_ROWS[k].matches("(?").count();
        assert_eq!(rows(shape(1)), 1);
        assert_eq!(rows(shape(3)), 2);
        assert_eq!(rows(shape(31)), 16);
        assert_eq!(rows(shape(32)), 32);
        assert_eq!(rows(shape(200)), 32);
    }
}
