//! Between records and SQLite rows: value conversions, the insert binding, and the
//! classification of sqlx errors into [`StoreError`]s.

use super::queries;
use crate::error::StoreError;
use crate::record::TaskRecord;
use crate::sql_values::{corrupt, counter_from_db, duration_from_ms, duration_to_ms, from_json};
pub(super) use crate::sql_values::{counter_to_db, decode_error, row_to_expired, to_json};
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use sqlx::error::ErrorKind;
use sqlx::query::Query;
use sqlx::sqlite::{Sqlite, SqliteArguments, SqliteRow};
use sqlx::Row;
use std::str::FromStr;

/// Sorts a sqlx error into what a caller can act on: lock contention and pool
/// exhaustion are retryable, a unique violation is a duplicate id.
pub(super) fn classify(err: sqlx::Error) -> StoreError {
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

pub(super) fn to_ms(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

fn from_ms(what: &str, ms: i64) -> Result<DateTime<Utc>, StoreError> {
    DateTime::from_timestamp_millis(ms).ok_or_else(|| corrupt(what, ms))
}

/// The insert of one record with every value bound (owned, so the query can wait in
/// the group-commit queue). Fails before touching the database when a value cannot be
/// stored.
pub(super) fn insert(
    record: &TaskRecord,
) -> Result<Query<'static, Sqlite, SqliteArguments<'static>>, StoreError> {
    Ok(sqlx::query(queries::CREATE)
        .bind(record.id.as_str().to_string())
        .bind(record.owner.clone())
        .bind(record.session.clone())
        .bind(record.status.as_str())
        .bind(record.status_message.clone())
        .bind(to_ms(record.created_at))
        .bind(to_ms(record.last_updated_at))
        .bind(record.ttl.map(duration_to_ms).transpose()?)
        .bind(record.expires_at.map(to_ms))
        .bind(record.poll_interval.map(duration_to_ms).transpose()?)
        .bind(record.method.clone())
        .bind(to_json(&record.request)?)
        .bind(record.outcome.as_ref().map(to_json).transpose()?)
        .bind(record.runner.clone())
        .bind(counter_to_db("version", record.version)?)
        .bind(record.lease_until.map(to_ms))
        .bind(counter_to_db("lease generation", record.lease_generation)?)
        .bind(to_json(&record.input_requests)?)
        .bind(record.external.as_ref().map(to_json).transpose()?))
}

/// Reads one full row (the columns of `queries::columns!`) back into a record.
pub(super) fn row_to_record(row: &SqliteRow) -> Result<TaskRecord, StoreError> {
    let status: String = row.try_get("status").map_err(decode_error)?;
    let ttl_ms: Option<i64> = row.try_get("ttl_ms").map_err(decode_error)?;
    let expires_at: Option<i64> = row.try_get("expires_at").map_err(decode_error)?;
    let poll_ms: Option<i64> = row.try_get("poll_interval_ms").map_err(decode_error)?;
    let request: String = row.try_get("request").map_err(decode_error)?;
    let outcome: Option<String> = row.try_get("outcome").map_err(decode_error)?;
    let version: i64 = row.try_get("version").map_err(decode_error)?;
    let lease_until: Option<i64> = row.try_get("lease_until").map_err(decode_error)?;
    let lease_generation: i64 = row.try_get("lease_generation").map_err(decode_error)?;
    let input_requests: String = row.try_get("input_requests").map_err(decode_error)?;
    let external: Option<String> = row.try_get("external").map_err(decode_error)?;
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
        version: counter_from_db("version", version)?,
        lease_until: lease_until
            .map(|ms| from_ms("lease_until", ms))
            .transpose()?,
        lease_generation: counter_from_db("lease_generation", lease_generation)?,
        input_requests: from_json("input_requests", &input_requests)?,
        external: external.map(|e| from_json("external", &e)).transpose()?,
    })
}
