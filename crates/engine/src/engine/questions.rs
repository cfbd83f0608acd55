//! Answers to the questions tasks ask: the one entry point for every answer (a
//! client's on either wire, a person's on the board), checked before it is stored.

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::Outcome;

use crate::caller::Caller;
use crate::engine::Engine;
use crate::error::EngineError;

impl Engine {
    /// Delivers a client's answer to an input request of a task. Returns `Ok(false)`
    /// when that request is not outstanding (answered already: answers count once).
    ///
    /// # Errors
    /// [`EngineError::NotFound`] for unknown, expired or foreign tasks.
    pub async fn answer_input(
        &self,
        id: &TaskId,
        key: &str,
        answer: Outcome,
        caller: &Caller,
    ) -> Result<bool, EngineError> {
        let inner = &self.inner;
        inner
            .questions
            .answer(&inner.core, id, key, answer, caller, None)
            .await
    }

    /// Delivers a person's answer, given through `via` (the channel: `board`, `link`,
    /// `slack`). The answer records who gave it, how and when (in the task's history,
    /// its timeline and the audit log, and as `answeredBy` in the answer the work
    /// reads). A question assigned to some people (an approval) takes answers from
    /// them alone; its assignees may answer it although the task is not theirs.
    /// Returns `Ok(false)` when the question is not outstanding.
    ///
    /// # Errors
    /// [`EngineError::NotFound`] for unknown or expired tasks and for callers who may
    /// neither act on the task nor answer the question; [`EngineError::NotAllowed`]
    /// when the question is assigned to others (the message says to whom);
    /// [`EngineError::InvalidInput`] when the answer does not fit the question.
    pub async fn answer_input_as(
        &self,
        id: &TaskId,
        key: &str,
        answer: Outcome,
        caller: &Caller,
        via: &str,
    ) -> Result<bool, EngineError> {
        let inner = &self.inner;
        inner
            .questions
            .answer(&inner.core, id, key, answer, caller, Some(via))
            .await
    }
}
