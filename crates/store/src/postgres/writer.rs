//! Batched creation: the creations that wait at the same moment share one statement,
//! one round trip and one commit.
//!
//! One `INSERT` per creation costs PostgreSQL a statement, a commit (a WAL flush) and a
//! round trip each; under many concurrent creations the commits, not the inserts,
//! bound the rate and most of the database's CPU. Callers of `PgStore::create` put
//! their record on a queue; a flusher takes whatever is queued (at most [`MAX_BATCH`])
//! and inserts it with one multi-row `INSERT … SELECT FROM UNNEST(arrays)`, committed on
//! its own, and only then answers each caller. So a creation still returns only once
//! it is committed, and many concurrent creations share the commit. A lone creation
//! pays nothing extra: it is the plain one-row `INSERT`, sent at once.
//!
//! The flushers are not a task of their own: the first caller that finds fewer than
//! [`FLUSHERS`] at work spawns one on its runtime, and it ends when the queue is empty.
//! So the store may be opened on one runtime and used on another, and two batches may
//! be in flight at once (one forms while the other commits).
//!
//! A duplicate id fails only its own creation: the batch inserts with
//! `ON CONFLICT (id) DO NOTHING RETURNING id`, and a creation whose id did not come
//! back is [`StoreError::Duplicate`]. Any other failure fails the whole batch (nothing
//! of it is committed: it is one statement, or one transaction).
//!
//! The triggers of the schema run per row as before: every created task gets its
//! timeline entry and its own notification on the change feed.
//!
//! A creation whose work already ended ([`PendingCreate`] with an amendment) is sealed
//! when its batch is taken; the batch then runs in a transaction that applies each
//! amendment after the insert, so creation and end share one commit, as on SQLite.

use super::queries::STATEMENTS;
use super::row::{classify, query};
use crate::error::StoreError;
use crate::observed::ObserverSlot;
use crate::pending::PendingCreate;
use crate::record::{TaskRecord, TransitionParams};
use crate::sql::values::row_to_record;
use crate::sql::{self, Arg};
use chrono::{DateTime, Utc};
use parking_lot::Mutex;
use sqlx::postgres::{PgArguments, Postgres};
use sqlx::query::Query;
use sqlx::{PgConnection, PgPool, Row as _};
use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, LazyLock};
use tokio::sync::oneshot;

/// The most creations inserted by one statement.
pub const MAX_BATCH: usize = 256;

/// Batches in flight at once: while one commits, the next forms.
pub const FLUSHERS: usize = 2;

/// The PostgreSQL type of each column of `columns!()`, in order.
const COLUMN_TYPES: [&str; 19] = [
    "text",        // id
    "text",        // owner
    "text",        // session
    "text",        // status
    "text",        // status_message
    "timestamptz", // created_at
    "timestamptz", // last_updated_at
    "bigint",      // ttl_ms
    "timestamptz", // expires_at
    "bigint",      // poll_interval_ms
    "text",        // method
    "text",        // request
    "text",        // outcome
    "text",        // runner
    "bigint",      // version
    "timestamptz", // lease_until
    "bigint",      // lease_generation
    "text",        // input_requests
    "text",        // external
];

/// Inserts the rows of one array per column; returns the ids inserted (a duplicate
/// id is skipped, and so missing).
static INSERT_MANY: LazyLock<String> = LazyLock::new(|| {
    let arrays: Vec<String> = COLUMN_TYPES
        .iter()
        .enumerate()
        .map(|(i, ty)| format!("${}::{ty}[]", i + 1))
        .collect();
    format!(
        "INSERT INTO tasks ({}) SELECT * FROM UNNEST({}) ON CONFLICT (id) DO NOTHING RETURNING id",
        sql::statements::columns!(),
        arrays.join(", ")
    )
});

/// What a creation answers: `Some` record when its amendment was committed with it.
type Answer = Result<Option<Box<TaskRecord>>, StoreError>;

/// One queued creation and where its answer goes.
#[derive(Debug)]
struct Queued {
    pending: Arc<PendingCreate>,
    done: oneshot::Sender<Answer>,
}

/// The queue and how many flushers work on it.
#[derive(Debug, Default)]
struct State {
    queue: VecDeque<Queued>,
    flushers: usize,
}

/// The batching writer of one store (shared by its clones).
#[derive(Debug, Clone)]
pub(super) struct Writer {
    pool: PgPool,
    state: Arc<Mutex<State>>,
    observer: ObserverSlot,
}

