//! The task record and the parameter structs of store calls.

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
    /// The request failed with a JSON-RPC error.
    Error {
        /// The error code.
        code: i64,
        /// The error message.
        message: String,
        /// Optional error data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
}

impl Outcome {
    /// True for a tool result carrying `isError: true`.
    pub fn is_tool_error(&self) -> bool {
        matches!(self, Outcome::Result { value } if value.get("isError") == Some(&Value::Bool(true)))
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
}

/// Outstanding input requests by key. Keys are unique within a task.
pub type InputRequests = BTreeMap<String, InputRequest>;

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
    /// The params of the original request, minus transport-only fields.
    pub request: Value,
    /// The final result or error, once terminal.
    pub outcome: Option<Outcome>,
    /// Which running process executes the task (a per-boot id); used to find tasks
    /// orphaned by a crash.
    pub runner: Option<String>,
    /// Bumped on every change; compare-and-set key.
    pub version: u64,
    /// Questions the work waits on; non-empty exactly while `input_required`.
    pub input_requests: InputRequests,
}

/// One atomic change applied by [`crate::TaskStore::transition`].
#[derive(Debug, Clone, PartialEq)]
pub struct TransitionParams {
    /// The task.
    pub id: TaskId,
    /// If set, the change applies only while the record still has this version.
    pub expected_version: Option<u64>,
    /// The new status (may equal the current one for a message-only update).
    pub status: TaskStatus,
    /// `Some(msg)` replaces the status message; `None` leaves it.
    pub status_message: Option<Option<String>>,
    /// The outcome to record (for terminal transitions).
    pub outcome: Option<Outcome>,
    /// `Some(map)` replaces the outstanding input requests; `None` leaves them.
    pub input_requests: Option<InputRequests>,
    /// The time of the change (becomes `last_updated_at`).
    pub now: DateTime<Utc>,
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

/// One page of [`crate::TaskStore::list`].
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    /// The records, oldest first.
    pub records: Vec<TaskRecord>,
    /// Whether more records follow the last one.
    pub has_more: bool,
}
