//! What the in-memory store keeps behind its lock: the records (as [`Row`]s), each
//! with its timeline, and the indexes derived from them ([`Inner`]), kept in step by
//! the few functions that insert, remove and change a record. Every method of the store is a
//! short, non-awaiting section over these tables.

use super::ordered::OrderedSet;
use super::row::{Interner, Row, Shared};
use crate::error::StoreError;
use crate::record::{ExpiredTask, TaskQuery, TaskRecord};
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A position in creation order: the keyset that `list` pages by.
pub(super) type CreatedKey = (DateTime<Utc>, TaskId);

/// Everything behind the lock: the records and the indexes derived from them.
#[derive(Debug, Default)]
pub(super) struct Inner {
    /// All records, expired or not, until deleted, each with its timeline (see
    /// [`Row`]). Boxed: the table grows by doubling, and its empty slots then cost a
    /// pointer each rather than a whole row.
    pub(super) records: HashMap<TaskId, Box<Row>>,
    /// `(expires_at, id)` of every record that has an expiry.
    pub(super) expiry: OrderedSet<CreatedKey>,
    /// Creation order per owner, and per session of each owner.
    pub(super) by_owner: HashMap<Arc<str>, OwnerIndex>,
    /// Creation order of every record (the board across owners).
    pub(super) by_created: OrderedSet<CreatedKey>,
    /// Ids of records that are not terminal.
    pub(super) active: HashSet<TaskId>,
    /// The journals of the tasks whose work recorded steps (`journal.rs`), removed
    /// with their record.
    pub(super) journals: HashMap<TaskId, Vec<crate::journal::JournalEntry>>,
    /// The runners' liveness rows, by runner id (`runners.rs`).
    pub(super) runners: HashMap<String, crate::runner::RunnerRecord>,
    /// The owners, sessions, methods and runners the rows share.
    pub(super) texts: Interner,
}

/// One owner's records in creation order: all of them, and those of each session.
#[derive(Debug, Default)]
pub(super) struct OwnerIndex {
    /// Every record of the owner.
    pub(super) all: OrderedSet<CreatedKey>,
    /// The owner's records per session.
    pub(super) sessions: HashMap<Arc<str>, OrderedSet<CreatedKey>>,
}

/// Whether a record is expired at `now` (and so must look absent).
pub(super) fn is_expired(row: &Row, now: DateTime<Utc>) -> bool {
    row.expires_at.is_some_and(|at| at <= now)
}

/// The unchanged record as the reason a lease call failed.
pub(super) fn lease_conflict(row: &Row) -> StoreError {
    StoreError::LeaseConflict {
        current: Box::new(row.to_record()),
    }
}

/// Whether `row` passes the filters of a board query (not the owner nor the keyset:
/// the index walked already applies those).
pub(super) fn on_board(row: &Row, query: &TaskQuery) -> bool {
    !is_expired(row, query.now)
        && query.status.is_none_or(|status| row.status == status)
        && query
            .request_name
            .as_deref()
            .is_none_or(|name| row.request.name().as_deref() == Some(name))
        && query
            .id_prefix
            .as_deref()
            .is_none_or(|prefix| row.id.as_str().starts_with(prefix))
}

/// The unchanged record as the reason a status change failed.
pub(super) fn conflict(row: &Row) -> StoreError {
    StoreError::Conflict {
        current: Box::new(row.to_record()),
    }
}

impl Inner {
    /// The row with this id, expired or not.
    pub(super) fn record(&self, id: &TaskId) -> Option<&Row> {
        self.records.get(id).map(|row| &**row)
    }

    /// Adds a new record, its first timeline entry and its index entries.
    pub(super) fn insert(&mut self, record: TaskRecord) {
        let key = (record.created_at, record.id.clone());
        self.by_created.insert(key.clone());
        if let Some(at) = record.expires_at {
            self.expiry.insert((at, record.id.clone()));
        }
        let texts = &mut self.texts;
        let shared = Shared {
            owner: texts.intern(&record.owner),
            session: record.session.as_deref().map(|s| texts.intern(s)),
            method: texts.intern(&record.method),
            runner: record.runner.as_deref().map(|r| texts.intern(r)),
        };
        let owner = self.by_owner.entry(Arc::clone(&shared.owner)).or_default();
        owner.all.insert(key.clone());
        if let Some(session) = &shared.session {
            owner
                .sessions
                .entry(Arc::clone(session))
                .or_default()
                .insert(key);
        }
        if !record.status.is_terminal() {
            self.active.insert(record.id.clone());
        }
        self.records
            .insert(record.id.clone(), Box::new(Row::new(record, shared)));
    }

