//! [`ObservedStore`]: a [`TaskStore`] around another one that times every operation
//! for metrics ([`StoreObserver`]) and wraps it in a span for traces.
//!
//! Why a wrapper: the latency of the store is what an operator suspects first when
//! tasks feel slow, and it must be measured the same way for every backend, ours or an
//! embedder's. The engine wraps whatever store it is given, so nothing else needs to
//! remember to.
//!
//! Every method of the trait is delegated here, the defaulted ones too: a default left
//! in place would run against the wrapper instead of the backend (a lease claim
//! answered by a plain `get`). The wrapper implements [`SessionStore`] and
//! [`DeliveryOutbox`] as well, timing them the same way, and its accessors
//! ([`TaskStore::sessions`], [`TaskStore::outbox`]) answer with itself exactly when the
//! wrapped store answers `Some`. A test reads the three traits' source and fails when a
//! method is missing here.
//!
//! Spans use the [`crate::TRACE_TARGET`] target and OpenTelemetry's database
//! conventions: the name `{db.operation.name} {db.collection.name}` (`transition
//! tasks`), `db.system.name` for SQLite and PostgreSQL, and `mcp_tasks.store.backend`
//! (our namespace) for every backend, the in-memory one included.

use crate::change::ChangeFeed;
use crate::delivery::{
    ClaimDeliveriesParams, Delivery, DeliveryOutbox, DeliveryResult, NewDelivery,
};
use crate::error::StoreError;
use crate::record::{
    ClaimExpiredParams, ClaimLeaseParams, ExpiredTask, ListPage, ListParams, Outcome,
    RenewLeaseParams, SettleExpiredParams, TaskQuery, TaskRecord, TimelineEntry, TransitionParams,
};
use crate::session::{SessionRecord, SessionStore};
use crate::{TaskStore, TRACE_TARGET};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use parking_lot::RwLock;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument;

/// Told how long each store operation took. Implemented by the server's metrics.
pub trait StoreObserver: Send + Sync + std::fmt::Debug {
    /// One finished operation: its name (a method of [`TaskStore`], e.g. `transition`),
    /// the backend's [`TaskStore::backend_name`], how long it took, and whether it
    /// failed for a reason other than the record's state (I/O, an unreachable
    /// database): a compare-and-set that lost, or an absent record, is a normal answer.
    fn observe(&self, operation: &'static str, backend: &'static str, took: Duration, ok: bool);

    /// One group commit of `size` creates (SQLite: one transaction, one `fsync`, for
    /// every create queued at that moment). The default ignores it.
    fn observe_batch(&self, backend: &'static str, size: usize) {
        let _ = (backend, size);
    }

    /// One batch of `size` concurrent reads answered by one statement (PostgreSQL's
    /// `tasks/get`): `kind` is `check` (the narrow checks of cached records) or `read`
    /// (whole rows, for gets with nothing cached or whose row moved). How many gets
    /// share a round trip under load. The default ignores it.
    fn observe_read_batch(&self, backend: &'static str, kind: &'static str, size: usize) {
        let _ = (backend, kind, size);
    }
}

/// Where a backend finds the observer of what only it sees (see
/// [`TaskStore::set_store_observer`]); empty until one is set.
pub type ObserverSlot = Arc<RwLock<Option<Arc<dyn StoreObserver>>>>;

/// The collection a store operation reads or writes, for span names.
const TASKS: &str = "tasks";
const SESSIONS: &str = "sessions";
const TIMELINE: &str = "task_timeline";
const DELIVERIES: &str = "deliveries";
/// The table of runner heartbeats (`runner`).
const RUNNERS: &str = "runners";

/// A store that times and traces every call to the store inside it.
#[derive(Debug)]
pub struct ObservedStore {
    inner: Arc<dyn TaskStore>,
    backend: &'static str,
    observer: RwLock<Option<Arc<dyn StoreObserver>>>,
}

