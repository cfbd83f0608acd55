//! The SQLite backend (feature `sqlite`, on by default): one database file through sqlx.
//!
//! The file is opened in WAL mode with `synchronous = FULL`, so a `create` returns only
//! after its commit reached the disk, and readers never wait for the writer. Writers
//! queue on SQLite's lock for up to [`BUSY_TIMEOUT`]; a lock held longer surfaces as
//! [`StoreError::Unavailable`]. The schema is embedded and migrated on open.
//!
//! Times are stored as integer milliseconds (UTC), so sub-millisecond precision is
//! dropped: callers pass millisecond-truncated timestamps, as the engine does.

mod queries;

use crate::error::StoreError;
use crate::record::{ListPage, ListParams, Outcome, TaskRecord, TransitionParams};
use crate::TaskStore;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use sqlx::error::ErrorKind;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use sqlx::Row;
use std::str::FromStr;
use std::time::Duration;

/// How long a statement waits for another connection's write lock before giving up
/// with [`StoreError::Unavailable`].
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Connections in the pool of a file database. SQLite runs one writer at a time; the
/// others serve concurrent reads (WAL lets them proceed during a write).
pub const MAX_CONNECTIONS: u32 = 8;

/// The schema, embedded at compile time from `src/sqlite/migrations`.
static MIGRATOR: Migrator = sqlx::migrate!("src/sqlite/migrations");

/// A [`TaskStore`] in one SQLite database: the embedded, durable default.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
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
        Ok(Self { pool })
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
        sqlx::query(queries::CREATE)
            .bind(record.id.as_str())
            .bind(&record.owner)
            .bind(record.session.as_deref())
            .bind(record.status.as_str())
            .bind(record.status_message.as_deref())
            .bind(to_ms(record.created_at))
            .bind(to_ms(record.last_updated_at))
            .bind(record.ttl.map(duration_to_ms).transpose()?)
            .bind(record.expires_at.map(to_ms))
            .bind(record.poll_interval.map(duration_to_ms).transpose()?)
            .bind(&record.method)
            .bind(to_json(&record.request)?)
            .bind(record.outcome.as_ref().map(to_json).transpose()?)
            .bind(record.runner.as_deref())
            .bind(version_to_db(record.version)?)
            .bind(to_json(&record.input_requests)?)
            .execute(&self.pool)
            .await
            .map_err(classify)?;
        Ok(())
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
        let expected = params.expected_version.map(version_to_db).transpose()?;
        let updated = sqlx::query(queries::TRANSITION)
            .bind(params.id.as_str())
            .bind(params.status.as_str())
            .bind(params.status_message.is_some())
            .bind(params.status_message.as_ref().and_then(|m| m.as_deref()))
            .bind(params.outcome.as_ref().map(to_json).transpose()?)
            .bind(to_ms(params.now))
            .bind(expected)
            .bind(params.input_requests.as_ref().map(to_json).transpose()?)
            .fetch_optional(&self.pool)
            .await
            .map_err(classify)?;
        if let Some(row) = updated {
            return row_to_record(&row);
        }
        // Nothing changed: say why, from the record as it is now.
        match self.get(&params.id, params.now).await? {
            None => Err(StoreError::NotFound),
            Some(current) => Err(StoreError::Conflict {
                current: Box::new(current),
            }),
        }
    }

    async fn delete_expired(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        let rows = sqlx::query(queries::DELETE_EXPIRED)
            .bind(to_ms(now))
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err(classify)?;
        rows.iter()
            .map(|row| {
                row.try_get::<String, _>("id")
                    .map(TaskId::from_string)
                    .map_err(decode_error)
            })
            .collect()
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
}

