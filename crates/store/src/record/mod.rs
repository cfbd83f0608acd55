//! The task record ([`TaskRecord`]), how a task ended ([`Outcome`]) and what it went
//! through ([`TimelineEntry`]); the questions it waits on ([`InputRequest`], in
//! `input.rs`), the changes a transition makes ([`TransitionParams`], [`FieldChange`],
//! in `change.rs`), and the parameter structs of the other store calls ([`ListParams`],
//! [`TaskQuery`], the leases', in `params.rs`). Every type is re-exported here, where
//! callers name it.

mod change;
mod input;
mod params;

pub use change::{FieldChange, TransitionParams};
pub use input::{
    Answerer, Assignment, DeadlineOutcome, InputRequest, InputRequests, QuestionDeadline,
};
pub use params::{
    ClaimExpiredParams, ClaimLeaseParams, ListPage, ListParams, RenewLeaseParams,
    SettleExpiredParams, TaskQuery,
};

use crate::request::RequestJson;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

/// How a task ended: what its request returned. Stored as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The request's result (for a tool call, a `CallToolResult`, maybe `isError: true`).
    Result {
        /// The result object.
        value: Value,
    },
    /// The request's handler answered with a protocol error of its own (a tool that
    /// returned a JSON-RPC error, a client that refused an input request). The code is
    /// carried as given, never interpreted here or in the engine. Rows written before
    /// [`Outcome::Failed`] existed hold the engine's own failures in this form too.
    Error {
        /// The error code.
        code: i64,
        /// The error message.
        message: String,
        /// Optional error data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
    /// The engine ended the task for a reason of its own; each wire says it in its own
    /// terms (a JSON-RPC code chosen by the server's error map).
    Failed {
        /// Why.
        failure: Failure,
        /// What happened and what to do, for a person.
        message: String,
    },
}

/// Why the engine ended a task, in the engine's terms. The server maps each to the
/// error its wire sends; the engine and the store never choose a protocol code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Failure {
    /// Cancelled before it finished (by its client, or an operator).
    Cancelled,
    /// The process running it stopped, and a new process found it at start.
    ServerRestarted,
    /// The process running it stopped renewing its lease, and another took it over
    /// without being able to re-run it.
    LeaseLost,
    /// An input request (elicitation, sampling, roots) was not answered in time.
    InputTimedOut,
    /// The answer to an input request could not be used (malformed).
    InvalidAnswer,
    /// The result was larger than the stored-result limit.
    ResultTooLarge,
    /// The work panicked.
    ToolPanicked,
    /// An external job could not be followed (its poller failed or vanished).
    ExternalJobFailed,
    /// Anything else the engine could not complete.
    Internal,
}

impl Failure {
    /// A stable name (the serialized form), for logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Failure::Cancelled => "cancelled",
            Failure::ServerRestarted => "server_restarted",
            Failure::LeaseLost => "lease_lost",
            Failure::InputTimedOut => "input_timed_out",
            Failure::InvalidAnswer => "invalid_answer",
            Failure::ResultTooLarge => "result_too_large",
            Failure::ToolPanicked => "tool_panicked",
            Failure::ExternalJobFailed => "external_job_failed",
            Failure::Internal => "internal",
        }
    }
}

impl Outcome {
    /// An engine failure with its message.
    pub fn failed(failure: Failure, message: impl Into<String>) -> Self {
        Outcome::Failed {
            failure,
            message: message.into(),
        }
    }

    /// Whether the request ended in an error (a protocol error or an engine
    /// failure), as opposed to a result. A result that reports an error of its own (a
    /// tool's `isError`) is still a result here: the wires disagree on what to call it.
    pub fn is_error(&self) -> bool {
        !matches!(self, Outcome::Result { .. })
    }

    /// The error's message, when [`Outcome::is_error`].
    pub fn error_message(&self) -> Option<&str> {
        match self {
            Outcome::Result { .. } => None,
            Outcome::Error { message, .. } | Outcome::Failed { message, .. } => Some(message),
        }
    }
}

/// An external job a task waits on, as stored with the task: work started in another
/// system (a query engine, a batch service) that the engine polls when the task is
/// read, instead of a future running in some process. Stored with the task, so any
/// replica, and a restarted process, can carry on polling it: no process holds such a
/// task. (A tool author implements the server's `ExternalJob` trait; this is what the
/// engine keeps of such a job: which poller, and its state.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredJob {
    /// Which poller understands `state` (the server uses the tool name); every replica
    /// registers the same kinds.
    pub kind: String,
    /// What the poller needs to find the job again (a job id, a page token, ...). Small:
    /// it is rewritten whenever the job reports a new state.
    pub state: Value,
}