impl ObservedStore {
    /// Wraps `inner`; no observer yet (spans are made regardless).
    pub fn new(inner: Arc<dyn TaskStore>) -> Self {
        let backend = inner.backend_name();
        ObservedStore {
            inner,
            backend,
            observer: RwLock::new(None),
        }
    }

    /// Sets who is told of each operation's duration, replacing an earlier one.
    pub fn set_observer(&self, observer: Arc<dyn StoreObserver>) {
        self.inner.set_store_observer(Arc::clone(&observer));
        *self.observer.write() = Some(observer);
    }

    /// The wrapped store.
    pub fn inner(&self) -> &Arc<dyn TaskStore> {
        &self.inner
    }

    /// The wrapped store's sessions. Only reached when [`TaskStore::sessions`] said
    /// `Some`; a direct call on a wrapper of a store without sessions is an error.
    fn inner_sessions(&self) -> Result<&dyn SessionStore, StoreError> {
        self.inner
            .sessions()
            .ok_or_else(|| missing("keeps no sessions"))
    }

    /// The wrapped store's outbox, as [`ObservedStore::inner_sessions`] for sessions.
    fn inner_outbox(&self) -> Result<&dyn DeliveryOutbox, StoreError> {
        self.inner
            .outbox()
            .ok_or_else(|| missing("keeps no webhook outbox"))
    }

    /// Runs one operation inside its span, then reports its duration.
    async fn run<T>(
        &self,
        operation: &'static str,
        collection: &'static str,
        call: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let system = match self.backend {
            "sqlite" => "sqlite",
            "postgresql" => "postgresql",
            _ => "",
        };
        let span = tracing::info_span!(
            target: TRACE_TARGET,
            "store",
            otel.name = %format_args!("{operation} {collection}"),
            otel.kind = "client",
            db.operation.name = operation,
            db.collection.name = collection,
            db.system.name = tracing::field::Empty,
            mcp_tasks.store.backend = self.backend,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        if !system.is_empty() {
            span.record("db.system.name", system);
        }
        let started = Instant::now();
        let result = call.instrument(span.clone()).await;
        let failed = match &result {
            Err(e @ (StoreError::Backend(_) | StoreError::Unavailable(_))) => {
                span.record("error.type", error_type(e));
                span.record("otel.status_code", "error");
                true
            }
            _ => false,
        };
        let observer = self.observer.read().clone();
        if let Some(observer) = observer {
            observer.observe(operation, self.backend, started.elapsed(), !failed);
        }
        result
    }
}

/// The error of a call to a part the wrapped store does not have.
fn missing(what: &str) -> StoreError {
    StoreError::Backend(format!("the wrapped store {what}").into())
}

/// The `error.type` of a failed operation: low cardinality, never the message.
fn error_type(e: &StoreError) -> &'static str {
    match e {
        StoreError::Unavailable(_) => "unavailable",
        _ => "backend",
    }
}

#[async_trait]
impl TaskStore for ObservedStore {
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError> {
        self.run("create", TASKS, self.inner.create(record)).await
    }

    async fn create_pending(
        &self,
        pending: std::sync::Arc<crate::PendingCreate>,
    ) -> Result<TaskRecord, StoreError> {
        self.run("create", TASKS, self.inner.create_pending(pending))
            .await
    }

    async fn get(&self, id: &TaskId, now: DateTime<Utc>) -> Result<Option<TaskRecord>, StoreError> {
        self.run("get", TASKS, self.inner.get(id, now)).await
    }

    async fn list(&self, params: &ListParams) -> Result<ListPage, StoreError> {
        self.run("list", TASKS, self.inner.list(params)).await
    }

    async fn transition(&self, params: &TransitionParams) -> Result<TaskRecord, StoreError> {
        self.run("transition", TASKS, self.inner.transition(params))
            .await
    }

