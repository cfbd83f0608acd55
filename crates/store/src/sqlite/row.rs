//! Between records and SQLite rows: times as integer milliseconds, binding a
//! [`Call`]'s values, how a row keeps a time ([`StoredTime`]), and the classification
//! of sqlx errors into [`StoreError`]s.

use crate::error::StoreError;
use crate::sql::rows::StoredTime;
use crate::sql::run::Driver;
use crate::sql::values::corrupt;
use crate::sql::{Arg, Call};
use chrono::{DateTime, Utc};
use sqlx::error::ErrorKind;
use sqlx::query::Query;
use sqlx::sqlite::{Sqlite, SqliteArguments, SqliteQueryResult, SqliteRow};
use std::borrow::Cow;

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

fn to_ms(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

fn from_ms(what: &str, ms: i64) -> Result<DateTime<Utc>, StoreError> {
    DateTime::from_timestamp_millis(ms).ok_or_else(|| corrupt(what, ms))
}

/// The statement of `call` with its values bound, times as milliseconds. Every value
/// is owned, so the statement lives as long as wanted (`'static` lets an insert wait
/// in the group-commit queue).
pub(super) fn query<'q>(call: Call<'_>) -> Query<'q, Sqlite, SqliteArguments<'q>> {
    call.args
        .into_iter()
        .fold(sqlx::query(call.sql), |query, arg| match arg {
            Arg::Text(text) => query.bind(text.map(Cow::into_owned)),
            Arg::Int(n) => query.bind(n),
            Arg::Bool(b) => query.bind(b),
            Arg::Time(at) => query.bind(at.map(to_ms)),
        })
}

impl Driver for Sqlite {
    fn bind(call: Call<'_>) -> Query<'_, Sqlite, SqliteArguments<'_>> {
        query(call)
    }

    fn classify(err: sqlx::Error) -> StoreError {
        classify(err)
    }

    fn rows_affected(done: &SqliteQueryResult) -> u64 {
        done.rows_affected()
    }
}

/// SQLite keeps a time as integer milliseconds.
impl StoredTime for SqliteRow {
    type Time = i64;

    fn time(column: &str, ms: i64) -> Result<DateTime<Utc>, StoreError> {
        from_ms(column, ms)
    }
}
