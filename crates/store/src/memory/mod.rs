//! The in-process reference backend: maps behind one std `Mutex`, lost on exit.
//!
//! Every method takes the lock once, does a short amount of work without awaiting, and
//! releases it, so each call is atomic exactly as the trait requires. Side indexes keep
//! every call proportional to its answer rather than to the number of stored tasks:
//!
//! - an expiry index `(expires_at, id)` makes [`TaskStore::delete_expired`] O(expired);
//! - per-owner and per-(owner, session) indexes `(created_at, id)` make
//!   [`TaskStore::list`] O(page) (plus any expired records it skips), and with an
//!   index of every record in creation order they make [`TaskStore::board_list`]
//!   O(page) plus the records its filters skip;
//! - each task's timeline is kept beside its record, appended by the same locked
//!   change and removed with it;
//! - the set of non-terminal ids makes [`TaskStore::fail_orphaned`] and
//!   [`TaskStore::claim_expired_leases`] O(running).
//!
//! Webhook deliveries live apart, in an `outbox` behind a lock of their own: they
//! never change together with a task. It implements [`DeliveryOutbox`] (`outbox.rs`);
//! sessions it leaves to the server's memory ([`TaskStore::sessions`] is `None`), since
//! no other process can read them here.
//!
//! Only this process can write the maps, so its change feed (an in-process broadcast)
//! sees every write and [`TaskStore::supports_notify`] is true.

mod journal;
mod outbox;
mod runners;

use crate::change::{Change, ChangeFeed, ChangeHub};
use crate::delivery::DeliveryOutbox;
use crate::error::StoreError;
use crate::record::{
    BoardQuery, ClaimExpiredParams, ClaimLeaseParams, ExpiredTask, ListPage, ListParams, Outcome,
    RenewLeaseParams, TaskRecord, TimelineEntry, TransitionParams,
};
use crate::TaskStore;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Bound;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A position in creation order: the keyset that `list` pages by.
type CreatedKey = (DateTime<Utc>, TaskId);

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

/// Everything behind the lock: the records and the indexes derived from them.
#[derive(Debug, Default)]
struct Inner {
    /// All records, expired or not, until deleted, each with its timeline (oldest
    /// first). Boxed: the table grows by doubling, and its empty slots then cost a
    /// pointer each rather than a whole record.
    records: HashMap<TaskId, Box<Stored>>,
    /// `(expires_at, id)` of every record that has an expiry.
    expiry: BTreeSet<CreatedKey>,
    /// Creation order per owner.
    by_owner: HashMap<String, BTreeSet<CreatedKey>>,
    /// Creation order per (owner, session).
    by_session: HashMap<(String, String), BTreeSet<CreatedKey>>,
    /// Creation order of every record (the board across owners).
    by_created: BTreeSet<CreatedKey>,
    /// Ids of records that are not terminal.
    active: HashSet<TaskId>,
    /// The journals of the tasks whose work recorded steps (`journal.rs`), removed
    /// with their record.
    journals: HashMap<TaskId, Vec<crate::journal::JournalEntry>>,
    /// The runners' liveness rows, by runner id (`runners.rs`).
    runners: HashMap<String, crate::runner::RunnerRecord>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the lock. A panic while it was held cannot leave a half-applied change
    /// visible (every mutation is checked before anything is written), so a poisoned
    /// lock is simply taken over.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Announces changed tasks (called without the lock held).
    fn announce<'a>(&self, ids: impl IntoIterator<Item = &'a TaskId>) {
        for id in ids {
            self.changes.publish(Change::Task(id.clone()));
        }
    }
}

/// Whether a record is expired at `now` (and so must look absent).
fn is_expired(record: &TaskRecord, now: DateTime<Utc>) -> bool {
    record.expires_at.is_some_and(|at| at <= now)
}

/// The unchanged record as the reason a lease call failed.
fn lease_conflict(record: &TaskRecord) -> StoreError {
    StoreError::LeaseConflict {
        current: Box::new(record.clone()),
    }
}

/// The timeline entry of `record` as it is right after a change.
fn entry(record: &TaskRecord, at: DateTime<Utc>) -> TimelineEntry {
    TimelineEntry {
        task: record.id.clone(),
        version: record.version,
        at,
        status: record.status,
        status_message: record.status_message.clone(),
    }
}

/// Whether `record` passes the filters of a board query (not the owner nor the
/// keyset: the index walked already applies those).
fn on_board(record: &TaskRecord, query: &BoardQuery) -> bool {
    !is_expired(record, query.now)
        && query.status.is_none_or(|status| record.status == status)
        && query
            .request_name
            .as_deref()
            .is_none_or(|name| record.request.name().as_deref() == Some(name))
        && query
            .id_prefix
            .as_deref()
            .is_none_or(|prefix| record.id.as_str().starts_with(prefix))
}

/// The unchanged record as the reason a status change failed.
fn conflict(record: &TaskRecord) -> StoreError {
    StoreError::Conflict {
        current: Box::new(record.clone()),
    }
}

