//! The store of both SQL backends, written once: [`TaskStore`], [`DeliveryOutbox`] and
//! [`StepJournal`] for every [`Backend`]. Each method runs the statements the backends
//! share ([`super::store`], [`super::runners`], [`super::delivery`],
//! [`super::journal`]); where a backend does its own way (batched creations, cached
//! reads, guarded writes, a change feed or board), it calls that backend's hook.

use super::{delivery, journal, runners, store, Backend, Touches};
use crate::change::{ChangeFeed, ChangeMark, ChangeMarks};
use crate::delivery::{
    ClaimDeliveriesParams, Delivery, DeliveryOutbox, DeliveryResult, NewDelivery,
};
use crate::error::StoreError;
use crate::journal::{JournalEntry, RecordStep, Recorded, StepJournal};
use crate::observed::StoreObserver;
use crate::pending::PendingCreate;
use crate::record::{
    ClaimExpiredParams, ClaimLeaseParams, ExpiredTask, ListPage, ListParams, Outcome,
    RenewLeaseParams, SettleExpiredParams, TaskQuery, TaskRecord, TimelineEntry, TransitionParams,
};
use crate::runner::{ReleaseLeasesParams, RunnerRecord};
use crate::session::SessionStore;
use crate::TaskStore;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::sync::Arc;

/// The arguments of `fail_orphaned`, owned so that a guarded write may outlive the call.
#[derive(Debug, Clone)]
struct Orphans {
    current_runner: String,
    status_message: String,
    error: Outcome,
    now: DateTime<Utc>,
}

#[async_trait]
impl<B: Backend + std::fmt::Debug> TaskStore for B {
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError> {
        self.insert(record).await
    }

    async fn create_pending(&self, pending: Arc<PendingCreate>) -> Result<TaskRecord, StoreError> {
        self.insert_pending(pending).await
    }

    async fn get(&self, id: &TaskId, now: DateTime<Utc>) -> Result<Option<TaskRecord>, StoreError> {
        self.read_task(id, now).await
    }

    async fn list(&self, params: &ListParams) -> Result<ListPage, StoreError> {
        store::list(self, params).await
    }

    async fn transition(&self, params: &TransitionParams) -> Result<TaskRecord, StoreError> {
        let touches = Touches::Tasks(vec![params.id.clone()]);
        self.guard_write(touches, params, |db, params| {
            Box::pin(store::transition(db, params))
        })
        .await
    }

    async fn delete_expired(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ExpiredTask>, StoreError> {
        // The tasks are known once deleted: a cached record past its expiry already
        // reads as none, and the move after tells whoever watches their marks.
        self.guard_write(
            Touches::Tasks(Vec::new()),
            &(now, limit),
            |db, &(now, limit)| {
                Box::pin(async move {
                    let expired = store::delete_expired(db, now, limit).await?;
                    db.moved(expired.iter().map(|e| &e.id));
                    Ok(expired)
                })
            },
        )
        .await
    }

    async fn settle_expired_waiting(
        &self,
        params: &SettleExpiredParams,
    ) -> Result<Vec<TaskId>, StoreError> {
        // Which tasks is known once changed; the move after tells whoever caches them
        // (a cached copy still reads as expired until then).
        self.guard_write(Touches::Tasks(Vec::new()), params, |db, params| {
            Box::pin(async move {
                let settled = store::settle_expired_waiting(db, params).await?;
                db.moved(settled.iter());
                Ok(settled)
            })
        })
        .await
    }

    async fn fail_orphaned(
        &self,
        current_runner: &str,
        status_message: &str,
        error: &Outcome,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let orphans = Orphans {
            current_runner: current_runner.to_string(),
            status_message: status_message.to_string(),
            error: error.clone(),
            now,
        };
        self.guard_write(Touches::Unknown, &orphans, |db, o| {
            Box::pin(store::fail_orphaned(
                db,
                &o.current_runner,
                &o.status_message,
                &o.error,
                o.now,
            ))
        })
        .await
    }

    async fn timeline(&self, id: &TaskId) -> Result<Vec<TimelineEntry>, StoreError> {
        store::timeline(self, id).await
    }

    async fn query_tasks(&self, query: &TaskQuery) -> Result<ListPage, StoreError> {
        store::query_tasks(self, query).await
    }

    async fn count_tasks(&self, query: &TaskQuery) -> Result<u64, StoreError> {
        store::count_tasks(self, query).await
    }

    async fn claim_lease(&self, params: &ClaimLeaseParams) -> Result<TaskRecord, StoreError> {
        let touches = Touches::Tasks(vec![params.id.clone()]);
        self.guard_write(touches, params, |db, params| {
            Box::pin(store::claim_lease(db, params))
        })
        .await
    }

    async fn renew_lease(&self, params: &RenewLeaseParams) -> Result<TaskRecord, StoreError> {
        let touches = Touches::Tasks(vec![params.id.clone()]);
        self.guard_write(touches, params, |db, params| {
            Box::pin(store::renew_lease(db, params))
        })
        .await
    }

    async fn claim_expired_leases(
        &self,
        params: &ClaimExpiredParams,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        self.take_expired_leases(params).await
    }

    async fn heartbeat(&self, runner: &RunnerRecord) -> Result<(), StoreError> {
        runners::heartbeat(self, runner).await
    }

    async fn retire(&self, runner: &str) -> Result<(), StoreError> {
        runners::retire(self, runner).await
    }

    async fn release_leases(&self, params: &ReleaseLeasesParams) -> Result<u64, StoreError> {
        let touches = Touches::Tasks(params.leases.iter().map(|(id, _)| id.clone()).collect());
        self.guard_write(touches, params, |db, params| {
            Box::pin(runners::release(db, params))
        })
        .await
    }

    async fn runners_on_host(&self, host: &str) -> Result<Vec<RunnerRecord>, StoreError> {
        runners::on_host(self, host).await
    }

    async fn reap_runner(&self, runner: &str, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let args = (runner.to_string(), now);
        self.guard_write(Touches::Unknown, &args, |db, (runner, now)| {
            Box::pin(runners::reap(db, runner, *now))
        })
        .await
    }

    async fn forget_dead_runners(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        runners::forget_dead(self, before).await
    }

    async fn subscribe_changes(&self) -> Result<Option<ChangeFeed>, StoreError> {
        self.change_feed().await
    }

    fn shared_by_processes(&self) -> bool {
        self.shared()
    }

    fn supports_notify(&self) -> bool {
        B::NOTIFIES
    }

    fn change_mark(&self, id: &TaskId) -> Option<ChangeMark> {
        self.board_mark(id)
    }

    fn change_marks(&self) -> Option<ChangeMarks> {
        self.board_marks()
    }

    fn sessions(&self) -> Option<&dyn SessionStore> {
        self.session_store()
    }

    fn outbox(&self) -> Option<&dyn DeliveryOutbox> {
        Some(self)
    }

    fn journal(&self) -> Option<&dyn StepJournal> {
        Some(self)
    }

    fn backend_name(&self) -> &'static str {
        B::NAME
    }

