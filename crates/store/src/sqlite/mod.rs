//! The SQLite backend (feature `sqlite`, on by default): one database file through sqlx.
//!
//! The file is opened in WAL mode with `synchronous = FULL`, so a `create` returns only
//! after its commit reached the disk, and readers never wait for the writer. Concurrent
//! creates share one commit ([`writer`] has the group commit). Other writers queue on
//! SQLite's lock for up to [`BUSY_TIMEOUT`]; a lock held longer surfaces as
//! [`StoreError::Unavailable`]. The schema is embedded and migrated on open.
//!
//! Times are stored as integer milliseconds (UTC), so sub-millisecond precision is
//! dropped: callers pass millisecond-truncated timestamps, as the engine does.
//!
//! The store methods, and the statements this backend shares with the other SQL
//! backend, are written once in `crate::sql`; `backend.rs` binds their values, reads
//! their rows, and holds what SQLite does its own way.
//!
//! Task timelines are written by triggers of the schema (`migrations/0006_timeline_board.sql`)
//! inside the statement that changes the task, so a grouped create commits its first
//! entry with it. The webhook outbox (`migrations/0007_deliveries.sql`) is claimed one
//! statement at a time under the write lock, like expired leases ([`DeliveryOutbox`](crate::DeliveryOutbox)).
//! Sessions are not stored ([`TaskStore::sessions`](crate::TaskStore::sessions) is `None`): each process serves the
//! 2025-11-25 sessions it opened, from its memory.
//!
//! Leases work as on any backend (each claim is one `UPDATE` under SQLite's single
//! write lock), and a database file is [`TaskStore::shared_by_processes`](crate::TaskStore::shared_by_processes): several
//! processes on one file (a desktop host starting the same stdio server twice) behave
//! like replicas, each renewing the leases of the tasks it runs. There is no change feed: other processes may write the same file, and
//! SQLite cannot tell this one, so [`TaskStore::supports_notify`](crate::TaskStore::supports_notify) stays false.
//!
//! Instead the processes on a file share a change board (`<db>-changes` beside it,
//! memory-mapped like SQLite's `-shm`): every write of a task moves a counter of the
//! task's slot before it commits and after, so a `get` serves a cached record while its
//! counters did not move, and [`TaskStore::change_mark`](crate::TaskStore::change_mark) tells an engine, from memory,
//! which of its running tasks another process may have changed. It assumes, as WAL
//! mode does, that every process on the file runs on one machine over a local file
//! system; when the board cannot be mapped, every read goes to the database.

mod backend;
mod board;
mod cache;
mod open;
mod queries;
mod row;
pub mod writer;

use crate::error::StoreError;
use open::{cannot_open, is_busy};
use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use std::str::FromStr;
use std::time::Duration;
use writer::Writer;

/// How long a statement waits for another connection's write lock before giving up
/// with [`StoreError::Unavailable`].
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Tries at migrating a file database when a migration fails, for a second process
/// migrating the same new file at the same moment (see [`SqliteStore::open`]).
const MIGRATE_TRIES: u32 = 8;

/// The pause before the n-th try again: n × this (1.8 s over all tries).
const MIGRATE_PAUSE: Duration = Duration::from_millis(50);

/// Connections in the pool of a file database. SQLite runs one writer at a time; the
/// others serve concurrent reads (WAL lets them proceed during a write).
pub const MAX_CONNECTIONS: u32 = 8;

/// The schema, embedded at compile time from `src/sqlite/migrations`.
static MIGRATOR: Migrator = sqlx::migrate!("src/sqlite/migrations");

/// A [`TaskStore`](crate::TaskStore) in one SQLite database: the embedded, durable default.
///
/// Open it inside the tokio runtime that will use it: its group-commit writer runs as
/// a task on that runtime.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    writer: Writer,
    /// A file other processes may open too (false for `sqlite::memory:`).
    shared: bool,
    /// Who hears of each group commit (the writer reads it).
    observer: crate::ObserverSlot,
    /// The change board shared with the other processes on the file, and the reads
    /// cached under it (`changes.rs`).
    changes: cache::Changes,
}