impl Writer {
    /// A writer over `pool`; each batch's size goes to the observer in `observer`.
    pub(super) fn new(pool: PgPool, observer: ObserverSlot) -> Self {
        Self {
            pool,
            state: Arc::default(),
            observer,
        }
    }

    /// Inserts `record` in the next batch and waits until that batch committed. A
    /// caller that stops waiting does not withdraw the record: it may still be written.
    pub(super) async fn create(&self, record: &TaskRecord) -> Result<(), StoreError> {
        self.create_pending(Arc::new(PendingCreate::new(record.clone())))
            .await
            .map(drop)
    }

    /// [`Writer::create`] of a creation whose work runs; returns the record as
    /// committed (after the work's end, when that was offered before the batch was
    /// taken).
    pub(super) async fn create_pending(
        &self,
        pending: Arc<PendingCreate>,
    ) -> Result<TaskRecord, StoreError> {
        let record = pending.record().clone();
        let (done, answer) = oneshot::channel();
        let spawn = {
            let mut state = self.state.lock();
            state.queue.push_back(Queued { pending, done });
            let spawn = state.flushers < FLUSHERS;
            if spawn {
                state.flushers += 1;
            }
            spawn
        };
        if spawn {
            tokio::spawn(self.clone().flush());
        }
        match answer.await {
            Ok(Ok(amended)) => Ok(amended.map_or(record, |r| *r)),
            Ok(Err(err)) => Err(err),
            Err(_) => Err(StoreError::Unavailable(
                "the PostgreSQL create batch was dropped before it answered (the runtime shut down)"
                    .to_string(),
            )),
        }
    }

    /// Writes batches until the queue is empty, then ends.
    async fn flush(self) {
        let mut slot = Slot(Some(Arc::clone(&self.state)));
        loop {
            let batch: Vec<Queued> = {
                let mut state = self.state.lock();
                if state.queue.is_empty() {
                    // Under the lock that queued the last creation: a caller queuing
                    // after this sees one flusher fewer and starts one.
                    state.flushers -= 1;
                    slot.0 = None;
                    return;
                }
                let n = state.queue.len().min(MAX_BATCH);
                state.queue.drain(..n).collect()
            };
            sql::batch::tell_size(&self.observer, "postgresql", batch.len());
            write(&self.pool, batch).await;
        }
    }
}

/// A flusher's place in [`State::flushers`], given back if the flusher stops without
/// finding the queue empty (it panicked, or its runtime dropped it), so that later
/// creations still find a flusher.
struct Slot(Option<Arc<Mutex<State>>>);

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(state) = self.0.take() {
            let mut state = state.lock();
            state.flushers = state.flushers.saturating_sub(1);
        }
    }
}

/// Writes one batch and answers every caller in it.
async fn write(pool: &PgPool, batch: Vec<Queued>) {
    let ends: Vec<Option<TransitionParams>> = batch.iter().map(|q| q.pending.seal()).collect();
    let records: Vec<&TaskRecord> = batch.iter().map(|q| q.pending.record()).collect();
    let answers = match insert_all(pool, &records, &ends).await {
        Ok(answers) => answers,
        Err(err) => {
            tracing::warn!(batch = batch.len(), error = %err, "PostgreSQL create batch failed");
            batch
                .iter()
                .map(|_| Err(sql::batch::same_error(&err)))
                .collect()
        }
    };
    for (queued, answer) in batch.into_iter().zip(answers) {
        // A caller that stopped waiting does not want its answer.
        let _ = queued.done.send(answer);
    }
}

/// Inserts every record and commits: one statement when no creation carries an end,
/// otherwise one transaction that applies the ends after the insert.
async fn insert_all(
    pool: &PgPool,
    records: &[&TaskRecord],
    ends: &[Option<TransitionParams>],
) -> Result<Vec<Answer>, StoreError> {
    if ends.iter().all(Option::is_none) {
        let mut conn = pool.acquire().await.map_err(classify)?;
        return insert(&mut conn, records).await;
    }
    let mut tx = pool.begin().await.map_err(classify)?;
    let mut answers = insert(&mut tx, records).await?;
    for (end, answer) in ends.iter().zip(answers.iter_mut()) {
        let (Some(end), Ok(_)) = (end, &answer) else {
            continue;
        };
        let conn = &mut *tx;
        let applied = sql::batch::apply_end(&STATEMENTS, end, |call| async move {
            let row = query(call).fetch_optional(conn).await.map_err(classify)?;
            row.as_ref().map(row_to_record).transpose()
        });
        match applied.await {
            Ok(record) => *answer = Ok(Some(Box::new(record))),
            Err(err) => {
                // The creator, seeing its task unfinished, writes the end itself.
                tracing::warn!(task_id = %end.id, error = %err, "the end of a task created in the same batch did not apply; it is written on its own");
            }
        }
    }
    tx.commit().await.map_err(classify)?;
    Ok(answers)
}