/// Sorts a sqlx error into what a caller can act on: lock contention and pool
/// exhaustion are retryable, a unique violation is a duplicate id.
fn classify(err: sqlx::Error) -> StoreError {
    /// Primary result codes (the low byte of an extended code).
    const SQLITE_BUSY: i32 = 5;
    const SQLITE_LOCKED: i32 = 6;
    match &err {
        sqlx::Error::Database(db) => {
            if db.kind() == ErrorKind::UniqueViolation {
                return StoreError::Duplicate;
            }
            let primary = db
                .code()
                .and_then(|code| code.parse::<i32>().ok())
                .map(|code| code & 0xff);
            if matches!(primary, Some(SQLITE_BUSY | SQLITE_LOCKED)) {
                return StoreError::Unavailable(db.message().to_string());
            }
            StoreError::Backend(Box::new(err))
        }
        sqlx::Error::PoolTimedOut => StoreError::Unavailable(err.to_string()),
        _ => StoreError::Backend(Box::new(err)),
    }
}

fn decode_error(err: sqlx::Error) -> StoreError {
    StoreError::Backend(Box::new(err))
}

/// A stored value that does not decode into a record field.
fn corrupt(what: &str, value: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("stored {what} is invalid: {value}").into())
}

fn to_ms(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

fn from_ms(what: &str, ms: i64) -> Result<DateTime<Utc>, StoreError> {
    DateTime::from_timestamp_millis(ms).ok_or_else(|| corrupt(what, ms))
}

fn duration_to_ms(d: Duration) -> Result<i64, StoreError> {
    i64::try_from(d.as_millis())
        .map_err(|_| StoreError::Backend(format!("duration {d:?} is too long to store").into()))
}

fn duration_from_ms(what: &str, ms: i64) -> Result<Duration, StoreError> {
    u64::try_from(ms)
        .map(Duration::from_millis)
        .map_err(|_| corrupt(what, ms))
}

fn version_to_db(version: u64) -> Result<i64, StoreError> {
    i64::try_from(version)
        .map_err(|_| StoreError::Backend(format!("version {version} is too large to store").into()))
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Backend(Box::new(e)))
}

fn from_json<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(what, e))
}

/// Reads one full row (the columns of `queries::columns!`) back into a record.
fn row_to_record(row: &SqliteRow) -> Result<TaskRecord, StoreError> {
    let status: String = row.try_get("status").map_err(decode_error)?;
    let ttl_ms: Option<i64> = row.try_get("ttl_ms").map_err(decode_error)?;
    let expires_at: Option<i64> = row.try_get("expires_at").map_err(decode_error)?;
    let poll_ms: Option<i64> = row.try_get("poll_interval_ms").map_err(decode_error)?;
    let request: String = row.try_get("request").map_err(decode_error)?;
    let outcome: Option<String> = row.try_get("outcome").map_err(decode_error)?;
    let version: i64 = row.try_get("version").map_err(decode_error)?;
    let input_requests: String = row.try_get("input_requests").map_err(decode_error)?;
    Ok(TaskRecord {
        id: TaskId::from_string(row.try_get::<String, _>("id").map_err(decode_error)?),
        owner: row.try_get("owner").map_err(decode_error)?,
        session: row.try_get("session").map_err(decode_error)?,
        status: TaskStatus::from_str(&status).map_err(|e| corrupt("status", e))?,
        status_message: row.try_get("status_message").map_err(decode_error)?,
        created_at: from_ms(
            "created_at",
            row.try_get("created_at").map_err(decode_error)?,
        )?,
        last_updated_at: from_ms(
            "last_updated_at",
            row.try_get("last_updated_at").map_err(decode_error)?,
        )?,
        ttl: ttl_ms.map(|ms| duration_from_ms("ttl", ms)).transpose()?,
        expires_at: expires_at.map(|ms| from_ms("expires_at", ms)).transpose()?,
        poll_interval: poll_ms
            .map(|ms| duration_from_ms("poll_interval", ms))
            .transpose()?,
        method: row.try_get("method").map_err(decode_error)?,
        request: from_json("request", &request)?,
        outcome: outcome.map(|o| from_json("outcome", &o)).transpose()?,
        runner: row.try_get("runner").map_err(decode_error)?,
        version: u64::try_from(version).map_err(|_| corrupt("version", version))?,
        input_requests: from_json("input_requests", &input_requests)?,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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