    async fn delete_expired(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ExpiredTask>, StoreError> {
        self.run(
            "delete_expired",
            TASKS,
            self.inner.delete_expired(now, limit),
        )
        .await
    }

    async fn fail_orphaned(
        &self,
        current_runner: &str,
        status_message: &str,
        error: &Outcome,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let call = self
            .inner
            .fail_orphaned(current_runner, status_message, error, now);
        self.run("fail_orphaned", TASKS, call).await
    }

    async fn settle_expired_waiting(
        &self,
        params: &SettleExpiredParams,
    ) -> Result<Vec<TaskId>, StoreError> {
        let call = self.inner.settle_expired_waiting(params);
        self.run("settle_expired_waiting", TASKS, call).await
    }

    async fn claim_lease(&self, params: &ClaimLeaseParams) -> Result<TaskRecord, StoreError> {
        self.run("claim_lease", TASKS, self.inner.claim_lease(params))
            .await
    }

    async fn renew_lease(&self, params: &RenewLeaseParams) -> Result<TaskRecord, StoreError> {
        self.run("renew_lease", TASKS, self.inner.renew_lease(params))
            .await
    }

    async fn claim_expired_leases(
        &self,
        params: &ClaimExpiredParams,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        let call = self.inner.claim_expired_leases(params);
        self.run("claim_expired_leases", TASKS, call).await
    }

    async fn heartbeat(&self, runner: &crate::RunnerRecord) -> Result<(), StoreError> {
        self.run("heartbeat", RUNNERS, self.inner.heartbeat(runner))
            .await
    }

    async fn retire(&self, runner: &str) -> Result<(), StoreError> {
        self.run("retire", RUNNERS, self.inner.retire(runner)).await
    }

    async fn release_leases(&self, params: &crate::ReleaseLeasesParams) -> Result<u64, StoreError> {
        self.run("release_leases", TASKS, self.inner.release_leases(params))
            .await
    }

    async fn runners_on_host(&self, host: &str) -> Result<Vec<crate::RunnerRecord>, StoreError> {
        self.run("runners_on_host", RUNNERS, self.inner.runners_on_host(host))
            .await
    }

    async fn forget_dead_runners(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let call = self.inner.forget_dead_runners(before);
        self.run("forget_dead_runners", RUNNERS, call).await
    }

    async fn reap_runner(&self, runner: &str, now: DateTime<Utc>) -> Result<u64, StoreError> {
        self.run("reap_runner", RUNNERS, self.inner.reap_runner(runner, now))
            .await
    }

    async fn subscribe_changes(&self) -> Result<Option<ChangeFeed>, StoreError> {
        // Setting up a feed is rare and long-lived: no span, no timing.
        self.inner.subscribe_changes().await
    }

    fn shared_by_processes(&self) -> bool {
        self.inner.shared_by_processes()
    }

    fn supports_notify(&self) -> bool {
        self.inner.supports_notify()
    }

    fn change_mark(&self, id: &TaskId) -> Option<crate::change::ChangeMark> {
        self.inner.change_mark(id)
    }

    fn change_marks(&self) -> Option<crate::change::ChangeMarks> {
        self.inner.change_marks()
    }

    fn backend_name(&self) -> &'static str {
        self.backend
    }

    fn set_store_observer(&self, observer: Arc<dyn StoreObserver>) {
        self.set_observer(observer);
    }

    async fn count_by_status(
        &self,
        now: DateTime<Utc>,
    ) -> Result<Option<Vec<(TaskStatus, u64)>>, StoreError> {
        self.run("count_by_status", TASKS, self.inner.count_by_status(now))
            .await
    }

    async fn timeline(&self, id: &TaskId) -> Result<Vec<TimelineEntry>, StoreError> {
        self.run("timeline", TIMELINE, self.inner.timeline(id))
            .await
    }

    async fn query_tasks(&self, query: &TaskQuery) -> Result<ListPage, StoreError> {
        self.run("query_tasks", TASKS, self.inner.query_tasks(query))
            .await
    }

