//! What the SQLite and PostgreSQL backends share between records and rows: value
//! conversions with errors that name the field, and reading rows back into records.
//! Only the drivers' types differ (and how a time is stored), so this is written once.

use crate::delivery::Delivery;
use crate::error::StoreError;
use crate::record::{ExpiredTask, TaskRecord, TimelineEntry};
use crate::request::RequestJson;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use sqlx::{ColumnIndex, Decode, Row, Type};
use std::str::FromStr;
use std::time::Duration;

/// A driver error while reading a column.
pub(crate) fn decode_error(err: sqlx::Error) -> StoreError {
    StoreError::Backend(Box::new(err))
}

/// A stored value that does not decode into a record field.
pub(crate) fn corrupt(what: &str, value: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("stored {what} is invalid: {value}").into())
}

pub(crate) fn duration_to_ms(d: Duration) -> Result<i64, StoreError> {
    i64::try_from(d.as_millis())
        .map_err(|_| StoreError::Backend(format!("duration {d:?} is too long to store").into()))
}

pub(crate) fn duration_from_ms(what: &str, ms: i64) -> Result<Duration, StoreError> {
    u64::try_from(ms)
        .map(Duration::from_millis)
        .map_err(|_| corrupt(what, ms))
}

/// A version or lease generation as the databases' signed 64-bit integer.
pub(crate) fn counter_to_db(what: &str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value)
        .map_err(|_| StoreError::Backend(format!("{what} {value} is too large to store").into()))
}

pub(crate) fn counter_from_db(what: &str, value: i64) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| corrupt(what, value))
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Backend(Box::new(e)))
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    what: &str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(what, e))
}

/// The external-job columns of a transition: whether it sets the job, and the job (as
/// JSON) it sets, `None` to remove it (see [`crate::TransitionParams::external`]).
pub(crate) fn external_to_db(
    external: &crate::record::FieldChange<crate::record::ExternalJob>,
) -> Result<(bool, Option<String>), StoreError> {
    let json = external.new_value().map(to_json).transpose()?;
    Ok((!external.is_keep(), json))
}

/// Reads one row returned by a backend's `DELETE_EXPIRED` (id, status, external). The
/// rows are already deleted, so a status or job that does not decode is logged and read
/// as "still running" / "no job" instead of failing the batch (whose tasks would then
/// never be audited or stopped).
pub(crate) fn row_to_expired<R>(row: &R) -> Result<ExpiredTask, StoreError>
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
{
    let id = TaskId::from_string(row.try_get::<String, _>("id").map_err(decode_error)?);
    let status = row
        .try_get::<String, _>("status")
        .map_err(decode_error)
        .and_then(|s| TaskStatus::from_str(&s).map_err(|e| corrupt("status", e)))
        .unwrap_or_else(|e| {
            tracing::warn!(task_id = %id, error = %e, "expired task with an unreadable status");
            TaskStatus::Working
        });
    let external = row
        .try_get::<Option<String>, _>("external")
        .map_err(decode_error)
        .and_then(|e| e.map(|e| from_json("external", &e)).transpose())
        .unwrap_or_else(|e| {
            tracing::warn!(task_id = %id, error = %e, "expired task with an unreadable external job; it is not cancelled");
            None
        });
    Ok(ExpiredTask {
        id,
        status,
        external,
    })
}

