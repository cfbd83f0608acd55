//! The task record and the parameter structs of store calls.

use crate::request::RequestJson;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
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

/// A question the running work asked the client (elicitation, sampling, roots) and is
/// waiting on. Kept in the record, not only in memory, so that a client that reconnects
/// is asked again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// The client method to call (`elicitation/create`, `sampling/createMessage`, ...).
    pub method: String,
    /// Its params, without transport `_meta`.
    pub params: Value,
    /// The client's answer, once given. Stored so that the replica running the work
    /// receives it whichever replica the answer arrived at; the request is outstanding
    /// while this is `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Outcome>,
    /// When the question stops waiting and what happens then; `None`: it waits as long
    /// as the task lives (its TTL). Stored with the question so that a restarted
    /// process keeps the deadline the work gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<QuestionDeadline>,
    /// Who the question is for, when people answer it (an approval, a question
    /// assigned to a person or a group); `None`: the client that asked, or anyone who
    /// may act on the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignment: Option<Assignment>,
    /// Who gave the answer, through which channel and when; `None` for a client's
    /// answer and before the answer. Kept for the task's history (who approved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<Answerer>,
}

/// Who may answer a question a person is asked. Names are principals or group names;
/// which groups a principal belongs to is the caller's (resolved when someone answers,
/// so a change of membership counts at once).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assignment {
    /// The principals and groups the question is for (the assignees).
    pub to: Vec<String>,
    /// Principals who may not answer although `to` names them: approvers who voted in
    /// an earlier round, so that one person counts once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub except: Vec<String>,
    /// Only the assignees may answer: not the client that asked, not an operator. An
    /// approval is such a question; an ordinary assigned question is also open to the
    /// client and to the task's owner and operators.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only: bool,
}

impl Assignment {
    /// Whether `principal`, a member of `groups`, is one of the assignees who may
    /// answer (listed, and not excepted).
    pub fn names(&self, principal: &str, groups: &[String]) -> bool {
        !self.except.iter().any(|p| p == principal) && self.lists(principal, groups)
    }

    /// Whether `principal`, a member of `groups`, is listed among the assignees
    /// (excepted or not): they may see the task that asks.
    pub fn lists(&self, principal: &str, groups: &[String]) -> bool {
        self.to
            .iter()
            .any(|a| a == principal || groups.iter().any(|g| g == a))
    }
}

/// Who answered a question, through which channel, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answerer {
    /// The person (their principal).
    pub principal: String,
    /// The channel: `board`, `link`, `slack`, ...
    pub via: String,
    /// When.
    pub at: DateTime<Utc>,
}

/// When an unanswered question stops waiting, and what happens then.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionDeadline {
    /// The moment.
    pub at: DateTime<Utc>,
    /// What happens at it.
    pub outcome: DeadlineOutcome,
}

/// What happens to a question nobody answered by its deadline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DeadlineOutcome {
    /// The task fails, saying which question went unanswered.
    Fail,
    /// The question is answered as declined (an elicitation's `decline` action).
    Decline,
    /// The question is answered with this default answer.
    Answer {
        /// The answer, as the client would have sent it.
        value: Value,
    },
    /// Nothing is decided: the question stays open, marked overdue (in the task's
    /// timeline, and in its assignees' inbox on the task board).
    KeepWaiting,
}

impl InputRequest {
    /// A question for `method` with `params`, unanswered, without a deadline.
    pub fn new(method: impl Into<String>, params: Value) -> Self {
        InputRequest {
            method: method.into(),
            params,
            answer: None,
            deadline: None,
            assignment: None,
            answered_by: None,
        }
    }

    /// Whether the client has not answered yet.
    pub fn is_outstanding(&self) -> bool {
        self.answer.is_none()
    }
}

/// Outstanding input requests by key. Keys are unique within a task.
pub type InputRequests = BTreeMap<String, InputRequest>;

