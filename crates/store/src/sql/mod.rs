//! What the SQLite and PostgreSQL backends share, written once: the store itself
//! ([`traits`]: `TaskStore`, `DeliveryOutbox` and `StepJournal` for every [`Backend`]),
//! the statements they write alike ([`statements`]), the store methods they run alike
//! ([`store`] for tasks, [`delivery`] for the webhook outbox, [`runners`] for runner
//! liveness, [`journal`] for steps), what their batching writers share ([`batch`]),
//! the bounded cache of records read last ([`cache`]), and the conversions between
//! records and column values ([`values`], over the typed columns of [`rows`]).
//!
//! The backends differ in the parameter syntax (`?1` / `$1`), in how a time is stored
//! (integer milliseconds / `TIMESTAMPTZ`) and in how batch changes pick their rows
//! (SQLite's single write lock / `FOR UPDATE SKIP LOCKED`). So a statement is written
//! once with `?N` parameters, its values are collected as [`Arg`]s, and each backend
//! binds those the way it stores them ([`Backend`]). What else differs for good reason
//! (SQLite's single writer and change board, PostgreSQL's flushers and change feed)
//! is a hook of [`Backend`] that the store written once calls.
//!
//! So a new store method is written in the trait, here (its SQL in [`statements`] or
//! beside it, its forwarding in [`traits`]), and in the parity suite; a backend file
//! changes only when the method needs a hook of its own.

pub(crate) mod backend;
pub(crate) mod batch;
pub(crate) mod cache;
pub(crate) mod delivery;
pub(crate) mod journal;
pub(crate) mod rows;
pub(crate) mod run;
pub(crate) mod runners;
pub(crate) mod statements;
pub(crate) mod store;
mod traits;
pub(crate) mod values;

use chrono::{DateTime, Utc};
use std::borrow::Cow;

pub(crate) use backend::{Backend, Touches};
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
