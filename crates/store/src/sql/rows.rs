//! The columns of a driver's row, read by name with errors that name them
//! ([`Columns`]): what the readers of records, timelines, deliveries, runners and steps
//! are written with, once for both drivers. A backend says only how its rows keep a
//! time ([`StoredTime`]).

use crate::error::StoreError;
use chrono::{DateTime, Utc};
use sqlx::{ColumnIndex, Decode, Row, Type};

/// How a driver's row keeps a time: SQLite as integer milliseconds, PostgreSQL as
/// `TIMESTAMPTZ`. Implemented by each backend for its row type (its `row.rs`).
pub(crate) trait StoredTime {
    /// What a time column decodes as.
    type Time;

    /// The stored time of `column` as a time, or why it is not one (naming the column).
    fn time(column: &str, stored: Self::Time) -> Result<DateTime<Utc>, StoreError>;
}

/// The typed columns of a row. Every driver row that decodes text, 64-bit integers and
/// its stored time has them: the driver's bounds are written on the one impl below, so
/// no reader names them.
pub(crate) trait Columns {
    fn text(&self, column: &str) -> Result<String, StoreError>;

    fn maybe_text(&self, column: &str) -> Result<Option<String>, StoreError>;

    fn int(&self, column: &str) -> Result<i64, StoreError>;

    fn maybe_int(&self, column: &str) -> Result<Option<i64>, StoreError>;

    /// A time column, as the row keeps it ([`StoredTime`]).
    fn at(&self, column: &str) -> Result<DateTime<Utc>, StoreError>;

    fn maybe_at(&self, column: &str) -> Result<Option<DateTime<Utc>>, StoreError>;
}

impl<R> Columns for R
where
    R: Row + StoredTime,
    for<'c> &'c str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> <R as StoredTime>::Time: Decode<'r, R::Database> + Type<R::Database>,
{
    fn text(&self, column: &str) -> Result<String, StoreError> {
        self.try_get(column).map_err(decode_error)
    }

    fn maybe_text(&self, column: &str) -> Result<Option<String>, StoreError> {
        self.try_get(column).map_err(decode_error)
    }

    fn int(&self, column: &str) -> Result<i64, StoreError> {
        self.try_get(column).map_err(decode_error)
    }

    fn maybe_int(&self, column: &str) -> Result<Option<i64>, StoreError> {
        self.try_get(column).map_err(decode_error)
    }

    fn at(&self, column: &str) -> Result<DateTime<Utc>, StoreError> {
        R::time(column, self.try_get(column).map_err(decode_error)?)
    }

    fn maybe_at(&self, column: &str) -> Result<Option<DateTime<Utc>>, StoreError> {
        let stored: Option<<R as StoredTime>::Time> = self.try_get(column).map_err(decode_error)?;
        stored.map(|t| R::time(column, t)).transpose()
    }
}

/// A driver error while reading a column.
pub(crate) fn decode_error(err: sqlx::Error) -> StoreError {
    StoreError::Backend(Box::new(err))
}
