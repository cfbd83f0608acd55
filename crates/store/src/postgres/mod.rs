//! The PostgreSQL backend (feature `postgres`): several replicas share one database.
//!
//! Every change is one statement (`queries.rs` says why that is atomic under READ
//! COMMITTED), so two replicas racing on a task have exactly one winner, as two
//! tasks of one process do on the other backends. Batch work (expiry, orphans, lease
//! takeover) picks rows with `FOR UPDATE SKIP LOCKED`, so replicas share it without
//! waiting on each other and never process the same row twice.
//!
//! The schema is embedded and migrated on open; sqlx holds a PostgreSQL advisory lock
//! while migrating, so replicas that start together apply each migration once. The
//! tables live in the connection's current schema: pick one with
//! `?options=-c%20search_path%3Dmy_schema` in the URL (the tests give each case a fresh
//! schema this way). Queries are prepared and LISTEN holds a session, so a pooler in
//! front of the database must run in session mode.
//!
//! Concurrent creations share one statement and one commit ([`writer`]): a creation
//! still returns only once committed, and a lone one is the plain one-row `INSERT`.
//! Concurrent reads share one statement too ([`reader`]): the checks of cached records
//! (`cache.rs`) in one `WHERE id = ANY($1)`, the whole rows in another; a lone read is
//! sent at once, and no read is answered by a statement that started before it.
//!
//! [`TaskStore::supports_notify`](crate::TaskStore::supports_notify) is true: every write notifies the task id through
//! LISTEN/NOTIFY, in the writing transaction (`listen`).
//!
//! The store methods, and the statements this backend shares with the other SQL
//! backend, are written once in `crate::sql`; `backend.rs` binds their values, reads
//! their rows, and holds what PostgreSQL does its own way.
//!
//! Task timelines are written by triggers of the schema (`migrations/0008_timeline_board.sql`)
//! inside the statement that changes the task, whichever replica (or version) runs it;
//! the webhook outbox (`migrations/0009_deliveries.sql`, [`DeliveryOutbox`](crate::DeliveryOutbox)) is claimed
//! with `FOR UPDATE SKIP LOCKED`, like expired leases. 2025-11-25 sessions are stored
//! too ([`SessionStore`](crate::SessionStore), `sessions.rs`), so that any replica serves any session.

mod backend;
mod cache;
mod connect;
mod listen;
mod queries;
pub mod reader;
mod row;
mod sessions;
mod tls;
pub mod writer;

pub use listen::RECONNECT_DELAY;

use crate::error::StoreError;
use row::classify;
use sqlx::migrate::{MigrateError, Migrator};
use sqlx::postgres::{PgConnection, PgPool, PgPoolOptions};
use sqlx::Connection;
use std::sync::Arc;
use std::time::Duration;

/// Connections in the pool [`PgStore::open`] creates (one more is opened for the change
/// feed once someone subscribes). Mind PostgreSQL's `max_connections` (100 by default)
/// across replicas; [`PgStore::from_pool`] takes a pool sized otherwise.
pub const MAX_CONNECTIONS: u32 = 10;

/// How long a call waits for a free pooled connection before failing with
/// [`StoreError::Unavailable`].
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// The schema, embedded at compile time from `src/postgres/migrations`.
static MIGRATOR: Migrator = sqlx::migrate!("src/postgres/migrations");

/// A [`TaskStore`](crate::TaskStore) in a PostgreSQL database, shared by any number of replicas.
/// Cloning is cheap and shares the pool and the change-feed connection.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
    listener: Arc<listen::Listener>,
    /// Batches concurrent creations into one statement ([`writer`]).
    writer: writer::Writer,
    /// Who hears of each batch of creations (the writer reads it).
    observer: crate::ObserverSlot,
    /// Records read last, served after a check of their row (`cache.rs`); the checks
    /// and the reads are batched ([`reader`]).
    reads: cache::Reads,
}

