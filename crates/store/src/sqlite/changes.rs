//! The writes of tasks on SQLite, each between two moves of the change board (see
//! `board.rs` and `cache.rs`), and the cached read they keep correct.
//!
//! A write of known tasks moves their slots; a takeover of expired leases moves the
//! slots of the tasks it took, inside its transaction before the commit and again
//! after; a write of tasks not known up front (orphans failed at start, a dead
//! runner's leases cut short) moves the epoch. A deletion of expired tasks moves their
//! slots after it only: a cached record past its expiry already reads as none.
//! Creations move nothing: no read caches a task that does not exist.

use super::cache::Touches;
use super::queries::STATEMENTS;
use super::row::{classify, query, row_to_record};
use super::SqliteStore;
use crate::error::StoreError;
use crate::record::{
    ClaimExpiredParams, ClaimLeaseParams, ExpiredTask, Outcome, RenewLeaseParams, TaskRecord,
    TransitionParams,
};
use crate::sql;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;

impl SqliteStore {
    pub(super) async fn cached_get(
        &self,
        id: &TaskId,
        now: DateTime<Utc>,
    ) -> Result<Option<TaskRecord>, StoreError> {
        self.changes
            .get(id, now, sql::store::get(self, id, now))
            .await
    }

    pub(super) async fn write_transition(
        &self,
        params: &TransitionParams,
    ) -> Result<TaskRecord, StoreError> {
        let (store, params) = (self.clone(), params.clone());
        let touches = Touches::Tasks(vec![params.id.clone()]);
        self.changes
            .write(touches, async move {
                sql::store::transition(&store, &params).await
            })
            .await
    }

    pub(super) async fn write_claim_lease(
        &self,
        params: &ClaimLeaseParams,
    ) -> Result<TaskRecord, StoreError> {
        let (store, params) = (self.clone(), params.clone());
        let touches = Touches::Tasks(vec![params.id.clone()]);
        self.changes
            .write(touches, async move {
                sql::store::claim_lease(&store, &params).await
            })
            .await
    }

    pub(super) async fn write_renew_lease(
        &self,
        params: &RenewLeaseParams,
    ) -> Result<TaskRecord, StoreError> {
        let (store, params) = (self.clone(), params.clone());
        let touches = Touches::Tasks(vec![params.id.clone()]);
        self.changes
            .write(touches, async move {
                sql::store::renew_lease(&store, &params).await
            })
            .await
    }

    pub(super) async fn write_release(
        &self,
        params: &crate::ReleaseLeasesParams,
    ) -> Result<u64, StoreError> {
        let (store, params) = (self.clone(), params.clone());
        let touches = Touches::Tasks(params.leases.iter().map(|(id, _)| id.clone()).collect());
        self.changes
            .write(touches, async move {
                sql::runners::release(&store, &params).await
            })
            .await
    }

    pub(super) async fn write_fail_orphaned(
        &self,
        current_runner: &str,
        status_message: &str,
        error: &Outcome,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let store = self.clone();
        let (runner, message, error) = (
            current_runner.to_string(),
            status_message.to_string(),
            error.clone(),
        );
        self.changes
            .write(Touches::Unknown, async move {
                sql::store::fail_orphaned(&store, &runner, &message, &error, now).await
            })
            .await
    }

    pub(super) async fn write_reap(
        &self,
        runner: &str,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let (store, runner) = (self.clone(), runner.to_string());
        self.changes
            .write(Touches::Unknown, async move {
                sql::runners::reap(&store, &runner, now).await
            })
            .await
    }

    pub(super) async fn write_delete_expired(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ExpiredTask>, StoreError> {
        let (store, changes) = (self.clone(), self.changes.clone());
        self.changes
            .write(Touches::Tasks(Vec::new()), async move {
                let expired = sql::store::delete_expired(&store, now, limit).await?;
                changes.moved(expired.iter().map(|e| &e.id));
                Ok(expired)
            })
            .await
    }

    /// The takeover in a transaction of its own, so that the slots of the tasks it
    /// took move before it commits.
    pub(super) async fn write_claim_expired(
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
}
