//! Test plumbing: what a `$make` of [`store_suite!`](crate::store_suite) may return,
//! and a store that carries its test resources along.

use crate::change::ChangeFeed;
use crate::delivery::DeliveryOutbox;
use crate::error::StoreError;
use crate::record::{
    BoardQuery, ClaimExpiredParams, ClaimLeaseParams, ExpiredTask, ListPage, ListParams, Outcome,
    RenewLeaseParams, TaskRecord, TimelineEntry, TransitionParams,
};
use crate::session::SessionStore;
use crate::TaskStore;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use std::sync::Arc;

/// What a suite `$make` returns: a store, or `None` to skip the case.
pub trait SuiteStore {
    /// The store to run the case on, if any.
    fn into_store(self) -> Option<Arc<dyn TaskStore>>;
}

impl SuiteStore for Arc<dyn TaskStore> {
    fn into_store(self) -> Option<Arc<dyn TaskStore>> {
        Some(self)
    }
}

impl SuiteStore for Option<Arc<dyn TaskStore>> {
    fn into_store(self) -> Option<Arc<dyn TaskStore>> {
        self
    }
}

/// A store that owns a guard (a temporary directory, a value whose `Drop` removes a
/// test schema) and drops it right after the store, so the resource outlives every
/// call. Every method forwards to the inner store, and so do the accessors of its
/// sessions and outbox.
#[derive(Debug)]
pub struct Guarded<G> {
    store: Arc<dyn TaskStore>,
    _guard: G,
}

impl<G> Guarded<G> {
    /// `store`, keeping `guard` until it is dropped.
    pub fn new(store: Arc<dyn TaskStore>, guard: G) -> Self {
        Self {
            store,
            _guard: guard,
        }
    }

    /// The inner store.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.store
    }
}

#[async_trait]
impl<G: Send + Sync + std::fmt::Debug> TaskStore for Guarded<G> {
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError> {
        self.store.create(record).await
    }
    async fn get(&self, id: &TaskId, now: DateTime<Utc>) -> Result<Option<TaskRecord>, StoreError> {
        self.store.get(id, now).await
    }
    async fn list(&self, params: &ListParams) -> Result<ListPage, StoreError> {
        self.store.list(params).await
    }
    async fn transition(&self, params: &TransitionParams) -> Result<TaskRecord, StoreError> {
        self.store.transition(params).await
    }
    async fn delete_expired(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ExpiredTask>, StoreError> {
        self.store.delete_expired(now, limit).await
    }
    async fn fail_orphaned(
        &self,
        current_runner: &str,
        status_message: &str,
        error: &Outcome,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        self.store
            .fail_orphaned(current_runner, status_message, error, now)
            .await
    }
    async fn timeline(&self, id: &TaskId) -> Result<Vec<TimelineEntry>, StoreError> {
        self.store.timeline(id).await
    }
    async fn board_list(&self, query: &BoardQuery) -> Result<ListPage, StoreError> {
        self.store.board_list(query).await
    }
    async fn board_count(&self, query: &BoardQuery) -> Result<u64, StoreError> {
        self.store.board_count(query).await
    }
    async fn claim_lease(&self, params: &ClaimLeaseParams) -> Result<TaskRecord, StoreError> {
        self.store.claim_lease(params).await
    }
    async fn renew_lease(&self, params: &RenewLeaseParams) -> Result<TaskRecord, StoreError> {
        self.store.renew_lease(params).await
    }
    async fn claim_expired_leases(
        &self,
        params: &ClaimExpiredParams,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        self.store.claim_expired_leases(params).await
    }
    async fn heartbeat(&self, runner: &crate::RunnerRecord) -> Result<(), StoreError> {
        self.store.heartbeat(runner).await
    }
    async fn retire(&self, runner: &str) -> Result<(), StoreError> {
        self.store.retire(runner).await
    }
    async fn release_leases(&self, params: &crate::ReleaseLeasesParams) -> Result<u64, StoreError> {
        self.store.release_leases(params).await
    }
    async fn runners_on_host(&self, host: &str) -> Result<Vec<crate::RunnerRecord>, StoreError> {
        self.store.runners_on_host(host).await
    }
    async fn forget_dead_runners(
        &self,
        before: chrono::DateTime<chrono::Utc>,
    ) -> Result<u64, StoreError> {
        self.store.forget_dead_runners(before).await
    }
    async fn reap_runner(
        &self,
        runner: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<u64, StoreError> {
        self.store.reap_runner(runner, now).await
    }
    async fn subscribe_changes(&self) -> Result<Option<ChangeFeed>, StoreError> {
        self.store.subscribe_changes().await
    }
    fn supports_notify(&self) -> bool {
        self.store.supports_notify()
    }
    fn change_mark(&self, id: &TaskId) -> Option<crate::change::ChangeMark> {
        self.store.change_mark(id)
    }
    fn change_marks(&self) -> Option<crate::change::ChangeMarks> {
        self.store.change_marks()
    }
    fn sessions(&self) -> Option<&dyn SessionStore> {
        self.store.sessions()
    }
    fn outbox(&self) -> Option<&dyn DeliveryOutbox> {
        self.store.outbox()
    }
    fn journal(&self) -> Option<&dyn crate::journal::StepJournal> {
        self.store.journal()
    }
    fn backend_name(&self) -> &'static str {
        self.store.backend_name()
    }
    async fn count_by_status(
        &self,
        now: DateTime<Utc>,
    ) -> Result<Option<Vec<(mcp_tasks_protocol::TaskStatus, u64)>>, StoreError> {
        self.store.count_by_status(now).await
    }
    fn set_store_observer(&self, observer: Arc<dyn crate::StoreObserver>) {
        self.store.set_store_observer(observer);
    }
}
