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
//! Leases work as on any backend (each claim is one `UPDATE` under SQLite's single
//! write lock), and a database file is [`TaskStore::shared_by_processes`]: several
//! processes on one file (a desktop host starting the same stdio server twice) behave
//! like replicas, each renewing the leases of the tasks it runs. There is no change feed: other processes may write the same file, and
//! SQLite cannot tell this one, so [`TaskStore::supports_notify`] stays false.

mod queries;
mod row;
pub mod writer;

use crate::error::StoreError;
use crate::explain;
use crate::record::{
    ClaimExpiredParams, ClaimLeaseParams, ExpiredTask, ListPage, ListParams, Outcome,
    RenewLeaseParams, TaskRecord, TransitionParams,
};
use crate::sql::values::external_to_db;
use crate::TaskStore;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use row::{classify, counter_to_db, row_to_record, to_json, to_ms};
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
}

impl SqliteStore {
    /// Opens (creating if missing) and migrates the database at `url`:
    /// `sqlite://PATH`, `sqlite:PATH`, or `sqlite::memory:` for a private in-memory
    /// database that lives as long as this store.
    ///
    /// # Errors
    /// [`StoreError::InvalidUrl`] when the URL is not a SQLite URL;
    /// [`StoreError::Backend`] when the file cannot be opened or migrated (for example
    /// a directory that does not exist, or a schema from a newer version).
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
            SqlitePoolOptions::new()
                .max_connections(MAX_CONNECTIONS)
                .connect_with(options.journal_mode(SqliteJournalMode::Wal))
                .await
        }
        .map_err(classify)?;

        MIGRATOR
            .run(&pool)
            .await
            .map_err(|e| StoreError::Backend(Box::new(e)))?;
        let writer = Writer::spawn(pool.clone());
        Ok(Self {
            pool,
            writer,
            shared: !in_memory,
        })
    }

    /// The connection pool, for tests and diagnostics. Writing through it bypasses the
    /// store's invariants.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }
}

#[async_trait]
impl TaskStore for SqliteStore {
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError> {
        self.writer.create(record).await
    }

    async fn get(&self, id: &TaskId, now: DateTime<Utc>) -> Result<Option<TaskRecord>, StoreError> {
        sqlx::query(queries::GET)
            .bind(id.as_str())
            .bind(to_ms(now))
            .fetch_optional(&self.pool)
            .await
            .map_err(classify)?
            .map(|row| row_to_record(&row))
            .transpose()
    }

