//! Batched reads: the gets that wait at the same moment share one statement and one
//! round trip.
//!
//! Every `tasks/get` on PostgreSQL costs a round trip to the database: the narrow check
//! of a cached record, or the whole row when nothing is cached or the row moved
//! (`cache.rs`). Under many concurrent gets those round trips, and the database's work
//! per statement, bound the rate, not the rows. So a get puts its id on a queue; a
//! flusher takes whatever is queued (at most [`MAX_BATCH`]), reads every id with one
//! `… WHERE id = ANY($1)`, and answers each waiter with its own row, or with none when
//! the task is gone. A lone get pays nothing extra: nothing is in flight, so a flusher
//! is spawned for it at once and sends it alone.
//!
//! As for creations (`writer.rs`), the flushers are not a task of their own: the first
//! caller that finds fewer than [`FLUSHERS`] at work spawns one on its runtime, and it
//! ends when the queue is empty. So at most two batches of one kind are in flight, and
//! while they run the next one forms.
//!
//! The read rule (a read never returns a record older than what was committed when it
//! began) holds because a batch is taken off the queue before its statement is sent:
//! every waiter it answers was queued, so had begun, before the statement started, and
//! under READ COMMITTED a statement sees everything committed before it started. A get
//! that arrives while a batch is in flight is not in that batch; it waits for a later
//! one.
//!
//! The statements carry no `now`: the waiters of one batch read at different moments,
//! so each applies its own expiry to its row (`visible`).

use crate::error::StoreError;
use crate::observed::ObserverSlot;
use crate::sql::batch::{same_error, tell_read_size};
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use mcp_tasks_protocol::TaskId;
use parking_lot::Mutex;
use sqlx::PgPool;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::oneshot;

/// The most gets answered by one statement.
pub const MAX_BATCH: usize = 256;

/// Batches of one kind in flight at once: while one runs, the next forms.
pub const FLUSHERS: usize = 2;

/// What one kind of batch reads: its rows by id, with one statement.
pub(super) trait Batch: std::fmt::Debug + Send + Sync + 'static {
    /// What a waiter is answered for its id.
    type Row: Clone + std::fmt::Debug + Send + 'static;

    /// The kind's name, for the observer (`check` or `read`).
    const KIND: &'static str;

    /// The rows of `ids` (distinct), by id; an id without a row is left out.
    fn fetch(
        pool: &PgPool,
        ids: Vec<&str>,
    ) -> impl Future<Output = Result<HashMap<String, Self::Row>, StoreError>> + Send;
}

/// What a waiter is answered: its row, or none.
type Answer<R> = Result<Option<R>, StoreError>;

/// One queued get and where its answer goes.
#[derive(Debug)]
struct Waiter<R> {
    id: TaskId,
    done: oneshot::Sender<Answer<R>>,
}

/// The queue and how many flushers work on it.
#[derive(Debug)]
struct State<R> {
    queue: VecDeque<Waiter<R>>,
    flushers: usize,
}

/// The batching reader of one kind, of one store (shared by its clones).
#[derive(Debug)]
pub(super) struct Reader<B: Batch> {
    pool: PgPool,
    state: Arc<Mutex<State<B::Row>>>,
    observer: ObserverSlot,
}

impl<B: Batch> Clone for Reader<B> {
    fn clone(&self) -> Self {
        Self {
            pool: self.pool.clone(),
            state: Arc::clone(&self.state),
            observer: Arc::clone(&self.observer),
        }
    }
}

impl<B: Batch> Reader<B> {
    /// A reader over `pool`; each batch's size goes to the observer in `observer`.
    pub(super) fn new(pool: PgPool, observer: ObserverSlot) -> Self {
        Self {
            pool,
            state: Arc::new(Mutex::new(State {
                queue: VecDeque::new(),
                flushers: 0,
            })),
            observer,
        }
    }

    /// The row of `id`, read by a batch whose statement starts after this call began.
    /// A caller that stops waiting leaves its id in the batch; its answer is dropped.
    pub(super) async fn read(&self, id: &TaskId) -> Answer<B::Row> {
        let (done, answer) = oneshot::channel();
        let spawn = {
            let mut state = self.state.lock();
            state.queue.push_back(Waiter {
                id: id.clone(),
                done,
            });
            let spawn = state.flushers < FLUSHERS;
            if spawn {
                state.flushers += 1;
            }
            spawn
        };
        if spawn {
            tokio::spawn(self.clone().flush());
        }
        answer.await.unwrap_or_else(|_| {
            Err(StoreError::Unavailable(
                "the PostgreSQL read batch was dropped before it answered (the runtime shut down)"
                    .to_string(),
            ))
        })
    }

    /// Reads batches until the queue is empty, then ends.
    async fn flush(self) {
        let mut slot = Slot(Some(Arc::clone(&self.state)));
        loop {
            let batch: Vec<Waiter<B::Row>> = {
                let mut state = self.state.lock();
                if state.queue.is_empty() {
                    // Under the lock that queued the last get: a caller queuing after
                    // this sees one flusher fewer and starts one.
                    state.flushers -= 1;
                    slot.0 = None;
                    return;
                }
                let n = state.queue.len().min(MAX_BATCH);
                state.queue.drain(..n).collect()
            };
            tell_read_size(&self.observer, "postgresql", B::KIND, batch.len());
            answer::<B>(&self.pool, batch).await;
        }
    }
}

/// A flusher's place in [`State::flushers`], given back if the flusher stops without
/// finding the queue empty (it panicked, or its runtime dropped it), so that later
/// gets still find a flusher.
struct Slot<R>(Option<Arc<Mutex<State<R>>>>);

