//! [`SqliteStore`] under the store written once (`crate::sql`): binding values and
//! reading rows (times as integer milliseconds), and what SQLite does its own way.
//!
//! Creations and steps go through the writer's group commit (`writer.rs`). Every
//! write of a task runs between two moves of the change board (see `board.rs` and
//! `cache.rs`), which keep the cached read correct: a write of known tasks moves their
//! slots; a takeover of expired leases moves the slots of the tasks it took, inside
//! its transaction before the commit and again after; a write of tasks not known up
//! front (orphans failed at start, a dead runner's leases cut short) moves the epoch.
//! A deletion of expired tasks moves their slots after it only: a cached record past
//! its expiry already reads as none. Creations move nothing: no read caches a task
//! that does not exist.

use super::queries::STATEMENTS;
use super::row::{classify, query};
use super::SqliteStore;
use crate::change::{ChangeMark, ChangeMarks};
use crate::error::StoreError;
use crate::journal::{RecordStep, Recorded};
use crate::observed::ObserverSlot;
use crate::pending::PendingCreate;
use crate::record::{ClaimExpiredParams, TaskRecord};
use crate::sql::backend::WriteFn;
use crate::sql::values::row_to_record;
use crate::sql::{self, Statements, Touches};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use sqlx::sqlite::{SqlitePool, SqliteRow};
use std::sync::Arc;

#[async_trait]
impl sql::Backend for SqliteStore {
    type Row = SqliteRow;

    type Pool = SqlitePool;

    const NAME: &'static str = "sqlite";

    fn statements(&self) -> &'static Statements {
        &STATEMENTS
    }

    fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    fn observer(&self) -> &ObserverSlot {
        &self.observer
    }

    fn shared(&self) -> bool {
        self.shared
    }

    async fn insert(&self, record: &TaskRecord) -> Result<(), StoreError> {
        self.writer.create(record).await
    }

    async fn insert_pending(&self, pending: Arc<PendingCreate>) -> Result<TaskRecord, StoreError> {
        self.writer.create_pending(pending).await
    }

    /// A step is recorded in the writer's next group commit (one fsync shared with
    /// every create and step queued at the same moment).
    async fn insert_step(&self, step: &RecordStep) -> Result<Recorded, StoreError> {
        if self.writer.record_step(step).await? {
            return Ok(Recorded::New);
        }
        sql::journal::why_not_recorded(self, step).await
    }

    async fn read_task(
        &self,
        id: &TaskId,
        now: DateTime<Utc>,
    ) -> Result<Option<TaskRecord>, StoreError> {
        self.changes
            .get(id, now, sql::store::get(self, id, now))
            .await
    }

    /// Runs the write on a task of its own, between two moves of what it touches.
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
        let (store, args) = (self.clone(), args.clone());
        self.changes
            .write(touches, async move { write(&store, &args).await })
            .await
    }

    fn moved<'a>(&self, ids: impl Iterator<Item = &'a TaskId>) {
        self.changes.moved(ids);
    }

    /// The takeover in a transaction of its own, so that the slots of the tasks it
    /// took move before it commits.
    async fn take_expired_leases(
        &self,
        params: &ClaimExpiredParams,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        let (store, params) = (self.clone(), params.clone());
        self.changes
            .write(Touches::Tasks(Vec::new()), async move {
                let mut tx = store.pool.begin().await.map_err(classify)?;
                let call = sql::store::claim_expired_call(&STATEMENTS, &params);
                let rows = query(call).fetch_all(&mut *tx).await.map_err(classify)?;
                let taken = rows
                    .iter()
                    .map(row_to_record)
                    .collect::<Result<Vec<_>, _>>()?;
                store.changes.moved(taken.iter().map(|r| &r.id));
                tx.commit().await.map_err(classify)?;
                store.changes.moved(taken.iter().map(|r| &r.id));
                Ok(taken)
            })
            .await
    }

    fn board_mark(&self, id: &TaskId) -> Option<ChangeMark> {
        self.changes.mark(id)
    }

    fn board_marks(&self) -> Option<ChangeMarks> {
        self.changes.marks()
    }
}