/// One stored task: its record and its timeline, which lives and goes with it.
#[derive(Debug)]
struct Stored {
    record: TaskRecord,
    timeline: Vec<TimelineEntry>,
}

impl Inner {
    /// The record with this id, expired or not.
    fn record(&self, id: &TaskId) -> Option<&TaskRecord> {
        self.records.get(id).map(|s| &s.record)
    }

    /// [`Inner::record`], to change.
    fn record_mut(&mut self, id: &TaskId) -> Option<&mut TaskRecord> {
        self.records.get_mut(id).map(|s| &mut s.record)
    }

    /// Adds a new record, its first timeline entry and its index entries.
    fn insert(&mut self, record: TaskRecord) {
        let key = (record.created_at, record.id.clone());
        self.by_created.insert(key.clone());
        if let Some(at) = record.expires_at {
            self.expiry.insert((at, record.id.clone()));
        }
        self.by_owner
            .entry(record.owner.clone())
            .or_default()
            .insert(key.clone());
        if let Some(session) = &record.session {
            self.by_session
                .entry((record.owner.clone(), session.clone()))
                .or_default()
                .insert(key);
        }
        if !record.status.is_terminal() {
            self.active.insert(record.id.clone());
        }
        let timeline = vec![entry(&record, record.created_at)];
        self.records
            .insert(record.id.clone(), Box::new(Stored { record, timeline }));
    }

    /// Removes a record with its timeline and index entries.
    fn remove(&mut self, id: &TaskId) -> Option<TaskRecord> {
        let record = self.records.remove(id)?.record;
        self.journals.remove(id);
        let key = (record.created_at, record.id.clone());
        self.by_created.remove(&key);
        if let Some(at) = record.expires_at {
            self.expiry.remove(&(at, record.id.clone()));
        }
        if let Some(set) = self.by_owner.get_mut(&record.owner) {
            set.remove(&key);
            if set.is_empty() {
                self.by_owner.remove(&record.owner);
            }
        }
        if let Some(session) = &record.session {
            let owner_session = (record.owner.clone(), session.clone());
            if let Some(set) = self.by_session.get_mut(&owner_session) {
                set.remove(&key);
                if set.is_empty() {
                    self.by_session.remove(&owner_session);
                }
            }
        }
        self.active.remove(id);
        Some(record)
    }

    /// The visible (unexpired) record with this id.
    fn visible(&self, id: &TaskId, now: DateTime<Utc>) -> Result<&TaskRecord, StoreError> {
        self.record(id)
            .filter(|r| !is_expired(r, now))
            .ok_or(StoreError::NotFound)
    }

    /// Gives the lease of a record to `runner` until `until` under the next generation.
    /// Touches no index: leases are found by scanning the active set.
    fn take_lease(
        &mut self,
        id: &TaskId,
        runner: &str,
        until: DateTime<Utc>,
    ) -> Option<TaskRecord> {
        let record = self.record_mut(id)?;
        record.runner = Some(runner.to_string());
        record.lease_until = Some(until);
        record.lease_generation += 1;
        Some(TaskRecord::clone(record))
    }

    /// Applies a change made at `now` to a record already checked to be non-terminal.
    /// Only status, message, outcome, time and version change, so no ordering index
    /// moves; only the active set may, and the timeline grows when the status changed.
    fn apply(
        &mut self,
        id: &TaskId,
        now: DateTime<Utc>,
        change: impl FnOnce(&mut TaskRecord),
    ) -> Option<TaskRecord> {
        let record = self.record_mut(id)?;
        let before = record.status;
        change(record);
        record.version += 1;
        let updated = TaskRecord::clone(record);
        if updated.status.is_terminal() {
            self.active.remove(id);
        }
        if updated.status != before {
            if let Some(stored) = self.records.get_mut(id) {
                stored.timeline.push(entry(&updated, now));
            }
        }
        Some(updated)
    }
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError> {
        let mut inner = self.lock();
        if inner.records.contains_key(&record.id) {
            return Err(StoreError::Duplicate);
        }
        inner.insert(record.clone());
        drop(inner);
        self.announce([&record.id]);
        Ok(())
    }

    async fn get(&self, id: &TaskId, now: DateTime<Utc>) -> Result<Option<TaskRecord>, StoreError> {
        let inner = self.lock();
        Ok(inner.record(id).filter(|r| !is_expired(r, now)).cloned())
    }

    async fn list(&self, params: &ListParams) -> Result<ListPage, StoreError> {
        let inner = self.lock();
        let index = match &params.session {
            Some(session) => inner
                .by_session
                .get(&(params.owner.clone(), session.clone())),
            None => inner.by_owner.get(&params.owner),
        };
        let Some(index) = index else {
            return Ok(ListPage {
                records: Vec::new(),
                has_more: false,
            });
        };
        let start = match &params.after {
            Some(after) => Bound::Excluded(after.clone()),
            None => Bound::Unbounded,
        };
        let mut visible = index
            .range((start, Bound::Unbounded))
            .filter_map(|(_, id)| inner.record(id))
            .filter(|r| !is_expired(r, params.now));
        let records: Vec<TaskRecord> = visible.by_ref().take(params.limit).cloned().collect();
        let has_more = visible.next().is_some();
        Ok(ListPage { records, has_more })
    }

