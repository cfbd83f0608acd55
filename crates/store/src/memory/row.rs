//! [`Row`]: a task as the memory store keeps it, and the [`Interner`] its shared texts
//! come from.
//!
//! Why not the [`TaskRecord`] itself: the memory store holds every live task for as
//! long as it lives, and a record's own copies of texts that thousands of tasks share
//! (its owner, its session, its method, the runner holding it) cost an allocation each
//! per task. A row shares them (`Arc<str>`, one per distinct text), keeps its
//! timeline's first entry inline (every task has one, most have no other while they
//! run) and boxes the fields most running tasks leave empty. A read turns the row back
//! into the record it was made from ([`Row::to_record`]), as a copy of a record would.

use crate::record::{ExpiredTask, InputRequests, Outcome, StoredJob, TaskRecord, TimelineEntry};
use crate::request::RequestJson;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// The texts rows share, one `Arc<str>` each (see the module docs). A text is
/// forgotten once the last row and index holding it let it go ([`Interner::release`]).
#[derive(Debug, Default)]
pub(super) struct Interner(HashSet<Arc<str>>);

impl Interner {
    /// The shared copy of `text`.
    pub(super) fn intern(&mut self, text: &str) -> Arc<str> {
        if let Some(found) = self.0.get(text) {
            return Arc::clone(found);
        }
        let shared: Arc<str> = Arc::from(text);
        self.0.insert(Arc::clone(&shared));
        shared
    }

    /// Lets go of `text`, forgetting it when nothing else holds it (only this table
    /// and the caller did).
    pub(super) fn release(&mut self, text: Arc<str>) {
        if Arc::strong_count(&text) <= 2 {
            self.0.remove(&*text);
        }
    }

    /// How many texts are kept (for tests).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}

/// A task as the memory store keeps it. See the module docs; the fields are the
/// record's, but for the shared texts, the boxed question map and the timeline.
#[derive(Debug)]
pub(super) struct Row {
    pub(super) id: TaskId,
    pub(super) owner: Arc<str>,
    pub(super) session: Option<Arc<str>>,
    pub(super) method: Arc<str>,
    pub(super) runner: Option<Arc<str>>,
    pub(super) status: TaskStatus,
    pub(super) status_message: Option<Box<str>>,
    pub(super) created_at: DateTime<Utc>,
    pub(super) last_updated_at: DateTime<Utc>,
    pub(super) ttl: Option<Duration>,
    pub(super) expires_at: Option<DateTime<Utc>>,
    pub(super) poll_interval: Option<Duration>,
    pub(super) request: RequestJson,
    pub(super) outcome: Option<Box<Outcome>>,
    pub(super) version: u64,
    /// The outstanding questions; `None` when there are none (most tasks).
    input_requests: Option<Box<InputRequests>>,
    pub(super) lease_until: Option<DateTime<Utc>>,
    pub(super) lease_generation: u64,
    pub(super) external: Option<Box<StoredJob>>,
    /// The timeline's first entry (the creation, at `created_at`): its version,
    /// status and status message.
    first_version: u64,
    first_status: TaskStatus,
    first_message: Option<Box<str>>,
    /// The timeline's later entries, oldest first (one per status change).
    later: Box<[TimelineEntry]>,
}

/// The texts a new row shares: its owner, session, method and runner.
pub(super) struct Shared {
    pub(super) owner: Arc<str>,
    pub(super) session: Option<Arc<str>>,
    pub(super) method: Arc<str>,
    pub(super) runner: Option<Arc<str>>,
}

impl Row {
    /// The row of a new `record`, its texts shared as `shared`; its timeline is its
    /// creation.
    pub(super) fn new(record: TaskRecord, shared: Shared) -> Row {
        let status_message = record.status_message.map(String::into_boxed_str);
        Row {
            first_version: record.version,
            first_status: record.status,
            first_message: status_message.clone(),
            later: Box::default(),
            id: record.id,
            owner: shared.owner,
            session: shared.session,
            method: shared.method,
            runner: shared.runner,
            status: record.status,
            status_message,
            created_at: record.created_at,
            last_updated_at: record.last_updated_at,
            ttl: record.ttl,
            expires_at: record.expires_at,
            poll_interval: record.poll_interval,
            request: record.request,
            outcome: record.outcome,
            version: record.version,
            input_requests: (!record.input_requests.is_empty())
                .then(|| Box::new(record.input_requests)),
            lease_until: record.lease_until,
            lease_generation: record.lease_generation,
            external: record.external,
        }
    }

