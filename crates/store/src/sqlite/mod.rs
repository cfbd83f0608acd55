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
//! The statements and store methods this backend shares with the other SQL backend
//! are in `crate::sql`; this module binds their values and reads their rows.
//!
//! Task timelines are written by triggers of the schema (`migrations/0006_timeline_board.sql`)
//! inside the statement that changes the task, so a grouped create commits its first
//! entry with it. The webhook outbox (`migrations/0007_deliveries.sql`) is claimed one
//! statement at a time under the write lock, like expired leases ([`DeliveryOutbox`]).
//! Sessions are not stored ([`TaskStore::sessions`] is `None`): each process serves the
//! 2025-11-25 sessions it opened, from its memory.
//!
//! Leases work as on any backend (each claim is one `UPDATE` under SQLite's single
//! write lock), and a database file is [`TaskStore::shared_by_processes`]: several
//! processes on one file (a desktop host starting the same stdio server twice) behave
//! like replicas, each renewing the leases of the tasks it runs. There is no change feed: other processes may write the same file, and
//! SQLite cannot tell this one, so [`TaskStore::supports_notify`] stays false.
//!
//! Instead the processes on a file share a change board (`<db>-changes` beside it,
//! memory-mapped like SQLite's `-shm`): every write of a task moves a counter of the
//! task's slot before it commits and after, so a `get` serves a cached record while its
//! counters did not move, and [`TaskStore::change_mark`] tells an engine, from memory,
//! which of its running tasks another process may have changed. It assumes, as WAL
//! mode does, that every process on the file runs on one machine over a local file
//! system; when the board cannot be mapped, every read goes to the database.

mod board;
mod cache;
mod changes;
mod counts;
mod queries;
mod row;
pub mod writer;

use crate::delivery::{
    ClaimDeliveriesParams, Delivery, DeliveryOutbox, DeliveryResult, NewDelivery,
};
use crate::error::StoreError;
use crate::record::{
    BoardQuery, ClaimExpiredParams, ClaimLeaseParams, ExpiredTask, ListPage, ListParams, Outcome,
    RenewLeaseParams, TaskRecord, TimelineEntry, TransitionParams,
};
use crate::sql::values::{row_to_count, row_to_expired};
use crate::sql::{self, Call, Statements};
use crate::TaskStore;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use queries::STATEMENTS;
use row::{classify, query};
use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use std::path::Path;
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

/// A [`TaskStore`] in one SQLite database: the embedded, durable default.
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

/// A database file SQLite cannot open or write, named, with the reason when the file
/// system tells it: SQLite itself says only "unable to open database file (code: 14)".
#[derive(Debug)]
struct CannotOpen {
    message: String,
    source: sqlx::Error,
}

impl std::fmt::Display for CannotOpen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CannotOpen {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Sorts an error of opening the file at `path`: SQLite's "cannot open" and "read-only"
/// become [`CannotOpen`] naming the file (absolute) and its folder's problem; anything
/// else is classified as any other error.
/// Whether `err` is SQLite's "database is locked" or "busy" (another connection holds
/// the lock it needs).
fn is_busy(err: &sqlx::Error) -> bool {
    /// Primary result codes (the low byte of an extended code).
    const SQLITE_BUSY: i32 = 5;
    const SQLITE_LOCKED: i32 = 6;
    match err {
        sqlx::Error::Database(db) => db
            .code()
            .and_then(|code| code.parse::<i32>().ok())
            .is_some_and(|code| matches!(code & 0xff, SQLITE_BUSY | SQLITE_LOCKED)),
        _ => false,
    }
}

fn cannot_open(path: &Path, err: sqlx::Error) -> StoreError {
    /// Primary result codes (the low byte of an extended code).
    const SQLITE_READONLY: i32 = 8;
    const SQLITE_CANTOPEN: i32 = 14;
    let (code, said) = match &err {
        sqlx::Error::Database(db) => (
            db.code()
                .and_then(|code| code.parse::<i32>().ok())
                .map(|code| code & 0xff),
            db.message().to_string(),
        ),
        _ => (None, String::new()),
    };
    if !matches!(code, Some(SQLITE_READONLY | SQLITE_CANTOPEN)) {
        return classify(err);
    }
    let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let reason = match shown.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(dir) if dir.is_file() => format!("{} is a file, not a folder", dir.display()),
        Some(dir) if !dir.exists() => format!(
            "the folder {} does not exist (create it, or choose another path)",
            dir.display()
        ),
        _ => format!("{said} (is the folder writable, and the file if it exists?)"),
    };
    StoreError::Backend(Box::new(CannotOpen {
        message: format!("cannot open {}: {reason}", shown.display()),
        source: err,
    }))
}