    async fn count_tasks(&self, query: &TaskQuery) -> Result<u64, StoreError> {
        self.run("count_tasks", TASKS, self.inner.count_tasks(query))
            .await
    }

    fn sessions(&self) -> Option<&dyn SessionStore> {
        self.inner.sessions().map(|_| self as &dyn SessionStore)
    }

    fn outbox(&self) -> Option<&dyn DeliveryOutbox> {
        self.inner.outbox().map(|_| self as &dyn DeliveryOutbox)
    }

    /// Forwarded untimed: a journal is read once per re-run and written once per step,
    /// both counted by the engine's own metrics.
    fn journal(&self) -> Option<&dyn crate::journal::StepJournal> {
        self.inner.journal()
    }
}

/// Times and traces the wrapped store's sessions; reached through
/// [`TaskStore::sessions`], which answers `Some` only when the wrapped store keeps them.
#[async_trait]
impl SessionStore for ObservedStore {
    async fn save_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        self.run(
            "save_session",
            SESSIONS,
            self.inner_sessions()?.save_session(session),
        )
        .await
    }

    async fn load_session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.run(
            "load_session",
            SESSIONS,
            self.inner_sessions()?.load_session(id),
        )
        .await
    }

    async fn delete_session(&self, id: &str) -> Result<(), StoreError> {
        self.run(
            "delete_session",
            SESSIONS,
            self.inner_sessions()?.delete_session(id),
        )
        .await
    }

    async fn keep_sessions(&self, ids: &[String], now: DateTime<Utc>) -> Result<(), StoreError> {
        let call = self.inner_sessions()?.keep_sessions(ids, now);
        self.run("keep_sessions", SESSIONS, call).await
    }

    async fn delete_idle_sessions(&self, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
        let call = self.inner_sessions()?.delete_idle_sessions(cutoff);
        self.run("delete_idle_sessions", SESSIONS, call).await
    }
}

/// Times and traces the wrapped store's outbox; reached through [`TaskStore::outbox`],
/// which answers `Some` only when the wrapped store keeps one.
#[async_trait]
impl DeliveryOutbox for ObservedStore {
    async fn enqueue_delivery(&self, delivery: &NewDelivery) -> Result<bool, StoreError> {
        let call = self.inner_outbox()?.enqueue_delivery(delivery);
        self.run("enqueue_delivery", DELIVERIES, call).await
    }

    async fn claim_deliveries(
        &self,
        params: &ClaimDeliveriesParams,
    ) -> Result<Vec<Delivery>, StoreError> {
        let call = self.inner_outbox()?.claim_deliveries(params);
        self.run("claim_deliveries", DELIVERIES, call).await
    }

    async fn finish_delivery(
        &self,
        key: &str,
        runner: &str,
        result: &DeliveryResult,
    ) -> Result<(), StoreError> {
        let call = self.inner_outbox()?.finish_delivery(key, runner, result);
        self.run("finish_delivery", DELIVERIES, call).await
    }

    async fn pending_deliveries(&self) -> Result<u64, StoreError> {
        let call = self.inner_outbox()?.pending_deliveries();
        self.run("pending_deliveries", DELIVERIES, call).await
    }

    async fn purge_deliveries(&self, finished_before: DateTime<Utc>) -> Result<u64, StoreError> {
        let call = self.inner_outbox()?.purge_deliveries(finished_before);
        self.run("purge_deliveries", DELIVERIES, call).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_trait_method_is_delegated() {
        crate::trait_check::assert_implements_every_method(
            include_str!("observed.rs"),
            "ObservedStore",
            "a default would run against the wrapper",
            &[
                (include_str!("task_store.rs"), "TaskStore", 16),
                (include_str!("session.rs"), "SessionStore", 5),
                (include_str!("delivery.rs"), "DeliveryOutbox", 5),
            ],
        );
    }
}
