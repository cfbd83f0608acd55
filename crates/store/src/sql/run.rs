//! Running a [`Call`] on a pool, once for both drivers: a driver says only how it binds
//! a call's values and which of its errors a caller can act on ([`Driver`]).

use super::Call;
use crate::error::StoreError;
use async_trait::async_trait;
use sqlx::query::Query;
use sqlx::{Database, Executor, IntoArguments, Pool};

/// A sqlx driver under the SQL store: SQLite binds a time as milliseconds, PostgreSQL
/// as it is; each sorts its own errors (a busy lock, a serialization failure) into
/// [`StoreError`]s.
pub(crate) trait Driver: Database {
    /// The statement of `call` with its values bound.
    fn bind(call: Call<'_>) -> Query<'_, Self, <Self as Database>::Arguments<'_>>;

    /// Sorts a driver error into what a caller can act on.
    fn classify(err: sqlx::Error) -> StoreError;

    /// How many rows a statement changed.
    fn rows_affected(done: &Self::QueryResult) -> u64;
}

/// Runs [`Call`]s: the sqlx methods of the same names, with values bound the driver's
/// way and errors sorted.
#[async_trait]
pub(crate) trait Run: Send + Sync {
    /// A row as the driver returns it.
    type Row;

    async fn fetch_optional(&self, call: Call<'_>) -> Result<Option<Self::Row>, StoreError>;

    async fn fetch_all(&self, call: Call<'_>) -> Result<Vec<Self::Row>, StoreError>;

    /// Runs a statement that returns no rows; returns how many rows it changed.
    async fn execute(&self, call: Call<'_>) -> Result<u64, StoreError>;
}

/// Every pool of a [`Driver`] runs calls; the driver's bounds are written here once.
#[async_trait]
impl<DB> Run for Pool<DB>
where
    DB: Driver,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> <DB as Database>::Arguments<'q>: IntoArguments<'q, DB> + Send,
{
    type Row = DB::Row;

    async fn fetch_optional(&self, call: Call<'_>) -> Result<Option<DB::Row>, StoreError> {
        DB::bind(call)
            .fetch_optional(self)
            .await
            .map_err(DB::classify)
    }

    async fn fetch_all(&self, call: Call<'_>) -> Result<Vec<DB::Row>, StoreError> {
        DB::bind(call).fetch_all(self).await.map_err(DB::classify)
    }

    async fn execute(&self, call: Call<'_>) -> Result<u64, StoreError> {
        let done = DB::bind(call).execute(self).await.map_err(DB::classify)?;
        Ok(DB::rows_affected(&done))
    }
}
