//! Between records and PostgreSQL rows: value conversions, the insert binding, and the
//! classification of sqlx errors into [`StoreError`]s.

use super::queries;
use crate::error::StoreError;
use crate::record::TaskRecord;
use crate::sql_values::{corrupt, counter_from_db, duration_from_ms, duration_to_ms, from_json};
pub(super) use crate::sql_values::{counter_to_db, decode_error, row_to_expired, to_json};
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use sqlx::error::ErrorKind;
use sqlx::postgres::{PgArguments, PgRow, Postgres};
use sqlx::query::Query;
use sqlx::Row;
use std::str::FromStr;

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

/// Reads one full row (the columns of `queries::columns!`) back into a record.
pub(super) fn row_to_record(row: &PgRow) -> Result<TaskRecord, StoreError> {
    let status: String = row.try_get("status").map_err(decode_error)?;
    let ttl_ms: Option<i64> = row.try_get("ttl_ms").map_err(decode_error)?;
    let poll_ms: Option<i64> = row.try_get("poll_interval_ms").map_err(decode_error)?;
    let request: String = row.try_get("request").map_err(decode_error)?;
    let outcome: Option<String> = row.try_get("outcome").map_err(decode_error)?;
    let version: i64 = row.try_get("version").map_err(decode_error)?;
    let lease_generation: i64 = row.try_get("lease_generation").map_err(decode_error)?;
    let input_requests: String = row.try_get("input_requests").map_err(decode_error)?;
    let external: Option<String> = row.try_get("external").map_err(decode_error)?;
    Ok(TaskRecord {
        id: TaskId::from_string(row.try_get::<String, _>("id").map_err(decode_error)?),
        owner: row.try_get("owner").map_err(decode_error)?,
        session: row.try_get("session").map_err(decode_error)?,
        status: TaskStatus::from_str(&status).map_err(|e| corrupt("status", e))?,
        status_message: row.try_get("status_message").map_err(decode_error)?,
        created_at: row.try_get("created_at").map_err(decode_error)?,
        last_updated_at: row.try_get("last_updated_at").map_err(decode_error)?,
        ttl: ttl_ms.map(|ms| duration_from_ms("ttl", ms)).transpose()?,
        expires_at: row
            .try_get::<Option<DateTime<Utc>>, _>("expires_at")
            .map_err(decode_error)?,
        poll_interval: poll_ms
            .map(|ms| duration_from_ms("poll_interval", ms))
            .transpose()?,
        method: row.try_get("method").map_err(decode_error)?,
        request: from_json("request", &request)?,
        outcome: outcome.map(|o| from_json("outcome", &o)).transpose()?,
        runner: row.try_get("runner").map_err(decode_error)?,
        version: counter_from_db("version", version)?,
        lease_until: row.try_get("lease_until").map_err(decode_error)?,
        lease_generation: counter_from_db("lease_generation", lease_generation)?,
        input_requests: from_json("input_requests", &input_requests)?,
        external: external.map(|e| from_json("external", &e)).transpose()?,
    })
}
