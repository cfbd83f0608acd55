//! The parameters of the store calls other than a transition: leases, lists and the
//! board, and the page they answer with.

use super::TaskRecord;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};

/// Claims the lease of one task; see [`crate::TaskStore::claim_lease`].
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimLeaseParams {
    /// The task.
    pub id: TaskId,
    /// Who claims it (becomes the record's `runner`).
    pub runner: String,
    /// When the new lease expires unless renewed.
    pub until: DateTime<Utc>,
    /// The current time: a lease with `lease_until <= now` is free to claim, and an
    /// expired record is absent.
    pub now: DateTime<Utc>,
}

/// Extends a lease the caller holds; see [`crate::TaskStore::renew_lease`].
#[derive(Debug, Clone, PartialEq)]
pub struct RenewLeaseParams {
    /// The task.
    pub id: TaskId,
    /// The runner that holds the lease.
    pub runner: String,
    /// The generation the runner was given when it claimed the lease.
    pub generation: u64,
    /// The new expiry.
    pub until: DateTime<Utc>,
    /// The current time (an expired record is absent).
    pub now: DateTime<Utc>,
}

/// Takes over tasks whose lease expired; see [`crate::TaskStore::claim_expired_leases`].
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimExpiredParams {
    /// Who takes them over.
    pub runner: String,
    /// When the new leases expire unless renewed.
    pub until: DateTime<Utc>,
    /// Leases with `lease_until <= now` have expired.
    pub now: DateTime<Utc>,
    /// At most this many tasks per call, so one call stays short.
    pub limit: usize,
}

/// Settles tasks that expired while waiting for an answer; see
/// [`crate::TaskStore::settle_expired_waiting`].
#[derive(Debug, Clone, PartialEq)]
pub struct SettleExpiredParams {
    /// Records still `input_required` with `expires_at <= now` are settled.
    pub now: DateTime<Utc>,
    /// Their new status message (what happened and what to do).
    pub status_message: String,
    /// Their outcome (a failure the client reads).
    pub error: super::Outcome,
    /// Their new expiry: how long the outcome stays readable.
    pub readable_until: DateTime<Utc>,
    /// At most this many tasks per call, so one call stays short.
    pub limit: usize,
}

/// What to list.
#[derive(Debug, Clone, PartialEq)]
pub struct ListParams {
    /// Only this owner's tasks.
    pub owner: String,
    /// Only tasks created in this session, when set.
    pub session: Option<String>,
    /// Start after this `(created_at, id)` position (from a previous page).
    pub after: Option<(DateTime<Utc>, TaskId)>,
    /// Page size.
    pub limit: usize,
    /// Records expired at this time are skipped.
    pub now: DateTime<Utc>,
}

/// One page of [`crate::TaskStore::list`] (oldest first) or
/// [`crate::TaskStore::query_tasks`] (newest first).
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    /// The records, in the order of the call that listed them.
    pub records: Vec<TaskRecord>,
    /// Whether more records follow the last one.
    pub has_more: bool,
}

/// A query across owners: every task (or one owner's), newest first, narrowed by
/// filters; see [`crate::TaskStore::query_tasks`]. Unlike [`ListParams`], which serves a
/// client's own `tasks/list`, this serves people's views across owners (the task
/// board, an operator's console, the task tools' listing).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskQuery {
    /// Only this owner's tasks; `None` lists every owner's (an operator's view).
    pub owner: Option<String>,
    /// Only tasks in this status.
    pub status: Option<TaskStatus>,
    /// Only tasks whose request params have this string as their `name` (the tool name
    /// of a `tools/call`). A `name` that is not a string never matches.
    pub request_name: Option<String>,
    /// Only tasks whose id starts with this text, taken literally (`%` and `_` are
    /// not wildcards): what an operator pastes from a log line.
    pub id_prefix: Option<String>,
    /// Keyset: only tasks strictly older than this `(created_at, id)` position (the
    /// last record of the previous page); `None` starts from the newest.
    pub before: Option<(DateTime<Utc>, TaskId)>,
    /// Page size.
    pub limit: usize,
    /// Records expired at this time are skipped, as in [`crate::TaskStore::list`].
    pub now: DateTime<Utc>,
}