impl SqliteStore {
    /// Opens (creating if missing) and migrates the database at `url`:
    /// `sqlite://PATH`, `sqlite:PATH`, or `sqlite::memory:` for a private in-memory
    /// database that lives as long as this store.
    ///
    /// # Errors
    /// [`StoreError::InvalidUrl`] when the URL is not a SQLite URL;
    /// [`StoreError::Backend`] when the file cannot be opened or migrated (for example
    /// a directory that does not exist, or a schema from a newer version): "cannot open
    /// PATH: why" when SQLite cannot open or write the file.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let invalid = |why: &str| {
            StoreError::InvalidUrl(format!(
                "'{url}' is not a usable SQLite URL ({why}): use sqlite://PATH, for example sqlite://./mcp-tasks.db, or sqlite::memory:"
            ))
        };
        let rest = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
            .ok_or_else(|| invalid("it does not start with sqlite:"))?;
        if rest.is_empty() {
            return Err(invalid("no path"));
        }
        let in_memory = rest.starts_with(":memory:") || rest.contains("mode=memory");

        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| invalid(&e.to_string()))?
            .create_if_missing(true)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(BUSY_TIMEOUT);
        let path = options.get_filename().to_path_buf();
        let pool = if in_memory {
            // Every connection to `:memory:` would be its own database: keep exactly one,
            // forever, so the data lives as long as the store.
            SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_with(options)
                .await
        } else {
            // A second process creating the same new file at this moment holds it
            // while it switches it to WAL, and SQLite answers "database is locked"
            // without waiting: try again, as for the migrations below.
            let options = options.journal_mode(SqliteJournalMode::Wal);
            let mut failures = 0;
            loop {
                match SqlitePoolOptions::new()
                    .max_connections(MAX_CONNECTIONS)
                    .connect_with(options.clone())
                    .await
                {
                    Err(e) if is_busy(&e) && failures < MIGRATE_TRIES => {
                        failures += 1;
                        tracing::debug!(error = %e, attempt = failures, "opening the SQLite database found it locked (another process creating it?); trying again");
                        tokio::time::sleep(MIGRATE_PAUSE * failures).await;
                    }
                    other => break other,
                }
            }
        }
        .map_err(|e| cannot_open(&path, e))?;

        // Hosts start the same stdio server twice at once on one default file: another
        // process may be migrating this new database right now, and a migration it
        // committed first fails here ("table tasks already exists"). Each migration
        // commits with its record, so trying again skips what the other applied.
        let mut failures = 0;
        loop {
            match MIGRATOR.run(&pool).await {
                Ok(()) => break,
                Err(
                    sqlx::migrate::MigrateError::Execute(e)
                    | sqlx::migrate::MigrateError::ExecuteMigration(e, _),
                ) if !in_memory && failures < MIGRATE_TRIES => {
                    failures += 1;
                    tracing::debug!(error = %e, attempt = failures, "migrating the SQLite database failed (another process migrating it at the same time?); trying again");
                    tokio::time::sleep(MIGRATE_PAUSE * failures).await;
                }
                Err(sqlx::migrate::MigrateError::Execute(e)) => return Err(cannot_open(&path, e)),
                Err(other) => return Err(StoreError::Backend(Box::new(other))),
            }
        }
        let observer = crate::ObserverSlot::default();
        let writer = Writer::spawn(pool.clone(), std::sync::Arc::clone(&observer));
        let board = if in_memory {
            board::ChangeBoard::private()
        } else {
            board::ChangeBoard::open(&path)
        };
        let changes = match board {
            Ok(board) => cache::Changes::new(board),
            Err(e) => {
                tracing::warn!(
                    board = %board::board_path(&path).display(),
                    error = %e,
                    "cannot map the change board beside the database: every tasks/get reads the database, and processes on this file re-read their running tasks every interval"
                );
                cache::Changes::default()
            }
        };
        Ok(Self {
            pool,
            writer,
            shared: !in_memory,
            observer,
            changes,
        })
    }

    /// The connection pool, for tests and diagnostics. Writing through it bypasses the
    /// store's invariants.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::queries::STATEMENTS;
    use super::*;
    use sqlx::Row;

    #[tokio::test]
    async fn urls_without_the_sqlite_scheme_or_path_are_invalid() {
        for url in ["postgres://x", "sqlite://", "sqlite:", "memory:"] {
            assert!(
                matches!(SqliteStore::open(url).await, Err(StoreError::InvalidUrl(_))),
                "{url}"
            );
        }
    }

    fn highest_parameter(sql: &str) -> usize {
        sql.split('?')
            .skip(1)
            .filter_map(|rest| {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().ok()
            })
            .max()
            .unwrap_or(0)
    }

    #[tokio::test]
    async fn every_query_uses_an_index() {
        let store = SqliteStore::open("sqlite::memory:").await.unwrap();
        let s = &*STATEMENTS;
        let cases: [(&str, &str); 25] = [
            (&s.get, "USING INDEX sqlite_autoindex_tasks_1"),
            (&s.transition, "USING INDEX sqlite_autoindex_tasks_1"),
            (&s.list_by_owner, "USING INDEX tasks_owner_created"),
            (
                &s.list_by_session,
                "USING INDEX tasks_owner_session_created",
            ),
            (s.delete_expired, "USING INDEX tasks_expires_at"),
            // tasks_active or tasks_status_expires: either searches by status.
            (s.fail_orphaned, "(status=?)"),
            (s.settle_expired_waiting, "USING INDEX tasks_status_expires"),
            (&s.claim_lease, "USING INDEX sqlite_autoindex_tasks_1"),
            (&s.renew_lease, "USING INDEX sqlite_autoindex_tasks_1"),
            (s.claim_expired, "USING INDEX tasks_lease_until"),
            (&s.timeline, "USING PRIMARY KEY"),
            (&s.board_all, "USING INDEX tasks_created"),
            (&s.board_by_owner, "USING INDEX tasks_owner_created"),
            // The board's counts of one state walk that state's tasks only (the count of
            // every state, `board_count_all`, stops at its limit among all of them).
            (&s.board_count_status_all, "(status=?"),
            (&s.board_count_status_by_owner, "USING INDEX"),
            (&s.board_count_by_owner, "USING INDEX tasks_owner_created"),
            (s.claim_deliveries, "USING INDEX deliveries_due"),
            (
                &s.finish_delivery,
                "USING INDEX sqlite_autoindex_deliveries_1",
            ),
            (
                &s.retry_delivery,
                "USING INDEX sqlite_autoindex_deliveries_1",
            ),
            (&s.pending_deliveries, "USING INDEX deliveries_due"),
            (&s.purge_deliveries, "USING INDEX deliveries_finished"),
            (&s.runners.release, "USING INDEX sqlite_autoindex_tasks_1"),
            (&s.runners.on_host, "USING INDEX runners_host"),
            (&s.runners.reap_tasks, "USING INDEX tasks_runner"),
            // The count reads only the index: the records, with their JSON, stay on disk.
            (
                &s.count_by_status,
                "USING COVERING INDEX tasks_status_expires",
            ),
        ];
        for (sql, wanted) in cases {
            let explain = format!("EXPLAIN QUERY PLAN {sql}");
            let mut query = sqlx::query(&explain);
            for n in 1..=highest_parameter(sql) {
                // Plans do not depend on values here; bind something of a plausible type.
                query = if n == 1 && sql.contains("owner = ?1") {
                    query.bind("owner")
                } else {
                    query.bind(1_i64)
                };
            }
            let plan: Vec<String> = query
                .fetch_all(store.pool())
                .await
                .unwrap()
                .iter()
                .map(|row| row.get::<String, _>("detail"))
                .collect();
            assert!(
                plan.iter().any(|line| line.contains(wanted)),
                "{sql}\n{plan:#?}"
            );
            assert!(
                !plan.iter().any(|line| line.contains("TEMP B-TREE")),
                "{sql} sorts in memory\n{plan:#?}"
            );
        }
    }
}