    async fn transition(&self, params: &TransitionParams) -> Result<TaskRecord, StoreError> {
        let mut inner = self.lock();
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
                        .apply_to(&mut r.status_message, Clone::clone);
                } else if ends_a_wait {
                    r.status_message = None;
                }
                if let Some(outcome) = &params.outcome {
                    r.outcome = Some(Box::new(outcome.clone()));
                }
                if let Some(requests) = &params.input_requests {
                    r.input_requests.clone_from(requests);
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
        let mut inner = self.lock();
        let ids: Vec<TaskId> = inner
            .expiry
            .iter()
            .take_while(|(at, _)| *at <= now)
            .take(limit)
            .map(|(_, id)| id.clone())
            .collect();
        let expired: Vec<ExpiredTask> = ids
            .iter()
            .filter_map(|id| inner.remove(id))
            .map(|record| ExpiredTask {
                id: record.id,
                status: record.status,
                external: record.external.map(|job| *job),
            })
            .collect();
        drop(inner);
        self.announce(&ids);
        Ok(expired)
    }

    async fn fail_orphaned(
        &self,
        current_runner: &str,
        status_message: &str,
        error: &Outcome,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let mut inner = self.lock();
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
                r.status_message = Some(status_message.to_string());
                r.outcome = Some(Box::new(error.clone()));
                r.input_requests.clear();
                r.last_updated_at = now;
            });
        }
        drop(inner);
        self.announce(&orphans);
        Ok(orphans.len() as u64)
    }

    async fn timeline(&self, id: &TaskId) -> Result<Vec<TimelineEntry>, StoreError> {
        Ok(self
            .lock()
            .records
            .get(id)
            .map(|s| s.timeline.clone())
            .unwrap_or_default())
    }

    async fn board_list(&self, query: &BoardQuery) -> Result<ListPage, StoreError> {
        let inner = self.lock();
        let index = match &query.owner {
            Some(owner) => inner.by_owner.get(owner),
            None => Some(&inner.by_created),
        };
        let Some(index) = index else {
            return Ok(ListPage {
                records: Vec::new(),
                has_more: false,
            });
        };
        let end = match &query.before {
            Some(before) => Bound::Excluded(before.clone()),
            None => Bound::Unbounded,
        };
        let mut shown = index
            .range((Bound::Unbounded, end))
            .rev()
            .filter_map(|(_, id)| inner.record(id))
            .filter(|r| on_board(r, query));
        let records: Vec<TaskRecord> = shown.by_ref().take(query.limit).cloned().collect();
        let has_more = shown.next().is_some();
        Ok(ListPage { records, has_more })
    }

    async fn board_count(&self, query: &BoardQuery) -> Result<u64, StoreError> {
        let inner = self.lock();
        let index = match &query.owner {
            Some(owner) => inner.by_owner.get(owner),
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
        let mut inner = self.lock();
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
        let mut inner = self.lock();
        let current = inner.visible(&params.id, params.now)?;
        if current.lease_generation != params.generation
            || current.runner.as_deref() != Some(params.runner.as_str())
        {
            return Err(lease_conflict(current));
        }
        if current.status.is_terminal() {
            return Err(conflict(current));
        }
        let record = inner.record_mut(&params.id).ok_or(StoreError::NotFound)?;
        record.lease_until = Some(params.until);
        Ok(TaskRecord::clone(record))
    }

    async fn claim_expired_leases(
        &self,
        params: &ClaimExpiredParams,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        let mut inner = self.lock();
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
        self.lock().heartbeat(runner);
        Ok(())
    }

    async fn retire(&self, runner: &str) -> Result<(), StoreError> {
        self.lock().retire(runner);
        Ok(())
    }

    async fn release_leases(&self, params: &crate::ReleaseLeasesParams) -> Result<u64, StoreError> {
        let released = self.lock().release(params);
        Ok(released.len() as u64)
    }

    async fn runners_on_host(&self, host: &str) -> Result<Vec<crate::RunnerRecord>, StoreError> {
        Ok(self.lock().runners_on_host(host))
    }

    async fn reap_runner(&self, runner: &str, now: DateTime<Utc>) -> Result<u64, StoreError> {
        Ok(self.lock().reap(runner, now))
    }

    async fn forget_dead_runners(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut inner = self.lock();
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
        Ok(Some(count_visible(&self.lock(), now)))
    }
}

/// Visible records per status: one pass over the map, O(tasks) under the lock (tens of
/// milliseconds at a million tasks). The caller caches the answer for seconds, so a
/// scrape holds the lock that long at most once per cache period.
fn count_visible(inner: &Inner, now: DateTime<Utc>) -> Vec<(TaskStatus, u64)> {
    let mut counts: HashMap<TaskStatus, u64> = HashMap::new();
    for record in inner.records.values().map(|s| &s.record) {
        if record.expires_at.is_none_or(|at| at > now) {
            *counts.entry(record.status).or_default() += 1;
        }
    }
    counts.into_iter().collect()
}
