//! How a task's question is asked: until when, and for whom (people, when not the
//! client): the options of [`crate::TaskContext::request_input_with`].

use mcp_tasks_store::{Assignment, DeadlineOutcome};

/// How a question is asked: until when, and for whom
/// ([`crate::TaskContext::request_input_with`]).
#[derive(Debug, Clone, Default)]
pub struct Ask {
    pub(crate) deadline: Option<(std::time::Duration, DeadlineOutcome)>,
    pub(crate) assignment: Option<Assignment>,
}

impl Ask {
    /// A question for the client (or whoever may act on the task), without deadline.
    pub fn new() -> Self {
        Ask::default()
    }

    /// When nobody answered within `after`, `outcome` happens (see
    /// [`crate::TaskContext::request_input_until`]).
    pub fn deadline(mut self, after: std::time::Duration, outcome: DeadlineOutcome) -> Self {
        self.deadline = Some((after, outcome));
        self
    }

    /// Assigns the question to principals or group names (the server's `[groups]`):
    /// they see it as theirs on the task board and may answer it.
    pub fn assign_to<I, S>(mut self, who: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.assignment.get_or_insert_with(Assignment::default).to =
            who.into_iter().map(Into::into).collect();
        self
    }

    /// Only the assignees may answer: not the client that asked, not an operator (an
    /// approval).
    pub fn only_assignees(mut self) -> Self {
        self.assignment.get_or_insert_with(Assignment::default).only = true;
        self
    }

    /// Principals who may not answer although they are assignees (who voted in an
    /// earlier round of the same decision).
    pub fn except<I, S>(mut self, who: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.assignment
            .get_or_insert_with(Assignment::default)
            .except = who.into_iter().map(Into::into).collect();
        self
    }
}
