//! Generation-neutral task types. Both task wires render these; neither owns them.

use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A task id: 128 bits from the operating system's CSPRNG, written as 32 lowercase hex
/// digits.
///
/// Without authentication the id is the only capability a client needs to read or cancel
/// a task, so it must be unguessable and never derived from a JSON-RPC request id.
/// Ids received from clients are kept as given (any string) so that an unknown id can be
/// answered with "not found" rather than a parse error.
///
/// The text is shared (`Arc<str>`): a task's id sits in its record, in the store's
/// indexes, in the running-work table and in every event, and a clone is a reference
/// count, not another allocation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(std::sync::Arc<str>);

impl Serialize for TaskId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for TaskId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(TaskId::from_string)
    }
}

impl TaskId {
    /// A fresh random id.
    pub fn generate() -> Self {
        let mut bytes = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        TaskId::from_string(hex::encode(bytes))
    }

    /// Wraps an id received from a peer or read from a store.
    pub fn from_string(s: impl Into<String>) -> Self {
        TaskId(std::sync::Arc::from(s.into()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a task is in its life.
///
/// `Working` and `InputRequired` may alternate; each may end in one of the three terminal
/// states, and a terminal state is final. [`TaskStatus::can_transition_to`] is the one
/// place this rule is written down; every store enforces it through that function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The work is running.
    Working,
    /// The work waits for an answer from the client (elicitation, sampling).
    InputRequired,
    /// The work finished and produced a result.
    Completed,
    /// The work finished with an error, or could not finish (server restart).
    Failed,
    /// The client (or the server) cancelled the task.
    Cancelled,
}

impl TaskStatus {
    /// Every status, for tests and exhaustive tables.
    pub const ALL: [TaskStatus; 5] = [
        TaskStatus::Working,
        TaskStatus::InputRequired,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ];

    /// `completed`, `failed` and `cancelled` are terminal.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// Whether a task may move from `self` to `next`. Nothing leaves a terminal state,
    /// and staying in the same non-terminal state is allowed (a status message update).
    pub fn can_transition_to(self, _next: TaskStatus) -> bool {
        !self.is_terminal()
    }

    /// The wire spelling (`working`, `input_required`, ...), the same in both generations.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error returned when text is not a task status.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "'{0}' is not a task status (expected working, input_required, completed, failed or cancelled)"
)]
pub struct UnknownStatus(pub String);

impl FromStr for TaskStatus {
    type Err = UnknownStatus;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TaskStatus::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| UnknownStatus(s.to_string()))
    }
}

/// What a codec needs to render a task, whatever generation it speaks.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskView {
    /// The task id.
    pub id: TaskId,
    /// The engine's status. A codec may show it differently (see `tool_error`).
    pub status: TaskStatus,
    /// The latest human-readable status message.
    pub status_message: Option<String>,
    /// When the task was created.
    pub created_at: DateTime<Utc>,
    /// When the task last changed.
    pub last_updated_at: DateTime<Utc>,
    /// How long the task is kept after creation; `None` means unlimited.
    pub ttl: Option<Duration>,
    /// How often the client should poll.
    pub poll_interval: Option<Duration>,
    /// True when the task completed with a tool result carrying `isError: true`. The
    /// 2025-11-25 wire shows such a task as `failed`; the extension as `completed`.
    pub tool_error: bool,
}

/// What people are shown for a task that ended with a tool error, on every wire and in
/// every front end (CLI, board): the 2025-11-25 wire calls it `failed`, the extension
/// `completed`, and a person needs neither word but this one.
pub const TOOL_ERROR: &str = "tool error";

impl TaskView {
    /// The task's state in words for people: [`TOOL_ERROR`] for a task whose tool
    /// reported an error (whatever status the wire gave it), else the status.
    pub fn shown_status(&self) -> &'static str {
        if self.tool_error && self.status.is_terminal() && self.status != TaskStatus::Cancelled {
            TOOL_ERROR
        } else {
            self.status.as_str()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ids_are_128_bit_hex_and_distinct() {
        let a = TaskId::generate();
        let b = TaskId::generate();
        assert_eq!(a.as_str().len(), 32);
        assert!(a.as_str().chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn status_round_trips_through_text() {
        for s in TaskStatus::ALL {
            assert_eq!(s.as_str().parse::<TaskStatus>().ok(), Some(s));
            assert_eq!(
                serde_json::to_value(s).ok(),
                Some(serde_json::json!(s.as_str()))
            );
        }
        assert!("done".parse::<TaskStatus>().is_err());
    }

    fn any_status() -> impl Strategy<Value = TaskStatus> {
        prop::sample::select(TaskStatus::ALL.to_vec())
    }

    proptest! {
        /// Applying any sequence of attempted transitions through the one rule never
        /// leaves a terminal state once reached.
        #[test]
        fn no_transition_leaves_terminal(steps in prop::collection::vec(any_status(), 0..40)) {
            let mut current = TaskStatus::Working;
            let mut terminal_at: Option<TaskStatus> = None;
            for next in steps {
                if current.can_transition_to(next) {
                    current = next;
                }
                if let Some(t) = terminal_at {
                    prop_assert_eq!(current, t);
                }
                if current.is_terminal() && terminal_at.is_none() {
                    terminal_at = Some(current);
                }
            }
        }
    }
}
