//! What one transition changes ([`TransitionParams`]), and how it treats an optional
//! field of the record ([`FieldChange`]): the one write that moves a task.

use super::{Failure, InputRequests, Outcome, StoredJob};
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};

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
    pub external: FieldChange<StoredJob>,
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
    pub fn attach(self, job: StoredJob) -> Self {
        self.external_change(FieldChange::Set(job))
    }

    /// Removes the external job.
    pub fn detach(self) -> Self {
        self.external_change(FieldChange::Clear)
    }

    /// Changes the external job as `change` says.
    pub fn external_change(mut self, change: FieldChange<StoredJob>) -> Self {
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