    /// The record this row keeps.
    pub(super) fn to_record(&self) -> TaskRecord {
        TaskRecord {
            id: self.id.clone(),
            owner: String::from(&*self.owner),
            session: self.session.as_deref().map(str::to_string),
            status: self.status,
            status_message: self.status_message.as_deref().map(str::to_string),
            created_at: self.created_at,
            last_updated_at: self.last_updated_at,
            ttl: self.ttl,
            expires_at: self.expires_at,
            poll_interval: self.poll_interval,
            method: String::from(&*self.method),
            request: self.request.clone(),
            outcome: self.outcome.clone(),
            runner: self.runner.as_deref().map(str::to_string),
            version: self.version,
            input_requests: self.input_requests.as_deref().cloned().unwrap_or_default(),
            lease_until: self.lease_until,
            lease_generation: self.lease_generation,
            external: self.external.clone(),
        }
    }

    /// Sets the outstanding questions.
    pub(super) fn set_input_requests(&mut self, requests: &InputRequests) {
        self.input_requests = (!requests.is_empty()).then(|| Box::new(requests.clone()));
    }

    /// Drops the outstanding questions (the task ended).
    pub(super) fn clear_input_requests(&mut self) {
        self.input_requests = None;
    }

    /// The task's timeline, oldest first.
    pub(super) fn timeline(&self) -> Vec<TimelineEntry> {
        let first = TimelineEntry {
            task: self.id.clone(),
            version: self.first_version,
            at: self.created_at,
            status: self.first_status,
            status_message: self.first_message.as_deref().map(str::to_string),
        };
        std::iter::once(first)
            .chain(self.later.iter().cloned())
            .collect()
    }

    /// Adds the row as it is now, changed at `at`, to its timeline.
    pub(super) fn push_timeline(&mut self, at: DateTime<Utc>) {
        let entry = TimelineEntry {
            task: self.id.clone(),
            version: self.version,
            at,
            status: self.status,
            status_message: self.status_message.as_deref().map(str::to_string),
        };
        let mut later = std::mem::take(&mut self.later).into_vec();
        later.push(entry);
        self.later = later.into_boxed_slice();
    }

    /// What a removed row leaves: the task as [`TaskStore::delete_expired`] reports
    /// it, and the texts it shared, for the interner to let go of.
    ///
    /// [`TaskStore::delete_expired`]: crate::TaskStore::delete_expired
    pub(super) fn into_removed(self) -> (ExpiredTask, Shared) {
        let expired = ExpiredTask {
            id: self.id,
            status: self.status,
            external: self.external.map(|job| *job),
        };
        let shared = Shared {
            owner: self.owner,
            session: self.session,
            method: self.method,
            runner: self.runner,
        };
        (expired, shared)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    /// A row is what every live task costs the memory store, besides its index
    /// entries: a field that makes it grow should be a conscious choice (a record is
    /// 296 bytes, plus its texts and first timeline entry on the heap).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_row_stays_small() {
        assert!(
            size_of::<Row>() <= 288,
            "Row grew to {} bytes",
            size_of::<Row>()
        );
    }

    #[test]
    fn a_text_is_forgotten_with_its_last_holder() {
        let mut texts = Interner::default();
        let a = texts.intern("owner");
        let b = texts.intern("owner");
        assert!(Arc::ptr_eq(&a, &b));
        texts.release(a);
        assert_eq!(texts.len(), 1, "b still holds it");
        texts.release(b);
        assert_eq!(texts.len(), 0);
    }
}