/// A record that [`crate::TaskStore::delete_expired`] removed: what the caller needs to
/// finish what the task started, since the record itself is gone.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpiredTask {
    /// The deleted task's id.
    pub id: TaskId,
    /// Its status when it was deleted. A task that expired while `working` or
    /// `input_required` may still have work running that should be stopped.
    pub status: TaskStatus,
    /// The external job it waited on, if any, so that the caller can ask that system to
    /// stop a job nobody will ever collect.
    pub external: Option<StoredJob>,
}

/// One task, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// 128-bit random id.
    pub id: TaskId,
    /// The principal that created the task (auth subject, or a session / process id).
    pub owner: String,
    /// The session that created it, when there was one; `tasks/list` without auth and
    /// status notifications use it.
    pub session: Option<String>,
    /// Current status.
    pub status: TaskStatus,
    /// Latest status message.
    pub status_message: Option<String>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub last_updated_at: DateTime<Utc>,
    /// Retention from creation; `None` keeps the task until deleted otherwise.
    pub ttl: Option<Duration>,
    /// `created_at + ttl`; the sweeper deletes the record after it.
    pub expires_at: Option<DateTime<Utc>>,
    /// Suggested polling interval.
    pub poll_interval: Option<Duration>,
    /// The method of the original request (`tools/call`).
    pub method: String,
    /// The params of the original request, minus transport-only fields, as compact
    /// JSON text (see [`RequestJson`]).
    pub request: RequestJson,
    /// The final result or error, once terminal. Boxed: a running task (the many) then
    /// pays 8 bytes for it instead of the 104 of an inline `Outcome`.
    pub outcome: Option<Box<Outcome>>,
    /// Which running process executes the task (a per-boot id); used to find tasks
    /// orphaned by a crash. With leases, the holder of the lease.
    pub runner: Option<String>,
    /// Bumped on every change a client can see (status, message, outcome); the
    /// compare-and-set key of transitions. Lease calls leave it alone.
    pub version: u64,
    /// Questions the work asked; the task is `input_required` exactly while one of them
    /// is outstanding (unanswered). Cleared when the task ends.
    pub input_requests: InputRequests,
    /// Until when `runner` holds the task (its lease); `None` when the task is not
    /// leased, as in a single process, where the process itself is the lease. A lease
    /// with `lease_until <= now` has expired and may be claimed by another runner.
    pub lease_until: Option<DateTime<Utc>>,
    /// Bumped each time a runner claims the lease: the fencing token. A runner passes
    /// the generation it was given to renewals and fenced transitions, which fail once
    /// someone else has claimed the task since.
    pub lease_generation: u64,
    /// The external job the task waits on, once its work started one; `None` for tasks
    /// whose work runs in a process. Non-terminal tasks with a job are never failed as
    /// orphans nor taken over by lease expiry: their state lives here, not in a process.
    /// Kept after the task ends, as a note of which job produced the outcome. Boxed,
    /// as `outcome`: most tasks have none.
    pub external: Option<Box<StoredJob>>,
}

/// One status a task went through: an entry of [`crate::TaskStore::timeline`].
///
/// The store writes these itself, in the same atomic step as the change that caused
/// them (a create, a status change), so the history cannot disagree with the record.
/// Status-message-only updates (progress) write none, so a chatty tool cannot grow it.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEntry {
    /// The task.
    pub task: TaskId,
    /// The record's version right after the change (unique within a task).
    pub version: u64,
    /// When the change happened: `created_at` for the first entry, the transition's
    /// `now` afterwards.
    pub at: DateTime<Utc>,
    /// The status the task entered.
    pub status: TaskStatus,
    /// The status message it had right after the change.
    pub status_message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    /// Every stored task costs this struct (the memory store keeps one per task, and
    /// every read returns a copy): a field that makes it grow should be a conscious
    /// choice. The bounds are today's sizes on 64-bit targets, with a little room.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn the_record_stays_small() {
        assert!(size_of::<TaskId>() <= 16, "a task id is one shared pointer");
        assert!(
            size_of::<RequestJson>() <= 16,
            "a request is one shared pointer"
        );
        assert!(
            size_of::<TaskRecord>() <= 480,
            "TaskRecord grew to {} bytes",
            size_of::<TaskRecord>()
        );
    }
}
