//! Bringing your own task store: [`JournalStore`] implements [`TaskStore`] and keeps a
//! journal line for every change (create, transition, expiry, recovery), the kind of
//! audit trail a compliance team asks for. It keeps the records themselves in a
//! [`MemoryStore`]; a real backend (Redis, DynamoDB, your company's database) would
//! implement the same methods against its own storage, and should pass the store
//! conformance suite the way this one does (`tests/suite.rs`).
//!
//! It implements [`TaskStore`] alone: what tasks need. Two parts of a store are traits
//! of their own, reached through accessors that answer `None` unless overridden:
//! [`TaskStore::outbox`] ([`DeliveryOutbox`], the webhook outbox of the task board's
//! notifications) and [`TaskStore::sessions`] ([`SessionStore`], 2025-11-25 sessions
//! that several replicas share). Without them this store serves every task, the server
//! keeps its sessions in memory, and the board refuses webhook sinks; the suite skips
//! its outbox cases. A store that should carry webhooks implements [`DeliveryOutbox`]
//! and returns `Some(self)` from `outbox()`.
//!
//! [`DeliveryOutbox`]: mcp_tasks_store::DeliveryOutbox
//! [`SessionStore`]: mcp_tasks_store::SessionStore

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{
    ChangeFeed, ClaimExpiredParams, ClaimLeaseParams, ExpiredTask, ListPage, ListParams,
    MemoryStore, Outcome, RenewLeaseParams, SettleExpiredParams, StoreError, TaskQuery, TaskRecord,
    TaskStore, TimelineEntry, TransitionParams,
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

    async fn settle_expired_waiting(
        &self,
        params: &SettleExpiredParams,
    ) -> Result<Vec<TaskId>, StoreError> {
        let settled = self.records.settle_expired_waiting(params).await?;
        for id in &settled {
            self.note(format!("settle {id} (expired unanswered)"));
        }
        Ok(settled)
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

    async fn query_tasks(&self, query: &TaskQuery) -> Result<ListPage, StoreError> {
        self.records.query_tasks(query).await
    }

    async fn count_by_status(
        &self,
        now: DateTime<Utc>,
    ) -> Result<Option<Vec<(TaskStatus, u64)>>, StoreError> {
        self.records.count_by_status(now).await
    }

    // The rest delegates as is: leases and the change feed only matter to stores
    // several processes share.
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

    async fn subscribe_changes(&self) -> Result<Option<ChangeFeed>, StoreError> {
        self.records.subscribe_changes().await
    }

    fn supports_notify(&self) -> bool {
        self.records.supports_notify()
    }
}
