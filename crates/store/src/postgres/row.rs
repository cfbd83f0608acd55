//! Between records and PostgreSQL rows: value conversions, the insert binding, and the
//! classification of sqlx errors into [`StoreError`]s.

use super::queries;
use crate::error::StoreError;
use crate::record::TaskRecord;
use crate::sql::values::{self, duration_to_ms};
pub(super) use crate::sql::values::{counter_to_db, decode_error, row_to_expired, to_json};
use chrono::{DateTime, Utc};
use sqlx::error::ErrorKind;
use sqlx::postgres::{PgArguments, PgRow, Postgres};
use sqlx::query::Query;

/// Sorts a sqlx error into what a caller can act on. Retrying may help after a
/// serialization failure, a deadlock, a lock or connection limit, a server shutting
/// down or restarting, a lost connection or an exhausted pool: those are
/// [`StoreError::Unavailable`]. A unique violation is a duplicate id.
pub(super) fn classify(err: sqlx::Error) -> StoreError {
    match &err {
        sqlx::Error::Database(db) => {
            if db.kind() == ErrorKind::UniqueViolation {
                return StoreError::Duplicate;
            }
            let code = db.code();
            let code = code.as_deref().unwrap_or("");
            let retryable = matches!(
                code,
                // serialization_failure, deadlock_detected, lock_not_available
                "40001" | "40P01" | "55P03"
                // too_many_connections, admin_shutdown, crash_shutdown, cannot_connect_now
                | "53300" | "57P01" | "57P02" | "57P03"
            ) || code.starts_with("08"); // connection exceptions
            if retryable {
                StoreError::Unavailable(format!("{} (SQLSTATE {code})", db.message()))
            } else {
                StoreError::Backend(Box::new(err))
            }
        }
        sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) => StoreError::Unavailable(err.to_string()),
        _ => StoreError::Backend(Box::new(err)),
    }
}

/// The insert of one record with every value bound. Fails before touching the
/// database when a value cannot be stored.
pub(super) fn insert(record: &TaskRecord) -> Result<Query<'_, Postgres, PgArguments>, StoreError> {
    Ok(sqlx::query(queries::CREATE)
        .bind(record.id.as_str())
        .bind(&record.owner)
        .bind(record.session.as_deref())
        .bind(record.status.as_str())
        .bind(record.status_message.as_deref())
        .bind(record.created_at)
        .bind(record.last_updated_at)
        .bind(record.ttl.map(duration_to_ms).transpose()?)
        .bind(record.expires_at)
        .bind(record.poll_interval.map(duration_to_ms).transpose()?)
        .bind(&record.method)
        .bind(to_json(&record.request)?)
        .bind(record.outcome.as_ref().map(to_json).transpose()?)
        .bind(record.runner.as_deref())
        .bind(counter_to_db("version", record.version)?)
        .bind(record.lease_until)
        .bind(counter_to_db("lease generation", record.lease_generation)?)
        .bind(to_json(&record.input_requests)?)
        .bind(record.external.as_ref().map(to_json).transpose()?))
}

/// Reads one full row back into a record.
pub(super) fn row_to_record(row: &PgRow) -> Result<TaskRecord, StoreError> {
    values::row_to_record(row, |_, at: DateTime<Utc>| Ok(at))
}
