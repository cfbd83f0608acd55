//! What the two batching writers share (SQLite's single writer with its group commit,
//! PostgreSQL's flushers with `UNNEST`): telling the observer a batch's size, applying a
//! creation's end in the batch's transaction, and the batch's error once per caller.
//! How each forms and inserts its batches stays in its backend's `writer.rs`.
//! PostgreSQL's batched reads (`postgres/reader.rs`) tell their sizes and share errors
//! the same way.

use super::{store, Call, Statements};
use crate::error::StoreError;
use crate::observed::ObserverSlot;
use crate::record::{TaskRecord, TransitionParams};
use std::future::Future;

/// Tells the observer in `observer`, once one is set, that `backend` writes a batch of
/// `size` creations.
pub(crate) fn tell_size(observer: &ObserverSlot, backend: &'static str, size: usize) {
    let told = observer.read().clone();
    if let Some(told) = told {
        told.observe_batch(backend, size);
    }
}

/// Tells the observer in `observer`, once one is set, that `backend` answers a batch of
/// `size` reads of `kind` with one statement (PostgreSQL's batched gets, `postgres/reader.rs`).
#[cfg(feature = "postgres")]
pub(crate) fn tell_read_size(
    observer: &ObserverSlot,
    backend: &'static str,
    kind: &'static str,
    size: usize,
) {
    let told = observer.read().clone();
    if let Some(told) = told {
        told.observe_read_batch(backend, kind, size);
    }
}

/// Applies a creation's end (its amendment) inside the batch's transaction: `fetch`
/// runs the transition's compare-and-set there and reads back the record after, if a
/// row changed.
pub(crate) async fn apply_end<'a, F, Fut>(
    statements: &'static Statements,
    end: &'a TransitionParams,
    fetch: F,
) -> Result<TaskRecord, StoreError>
where
    F: FnOnce(Call<'a>) -> Fut,
    Fut: Future<Output = Result<Option<TaskRecord>, StoreError>>,
{
    let call = store::transition_call(statements, end)?;
    fetch(call).await?.ok_or_else(|| {
        StoreError::Backend("the end of a task created in the same batch did not apply".into())
    })
}

/// The batch's error once per caller (a [`StoreError`] is not `Clone`: backend
/// errors keep only their message).
pub(crate) fn same_error(err: &StoreError) -> StoreError {
    match err {
        StoreError::Unavailable(message) => StoreError::Unavailable(message.clone()),
        other => StoreError::Backend(other.to_string().into()),
    }
}
