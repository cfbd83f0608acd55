//! The in-process reference backend: maps behind one std `Mutex`, lost on exit.
//!
//! Every method takes the lock once, does a short amount of work without awaiting, and
//! releases it, so each call is atomic exactly as the trait requires. Side indexes keep
//! every call proportional to its answer rather than to the number of stored tasks:
//!
//! - an expiry index `(expires_at, id)` makes [`TaskStore::delete_expired`] O(expired);
//! - per-owner and per-(owner, session) indexes `(created_at, id)` make
//!   [`TaskStore::list`] O(page) (plus any expired records it skips), and with an
//!   index of every record in creation order they make [`TaskStore::query_tasks`]
//!   O(page) plus the records its filters skip;
//! - each task's timeline is kept beside its record, appended by the same locked
//!   change and removed with it;
//! - the set of non-terminal ids makes [`TaskStore::fail_orphaned`] and
//!   [`TaskStore::claim_expired_leases`] O(running).
//!
//! A live task costs what it must and little more: its record is kept as a compact
//! row whose owner, session, method and runner texts are shared between tasks
//! (`row.rs`), and the sorted indexes pack their keys in full chunks (`ordered.rs`).
//!
//! Webhook deliveries live apart, in an `outbox` behind a lock of their own: they
//! never change together with a task. It implements [`DeliveryOutbox`] (`outbox.rs`);
//! sessions it leaves to the server's memory ([`TaskStore::sessions`] is `None`), since
//! no other process can read them here.
//!
//! Only this process can write the maps, so its change feed (an in-process broadcast)
//! sees every write and [`TaskStore::supports_notify`] is true.

mod journal;
mod ordered;
mod outbox;
mod row;
mod runners;
mod tables;

use crate::change::{Change, ChangeFeed, ChangeHub};
use crate::delivery::DeliveryOutbox;
use crate::error::StoreError;
use crate::record::{
    ClaimExpiredParams, ClaimLeaseParams, ExpiredTask, ListPage, ListParams, Outcome,
    RenewLeaseParams, SettleExpiredParams, TaskQuery, TaskRecord, TimelineEntry, TransitionParams,
};
use crate::TaskStore;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use parking_lot::Mutex;
use row::Row;
use std::ops::Bound;
use tables::{conflict, count_visible, is_expired, lease_conflict, on_board, Inner};