impl PgStore {
    /// Connects to `url` (`postgres://` or `postgresql://`, with any libpq-style
    /// parameters sqlx understands) with a pool of [`MAX_CONNECTIONS`], and migrates.
    /// TLS follows the URL's `sslmode` and `sslrootcert` as libpq's do (`prefer` by
    /// default: TLS when the server offers it); managed databases want
    /// `sslmode=verify-full`.
    ///
    /// # Errors
    /// [`StoreError::InvalidUrl`] when the URL is not a PostgreSQL URL or does not parse,
    /// its `sslmode` is unknown or a certificate file it names cannot be read;
    /// [`StoreError::Unavailable`] when the server cannot be reached;
    /// [`StoreError::Backend`] when it refuses us (its TLS certificate included) or the
    /// schema cannot be migrated (for example one from a newer version).
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let options = connect::options(url).await?;
        // Connect once by hand first: a pool retries a failing connect until its acquire
        // timeout and then reports only that it timed out, hiding "connection refused"
        // or "password authentication failed" from the operator.
        PgConnection::connect_with(&options)
            .await
            .map_err(classify)?
            .close()
            .await
            .map_err(classify)?;
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(classify)?;
        Self::from_pool(pool).await
    }

    /// Uses a pool the caller configured (size, timeouts, connect options), and
    /// migrates. The change feed opens one more connection with the pool's options.
    ///
    /// # Errors
    /// As [`PgStore::open`], minus the URL checks.
    pub async fn from_pool(pool: PgPool) -> Result<Self, StoreError> {
        MIGRATOR.run(&pool).await.map_err(|err| match err {
            MigrateError::Execute(e) => classify(e),
            other => StoreError::Backend(Box::new(other)),
        })?;
        let channel: String = sqlx::query_scalar(queries::CHANGE_CHANNEL)
            .fetch_one(&pool)
            .await
            .map_err(classify)?;
        let listener = Arc::new(listen::Listener::new(&pool, channel));
        let observer = crate::ObserverSlot::default();
        let writer = writer::Writer::new(pool.clone(), Arc::clone(&observer));
        let reads = cache::Reads::new(&pool, &observer);
        Ok(Self {
            pool,
            listener,
            writer,
            observer,
            reads,
        })
    }

    /// The connection pool, for tests and diagnostics. Writing through it bypasses the
    /// store's invariants.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::queries::{CHECK_MANY, READ_MANY, STATEMENTS};
    use super::*;
    use chrono::{DateTime, Utc};
    use sqlx::Row;

    #[tokio::test]
    async fn urls_without_the_postgres_scheme_are_invalid() {
        for url in ["sqlite://x", "postgres:", "memory:", "mysql://localhost/db"] {
            assert!(
                matches!(PgStore::open(url).await, Err(StoreError::InvalidUrl(_))),
                "{url}"
            );
        }
    }

    #[test]
    fn every_statement_numbers_its_parameters_without_gaps() {
        let s = &*STATEMENTS;
        for sql in [
            &s.create,
            &s.get,
            &s.list_by_owner,
            &s.list_by_session,
            &s.transition,
            s.delete_expired,
            s.fail_orphaned,
            &s.claim_lease,
            &s.renew_lease,
            s.claim_expired,
            &s.timeline,
            &s.board_all,
            &s.board_by_owner,
            &s.board_count_all,
            &s.board_count_by_owner,
            &s.board_count_status_all,
            &s.board_count_status_by_owner,
            &s.enqueue_delivery,
            s.claim_deliveries,
            &s.finish_delivery,
            &s.retry_delivery,
            &s.pending_deliveries,
            &s.purge_deliveries,
            &s.count_by_status,
            CHECK_MANY,
            READ_MANY,
        ] {
            let used: std::collections::BTreeSet<usize> = sql
                .split('$')
                .skip(1)
                .filter_map(|rest| {
                    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    digits.parse().ok()
                })
                .collect();
            let expected: std::collections::BTreeSet<usize> = (1..=used.len()).collect();
            assert_eq!(used, expected, "{sql}");
        }
    }

    /// A value of the type a statement parameter takes, for EXPLAIN.
    #[cfg(feature = "test-suite")]
    #[derive(Clone, Copy)]
    enum Param {
        Text,
        NoText,
        Time,
        NoTime,
        Int,
        NoInt,
        Bool,
        Texts,
    }

    /// With sequential scans and sorts priced out (an empty table would always be
    /// scanned), every statement walks the index meant for it and sorts nothing; the keyset
    /// position of a list is an index condition, so a deep page costs what the first
    /// does.
    #[cfg(feature = "test-suite")]
    #[tokio::test]
    async fn every_query_uses_its_index() {
        use crate::suite::postgres::{test_url, TestSchema};
        use Param::*;
        let Some(server) = test_url() else {
            return;
        };
        let schema = TestSchema::create(&server).await;
        let store = PgStore::open(schema.url()).await.unwrap();
        let transition = [
            Text, Text, Bool, Text, Text, Time, NoInt, NoInt, Text, Bool, Text,
        ];
        let list = [Text, Time, NoTime, Text, Int];
        let list_after = [Text, Time, Time, Text, Int];
        // CHANGE_CHANNEL is left out: a one-row catalog lookup at open, whose plan
        // follows the catalog's statistics, not our indexes. So are the inserts
        // (create, enqueue_delivery): they scan nothing.
        let s = &*STATEMENTS;
        let board = [Time, NoTime, Text, NoText, NoText, NoText, Int];
        let board_filtered = [Time, Time, Text, Text, Text, Text, Int];
        let board_owner = [Time, NoTime, Text, NoText, NoText, NoText, Int, Text];
        let cases: [(&str, &[Param], &str); 24] = [
            (&s.get, &[Text, Time], "tasks_pkey"),
            (CHECK_MANY, &[Texts], "tasks_pkey"),
            (READ_MANY, &[Texts], "tasks_pkey"),
            (&s.transition, &transition, "tasks_pkey"),
            (&s.list_by_owner, &list, "tasks_owner_created"),
            (&s.list_by_owner, &list_after, "tasks_owner_created"),
            (
                &s.list_by_session,
                &[Text, Time, NoTime, Text, Int, Text],
                "tasks_owner_session_created",
            ),
            (s.delete_expired, &[Time, Int], "tasks_expires_at"),
            // The runner index has the same partial predicate as `tasks_active`.
            (
                s.fail_orphaned,
                &[Text, Text, Text, Time],
                "tasks_active|tasks_runner",
            ),
            (
                &s.runners.release,
                &[Text, Text, Int, Time],
                "tasks_pkey|tasks_runner",
            ),
            (&s.runners.on_host, &[Text], "runners_host"),
            (&s.runners.reap_tasks, &[Text, Time], "tasks_runner"),
            (&s.claim_lease, &[Text, Text, Time, Time], "tasks_pkey"),
            // By id, or (on empty tables the planner guesses) through the runner index,
            // which the same `runner = $2` narrows to a row or two.
            (
                &s.renew_lease,
                &[Text, Text, Int, Time, Time],
                "tasks_pkey|tasks_runner",
            ),
            (
                s.claim_expired,
                &[Text, Time, Time, Int],
                "tasks_lease_until",
            ),
            (&s.timeline, &[Text], "task_timeline_pkey"),
            (&s.board_all, &board, "tasks_created"),
            (&s.board_all, &board_filtered, "tasks_created"),
            (&s.board_by_owner, &board_owner, "tasks_owner_created"),
            (
                s.claim_deliveries,
                &[Text, Time, Time, Int],
                "deliveries_due",
            ),
            // Finishing finds its row by key: through the primary key, or through the
            // partial index of unfinished deliveries (which holds the key, and is all a
            // finish can match), as the planner finds cheaper.
            (
                &s.finish_delivery,
                &[Text, Text, Time, NoText],
                "deliveries_pkey|deliveries_due",
            ),
            (
                &s.retry_delivery,
                &[Text, Text, Time, Text],
                "deliveries_pkey|deliveries_due",
            ),
            (&s.pending_deliveries, &[], "deliveries_due"),
            (&s.purge_deliveries, &[Time], "deliveries_finished"),
        ];
        let mut conn = store.pool().acquire().await.unwrap();
        // Sorts too: on empty tables the planner's guesses make a bitmap scan and a
        // sort look as cheap as walking the index in order; priced out, a sort appears
        // only where no index gives the order.
        for setting in ["SET enable_seqscan = off", "SET enable_sort = off"] {
            sqlx::query(setting).execute(&mut *conn).await.unwrap();
        }
        let now = crate::suite::base_time();
        for (sql, params, index) in cases {
            let explain = format!("EXPLAIN {sql}");
            let mut query = sqlx::query(&explain);
            for param in params {
                query = match param {
                    Text => query.bind("x"),
                    NoText => query.bind(None::<String>),
                    Time => query.bind(now),
                    NoTime => query.bind(None::<DateTime<Utc>>),
                    Int => query.bind(10_i64),
                    NoInt => query.bind(None::<i64>),
                    Bool => query.bind(true),
                    Texts => query.bind(vec!["x", "y"]),
                };
            }
            let plan: Vec<String> = query
                .fetch_all(&mut *conn)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"))
                .iter()
                .map(|row| row.get::<String, _>(0))
                .collect();
            let plan = plan.join("\n");
            // "Index Scan using tasks_x" or "Bitmap Index Scan on tasks_x"; `a|b` accepts
            // either index.
            assert!(
                index
                    .split('|')
                    .any(|index| plan.contains(&format!("using {index} "))
                        || plan.contains(&format!("on {index} "))),
                "{sql}\n{plan}"
            );
            assert!(!plan.contains("Seq Scan"), "{sql}\n{plan}");
            assert!(!plan.contains("Sort"), "{sql} sorts\n{plan}");
            if let Some(keyset) = ["(created_at, id) >", "(created_at, id) <"]
                .into_iter()
                .find(|keyset| sql.contains(keyset))
            {
                let condition = format!("ROW{keyset}");
                assert!(
                    plan.lines()
                        .any(|l| l.contains("Index Cond") && l.contains(&condition)),
                    "{sql}: the keyset is not an index condition\n{plan}"
                );
            }
        }
    }
}
