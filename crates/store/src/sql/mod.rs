//! What the SQLite and PostgreSQL backends share: the statements they write alike
//! ([`statements`]), the store methods they run alike ([`store`] for tasks, [`delivery`]
//! for the webhook outbox, [`runners`] for runner liveness), and the conversions between records and column values
//! ([`values`]).
//!
//! The backends differ in the parameter syntax (`?1` / `$1`), in how a time is stored
//! (integer milliseconds / `TIMESTAMPTZ`) and in how batch changes pick their rows
//! (SQLite's single write lock / `FOR UPDATE SKIP LOCKED`). So a statement is written
//! once with `?N` parameters, its values are collected as [`Arg`]s, and each backend
//! binds those the way it stores them ([`Backend`]).

pub(crate) mod delivery;
pub(crate) mod journal;
pub(crate) mod runners;
pub(crate) mod statements;
pub(crate) mod store;
pub(crate) mod values;

use crate::delivery::Delivery;
use crate::error::StoreError;
use crate::record::{ExpiredTask, TaskRecord, TimelineEntry};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use std::borrow::Cow;

pub(crate) use statements::{Dialect, Statements};

/// The value of one statement parameter, before a backend binds it.
#[derive(Debug)]
pub(crate) enum Arg<'a> {
    Text(Option<Cow<'a, str>>),
    Int(Option<i64>),
    Bool(bool),
    /// Bound as the backend stores times.
    Time(Option<DateTime<Utc>>),
}

/// `Arg::from` for each type a statement takes: `conversions! { Type => |value| arg; }`.
macro_rules! conversions {
    ($($type:ty => |$value:ident| $arg:expr;)*) => {$(
        impl<'a> From<$type> for Arg<'a> {
            fn from($value: $type) -> Self {
                $arg
            }
        }
    )*};
}

conversions! {
    &'a str => |text| Arg::Text(Some(Cow::Borrowed(text)));
    Option<&'a str> => |text| Arg::Text(text.map(Cow::Borrowed));
    String => |text| Arg::Text(Some(Cow::Owned(text)));
    Option<String> => |text| Arg::Text(text.map(Cow::Owned));
    i64 => |n| Arg::Int(Some(n));
    Option<i64> => |n| Arg::Int(n);
    bool => |b| Arg::Bool(b);
    DateTime<Utc> => |at| Arg::Time(Some(at));
    Option<DateTime<Utc>> => |at| Arg::Time(at);
}

/// A statement and the values of its parameters, in order (`?1` first).
#[derive(Debug)]
pub(crate) struct Call<'a> {
    pub(crate) sql: &'static str,
    pub(crate) args: Vec<Arg<'a>>,
}

impl<'a> Call<'a> {
    pub(crate) fn new(sql: &'static str) -> Self {
        Self {
            sql,
            args: Vec::new(),
        }
    }

    /// Adds the value of the next parameter.
    pub(crate) fn bind(mut self, value: impl Into<Arg<'a>>) -> Self {
        self.args.push(value.into());
        self
    }
}

/// What the shared store methods need from a backend: its statements, running a
/// [`Call`] (the sqlx method of the same name, with the arguments bound the backend's
/// way), and reading its rows.
#[async_trait]
pub(crate) trait Backend: Send + Sync {
    /// A row as the driver returns it.
    type Row: Send;

    fn statements(&self) -> &'static Statements;

    fn read_record(row: &Self::Row) -> Result<TaskRecord, StoreError>;

    /// Reads a row of [`Statements::delete_expired`].
    fn read_expired(row: &Self::Row) -> Result<ExpiredTask, StoreError>;

    /// Reads a row of [`Statements::timeline`].
    fn read_timeline(row: &Self::Row) -> Result<TimelineEntry, StoreError>;

    /// Reads a row of [`Statements::claim_deliveries`].
    fn read_delivery(row: &Self::Row) -> Result<Delivery, StoreError>;

    /// Reads a row of the runners on a host (`runners.rs`).
    fn read_runner(row: &Self::Row) -> Result<crate::runner::RunnerRecord, StoreError>;

    /// Reads the row of a count ([`Statements::pending_deliveries`]).
    fn read_count(row: &Self::Row) -> Result<u64, StoreError>;

    /// Reads a row of the journal's steps (`journal::JournalStatements::steps`).
    fn read_journal_entry(row: &Self::Row) -> Result<crate::journal::JournalEntry, StoreError>;

    async fn fetch_optional(&self, call: Call<'_>) -> Result<Option<Self::Row>, StoreError>;

    async fn fetch_all(&self, call: Call<'_>) -> Result<Vec<Self::Row>, StoreError>;

    /// Runs a statement that returns no rows; returns how many rows it changed.
    async fn execute(&self, call: Call<'_>) -> Result<u64, StoreError>;
}