/// An external job a task waits on: work started in another system (a query engine, a
/// batch service) that the engine polls when the task is read, instead of a future
/// running in some process. Stored with the task, so any replica, and a restarted
/// process, can carry on polling it: no process holds such a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExternalJob {
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
    pub external: Option<ExternalJob>,
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
    pub external: Option<Box<ExternalJob>>,
}

/// What a transition does to one optional field of the record (the status message, the
/// external job): leave it, clear it, or set it. Named variants instead of an
/// `Option<Option<_>>`, whose `None` and `Some(None)` read alike at a call site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldChange<T> {
    /// Leave the field as it is.
    Keep,
    /// Remove the field's value (it becomes `None`).
    Clear,
    /// Replace the field's value.
    Set(T),
}

impl<T> Default for FieldChange<T> {
    /// Nothing changes unless a transition says so.
    fn default() -> Self {
        Self::Keep
    }
}

impl<T> FieldChange<T> {
    /// `Set` to the value when there is one, else `Keep`: for a change computed as
    /// "maybe a new value".
    pub fn set_or_keep(value: Option<T>) -> Self {
        value.map_or(Self::Keep, Self::Set)
    }

    /// Whether the field is left alone.
    pub fn is_keep(&self) -> bool {
        matches!(self, Self::Keep)
    }

    /// The value the field gets: `Some` for `Set`, `None` for `Keep` and `Clear` (tell
    /// those apart with [`Self::is_keep`]); what a SQL store binds.
    pub fn new_value(&self) -> Option<&T> {
        match self {
            Self::Set(value) => Some(value),
            Self::Keep | Self::Clear => None,
        }
    }

    /// Applies the change to `field`, converting a set value with `into` (a boxed
    /// field); `Keep` leaves it.
    pub fn apply_to<U>(&self, field: &mut Option<U>, into: impl FnOnce(&T) -> U) {
        match self {
            Self::Keep => {}
            Self::Clear => *field = None,
            Self::Set(value) => *field = Some(into(value)),
        }
    }
}

/// One atomic change applied by [`crate::TaskStore::transition`].
///
/// Built in one line of intent: [`Self::to`] (or [`Self::finish`], [`Self::fail`],
/// [`Self::cancel`]) and then the builder methods, e.g.
/// `TransitionParams::to(id, TaskStatus::Working, now).message("halfway").fenced(generation)`.
/// The fields stay public for stores, which read them.
#[derive(Debug, Clone, PartialEq)]
pub struct TransitionParams {
    /// The task.
    pub id: TaskId,
    /// If set, the change applies only while the record still has this version.
    pub expected_version: Option<u64>,
    /// The new status (may equal the current one for a message-only update).
    pub status: TaskStatus,
    /// `Set`/`Clear` replace the status message; `Keep` leaves it, except that a
    /// terminal transition out of `input_required` drops it (it said what the task was
    /// waiting for, and a status message never outlives its status).
    pub status_message: FieldChange<String>,
    /// The outcome to record (for terminal transitions).
    pub outcome: Option<Outcome>,
    /// `Some(map)` replaces the outstanding input requests; `None` leaves them.
    pub input_requests: Option<InputRequests>,
    /// The time of the change (becomes `last_updated_at`).
    pub now: DateTime<Utc>,
    /// If set, a fenced write: the change applies only while the record's
    /// `lease_generation` is still this one, checked in the same atomic step, so a
    /// runner whose lease was taken over cannot overwrite the new holder's work.
    /// `None` applies whoever holds the lease (a client's cancel, single process).
    pub expected_lease_generation: Option<u64>,
    /// `Set` replaces the external job, `Clear` removes it, `Keep` leaves it.
    pub external: FieldChange<ExternalJob>,
}

impl TransitionParams {
    /// Moves task `id` to `status` at `now` and changes nothing else: no message, outcome,
    /// questions or job change, no version or lease check. The start of every transition.
    pub fn to(id: TaskId, status: TaskStatus, now: DateTime<Utc>) -> Self {
        Self {
            id,
            expected_version: None,
            status,
            status_message: FieldChange::Keep,
            outcome: None,
            input_requests: None,
            now,
            expected_lease_generation: None,
            external: FieldChange::Keep,
        }
    }

