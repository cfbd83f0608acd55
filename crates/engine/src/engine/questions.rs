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
            .answer(&inner.core, id, key, answer, caller)
            .await
    }
}