/// Inserts `records` on `conn`: the one-row statement for one, the array statement
/// for more. A record whose values cannot be stored gets its own error.
async fn insert(
    conn: &mut PgConnection,
    records: &[&TaskRecord],
) -> Result<Vec<Answer>, StoreError> {
    let mut answers: Vec<Answer> = Vec::with_capacity(records.len());
    let mut calls = Vec::with_capacity(records.len());
    for record in records {
        match sql::store::insert(&STATEMENTS, record) {
            Ok(call) => {
                calls.push(call);
                answers.push(Ok(None));
            }
            Err(err) => answers.push(Err(err)),
        }
    }
    if let [call] = &mut calls[..] {
        let call = std::mem::replace(call, sql::Call::new(""));
        if let Err(err) = query(call).execute(&mut *conn).await.map_err(classify) {
            let Some(answer) = answers.iter_mut().find(|a| a.is_ok()) else {
                return Err(err);
            };
            match err {
                StoreError::Duplicate => *answer = Err(StoreError::Duplicate),
                other => return Err(other),
            }
        }
        return Ok(answers);
    }
    if calls.is_empty() {
        return Ok(answers);
    }
    let rows = many(calls)?.fetch_all(&mut *conn).await.map_err(classify)?;
    let mut inserted: HashSet<String> = HashSet::with_capacity(rows.len());
    for row in &rows {
        inserted.insert(row.try_get("id").map_err(classify)?);
    }
    // Each inserted id answers the first creation that carried it; every other
    // creation (its id existed, or came twice in the batch) is a duplicate.
    for (record, answer) in records.iter().zip(answers.iter_mut()) {
        if answer.is_ok() && !inserted.remove(record.id.as_str()) {
            *answer = Err(StoreError::Duplicate);
        }
    }
    Ok(answers)
}

/// One array per column, in the column types [`INSERT_MANY`] casts to.
enum Column {
    Text(Vec<Option<String>>),
    Int(Vec<Option<i64>>),
    Time(Vec<Option<DateTime<Utc>>>),
}

/// [`INSERT_MANY`] with the values of `calls` (each the one-row insert of a record)
/// bound column by column.
fn many(calls: Vec<sql::Call<'_>>) -> Result<Query<'static, Postgres, PgArguments>, StoreError> {
    let n = calls.len();
    let mut columns: Vec<Column> = COLUMN_TYPES
        .iter()
        .map(|ty| match *ty {
            "text" => Column::Text(Vec::with_capacity(n)),
            "bigint" => Column::Int(Vec::with_capacity(n)),
            _ => Column::Time(Vec::with_capacity(n)),
        })
        .collect();
    for call in calls {
        if call.args.len() != columns.len() {
            return Err(mismatch());
        }
        for (column, arg) in columns.iter_mut().zip(call.args) {
            match (column, arg) {
                (Column::Text(v), Arg::Text(t)) => v.push(t.map(|t| t.into_owned())),
                (Column::Int(v), Arg::Int(i)) => v.push(i),
                (Column::Time(v), Arg::Time(t)) => v.push(t),
                _ => return Err(mismatch()),
            }
        }
    }
    Ok(columns.into_iter().fold(
        sqlx::query(INSERT_MANY.as_str()),
        |q, column| match column {
            Column::Text(v) => q.bind(v),
            Column::Int(v) => q.bind(v),
            Column::Time(v) => q.bind(v),
        },
    ))
}

/// The one-row insert and [`COLUMN_TYPES`] disagree: a bug, not a condition.
fn mismatch() -> StoreError {
    StoreError::Backend(
        "the batched insert's column types do not match the one-row insert's values".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_array_insert_numbers_one_array_per_column() {
        let sql = INSERT_MANY.as_str();
        assert!(sql.contains("$19::text[]"), "{sql}");
        assert!(!sql.contains("$20"), "{sql}");
        assert_eq!(
            sql::statements::columns!().split(',').count(),
            COLUMN_TYPES.len()
        );
    }
}
