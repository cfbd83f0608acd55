//! [`PgStore`] under the store written once (`crate::sql`): binding values and
//! reading rows (times as `TIMESTAMPTZ`, as they are), and what PostgreSQL does its
//! own way: creations batched by the flushers (`writer.rs`), reads served from a cache
//! validated by a round trip that concurrent reads share (`cache.rs`, `reader.rs`), the change feed (`listen.rs`) and the
//! shared sessions (`sessions.rs`). Every other write (a step, a takeover of expired
//! leases included) is one statement, run in place.

use super::{queries::STATEMENTS, PgStore};
use crate::change::ChangeFeed;
use crate::error::StoreError;
use crate::journal::{RecordStep, Recorded};
use crate::observed::ObserverSlot;
use crate::pending::PendingCreate;
use crate::record::{ClaimExpiredParams, TaskRecord};
use crate::session::SessionStore;
use crate::sql::{self, Statements};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use sqlx::postgres::{PgPool, PgRow};
use std::sync::Arc;

#[async_trait]
impl sql::Backend for PgStore {
    type Row = PgRow;

    type Pool = PgPool;

    const NAME: &'static str = "postgresql";

    /// Every write notifies the task id through LISTEN/NOTIFY, in the writing
    /// transaction.
    const NOTIFIES: bool = true;

    fn statements(&self) -> &'static Statements {
        &STATEMENTS
    }

    fn pool(&self) -> &PgPool {
        &self.pool
    }

    fn observer(&self) -> &ObserverSlot {
        &self.observer
    }

    fn shared(&self) -> bool {
        true
    }

    async fn insert(&self, record: &TaskRecord) -> Result<(), StoreError> {
        self.writer.create(record).await
    }

    async fn insert_pending(&self, pending: Arc<PendingCreate>) -> Result<TaskRecord, StoreError> {
        self.writer.create_pending(pending).await
    }

    async fn insert_step(&self, step: &RecordStep) -> Result<Recorded, StoreError> {
        sql::journal::record_step(self, step).await
    }

    async fn read_task(
        &self,
        id: &TaskId,
        now: DateTime<Utc>,
    ) -> Result<Option<TaskRecord>, StoreError> {
        self.reads.get(id, now).await
    }

    async fn take_expired_leases(
        &self,
        params: &ClaimExpiredParams,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        sql::store::claim_expired_leases(self, params).await
    }

    async fn change_feed(&self) -> Result<Option<ChangeFeed>, StoreError> {
        self.listener.subscribe().await.map(Some)
    }

    fn session_store(&self) -> Option<&dyn SessionStore> {
        Some(self)
    }
}
