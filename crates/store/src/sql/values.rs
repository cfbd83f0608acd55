//! What the SQLite and PostgreSQL backends share between records and rows: value
//! conversions with errors that name the field, and reading rows back into records.
//! Only the drivers' types differ (and how a time is stored), so this is written once.

use super::rows::Columns;
use crate::delivery::Delivery;
use crate::error::StoreError;
use crate::record::{ExpiredTask, TaskRecord, TimelineEntry};
use crate::request::RequestJson;
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::str::FromStr;
use std::time::Duration;

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
    external: &crate::record::FieldChange<crate::record::StoredJob>,
) -> Result<(bool, Option<String>), StoreError> {
    let json = external.new_value().map(to_json).transpose()?;
    Ok((!external.is_keep(), json))
}

/// Reads one row returned by a backend's `DELETE_EXPIRED` (id, status, external). The
/// rows are already deleted, so a status or job that does not decode is logged and read
/// as "still running" / "no job" instead of failing the batch (whose tasks would then
/// never be audited or stopped).
pub(crate) fn row_to_expired(row: &impl Columns) -> Result<ExpiredTask, StoreError> {
    let id = TaskId::from_string(row.text("id")?);
    let status = row
        .text("status")
        .and_then(|s| TaskStatus::from_str(&s).map_err(|e| corrupt("status", e)))
        .unwrap_or_else(|e| {
            tracing::warn!(task_id = %id, error = %e, "expired task with an unreadable status");
            TaskStatus::Working
        });
    let external = row
        .maybe_text("external")
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
pub(crate) fn row_to_record(row: &impl Columns) -> Result<TaskRecord, StoreError> {
    let maybe_duration = |column: &str, what: &str| {
        let ms = row.maybe_int(column)?;
        ms.map(|ms| duration_from_ms(what, ms)).transpose()
    };
    Ok(TaskRecord {
        id: TaskId::from_string(row.text("id")?),
        owner: row.text("owner")?,
        session: row.maybe_text("session")?,
        status: TaskStatus::from_str(&row.text("status")?).map_err(|e| corrupt("status", e))?,
        status_message: row.maybe_text("status_message")?,
        created_at: row.at("created_at")?,
        last_updated_at: row.at("last_updated_at")?,
        ttl: maybe_duration("ttl_ms", "ttl")?,
        expires_at: row.maybe_at("expires_at")?,
        poll_interval: maybe_duration("poll_interval_ms", "poll_interval")?,
        method: row.text("method")?,
        request: RequestJson::from_json(row.text("request")?).map_err(|e| corrupt("request", e))?,
        outcome: row
            .maybe_text("outcome")?
            .map(|o| from_json("outcome", &o))
            .transpose()?,
        runner: row.maybe_text("runner")?,
        version: counter_from_db("version", row.int("version")?)?,
        lease_until: row.maybe_at("lease_until")?,
        lease_generation: counter_from_db("lease_generation", row.int("lease_generation")?)?,
        input_requests: from_json("input_requests", &row.text("input_requests")?)?,
        external: row
            .maybe_text("external")?
            .map(|e| from_json("external", &e))
            .transpose()?,
    })
}

/// Reads one row of `Statements::timeline` back into an entry.
pub(crate) fn row_to_timeline_entry(row: &impl Columns) -> Result<TimelineEntry, StoreError> {
    let status = row.text("status")?;
    Ok(TimelineEntry {
        task: TaskId::from_string(row.text("task_id")?),
        version: counter_from_db("timeline version", row.int("version")?)?,
        at: row.at("changed_at")?,
        status: TaskStatus::from_str(&status).map_err(|e| corrupt("timeline status", e))?,
        status_message: row.maybe_text("status_message")?,
    })
}

/// Reads one row of a delivery claim (`statements::delivery_columns!`) back into a
/// delivery.
pub(crate) fn row_to_delivery(row: &impl Columns) -> Result<Delivery, StoreError> {
    let attempts = row.int("attempts")?;
    Ok(Delivery {
        key: row.text("key")?,
        sink: row.text("sink")?,
        payload: row.text("payload")?,
        attempts: u32::try_from(attempts).map_err(|_| corrupt("delivery attempts", attempts))?,
        created_at: row.at("created_at")?,
        next_attempt_at: row.at("next_attempt_at")?,
        last_error: row.maybe_text("last_error")?,
    })
}

/// Reads the count `n` of a `COUNT(*) AS n` row.
pub(crate) fn row_to_count(row: &impl Columns) -> Result<u64, StoreError> {
    counter_from_db("count", row.int("n")?)
}