impl<R> Drop for Slot<R> {
    fn drop(&mut self) {
        if let Some(state) = self.0.take() {
            let mut state = state.lock();
            state.flushers = state.flushers.saturating_sub(1);
        }
    }
}

/// Reads one batch and answers every waiter in it: each its own row (an id asked twice
/// gets it twice), or none; all the same error when the statement failed.
async fn answer<B: Batch>(pool: &PgPool, batch: Vec<Waiter<B::Row>>) {
    // How many waiters want each id: the last one takes the row, the others a clone.
    let mut wanted: HashMap<TaskId, usize> = HashMap::with_capacity(batch.len());
    for waiter in &batch {
        *wanted.entry(waiter.id.clone()).or_default() += 1;
    }
    let ids: Vec<&str> = wanted.keys().map(TaskId::as_str).collect();
    let fetched = B::fetch(pool, ids).await;
    let mut rows = match fetched {
        Ok(rows) => rows,
        Err(err) => {
            tracing::warn!(batch = batch.len(), kind = B::KIND, error = %err, "PostgreSQL read batch failed");
            for waiter in batch {
                // A caller that stopped waiting does not want its answer.
                let _ = waiter.done.send(Err(same_error(&err)));
            }
            return;
        }
    };
    for waiter in batch {
        let left = wanted.get_mut(&waiter.id).map_or(0, |n| {
            *n = n.saturating_sub(1);
            *n
        });
        let row = if left == 0 {
            rows.remove(waiter.id.as_str())
        } else {
            rows.get(waiter.id.as_str()).cloned()
        };
        let _ = waiter.done.send(Ok(row));
    }
}

/// Whether a row expiring at `expires_at` is visible at `now`, exactly as the full
/// read's `expires_at IS NULL OR expires_at > $now` says: PostgreSQL receives `now` in
/// whole microseconds since 2000-01-01, cut toward zero (how sqlx encodes a
/// `TIMESTAMPTZ`), and keeps `expires_at` the same way.
pub(super) fn visible(expires_at: Option<DateTime<Utc>>, now: DateTime<Utc>) -> bool {
    expires_at.is_none_or(|at| at > as_bound(now))
}

/// `now` as PostgreSQL receives it bound: in whole microseconds since its epoch, cut
/// toward zero. A time out of PostgreSQL's range is kept as it is (binding it fails).
fn as_bound(now: DateTime<Utc>) -> DateTime<Utc> {
    let Some(epoch) = NaiveDate::from_ymd_opt(2000, 1, 1).and_then(|d| d.and_hms_opt(0, 0, 0))
    else {
        return now;
    };
    let epoch = epoch.and_utc();
    (now - epoch)
        .num_microseconds()
        .map_or(now, |micros| epoch + TimeDelta::microseconds(micros))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn time(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().to_utc()
    }

    /// The boundary as PostgreSQL draws it: a row expiring in the microsecond `now` falls
    /// in is already expired, one expiring in the next is not; before 2000 the cut is
    /// toward zero, so upwards.
    #[test]
    fn expiry_is_compared_as_postgresql_compares_the_bound_now() {
        let at = time("2026-01-01T00:00:00.000005Z");
        assert!(visible(None, at));
        assert!(!visible(Some(at), time("2026-01-01T00:00:00.000005900Z")));
        assert!(visible(
            Some(time("2026-01-01T00:00:00.000006Z")),
            time("2026-01-01T00:00:00.000005900Z")
        ));
        assert!(!visible(
            Some(time("2026-01-01T00:00:00.000004Z")),
            time("2026-01-01T00:00:00.000005Z")
        ));
        let before = time("1999-12-31T23:59:59.000005Z");
        assert!(!visible(
            Some(before),
            time("1999-12-31T23:59:59.000004100Z")
        ));
        assert!(!visible(
            Some(time("1999-12-31T23:59:59.000006Z")),
            time("1999-12-31T23:59:59.000005100Z")
        ));
        assert!(visible(
            Some(time("1999-12-31T23:59:59.000007Z")),
            time("1999-12-31T23:59:59.000005100Z")
        ));
    }

    /// [`visible`] agrees with PostgreSQL's own `expires_at > $now` on the boundaries,
    /// after 2000 and before.
    #[cfg(feature = "test-suite")]
    #[tokio::test]
    async fn expiry_agrees_with_the_database() {
        use crate::suite::postgres::test_url;
        use sqlx::Connection;
        let Some(server) = test_url() else {
            return;
        };
        let mut conn = sqlx::PgConnection::connect(&server).await.unwrap();
        for (expires_at, now) in [
            (
                "2026-01-01T00:00:00.000005Z",
                "2026-01-01T00:00:00.000005900Z",
            ),
            (
                "2026-01-01T00:00:00.000006Z",
                "2026-01-01T00:00:00.000005900Z",
            ),
            (
                "2026-01-01T00:00:00.000005Z",
                "2026-01-01T00:00:00.000004999Z",
            ),
            (
                "1999-12-31T23:59:59.000005Z",
                "1999-12-31T23:59:59.000004100Z",
            ),
            (
                "1999-12-31T23:59:59.000006Z",
                "1999-12-31T23:59:59.000005100Z",
            ),
            (
                "1999-12-31T23:59:59.000007Z",
                "1999-12-31T23:59:59.000005100Z",
            ),
            ("1999-12-31T23:59:59.000005Z", "1999-12-31T23:59:59.000005Z"),
        ] {
            let (expires_at, now) = (time(expires_at), time(now));
            let database: bool = sqlx::query_scalar("SELECT $1::timestamptz > $2::timestamptz")
                .bind(expires_at)
                .bind(now)
                .fetch_one(&mut conn)
                .await
                .unwrap();
            assert_eq!(
                visible(Some(expires_at), now),
                database,
                "{expires_at} > {now}"
            );
        }
    }
}
