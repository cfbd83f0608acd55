//! Bringing your own task store: [`JournalStore`] implements [`TaskStore`] and keeps a
//! journal line for every change (create, transition, expiry, recovery), the kind of
//! audit trail a compliance team asks for. It keeps the records themselves in a
//! [`MemoryStore`]; a real backend (Redis, DynamoDB, your company's database) would
//! implement the same methods against its own storage, and should pass the store
//! conformance suite the way this one does (`tests/suite.rs`).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks::protocol::{TaskId, TaskStatus};
use mcp_tasks::store::{
    BoardQuery, ChangeFeed, ClaimDeliveriesParams, ClaimExpiredParams, ClaimLeaseParams, Delivery,
    DeliveryResult, ExpiredTask, ListPage, ListParams, MemoryStore, NewDelivery, Outcome,
    RenewLeaseParams, SessionRecord, StoreError, TaskRecord, TaskStore, TimelineEntry,
    TransitionParams,
};
use std::sync::{Arc, Mutex};

/// A task store that journals every change. Cheap to clone; clones share everything.
#[derive(Debug, Clone, Default)]
pub struct JournalStore {
    records: Arc<MemoryStore>,
    journal: Arc<Mutex<Vec<String>>>,
}

impl JournalStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The journal so far, one line per change.
    pub fn journal(&self) -> Vec<String> {
        self.journal.lock().map(|j| j.clone()).unwrap_or_default()
    }

    fn note(&self, line: String) {
        if let Ok(mut j) = self.journal.lock() {
            j.push(line);
        }
    }
}

#[async_trait]
impl TaskStore for JournalStore {
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError> {
        self.records.create(record).await?;
        self.note(format!("create {} {}", record.id, record.status));
        Ok(())
    }

    async fn get(&self, id: &TaskId, now: DateTime<Utc>) -> Result<Option<TaskRecord>, StoreError> {
        self.records.get(id, now).await
    }

    async fn list(&self, params: &ListParams) -> Result<ListPage, StoreError> {
        self.records.list(params).await
    }

    async fn transition(&self, params: &TransitionParams) -> Result<TaskRecord, StoreError> {
        let record = self.records.transition(params).await?;
        self.note(format!(
            "transition {} {} v{}",
            record.id, record.status, record.version
        ));
        Ok(record)
    }

    async fn delete_expired(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ExpiredTask>, StoreError> {
        let expired = self.records.delete_expired(now, limit).await?;
        for gone in &expired {
            self.note(format!("expire {}", gone.id));
        }
        Ok(expired)
    }

    async fn fail_orphaned(
        &self,
        current_runner: &str,
        status_message: &str,
        error: &Outcome,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let n = self
            .records
            .fail_orphaned(current_runner, status_message, error, now)
            .await?;
        if n > 0 {
            self.note(format!("recover {n} orphaned"));
        }
        Ok(n)
    }

    // Reads for a task board delegate as is: the inner store keeps each task's
    // timeline itself, written with the change, as every store must.
    async fn timeline(&self, id: &TaskId) -> Result<Vec<TimelineEntry>, StoreError> {
        self.records.timeline(id).await
    }

    async fn board_list(&self, query: &BoardQuery) -> Result<ListPage, StoreError> {
        self.records.board_list(query).await
    }

    // The webhook outbox delegates as is too: deliveries are not task changes.
    async fn enqueue_delivery(&self, delivery: &NewDelivery) -> Result<bool, StoreError> {
        self.records.enqueue_delivery(delivery).await
    }

    async fn claim_deliveries(
        &self,
        params: &ClaimDeliveriesParams,
    ) -> Result<Vec<Delivery>, StoreError> {
        self.records.claim_deliveries(params).await
    }

    async fn finish_delivery(
        &self,
        key: &str,
        runner: &str,
        result: &DeliveryResult,
    ) -> Result<(), StoreError> {
        self.records.finish_delivery(key, runner, result).await
    }

    async fn pending_deliveries(&self) -> Result<u64, StoreError> {
        self.records.pending_deliveries().await
    }

    async fn purge_deliveries(&self, finished_before: DateTime<Utc>) -> Result<u64, StoreError> {
        self.records.purge_deliveries(finished_before).await
    }

    async fn count_by_status(
        &self,
        now: DateTime<Utc>,
    ) -> Result<Option<Vec<(TaskStatus, u64)>>, StoreError> {
        self.records.count_by_status(now).await
    }

    // The rest delegates as is: leases, sessions and the change feed only matter to
    // stores several processes share.
    async fn claim_lease(&self, params: &ClaimLeaseParams) -> Result<TaskRecord, StoreError> {
        self.records.claim_lease(params).await
    }

    async fn renew_lease(&self, params: &RenewLeaseParams) -> Result<TaskRecord, StoreError> {
        self.records.renew_lease(params).await
    }

    async fn claim_expired_leases(
        &self,
        params: &ClaimExpiredParams,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        self.records.claim_expired_leases(params).await
    }

    async fn save_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        self.records.save_session(session).await
    }

    async fn load_session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.records.load_session(id).await
    }

    async fn delete_session(&self, id: &str) -> Result<(), StoreError> {
        self.records.delete_session(id).await
    }

    async fn keep_sessions(&self, ids: &[String], now: DateTime<Utc>) -> Result<(), StoreError> {
        self.records.keep_sessions(ids, now).await
    }

    async fn delete_idle_sessions(&self, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
        self.records.delete_idle_sessions(cutoff).await
    }

    async fn subscribe_changes(&self) -> Result<Option<ChangeFeed>, StoreError> {
        self.records.subscribe_changes().await
    }

    fn supports_notify(&self) -> bool {
        self.records.supports_notify()
    }
}