    /// Removes a record with its timeline and index entries.
    pub(super) fn remove(&mut self, id: &TaskId) -> Option<ExpiredTask> {
        let row = self.records.remove(id)?;
        self.journals.remove(id);
        let key = (row.created_at, row.id.clone());
        self.by_created.remove(&key);
        if let Some(at) = row.expires_at {
            self.expiry.remove(&(at, row.id.clone()));
        }
        if let Some(owner) = self.by_owner.get_mut(&*row.owner) {
            owner.all.remove(&key);
            if let Some(session) = &row.session {
                if let Some(set) = owner.sessions.get_mut(&**session) {
                    set.remove(&key);
                    if set.is_empty() {
                        owner.sessions.remove(&**session);
                    }
                }
            }
            if owner.all.is_empty() {
                self.by_owner.remove(&*row.owner);
            }
        }
        self.active.remove(id);
        let (expired, shared) = row.into_removed();
        let texts = &mut self.texts;
        texts.release(shared.owner);
        texts.release(shared.method);
        shared.session.into_iter().for_each(|s| texts.release(s));
        shared.runner.into_iter().for_each(|r| texts.release(r));
        Some(expired)
    }

    /// The visible (unexpired) row with this id.
    pub(super) fn visible(&self, id: &TaskId, now: DateTime<Utc>) -> Result<&Row, StoreError> {
        self.record(id)
            .filter(|r| !is_expired(r, now))
            .ok_or(StoreError::NotFound)
    }

    /// Sets (or clears) who holds the row `id`, letting go of the runner it had.
    pub(super) fn set_runner(&mut self, id: &TaskId, runner: Option<&str>) {
        let Some(row) = self.records.get_mut(id) else {
            return;
        };
        let runner = runner.map(|r| self.texts.intern(r));
        if let Some(before) = std::mem::replace(&mut row.runner, runner) {
            self.texts.release(before);
        }
    }

    /// Gives the lease of a record to `runner` until `until` under the next generation.
    /// Touches no index: leases are found by scanning the active set.
    pub(super) fn take_lease(
        &mut self,
        id: &TaskId,
        runner: &str,
        until: DateTime<Utc>,
    ) -> Option<TaskRecord> {
        self.set_runner(id, Some(runner));
        let row = self.records.get_mut(id)?;
        row.lease_until = Some(until);
        row.lease_generation += 1;
        Some(row.to_record())
    }

    /// Applies a change made at `now` to a record already checked to be non-terminal.
    /// Only status, message, outcome, time and version change, so no ordering index
    /// moves; only the active set may, and the timeline grows when the status changed.
    pub(super) fn apply(
        &mut self,
        id: &TaskId,
        now: DateTime<Utc>,
        change: impl FnOnce(&mut Row),
    ) -> Option<TaskRecord> {
        let row = self.records.get_mut(id)?;
        let before = row.status;
        change(row);
        row.version += 1;
        if row.status != before {
            row.push_timeline(now);
        }
        let updated = row.to_record();
        if updated.status.is_terminal() {
            self.active.remove(id);
        }
        Some(updated)
    }
}

/// Visible records per status: one pass over the map, O(tasks) under the lock (tens of
/// milliseconds at a million tasks). The caller caches the answer for seconds, so a
/// scrape holds the lock that long at most once per cache period.
pub(super) fn count_visible(inner: &Inner, now: DateTime<Utc>) -> Vec<(TaskStatus, u64)> {
    let mut counts: HashMap<TaskStatus, u64> = HashMap::new();
    for row in inner.records.values() {
        if row.expires_at.is_none_or(|at| at > now) {
            *counts.entry(row.status).or_default() += 1;
        }
    }
    counts.into_iter().collect()
}