    async fn count_by_status(
        &self,
        now: DateTime<Utc>,
    ) -> Result<Option<Vec<(TaskStatus, u64)>>, StoreError> {
        store::count_by_status(self, now).await.map(Some)
    }

    fn set_store_observer(&self, observer: Arc<dyn StoreObserver>) {
        *self.observer().write() = Some(observer);
    }
}

/// The outbox is a table of the database, so every process on it shares it; claims
/// pick their rows as the backend's locking allows.
#[async_trait]
impl<B: Backend + std::fmt::Debug> DeliveryOutbox for B {
    async fn enqueue_delivery(&self, delivery: &NewDelivery) -> Result<bool, StoreError> {
        delivery::enqueue(self, delivery).await
    }

    async fn claim_deliveries(
        &self,
        params: &ClaimDeliveriesParams,
    ) -> Result<Vec<Delivery>, StoreError> {
        delivery::claim(self, params).await
    }

    async fn finish_delivery(
        &self,
        key: &str,
        runner: &str,
        result: &DeliveryResult,
    ) -> Result<(), StoreError> {
        delivery::finish(self, key, runner, result).await
    }

    async fn pending_deliveries(&self) -> Result<u64, StoreError> {
        delivery::pending(self).await
    }

    async fn purge_deliveries(&self, finished_before: DateTime<Utc>) -> Result<u64, StoreError> {
        delivery::purge(self, finished_before).await
    }
}

/// The journal: steps read with one statement, recorded as the backend writes them
/// (`Backend::insert_step`).
#[async_trait]
impl<B: Backend + std::fmt::Debug> StepJournal for B {
    async fn steps(&self, id: &TaskId) -> Result<Vec<JournalEntry>, StoreError> {
        journal::steps(self, id).await
    }

    async fn record_step(&self, step: &RecordStep) -> Result<Recorded, StoreError> {
        self.insert_step(step).await
    }
}

#[cfg(test)]
mod tests {
    /// Every method of the traits is written here, the defaulted ones too: a default
    /// left in place would answer for a SQL backend as for a single process (a lease
    /// claim answered by a plain `get`, no outbox).
    #[test]
    fn every_trait_method_is_implemented_once_here() {
        crate::trait_check::assert_implements_every_method(
            include_str!("traits.rs"),
            "the SQL store",
            "write it in sql/traits.rs",
            &[
                (include_str!("../task_store.rs"), "TaskStore", 16),
                (include_str!("../delivery.rs"), "DeliveryOutbox", 5),
                (include_str!("../journal.rs"), "StepJournal", 2),
            ],
        );
    }
}
