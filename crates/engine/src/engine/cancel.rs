//! Cancelling a task: the record becomes `cancelled` first, then its work (or external
//! job) is asked to stop.

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{StoreError, TaskRecord, TransitionParams};

use crate::caller::Caller;
use crate::engine::Engine;
use crate::error::EngineError;

/// The error a cancelled task's outcome carries (its status message says who and why).
const CANCELLED_OUTCOME: &str = "the task was cancelled before it finished";

impl Engine {
    /// Cancels a task: the record becomes `cancelled` before this returns, then the work
    /// is asked to stop and, after the grace period, aborted. Whatever the work does
    /// next, the task stays cancelled.
    ///
    /// # Errors
    /// [`EngineError::NotFound`]; [`EngineError::AlreadyTerminal`] when it already ended.
    #[tracing::instrument(skip_all, fields(task_id = %id))]
    pub async fn cancel(&self, id: &TaskId, caller: &Caller) -> Result<TaskRecord, EngineError> {
        self.cancel_saying(id, caller, "cancelled by the client")
            .await
    }

    /// [`Engine::cancel`] with the status message the task is left with, so that a
    /// person reading it later knows who stopped it (the task board says which
    /// operator did).
    ///
    /// # Errors
    /// As [`Engine::cancel`].
    pub async fn cancel_saying(
        &self,
        id: &TaskId,
        caller: &Caller,
        reason: &str,
    ) -> Result<TaskRecord, EngineError> {
        let inner = &self.inner;
        let current = inner.core.authorize(id, caller, "cancel").await?;
        if current.status.is_terminal() {
            return Err(EngineError::AlreadyTerminal(current.status));
        }
        // An external job is asked to stop first, so that a failure can still go into
        // the status message; the task is cancelled whatever the job system says.
        let mut message = reason.to_string();
        if let Some(job) = &current.external {
            if let Err(reason) = inner
                .external_jobs
                .cancel_job(&inner.core, &current.id, job)
                .await
            {
                message.push_str(&format!("; stopping the external job failed: {reason}"));
            }
        }
        let record = inner
            .core
            .apply({
                let change =
                    TransitionParams::cancel(id.clone(), CANCELLED_OUTCOME, inner.core.now())
                        .message(message);
                match inner.core.decided(id) {
                    Some(decided) => change.questions(decided),
                    None => change,
                }
            })
            .await
            .map_err(|e| match e {
                StoreError::Conflict { current } => EngineError::AlreadyTerminal(current.status),
                StoreError::NotFound => EngineError::NotFound,
                other => EngineError::Store(other),
            })?;
        inner.executor.stop_work(id, inner.core.config.cancel_grace);
        inner.external_jobs.forget(id);
        crate::audit::cancelled(&record, &caller.principal);
        Ok(record)
    }
}