/// The in-memory [`TaskStore`]: fast, always available, and gone when the process exits.
///
/// It behaves exactly like the durable backends (the shared `suite` checks this), with
/// one note on precision: it keeps timestamps as given, whereas SQL backends keep
/// milliseconds. Callers (the engine does) pass millisecond-truncated timestamps so that
/// every backend returns the same values.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
    /// The webhook deliveries, under their own lock.
    outbox: Mutex<outbox::Outbox>,
    /// Where writes are announced, after the lock is released.
    changes: ChangeHub,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Announces changed tasks (called without the lock held).
    fn announce<'a>(&self, ids: impl IntoIterator<Item = &'a TaskId>) {
        for id in ids {
            self.changes.publish(Change::Task(id.clone()));
        }
    }
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError> {
        let mut inner = self.inner.lock();
        if inner.records.contains_key(&record.id) {
            return Err(StoreError::Duplicate);
        }
        inner.insert(record.clone());
        drop(inner);
        self.announce([&record.id]);
        Ok(())
    }

    async fn get(&self, id: &TaskId, now: DateTime<Utc>) -> Result<Option<TaskRecord>, StoreError> {
        let inner = self.inner.lock();
        Ok(inner
            .record(id)
            .filter(|r| !is_expired(r, now))
            .map(Row::to_record))
    }

    async fn list(&self, params: &ListParams) -> Result<ListPage, StoreError> {
        let inner = self.inner.lock();
        let owner = inner.by_owner.get(params.owner.as_str());
        let index = match &params.session {
            Some(session) => owner.and_then(|o| o.sessions.get(session.as_str())),
            None => owner.map(|o| &o.all),
        };
        let Some(index) = index else {
            return Ok(ListPage {
                records: Vec::new(),
                has_more: false,
            });
        };
        let start = match &params.after {
            Some(after) => Bound::Excluded(after),
            None => Bound::Unbounded,
        };
        let mut visible = index
            .range(start, Bound::Unbounded)
            .filter_map(|(_, id)| inner.record(id))
            .filter(|r| !is_expired(r, params.now));
        let records: Vec<TaskRecord> = visible
            .by_ref()
            .take(params.limit)
            .map(Row::to_record)
            .collect();
        let has_more = visible.next().is_some();
        Ok(ListPage { records, has_more })
    }

    async fn transition(&self, params: &TransitionParams) -> Result<TaskRecord, StoreError> {
        let mut inner = self.inner.lock();
        let current = inner.visible(&params.id, params.now)?;
        if params
            .expected_lease_generation
            .is_some_and(|generation| generation != current.lease_generation)
        {
            return Err(lease_conflict(current));
        }
        let version_ok = match params.expected_version {
            Some(expected) => expected == current.version,
            None => true,
        };
        if !current.status.can_transition_to(params.status) || !version_ok {
            return Err(conflict(current));
        }
        let updated = inner
            .apply(&params.id, params.now, |r| {
                let ends_a_wait =
                    r.status == TaskStatus::InputRequired && params.status.is_terminal();
                r.status = params.status;
                if !params.status_message.is_keep() {
                    params
                        .status_message
                        .apply_to(&mut r.status_message, |m| m.as_str().into());
                } else if ends_a_wait {
                    r.status_message = None;
                }
                if let Some(outcome) = &params.outcome {
                    r.outcome = Some(Box::new(outcome.clone()));
                }
                if let Some(requests) = &params.input_requests {
                    r.set_input_requests(requests);
                }
                params
                    .external
                    .apply_to(&mut r.external, |job| Box::new(job.clone()));
                r.last_updated_at = params.now;
            })
            .ok_or(StoreError::NotFound)?;
        drop(inner);
        self.announce([&updated.id]);
        Ok(updated)
    }

    async fn delete_expired(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ExpiredTask>, StoreError> {
        let mut inner = self.inner.lock();
        let ids: Vec<TaskId> = inner
            .expiry
            .iter()
            .take_while(|(at, _)| *at <= now)
            .take(limit)
            .map(|(_, id)| id.clone())
            .collect();
        let expired: Vec<ExpiredTask> = ids.iter().filter_map(|id| inner.remove(id)).collect();
        drop(inner);
        self.announce(&ids);
        Ok(expired)
    }

    async fn settle_expired_waiting(
        &self,
        params: &SettleExpiredParams,
    ) -> Result<Vec<TaskId>, StoreError> {
        let mut inner = self.inner.lock();
        let waiting: Vec<(DateTime<Utc>, TaskId)> = inner
            .expiry
            .iter()
            .take_while(|(at, _)| *at <= params.now)
            .filter(|(_, id)| {
                inner
                    .record(id)
                    .is_some_and(|r| r.status == TaskStatus::InputRequired)
            })
            .take(params.limit)
            .cloned()
            .collect();
        for (expired_at, id) in &waiting {
            // `apply` moves no ordering index: the expiry index moves here.
            inner.expiry.remove(&(*expired_at, id.clone()));
            inner.expiry.insert((params.readable_until, id.clone()));
            inner.apply(id, params.now, |r| {
                r.status = TaskStatus::Failed;
                r.status_message = Some(params.status_message.as_str().into());
                r.outcome = Some(Box::new(params.error.clone()));
                r.clear_input_requests();
                r.last_updated_at = params.now;
                r.expires_at = Some(params.readable_until);
            });
        }
        drop(inner);
        let settled: Vec<TaskId> = waiting.into_iter().map(|(_, id)| id).collect();
        self.announce(&settled);
        Ok(settled)
    }

    async fn fail_orphaned(
        &self,
        current_runner: &str,
        status_message: &str,
        error: &Outcome,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let mut inner = self.inner.lock();
        let orphans: Vec<TaskId> = inner
            .active
            .iter()
            .filter(|id| {
                inner.record(id).is_some_and(|r| {
                    r.runner.as_deref() != Some(current_runner)
                        && !inner.lease_is_live(r, now)
                        && r.external.is_none()
                })
            })
            .cloned()
            .collect();
        for id in &orphans {
            inner.apply(id, now, |r| {
                r.status = TaskStatus::Failed;
                r.status_message = Some(status_message.into());
                r.outcome = Some(Box::new(error.clone()));
                r.clear_input_requests();
                r.last_updated_at = now;
            });
        }
        drop(inner);
        self.announce(&orphans);
        Ok(orphans.len() as u64)
    }

    async fn timeline(&self, id: &TaskId) -> Result<Vec<TimelineEntry>, StoreError> {
        Ok(self
            .inner
            .lock()
            .record(id)
            .map(Row::timeline)
            .unwrap_or_default())
    }

    async fn query_tasks(&self, query: &TaskQuery) -> Result<ListPage, StoreError> {
        let inner = self.inner.lock();
        let index = match &query.owner {
            Some(owner) => inner.by_owner.get(owner.as_str()).map(|o| &o.all),
            None => Some(&inner.by_created),
        };
        let Some(index) = index else {
            return Ok(ListPage {
                records: Vec::new(),
                has_more: false,
            });
        };
        let end = match &query.before {
            Some(before) => Bound::Excluded(before),
            None => Bound::Unbounded,
        };
        let mut shown = index
            .range(Bound::Unbounded, end)
            .rev()
            .filter_map(|(_, id)| inner.record(id))
            .filter(|r| on_board(r, query));
        let records: Vec<TaskRecord> = shown
            .by_ref()
            .take(query.limit)
            .map(Row::to_record)
            .collect();
        let has_more = shown.next().is_some();
        Ok(ListPage { records, has_more })
    }

    async fn count_tasks(&self, query: &TaskQuery) -> Result<u64, StoreError> {
        let inner = self.inner.lock();
        let index = match &query.owner {
            Some(owner) => inner.by_owner.get(owner.as_str()).map(|o| &o.all),
            None => Some(&inner.by_created),
        };
        let counted = index.into_iter().flat_map(|index| {
            index
                .iter()
                .filter_map(|(_, id)| inner.record(id))
                .filter(|r| on_board(r, query))
        });
        Ok(counted.take(query.limit).count() as u64)
    }

    async fn claim_lease(&self, params: &ClaimLeaseParams) -> Result<TaskRecord, StoreError> {
        let mut inner = self.inner.lock();
        let current = inner.visible(&params.id, params.now)?;
        if current.status.is_terminal() {
            return Err(conflict(current));
        }
        if inner.lease_is_live(current, params.now) {
            return Err(lease_conflict(current));
        }
        inner
            .take_lease(&params.id, &params.runner, params.until)
            .ok_or(StoreError::NotFound)
    }

    async fn renew_lease(&self, params: &RenewLeaseParams) -> Result<TaskRecord, StoreError> {
        let mut inner = self.inner.lock();
        let current = inner.visible(&params.id, params.now)?;
        if current.lease_generation != params.generation
            || current.runner.as_deref() != Some(params.runner.as_str())
        {
            return Err(lease_conflict(current));
        }
        if current.status.is_terminal() {
            return Err(conflict(current));
        }
        let row = inner
            .records
            .get_mut(&params.id)
            .ok_or(StoreError::NotFound)?;
        row.lease_until = Some(params.until);
        Ok(row.to_record())
    }

    async fn claim_expired_leases(
        &self,
        params: &ClaimExpiredParams,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        let mut inner = self.inner.lock();
        // Oldest lease first, like the SQL backends.
        let mut expired: Vec<(DateTime<Utc>, TaskId)> = inner
            .active
            .iter()
            .filter_map(|id| inner.record(id))
            .filter(|r| !is_expired(r, params.now) && r.external.is_none())
            .filter(|r| !inner.lease_is_live(r, params.now))
            .filter_map(|r| r.lease_until.map(|until| (until, r.id.clone())))
            .collect();
        expired.sort();
        Ok(expired
            .into_iter()
            .take(params.limit)
            .filter_map(|(_, id)| inner.take_lease(&id, &params.runner, params.until))
            .collect())
    }

    async fn heartbeat(&self, runner: &crate::RunnerRecord) -> Result<(), StoreError> {
        self.inner.lock().heartbeat(runner);
        Ok(())
    }

    async fn retire(&self, runner: &str) -> Result<(), StoreError> {
        self.inner.lock().retire(runner);
        Ok(())
    }

    async fn release_leases(&self, params: &crate::ReleaseLeasesParams) -> Result<u64, StoreError> {
        let released = self.inner.lock().release(params);
        Ok(released.len() as u64)
    }

    async fn runners_on_host(&self, host: &str) -> Result<Vec<crate::RunnerRecord>, StoreError> {
        Ok(self.inner.lock().runners_on_host(host))
    }

    async fn reap_runner(&self, runner: &str, now: DateTime<Utc>) -> Result<u64, StoreError> {
        Ok(self.inner.lock().reap(runner, now))
    }

    async fn forget_dead_runners(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut inner = self.inner.lock();
        let before_count = inner.runners.len();
        inner.runners.retain(|_, r| r.alive_until > before);
        Ok((before_count - inner.runners.len()) as u64)
    }

    async fn subscribe_changes(&self) -> Result<Option<ChangeFeed>, StoreError> {
        Ok(Some(self.changes.subscribe()))
    }

    fn supports_notify(&self) -> bool {
        true
    }

    fn outbox(&self) -> Option<&dyn DeliveryOutbox> {
        Some(self)
    }

    fn journal(&self) -> Option<&dyn crate::journal::StepJournal> {
        Some(self)
    }

    fn backend_name(&self) -> &'static str {
        "memory"
    }

    async fn count_by_status(
        &self,
        now: DateTime<Utc>,
    ) -> Result<Option<Vec<(TaskStatus, u64)>>, StoreError> {
        Ok(Some(count_visible(&self.inner.lock(), now)))
    }
}
