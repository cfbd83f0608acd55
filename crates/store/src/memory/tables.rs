//! What the in-memory store keeps behind its lock: the records, each with its
//! timeline, and the indexes derived from them ([`Inner`]), kept in step by the few
//! functions that insert, remove and change a record. Every method of the store is a
//! short, non-awaiting section over these tables.

use crate::error::StoreError;
use crate::record::{TaskQuery, TaskRecord, TimelineEntry};
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::collections::{BTreeSet, HashMap, HashSet};

/// A position in creation order: the keyset that `list` pages by.
pub(super) type CreatedKey = (DateTime<Utc>, TaskId);

/// Everything behind the lock: the records and the indexes derived from them.
#[derive(Debug, Default)]
pub(super) struct Inner {
    /// All records, expired or not, until deleted, each with its timeline (oldest
    /// first). Boxed: the table grows by doubling, and its empty slots then cost a
    /// pointer each rather than a whole record.
    pub(super) records: HashMap<TaskId, Box<Stored>>,
    /// `(expires_at, id)` of every record that has an expiry.
    pub(super) expiry: BTreeSet<CreatedKey>,
    /// Creation order per owner.
    pub(super) by_owner: HashMap<String, BTreeSet<CreatedKey>>,
    /// Creation order per (owner, session).
    pub(super) by_session: HashMap<(String, String), BTreeSet<CreatedKey>>,
    /// Creation order of every record (the board across owners).
    pub(super) by_created: BTreeSet<CreatedKey>,
    /// Ids of records that are not terminal.
    pub(super) active: HashSet<TaskId>,
    /// The journals of the tasks whose work recorded steps (`journal.rs`), removed
    /// with their record.
    pub(super) journals: HashMap<TaskId, Vec<crate::journal::JournalEntry>>,
    /// The runners' liveness rows, by runner id (`runners.rs`).
    pub(super) runners: HashMap<String, crate::runner::RunnerRecord>,
}

/// Whether a record is expired at `now` (and so must look absent).
pub(super) fn is_expired(record: &TaskRecord, now: DateTime<Utc>) -> bool {
    record.expires_at.is_some_and(|at| at <= now)
}

/// The unchanged record as the reason a lease call failed.
pub(super) fn lease_conflict(record: &TaskRecord) -> StoreError {
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
pub(super) fn on_board(record: &TaskRecord, query: &TaskQuery) -> bool {
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
pub(super) fn conflict(record: &TaskRecord) -> StoreError {
    StoreError::Conflict {
        current: Box::new(record.clone()),
    }
}

/// One stored task: its record and its timeline, which lives and goes with it.
#[derive(Debug)]
pub(super) struct Stored {
    pub(super) record: TaskRecord,
    pub(super) timeline: Vec<TimelineEntry>,
}

impl Inner {
    /// The record with this id, expired or not.
    pub(super) fn record(&self, id: &TaskId) -> Option<&TaskRecord> {
        self.records.get(id).map(|s| &s.record)
    }

    /// [`Inner::record`], to change.
    pub(super) fn record_mut(&mut self, id: &TaskId) -> Option<&mut TaskRecord> {
        self.records.get_mut(id).map(|s| &mut s.record)
    }

    /// Adds a new record, its first timeline entry and its index entries.
    pub(super) fn insert(&mut self, record: TaskRecord) {
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
    pub(super) fn remove(&mut self, id: &TaskId) -> Option<TaskRecord> {
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
    pub(super) fn visible(
        &self,
        id: &TaskId,
        now: DateTime<Utc>,
    ) -> Result<&TaskRecord, StoreError> {
        self.record(id)
            .filter(|r| !is_expired(r, now))
            .ok_or(StoreError::NotFound)
    }

    /// Gives the lease of a record to `runner` until `until` under the next generation.
    /// Touches no index: leases are found by scanning the active set.
    pub(super) fn take_lease(
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
    pub(super) fn apply(
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

/// Visible records per status: one pass over the map, O(tasks) under the lock (tens of
/// milliseconds at a million tasks). The caller caches the answer for seconds, so a
/// scrape holds the lock that long at most once per cache period.
pub(super) fn count_visible(inner: &Inner, now: DateTime<Utc>) -> Vec<(TaskStatus, u64)> {
    let mut counts: HashMap<TaskStatus, u64> = HashMap::new();
    for record in inner.records.values().map(|s| &s.record) {
        if record.expires_at.is_none_or(|at| at > now) {
            *counts.entry(record.status).or_default() += 1;
        }
    }
    counts.into_iter().collect()
}