    async fn list(&self, params: &ListParams) -> Result<ListPage, StoreError> {
        // With no cursor, start before every possible key.
        let (after_at, after_id) = match &params.after {
            Some((at, id)) => (to_ms(*at), id.as_str()),
            None => (i64::MIN, ""),
        };
        let fetch = i64::try_from(params.limit)
            .unwrap_or(i64::MAX)
            .saturating_add(1);
        let sql = match params.session {
            Some(_) => queries::LIST_BY_SESSION,
            None => queries::LIST_BY_OWNER,
        };
        let mut query = sqlx::query(sql)
            .bind(&params.owner)
            .bind(to_ms(params.now))
            .bind(after_at)
            .bind(after_id)
            .bind(fetch);
        if let Some(session) = &params.session {
            query = query.bind(session);
        }
        let rows = query.fetch_all(&self.pool).await.map_err(classify)?;
        let has_more = rows.len() > params.limit;
        let records = rows
            .iter()
            .take(params.limit)
            .map(row_to_record)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ListPage { records, has_more })
    }

    async fn transition(&self, params: &TransitionParams) -> Result<TaskRecord, StoreError> {
        let expected = params
            .expected_version
            .map(|v| counter_to_db("version", v))
            .transpose()?;
        let fence = params
            .expected_lease_generation
            .map(|g| counter_to_db("lease generation", g))
            .transpose()?;
        let (sets_external, external) = external_to_db(&params.external)?;
        let updated = sqlx::query(queries::TRANSITION)
            .bind(params.id.as_str())
            .bind(params.status.as_str())
            .bind(params.status_message.is_some())
            .bind(params.status_message.as_ref().and_then(|m| m.as_deref()))
            .bind(params.outcome.as_ref().map(to_json).transpose()?)
            .bind(to_ms(params.now))
            .bind(expected)
            .bind(fence)
            .bind(params.input_requests.as_ref().map(to_json).transpose()?)
            .bind(sets_external)
            .bind(external)
            .fetch_optional(&self.pool)
            .await
            .map_err(classify)?;
        if let Some(row) = updated {
            return row_to_record(&row);
        }
        // Nothing changed: say why, from the record as it is now.
        let current = self.get(&params.id, params.now).await?;
        Err(explain::transition_failed(current, params))
    }

    async fn delete_expired(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ExpiredTask>, StoreError> {
        let rows = sqlx::query(queries::DELETE_EXPIRED)
            .bind(to_ms(now))
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err(classify)?;
        rows.iter().map(row::row_to_expired).collect()
    }

    async fn fail_orphaned(
        &self,
        current_runner: &str,
        status_message: &str,
        error: &Outcome,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let done = sqlx::query(queries::FAIL_ORPHANED)
            .bind(current_runner)
            .bind(status_message)
            .bind(to_json(error)?)
            .bind(to_ms(now))
            .execute(&self.pool)
            .await
            .map_err(classify)?;
        Ok(done.rows_affected())
    }

    async fn claim_lease(&self, params: &ClaimLeaseParams) -> Result<TaskRecord, StoreError> {
        let claimed = sqlx::query(queries::CLAIM_LEASE)
            .bind(params.id.as_str())
            .bind(&params.runner)
            .bind(to_ms(params.until))
            .bind(to_ms(params.now))
            .fetch_optional(&self.pool)
            .await
            .map_err(classify)?;
        match claimed {
            Some(row) => row_to_record(&row),
            None => Err(explain::claim_failed(
                self.get(&params.id, params.now).await?,
            )),
        }
    }

    async fn renew_lease(&self, params: &RenewLeaseParams) -> Result<TaskRecord, StoreError> {
        let renewed = sqlx::query(queries::RENEW_LEASE)
            .bind(params.id.as_str())
            .bind(&params.runner)
            .bind(counter_to_db("lease generation", params.generation)?)
            .bind(to_ms(params.until))
            .bind(to_ms(params.now))
            .fetch_optional(&self.pool)
            .await
            .map_err(classify)?;
        match renewed {
            Some(row) => row_to_record(&row),
            None => Err(explain::renew_failed(
                self.get(&params.id, params.now).await?,
                params,
            )),
        }
    }

    async fn claim_expired_leases(
        &self,
        params: &ClaimExpiredParams,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        sqlx::query(queries::CLAIM_EXPIRED)
            .bind(&params.runner)
            .bind(to_ms(params.until))
            .bind(to_ms(params.now))
            .bind(i64::try_from(params.limit).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err(classify)?
            .iter()
            .map(row_to_record)
            .collect()
    }

    fn shared_by_processes(&self) -> bool {
        self.shared
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
        let cases = [
            (queries::GET, "USING INDEX sqlite_autoindex_tasks_1"),
            (queries::TRANSITION, "USING INDEX sqlite_autoindex_tasks_1"),
            (queries::LIST_BY_OWNER, "USING INDEX tasks_owner_created"),
            (
                queries::LIST_BY_SESSION,
                "USING INDEX tasks_owner_session_created",
            ),
            (queries::DELETE_EXPIRED, "USING INDEX tasks_expires_at"),
            (queries::FAIL_ORPHANED, "USING INDEX tasks_active"),
            (queries::CLAIM_LEASE, "USING INDEX sqlite_autoindex_tasks_1"),
            (queries::RENEW_LEASE, "USING INDEX sqlite_autoindex_tasks_1"),
            (queries::CLAIM_EXPIRED, "USING INDEX tasks_lease_until"),
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
