//! [`Backend`]: the seam under the store written once ([`super::traits`]). A backend
//! gives its statements and runs a [`Call`] (its rows read through
//! [`Columns`]); and through the hooks
//! below it does its own way what differs for good reason (how it batches creations,
//! caches reads, guards writes, hears of other processes).

use super::rows::Columns;
use super::run::Run;
use super::{Call, Statements};
use crate::change::{ChangeFeed, ChangeMark, ChangeMarks};
use crate::error::StoreError;
use crate::journal::{RecordStep, Recorded};
use crate::observed::ObserverSlot;
use crate::pending::PendingCreate;
use crate::record::{ClaimExpiredParams, TaskRecord};
use crate::session::SessionStore;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Which tasks a write may change, known before it runs: a backend that caches reads
/// under marks of its own (SQLite's change board) moves them around the write.
#[derive(Debug)]
pub(crate) enum Touches {
    /// These tasks (none: the write tells which it changed, through
    /// [`Backend::moved`]). Read only by a backend that guards its writes (SQLite).
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    Tasks(Vec<TaskId>),
    /// Tasks not known up front (every cached read misses once).
    Unknown,
}

/// A write written once (`store.rs`, `runners.rs`), handed to
/// [`Backend::guard_write`] with its arguments: a plain function of the backend and
/// the arguments, so that a backend may run it where it likes (SQLite: on a task of
/// its own, with owned copies) or in place (PostgreSQL: borrowing them).
pub(crate) type WriteFn<B, P, T> =
    for<'a> fn(&'a B, &'a P) -> Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// What the store written once needs from a SQL backend.
///
/// The first part runs statements on the backend's pool ([`Run`], with values bound
/// the driver's way) whose rows read through [`Columns`]. The second part is what the backends do
/// their own way; where a hook has a default, it is what a backend without a cache
/// or a change board of its own does.
#[async_trait]
pub(crate) trait Backend: Clone + Send + Sync + 'static {
    /// A row as the driver returns it, read through its typed columns.
    type Row: Columns + Send;

    /// The pool the statements run on.
    type Pool: Run<Row = Self::Row>;

    /// The backend's short, fixed name ([`crate::TaskStore::backend_name`]).
    const NAME: &'static str;

    /// Whether [`Backend::change_feed`] sees every write, whichever process made it
    /// ([`crate::TaskStore::supports_notify`]).
    const NOTIFIES: bool = false;

    fn statements(&self) -> &'static Statements;

    fn pool(&self) -> &Self::Pool;

    async fn fetch_optional(&self, call: Call<'_>) -> Result<Option<Self::Row>, StoreError> {
        self.pool().fetch_optional(call).await
    }

    async fn fetch_all(&self, call: Call<'_>) -> Result<Vec<Self::Row>, StoreError> {
        self.pool().fetch_all(call).await
    }

    /// Runs a statement that returns no rows; returns how many rows it changed.
    async fn execute(&self, call: Call<'_>) -> Result<u64, StoreError> {
        self.pool().execute(call).await
    }

    // The hooks: what each backend does its own way.

    /// Where the backend finds the observer of its batches
    /// ([`crate::TaskStore::set_store_observer`]).
    fn observer(&self) -> &ObserverSlot;

    /// Whether other processes may open the same data
    /// ([`crate::TaskStore::shared_by_processes`]).
    fn shared(&self) -> bool;

    /// Inserts a record, durably, through the backend's batching writer.
    async fn insert(&self, record: &TaskRecord) -> Result<(), StoreError>;

    /// Inserts a creation whose work runs, with its end when that came in time
    /// ([`crate::TaskStore::create_pending`]).
    async fn insert_pending(&self, pending: Arc<PendingCreate>) -> Result<TaskRecord, StoreError>;

    /// Records a finished step ([`crate::StepJournal::record_step`]): one statement of
    /// its own (`journal::record_step`), or the batching writer's.
    async fn insert_step(&self, step: &RecordStep) -> Result<Recorded, StoreError>;

    /// Reads a visible record ([`crate::TaskStore::get`]), from the backend's cache
    /// when it can tell the cached record is still the row.
    async fn read_task(
        &self,
        id: &TaskId,
        now: DateTime<Utc>,
    ) -> Result<Option<TaskRecord>, StoreError>;

    /// Runs `write` on `args`, a write of the tasks in `touches`. By default in place;
    /// a backend that caches reads under marks of its own moves them around it.
    async fn guard_write<P, T>(
        &self,
        touches: Touches,
        args: &P,
        write: WriteFn<Self, P, T>,
    ) -> Result<T, StoreError>
    where
        P: Clone + Send + Sync + 'static,
        T: Send + 'static,
    {
        let _ = touches;
        write(self, args).await
    }

    /// Hears that a write (run by [`Backend::guard_write`] with no tasks known up
    /// front) changed the tasks `ids`. By default nobody listens.
    fn moved<'a>(&self, ids: impl Iterator<Item = &'a TaskId>) {
        let _ = ids;
    }

    /// Takes over expired leases ([`crate::TaskStore::claim_expired_leases`]): in one
    /// statement (`store::claim_expired_leases`), or guarded as the backend needs.
    async fn take_expired_leases(
        &self,
        params: &ClaimExpiredParams,
    ) -> Result<Vec<TaskRecord>, StoreError>;

    /// The feed of changes ([`crate::TaskStore::subscribe_changes`]); by default none.
    async fn change_feed(&self) -> Result<Option<ChangeFeed>, StoreError> {
        Ok(None)
    }

    /// A task's mark on a change board ([`crate::TaskStore::change_mark`]); by default
    /// there is no board.
    fn board_mark(&self, id: &TaskId) -> Option<ChangeMark> {
        let _ = id;
        None
    }

    /// Every mark of the change board ([`crate::TaskStore::change_marks`]).
    fn board_marks(&self) -> Option<ChangeMarks> {
        None
    }

    /// The shared 2025-11-25 sessions ([`crate::TaskStore::sessions`]); by default
    /// none.
    fn session_store(&self) -> Option<&dyn SessionStore> {
        None
    }
}
