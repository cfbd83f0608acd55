//! Between records and PostgreSQL rows: binding a [`Call`]'s values, how a row keeps a
//! time ([`StoredTime`]), and the classification of sqlx errors into [`StoreError`]s.
//! Times are `TIMESTAMPTZ`, so they bind and read as they are.

use crate::error::StoreError;
use crate::sql::rows::StoredTime;
use crate::sql::run::Driver;
use crate::sql::{Arg, Call};
use chrono::{DateTime, Utc};
use sqlx::error::ErrorKind;
use sqlx::postgres::{PgArguments, PgQueryResult, PgRow, Postgres};
use sqlx::query::Query;

/// Sorts a sqlx error into what a caller can act on. Retrying may help after a
/// serialization failure, a deadlock, a lock or connection limit, a server shutting
/// down or restarting, a lost connection or an exhausted pool: those are
/// [`StoreError::Unavailable`]. A unique violation is a duplicate id. A TLS failure (a
/// refused certificate) is not retryable, though rustls reports it as an I/O error.
pub(super) fn classify(err: sqlx::Error) -> StoreError {
    if let Some(refused) = super::tls::refused(&err) {
        return StoreError::Backend(Box::new(refused));
    }
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

/// The statement of `call` with its values bound.
pub(super) fn query(call: Call<'_>) -> Query<'_, Postgres, PgArguments> {
    call.args
        .into_iter()
        .fold(sqlx::query(call.sql), |query, arg| match arg {
            Arg::Text(text) => query.bind(text),
            Arg::Int(n) => query.bind(n),
            Arg::Bool(b) => query.bind(b),
            Arg::Time(at) => query.bind(at),
        })
}

impl Driver for Postgres {
    fn bind(call: Call<'_>) -> Query<'_, Postgres, PgArguments> {
        query(call)
    }

    fn classify(err: sqlx::Error) -> StoreError {
        classify(err)
    }

    fn rows_affected(done: &PgQueryResult) -> u64 {
        done.rows_affected()
    }
}

/// PostgreSQL keeps a time as `TIMESTAMPTZ`, read as it is.
impl StoredTime for PgRow {
    type Time = DateTime<Utc>;

    fn time(_column: &str, at: DateTime<Utc>) -> Result<DateTime<Utc>, StoreError> {
        Ok(at)
    }
}