#[async_trait]
impl TaskStore for SqliteStore {
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError> {
        self.writer.create(record).await
    }

    async fn create_pending(
        &self,
        pending: std::sync::Arc<crate::PendingCreate>,
    ) -> Result<TaskRecord, StoreError> {
        self.writer.create_pending(pending).await
    }

    async fn get(&self, id: &TaskId, now: DateTime<Utc>) -> Result<Option<TaskRecord>, StoreError> {
        self.cached_get(id, now).await
    }

    async fn list(&self, params: &ListParams) -> Result<ListPage, StoreError> {
        sql::store::list(self, params).await
    }

    async fn transition(&self, params: &TransitionParams) -> Result<TaskRecord, StoreError> {
        self.write_transition(params).await
    }

    async fn delete_expired(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ExpiredTask>, StoreError> {
        self.write_delete_expired(now, limit).await
    }

    async fn fail_orphaned(
        &self,
        current_runner: &str,
        status_message: &str,
        error: &Outcome,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        self.write_fail_orphaned(current_runner, status_message, error, now)
            .await
    }

    async fn timeline(&self, id: &TaskId) -> Result<Vec<TimelineEntry>, StoreError> {
        sql::store::timeline(self, id).await
    }

    async fn board_list(&self, query: &BoardQuery) -> Result<ListPage, StoreError> {
        sql::store::board_list(self, query).await
    }

    async fn board_count(&self, query: &BoardQuery) -> Result<u64, StoreError> {
        sql::store::board_count(self, query).await
    }

    async fn claim_lease(&self, params: &ClaimLeaseParams) -> Result<TaskRecord, StoreError> {
        self.write_claim_lease(params).await
    }

    async fn renew_lease(&self, params: &RenewLeaseParams) -> Result<TaskRecord, StoreError> {
        self.write_renew_lease(params).await
    }

    async fn claim_expired_leases(
        &self,
        params: &ClaimExpiredParams,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        self.write_claim_expired(params).await
    }

    async fn heartbeat(&self, runner: &crate::RunnerRecord) -> Result<(), StoreError> {
        sql::runners::heartbeat(self, runner).await
    }

    async fn retire(&self, runner: &str) -> Result<(), StoreError> {
        sql::runners::retire(self, runner).await
    }

    async fn release_leases(&self, params: &crate::ReleaseLeasesParams) -> Result<u64, StoreError> {
        self.write_release(params).await
    }

    async fn runners_on_host(&self, host: &str) -> Result<Vec<crate::RunnerRecord>, StoreError> {
        sql::runners::on_host(self, host).await
    }

    async fn reap_runner(&self, runner: &str, now: DateTime<Utc>) -> Result<u64, StoreError> {
        self.write_reap(runner, now).await
    }

    async fn forget_dead_runners(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        sql::runners::forget_dead(self, before).await
    }

    fn shared_by_processes(&self) -> bool {
        self.shared
    }

    fn change_mark(&self, id: &TaskId) -> Option<crate::ChangeMark> {
        self.changes.mark(id)
    }

    fn change_marks(&self) -> Option<crate::change::ChangeMarks> {
        self.changes.marks()
    }

    fn outbox(&self) -> Option<&dyn DeliveryOutbox> {
        Some(self)
    }

    fn journal(&self) -> Option<&dyn crate::journal::StepJournal> {
        Some(self)
    }

    fn backend_name(&self) -> &'static str {
        "sqlite"
    }

