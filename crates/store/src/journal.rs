//! The journal of a task's work: the output of every step that finished, so that work
//! run again (after a takeover, a retry, a drain) skips what it already did.
//!
//! A step is named by the work (`"charge-card"`, `"step#3"`); the engine adds the
//! occurrence, so a step inside a loop has one entry per round. Its output is opaque
//! JSON. The first recording of a step wins: a second one (a runner that lost the task
//! but did not know yet) changes nothing. Every recording is fenced like a transition:
//! it applies only while the task is not terminal and, when the writer holds a lease,
//! only under the lease generation it holds, so a runner that was taken over cannot
//! write into the journal of the one that took over.
//!
//! Why a store of its own rather than fields of the record: a record is read on every
//! `tasks/get`, a journal only when work runs again; and a step's write must cost one
//! statement (or a share of one group commit on SQLite), not a rewrite of the record.
//!
//! Entries go with their task: deleting a task deletes its journal.

use crate::error::StoreError;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use serde_json::Value;

/// One finished step of a task's work.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalEntry {
    /// The step's key: its name and occurrence, as the engine wrote it.
    pub step: String,
    /// The attempt (1 for the first run) that recorded it.
    pub attempt: u32,
    /// What the step returned.
    pub output: Value,
    /// When it was recorded.
    pub recorded_at: DateTime<Utc>,
}

/// A step to record (see [`StepJournal::record_step`]).
#[derive(Debug, Clone)]
pub struct RecordStep {
    /// The task whose work ran the step.
    pub id: TaskId,
    /// The step's key (name and occurrence).
    pub step: String,
    /// The attempt that ran it.
    pub attempt: u32,
    /// What the step returned.
    pub output: Value,
    /// The lease generation the writer holds, when it runs under a lease: the
    /// recording applies only while the task's generation is still this one.
    pub lease_generation: Option<u64>,
    /// When the step finished.
    pub now: DateTime<Utc>,
}

/// What recording a step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The step is now in the journal.
    New,
    /// The step was in the journal already (an earlier recording wins).
    AlreadyThere,
}

/// A store's journal of finished steps. Reached through
/// [`TaskStore::journal`](crate::TaskStore::journal); a store without one re-runs
/// every step of work that runs again.
#[async_trait]
pub trait StepJournal: Send + Sync {
    /// The task's finished steps, oldest first (empty for an unknown task).
    ///
    /// # Errors
    /// [`StoreError::Backend`] or [`StoreError::Unavailable`] on I/O failure.
    async fn steps(&self, id: &TaskId) -> Result<Vec<JournalEntry>, StoreError>;

    /// Records a finished step, fenced as the module docs say.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] (no such task); [`StoreError::Conflict`] when the task
    /// is terminal; [`StoreError::LeaseConflict`] when its lease generation is no longer
    /// `lease_generation` (another runner took it over); [`StoreError::Backend`].
    async fn record_step(&self, step: &RecordStep) -> Result<Recorded, StoreError>;
}