    /// Ends task `id` with `outcome`: `failed` for an error outcome, else `completed`;
    /// the outstanding questions are dropped, since nobody is left to ask.
    pub fn finish(id: TaskId, outcome: Outcome, now: DateTime<Utc>) -> Self {
        let status = if outcome.is_error() {
            TaskStatus::Failed
        } else {
            TaskStatus::Completed
        };
        Self::ends(id, status, outcome, now)
    }

    /// Fails task `id` for `failure`, with `message` as both its status message and its
    /// outcome's error; the outstanding questions are dropped.
    pub fn fail(
        id: TaskId,
        failure: Failure,
        message: impl Into<String>,
        now: DateTime<Utc>,
    ) -> Self {
        let message = message.into();
        Self::ends(
            id,
            TaskStatus::Failed,
            Outcome::failed(failure, message.clone()),
            now,
        )
        .message(message)
    }

    /// Cancels task `id`, its outcome a cancellation error saying `reason`; the
    /// outstanding questions are dropped. The status message is the caller's to add.
    pub fn cancel(id: TaskId, reason: impl Into<String>, now: DateTime<Utc>) -> Self {
        let outcome = Outcome::failed(Failure::Cancelled, reason);
        Self::ends(id, TaskStatus::Cancelled, outcome, now)
    }

    /// A terminal change: `status`, `outcome`, no questions left.
    fn ends(id: TaskId, status: TaskStatus, outcome: Outcome, now: DateTime<Utc>) -> Self {
        Self::to(id, status, now)
            .outcome(outcome)
            .questions(InputRequests::new())
    }

    /// Sets the status message.
    pub fn message(self, message: impl Into<String>) -> Self {
        self.message_change(FieldChange::Set(message.into()))
    }

    /// Removes the status message.
    pub fn clear_message(self) -> Self {
        self.message_change(FieldChange::Clear)
    }

    /// Changes the status message as `change` says (for a change computed elsewhere).
    pub fn message_change(mut self, change: FieldChange<String>) -> Self {
        self.status_message = change;
        self
    }

    /// Records `outcome` (for terminal transitions); `None` records none.
    pub fn outcome(mut self, outcome: impl Into<Option<Outcome>>) -> Self {
        self.outcome = outcome.into();
        self
    }

    /// Replaces the input requests (the questions asked, answered or not) with `requests`.
    pub fn questions(mut self, requests: InputRequests) -> Self {
        self.input_requests = Some(requests);
        self
    }

    /// Attaches the external job `job` (replacing any).
    pub fn attach(self, job: ExternalJob) -> Self {
        self.external_change(FieldChange::Set(job))
    }

    /// Removes the external job.
    pub fn detach(self) -> Self {
        self.external_change(FieldChange::Clear)
    }

    /// Changes the external job as `change` says.
    pub fn external_change(mut self, change: FieldChange<ExternalJob>) -> Self {
        self.external = change;
        self
    }

    /// Fences the write by lease generation: it applies only while the record's
    /// `lease_generation` is still this one. `None` (a caller that holds no lease)
    /// leaves it unfenced.
    pub fn fenced(mut self, generation: impl Into<Option<u64>>) -> Self {
        self.expected_lease_generation = generation.into();
        self
    }

    /// Applies the change only while the record still has this version (compare and
    /// set). `None` applies whatever the version.
    pub fn expecting(mut self, version: impl Into<Option<u64>>) -> Self {
        self.expected_version = version.into();
        self
    }
}

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
/// [`crate::TaskStore::board_list`] (newest first).
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    /// The records, in the order of the call that listed them.
    pub records: Vec<TaskRecord>,
    /// Whether more records follow the last one.
    pub has_more: bool,
}

/// What a task board shows: every task (or one owner's), newest first, narrowed by
/// filters; see [`crate::TaskStore::board_list`]. Unlike [`ListParams`], which serves a
/// client's own `tasks/list`, this serves operators looking across owners.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardQuery {
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