    async fn count_by_status(
        &self,
        now: DateTime<Utc>,
    ) -> Result<Option<Vec<(mcp_tasks_protocol::TaskStatus, u64)>>, StoreError> {
        counts::count_by_status(&self.pool, now).await.map(Some)
    }

    fn set_store_observer(&self, observer: std::sync::Arc<dyn crate::StoreObserver>) {
        *self.observer.write().unwrap_or_else(|p| p.into_inner()) = Some(observer);
    }
}

/// The outbox is a table of the same file (`migrations/0007_deliveries.sql`), so every
/// process on the file shares it.
#[async_trait]
impl DeliveryOutbox for SqliteStore {
    async fn enqueue_delivery(&self, delivery: &NewDelivery) -> Result<bool, StoreError> {
        sql::delivery::enqueue(self, delivery).await
    }

    async fn claim_deliveries(
        &self,
        params: &ClaimDeliveriesParams,
    ) -> Result<Vec<Delivery>, StoreError> {
        sql::delivery::claim(self, params).await
    }

    async fn finish_delivery(
        &self,
        key: &str,
        runner: &str,
        result: &DeliveryResult,
    ) -> Result<(), StoreError> {
        sql::delivery::finish(self, key, runner, result).await
    }

    async fn pending_deliveries(&self) -> Result<u64, StoreError> {
        sql::delivery::pending(self).await
    }

    async fn purge_deliveries(&self, finished_before: DateTime<Utc>) -> Result<u64, StoreError> {
        sql::delivery::purge(self, finished_before).await
    }
}

#[async_trait]
impl sql::Backend for SqliteStore {
    type Row = SqliteRow;

    fn statements(&self) -> &'static Statements {
        &STATEMENTS
    }

    fn read_record(row: &SqliteRow) -> Result<TaskRecord, StoreError> {
        row::row_to_record(row)
    }

    fn read_expired(row: &SqliteRow) -> Result<ExpiredTask, StoreError> {
        row_to_expired(row)
    }

    fn read_timeline(row: &SqliteRow) -> Result<TimelineEntry, StoreError> {
        row::row_to_timeline_entry(row)
    }

    fn read_delivery(row: &SqliteRow) -> Result<Delivery, StoreError> {
        row::row_to_delivery(row)
    }

    fn read_runner(row: &SqliteRow) -> Result<crate::runner::RunnerRecord, StoreError> {
        row::row_to_runner(row)
    }

    fn read_count(row: &SqliteRow) -> Result<u64, StoreError> {
        row_to_count(row)
    }

    fn read_journal_entry(row: &SqliteRow) -> Result<crate::journal::JournalEntry, StoreError> {
        sql::journal::row_to_journal_entry(row, row::from_ms)
    }

    async fn fetch_optional(&self, call: Call<'_>) -> Result<Option<SqliteRow>, StoreError> {
        query(call)
            .fetch_optional(&self.pool)
            .await
            .map_err(classify)
    }

    async fn fetch_all(&self, call: Call<'_>) -> Result<Vec<SqliteRow>, StoreError> {
        query(call).fetch_all(&self.pool).await.map_err(classify)
    }

    async fn execute(&self, call: Call<'_>) -> Result<u64, StoreError> {
        let done = query(call).execute(&self.pool).await.map_err(classify)?;
        Ok(done.rows_affected())
    }
}

/// The journal: a step is recorded in the writer's next group commit (one fsync shared
/// with every create and step queued at the same moment).
#[async_trait]
impl crate::journal::StepJournal for SqliteStore {
    async fn steps(&self, id: &TaskId) -> Result<Vec<crate::journal::JournalEntry>, StoreError> {
        sql::journal::steps(self, id).await
    }

    async fn record_step(
        &self,
        step: &crate::journal::RecordStep,
    ) -> Result<crate::journal::Recorded, StoreError> {
        if self.writer.record_step(step).await? {
            return Ok(crate::journal::Recorded::New);
        }
        sql::journal::why_not_recorded(self, step).await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
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
        let cases: [(&str, &str); 23] = [
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
