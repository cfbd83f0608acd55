//! Journaled steps, the attempt number and retries: what lets a task's work run again
//! (a takeover, a retry, a drain) and carry on where it was.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::future::Future;

use super::TaskContext;
use crate::retry::{Retry, RetryRequested};
use crate::steps::{StepError, CURRENT_STEP};

impl TaskContext {
    /// Runs `body` as the journaled step `name` and returns its output.
    ///
    /// In a task, the output is recorded in the task's journal when the body ends; when
    /// the work runs again (another server process took the task over, a retry, a
    /// restart after a drain), a step already recorded returns its recorded output and
    /// its body does not run. Steps are told apart by name and occurrence (the third
    /// step called `"fetch"` is `fetch#2`), so steps in loops work, as long as the work
    /// asks for its steps in the same order each time. A body that was running when its
    /// process died runs again: a step runs at least once, and exactly once when it
    /// finished. Give calls to outside systems [`TaskContext::step_key`] as an
    /// idempotency key so that such a repeat does no harm.
    ///
    /// Outside a task (a plain call) the body just runs.
    ///
    /// ```
    /// # async fn demo(ctx: mcp_tasks_engine::TaskContext) -> Result<(), mcp_tasks_engine::StepError> {
    /// let rows: u32 = ctx.step("fetch", async { 42 }).await?;
    /// let stored: bool = ctx.step("store", async move { rows > 0 }).await?;
    /// # let _ = stored; Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`StepError::NotRecorded`] when the step ran but could not be recorded (the task
    /// ended, another process took it over, the store failed): return; and
    /// [`StepError::Unreadable`] / [`StepError::Unserializable`] when the output does not
    /// convert to or from JSON.
    pub async fn step<T, F>(&self, name: &str, body: F) -> Result<T, StepError>
    where
        T: Serialize + DeserializeOwned,
        F: Future<Output = T>,
    {
        let steps = &self.shared.steps;
        let key = steps.next_key(name);
        let Some((id, inner)) = &self.shared.task else {
            let stable = steps.call_key(&key);
            return Ok(CURRENT_STEP.scope(stable, body).await);
        };
        if let Some(recorded) = steps.replay(&key) {
            return serde_json::from_value(recorded).map_err(|e| StepError::Unreadable {
                step: key,
                reason: e.to_string(),
            });
        }
        let output = CURRENT_STEP.scope(format!("{id}/{key}"), body).await;
        let value = serde_json::to_value(&output).map_err(|e| StepError::Unserializable {
            step: key.clone(),
            reason: e.to_string(),
        })?;
        let host = inner.upgrade().ok_or_else(|| StepError::NotRecorded {
            step: key.clone(),
            reason: "the engine has shut down".into(),
        })?;
        host.record_step(id, key, steps.attempt, value).await?;
        Ok(output)
    }

    /// Inside the body of a [`TaskContext::step`]: a key for that step that is the
    /// same in every attempt of the task (`TASK_ID/NAME#N`), to pass as the
    /// idempotency key of a call to an outside system, so that a body run again after
    /// a crash does not charge a card twice. `None` outside a step body.
    pub fn step_key(&self) -> Option<String> {
        CURRENT_STEP.try_with(Clone::clone).ok()
    }

    /// Which attempt at the task this is: 1 for the first run, one more for every run
    /// after a takeover, a retry or a drain.
    pub fn attempt(&self) -> u32 {
        self.shared.steps.attempt
    }

    /// Asks for this task to be run again later (a failure worth retrying: an outside
    /// service was down). Return the value as the tool's error:
    /// `return Err(ctx.retry(Retry::because("the API answered 503")))`. When the tool's
    /// retry policy allows another attempt, the task stays `working` (its status
    /// message says which attempt comes when) and the work runs again after the
    /// backoff, replaying its journaled steps; otherwise the error is the task's
    /// result, as a tool error carrying the reason.
    pub fn retry(&self, retry: Retry) -> RetryRequested {
        let requested = RetryRequested::new(&retry);
        self.shared.steps.request_retry(retry);
        requested
    }
}
