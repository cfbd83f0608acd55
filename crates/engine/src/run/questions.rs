//! Questions a task asks (input requests) and their answers, on the engine's side:
//! storing a question on the record (`input_required`), the one entry point of every
//! answer (a client's, a person's on the board, one another replica stored), the
//! question's deadline, and [`QuestionWaiters`], the in-process channels that wake the
//! work waiting for an answer. How a question reaches a person or a client is the
//! server's (`questions/` there); the requests and answers live in the task record.

use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{Failure, FieldChange, InputRequest, Outcome, StoreError, TransitionParams};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::caller::Caller;
use crate::error::EngineError;
use crate::input::InputError;
use crate::run::core::Core;
use crate::run::executor::Executor;

/// Work waiting for the answer to an input request, by task and request key.
type Waiting = HashMap<(TaskId, String), oneshot::Sender<Outcome>>;

/// The work of this process waiting on input answers. See the module docs.
#[derive(Default)]
pub(crate) struct QuestionWaiters {
    waiting: Mutex<Waiting>,
}

impl QuestionWaiters {
    fn lock(&self) -> MutexGuard<'_, Waiting> {
        // A poisoned lock only means a thread panicked mid-update of a map of senders.
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl QuestionWaiters {
    /// Stores a new input request on the task and waits for its answer.
    pub(crate) async fn request(
        &self,
        core: &Core,
        executor: &Executor,
        id: &TaskId,
        key: String,
        request: InputRequest,
        cancel: &CancellationToken,
    ) -> Result<Value, InputError> {
        let (tx, rx) = oneshot::channel();
        self.lock().insert((id.clone(), key.clone()), tx);
        let stored = self.store_request(core, executor, id, &key, &request).await;
        if let Err(e) = stored {
            self.lock().remove(&(id.clone(), key));
            return Err(e);
        }
        let timeout = core.config.input_timeout;
        let answer = tokio::select! {
            a = rx => a.map_err(|_| InputError::TaskEnded),
            _ = cancel.cancelled() => Err(InputError::Cancelled),
            _ = tokio::time::sleep(timeout) => {
                let err = InputError::TimedOut { key: key.clone(), method: request.method.clone(), after: timeout };
                crate::run::ledger::fail(core, executor, id, Failure::InputTimedOut, format!("{err}; the task failed. Answer input requests sooner or raise --input-timeout")).await;
                Err(err)
            }
        };
        self.lock().remove(&(id.clone(), key));
        match answer {
            Ok(Outcome::Result { value }) => Ok(value),
            Ok(Outcome::Error { code, message, .. }) => Err(InputError::Rejected { code, message }),
            Ok(Outcome::Failed { message, .. }) => Err(InputError::Malformed(message)),
            Err(e) => Err(e),
        }
    }

    async fn store_request(
        &self,
        core: &Core,
        executor: &Executor,
        id: &TaskId,
        key: &str,
        request: &InputRequest,
    ) -> Result<(), InputError> {
        loop {
            let current = match core.store.get(id, core.now()).await {
                Ok(Some(r)) => r,
                Ok(None) => return Err(InputError::TaskEnded),
                Err(e) => return Err(InputError::Store(e.to_string())),
            };
            if current.status.is_terminal() {
                return Err(InputError::TaskEnded);
            }
            let outstanding = current
                .input_requests
                .values()
                .filter(|r| r.is_outstanding())
                .count();
            if outstanding >= core.config.max_input_requests {
                return Err(InputError::TooMany {
                    limit: core.config.max_input_requests,
                });
            }
            let mut requests = current.input_requests.clone();
            requests.insert(key.to_string(), request.clone());
            let change = TransitionParams::to(id.clone(), TaskStatus::InputRequired, core.now())
                .expecting(current.version)
                .questions(requests)
                .fenced(executor.fence(id));
            match core.apply(change).await {
                Ok(_) => return Ok(()),
                Err(StoreError::Conflict { current }) if !current.status.is_terminal() => continue,
                Err(StoreError::Conflict { .. }) | Err(StoreError::NotFound) => {
                    return Err(InputError::TaskEnded)
                }
                Err(e) => return Err(InputError::Store(e.to_string())),
            }
        }
    }

    /// Applies a client's answer: removes the request from the record (back to
    /// `working` when none is left) and wakes the waiting work. Returns false when the
    /// request was not outstanding (already answered, or never asked).
    pub(crate) async fn answer(
        &self,
        core: &Core,
        id: &TaskId,
        key: &str,
        answer: Outcome,
        caller: &Caller,
    ) -> Result<bool, EngineError> {
        loop {
            let current = core.authorize(id, caller, "answer_input").await?;
            let pending = current
                .input_requests
                .get(key)
                .filter(|r| r.is_outstanding());
            let Some(request) = pending.filter(|_| !current.status.is_terminal()) else {
                return Ok(false);
            };
            // A wrong answer never reaches the work: the question stays open, and the
            // one who answered learns what to fix.
            if let Outcome::Result { value } = &answer {
                core.reader()
                    .check_answer(&request.method, &request.params, value)
                    .map_err(|problem| {
                        EngineError::InvalidInput(format!(
                            "the answer to input request '{key}' was refused: {problem}; the question is still open, answer it again"
                        ))
                    })?;
            }
            let mut requests = current.input_requests.clone();
            if let Some(r) = requests.get_mut(key) {
                r.answer = Some(answer.clone());
            }
            let still_asking = requests.values().any(|r| r.is_outstanding());
            let status = if still_asking {
                TaskStatus::InputRequired
            } else {
                TaskStatus::Working
            };
            // The message shown while the task waited ("waiting for …") does not
            // outlive the wait: leaving `input_required` clears it, until the work
            // says what it does next.
            let message = if current.status == TaskStatus::InputRequired && !still_asking {
                FieldChange::Clear
            } else {
                FieldChange::Keep
            };
            let change = TransitionParams::to(id.clone(), status, core.now())
                .expecting(current.version)
                .message_change(message)
                .questions(requests);
            match core.apply(change).await {
                Ok(_) => break,
                Err(StoreError::Conflict { .. }) => continue,
                Err(StoreError::NotFound) => return Err(EngineError::NotFound),
                Err(e) => return Err(e.into()),
            }
        }
        match self.lock().remove(&(id.clone(), key.to_string())) {
            Some(tx) => {
                let _ = tx.send(answer);
            }
            // The work runs on another replica: it picks the answer up from the record.
            None => tracing::debug!(task_id = %id, key, "answer stored for work running elsewhere"),
        }
        Ok(true)
    }

    /// Hands answers found in a re-read record to work waiting in this process (the
    /// answer arrived at another replica).
    pub(crate) fn deliver_stored_answers(&self, record: &mcp_tasks_store::TaskRecord) {
        for (key, request) in &record.input_requests {
            let Some(answer) = &request.answer else {
                continue;
            };
            if let Some(tx) = self.lock().remove(&(record.id.clone(), key.clone())) {
                let _ = tx.send(answer.clone());
            }
        }
    }
}