/// Reads one full row (the columns of `statements::columns!`) back into a record.
/// `time` turns a stored time (of the type `T` the backend stores) into a time, or
/// says why it cannot, naming the column.
pub(crate) fn row_to_record<R, T>(
    row: &R,
    time: fn(&str, T) -> Result<DateTime<Utc>, StoreError>,
) -> Result<TaskRecord, StoreError>
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> T: Decode<'r, R::Database> + Type<R::Database>,
{
    let text = |column: &str| row.try_get::<String, _>(column).map_err(decode_error);
    let maybe_text = |column: &str| {
        row.try_get::<Option<String>, _>(column)
            .map_err(decode_error)
    };
    let int = |column: &str| row.try_get::<i64, _>(column).map_err(decode_error);
    let maybe_duration = |column: &str, what: &str| {
        let ms = row
            .try_get::<Option<i64>, _>(column)
            .map_err(decode_error)?;
        ms.map(|ms| duration_from_ms(what, ms)).transpose()
    };
    let at = |column: &str| time(column, row.try_get(column).map_err(decode_error)?);
    let maybe_at = |column: &str| {
        let stored: Option<T> = row.try_get(column).map_err(decode_error)?;
        stored.map(|t| time(column, t)).transpose()
    };
    Ok(TaskRecord {
        id: TaskId::from_string(text("id")?),
        owner: text("owner")?,
        session: maybe_text("session")?,
        status: TaskStatus::from_str(&text("status")?).map_err(|e| corrupt("status", e))?,
        status_message: maybe_text("status_message")?,
        created_at: at("created_at")?,
        last_updated_at: at("last_updated_at")?,
        ttl: maybe_duration("ttl_ms", "ttl")?,
        expires_at: maybe_at("expires_at")?,
        poll_interval: maybe_duration("poll_interval_ms", "poll_interval")?,
        method: text("method")?,
        request: RequestJson::from_json(text("request")?).map_err(|e| corrupt("request", e))?,
        outcome: maybe_text("outcome")?
            .map(|o| from_json("outcome", &o))
            .transpose()?,
        runner: maybe_text("runner")?,
        version: counter_from_db("version", int("version")?)?,
        lease_until: maybe_at("lease_until")?,
        lease_generation: counter_from_db("lease_generation", int("lease_generation")?)?,
        input_requests: from_json("input_requests", &text("input_requests")?)?,
        external: maybe_text("external")?
            .map(|e| from_json("external", &e))
            .transpose()?,
    })
}

/// Reads one row of `Statements::timeline` back into an entry; `time` as in
/// [`row_to_record`].
pub(crate) fn row_to_timeline_entry<R, T>(
    row: &R,
    time: fn(&str, T) -> Result<DateTime<Utc>, StoreError>,
) -> Result<TimelineEntry, StoreError>
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> T: Decode<'r, R::Database> + Type<R::Database>,
{
    let status: String = row.try_get("status").map_err(decode_error)?;
    Ok(TimelineEntry {
        task: TaskId::from_string(row.try_get::<String, _>("task_id").map_err(decode_error)?),
        version: counter_from_db(
            "timeline version",
            row.try_get("version").map_err(decode_error)?,
        )?,
        at: time(
            "changed_at",
            row.try_get("changed_at").map_err(decode_error)?,
        )?,
        status: TaskStatus::from_str(&status).map_err(|e| corrupt("timeline status", e))?,
        status_message: row.try_get("status_message").map_err(decode_error)?,
    })
}

/// Reads one row of a delivery claim (`statements::delivery_columns!`) back into a
/// delivery; `time` as in [`row_to_record`].
pub(crate) fn row_to_delivery<R, T>(
    row: &R,
    time: fn(&str, T) -> Result<DateTime<Utc>, StoreError>,
) -> Result<Delivery, StoreError>
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> T: Decode<'r, R::Database> + Type<R::Database>,
{
    let text = |column: &str| row.try_get::<String, _>(column).map_err(decode_error);
    let at = |column: &str| time(column, row.try_get(column).map_err(decode_error)?);
    let attempts: i64 = row.try_get("attempts").map_err(decode_error)?;
    Ok(Delivery {
        key: text("key")?,
        sink: text("sink")?,
        payload: text("payload")?,
        attempts: u32::try_from(attempts).map_err(|_| corrupt("delivery attempts", attempts))?,
        created_at: at("created_at")?,
        next_attempt_at: at("next_attempt_at")?,
        last_error: row.try_get("last_error").map_err(decode_error)?,
    })
}

/// Reads the count `n` of a `COUNT(*) AS n` row.
pub(crate) fn row_to_count<R>(row: &R) -> Result<u64, StoreError>
where
    R: Row,
    for<'c> &'c str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
{
    counter_from_db("count", row.try_get("n").map_err(decode_error)?)
}
