//! Between records and SQLite rows: value conversions, the insert binding, and the
//! classification of sqlx errors into [`StoreError`]s.

use super::queries;
use crate::error::StoreError;
use crate::record::TaskRecord;
use crate::sql::values::{self, corrupt, duration_to_ms};
pub(super) use crate::sql::values::{counter_to_db, row_to_expired, to_json};
use chrono::{DateTime, Utc};
use sqlx::error::ErrorKind;
use sqlx::query::Query;
use sqlx::sqlite::{Sqlite, SqliteArguments, SqliteRow};

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

/// Reads one full row back into a record.
pub(super) fn row_to_record(row: &SqliteRow) -> Result<TaskRecord, StoreError> {
    values::row_to_record(row, from_ms)
}
