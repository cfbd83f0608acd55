//! Input requests: running work asks the client a question (elicitation, sampling,
//! roots) and waits for the answer.
//!
//! A request is written into the task record (status `input_required`) before anyone
//! is told about it, so a client that reconnects is asked again; the answer removes it
//! (status back to `working` once none is left). Both are compare-and-set transitions,
//! so an answer arriving twice is applied once. The waiting work is woken through an
//! in-process channel; cancellation, expiry and the configured time limit wake it too.

use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{Failure, InputRequest, Outcome, StoreError, TransitionParams};
use serde_json::{json, Map, Value};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::caller::Caller;
use crate::engine::{now_ms, Inner};
use crate::error::EngineError;

/// Client methods a task may call.
pub mod method {
    /// Ask the user (form or URL mode).
    pub const ELICIT: &str = "elicitation/create";
    /// Ask the client's model.
    pub const SAMPLE: &str = "sampling/createMessage";
    /// Ask for the client's roots.
    pub const ROOTS: &str = "roots/list";
}

/// Why an input request did not produce an answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The client did not declare the capability the request needs, or the work is
    /// not running as a task.
    #[error("{0}")]
    Unsupported(String),
    /// The task was cancelled (or expired) while waiting.
    #[error("the task was cancelled while waiting for input")]
    Cancelled,
    /// Nobody answered within the configured time; the task has been failed.
    #[error("input request '{key}' ({method}) got no answer within {after:?}")]
    TimedOut {
        /// The request key.
        key: String,
        /// The client method.
        method: String,
        /// The time limit.
        after: Duration,
    },
    /// The task already has as many outstanding requests as allowed.
    #[error("a task may have at most {limit} input requests outstanding")]
    TooMany {
        /// The configured cap.
        limit: usize,
    },
    /// The client's answer could not be read (a form answer without an action, values
    /// that do not fit the requested schema).
    #[error("the client's answer could not be used: {0}")]
    Malformed(String),
    /// The client answered with an error.
    #[error("the client refused the input request: {message} (code {code})")]
    Rejected {
        /// JSON-RPC code from the client.
        code: i64,
        /// Its message.
        message: String,
    },
    /// The task ended (or vanished) before the request could be stored.
    #[error("the task is no longer running")]
    TaskEnded,
    /// The store failed.
    #[error("could not store the input request: {0}")]
    Store(String),
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form (or agreed to open the URL).
    Accept,
    /// Explicitly said no.
    Decline,
    /// Dismissed the question.
    Cancel,
}

/// The answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitResponse {
    /// Accept, decline or cancel.
    pub action: ElicitAction,
    /// The submitted form values (accept, form mode).
    pub content: Option<Map<String, Value>>,
}

impl ElicitResponse {
    pub(crate) fn from_value(v: Value) -> Result<Self, InputError> {
        let action = v
            .get("action")
            .cloned()
            .and_then(|a| serde_json::from_value(a).ok())
            .ok_or_else(|| {
                InputError::Malformed(format!("elicitation answer without a valid 'action': {v}"))
            })?;
        let content = v.get("content").and_then(Value::as_object).cloned();
        Ok(ElicitResponse { action, content })
    }

    /// Whether the user accepted.
    pub fn accepted(&self) -> bool {
        self.action == ElicitAction::Accept
    }
}

/// Checks that the client declared what `method` needs.
pub(crate) fn check_capability(
    caps: &Value,
    method: &str,
    params: &Value,
) -> Result<(), InputError> {
    let (path, what): (&[&str], &str) = match method {
        method::ELICIT if params.get("mode").and_then(Value::as_str) == Some("url") => (
            &["elicitation", "url"],
            "URL-mode elicitation (capabilities.elicitation.url)",
        ),
        method::ELICIT => (&["elicitation"], "elicitation (capabilities.elicitation)"),
        method::SAMPLE => (&["sampling"], "sampling (capabilities.sampling)"),
        method::ROOTS => (&["roots"], "roots (capabilities.roots)"),
        _ => return Ok(()),
    };
    let mut at = caps;
    for p in path {
        match at.get(p) {
            Some(v) if !v.is_null() => at = v,
            _ => {
                return Err(InputError::Unsupported(format!(
                    "this tool needs the client to support {what}, which the client did not declare at initialize"
                )))
            }
        }
    }
    Ok(())
}

impl Inner {
    /// Stores a new input request on the task and waits for its answer.
    pub(crate) async fn request_input(
        &self,
        id: &TaskId,
        key: String,
        request: InputRequest,
        cancel: &CancellationToken,
    ) -> Result<Value, InputError> {
        let (tx, rx) = oneshot::channel();
        self.lock_waiters().insert((id.clone(), key.clone()), tx);
        let stored = self.store_request(id, &key, &request).await;
        if let Err(e) = stored {
            self.lock_waiters().remove(&(id.clone(), key));
            return Err(e);
        }
        let timeout = self.config.input_timeout;
        let answer = tokio::select! {
            a = rx => a.map_err(|_| InputError::TaskEnded),
            _ = cancel.cancelled() => Err(InputError::Cancelled),
            _ = tokio::time::sleep(timeout) => {
                let err = InputError::TimedOut { key: key.clone(), method: request.method.clone(), after: timeout };
                self.fail_task(id, Failure::InputTimedOut, format!("{err}; the task failed. Answer input requests sooner or raise --input-timeout")).await;
                Err(err)
            }
        };
        self.lock_waiters().remove(&(id.clone(), key));
        match answer {
            Ok(Outcome::Result { value }) => Ok(value),
            Ok(Outcome::Error { code, message, .. }) => Err(InputError::Rejected { code, message }),
            Ok(Outcome::Failed { message, .. }) => Err(InputError::Malformed(message)),
            Err(e) => Err(e),
        }
    }

    async fn store_request(
        &self,
        id: &TaskId,
        key: &str,
        request: &InputRequest,
    ) -> Result<(), InputError> {
        loop {
            let current = match self.store.get(id, now_ms()).await {
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
            if outstanding >= self.config.max_input_requests {
                return Err(InputError::TooMany {
                    limit: self.config.max_input_requests,
                });
            }
            let mut requests = current.input_requests.clone();
            requests.insert(key.to_string(), request.clone());
            let change = TransitionParams {
                id: id.clone(),
                expected_version: Some(current.version),
                status: TaskStatus::InputRequired,
                status_message: None,
                outcome: None,
                now: now_ms(),
                input_requests: Some(requests),
                expected_lease_generation: self.fence(id),
                external: None,
            };
            match self.apply(change).await {
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
    pub(crate) async fn answer_input(
        &self,
        id: &TaskId,
        key: &str,
        answer: Outcome,
        caller: &Caller,
    ) -> Result<bool, EngineError> {
        loop {
            let current = self.authorize(id, caller, "answer_input").await?;
            let pending = current
                .input_requests
                .get(key)
                .is_some_and(|r| r.is_outstanding());
            if current.status.is_terminal() || !pending {
                return Ok(false);
            }
            let mut requests = current.input_requests.clone();
            if let Some(r) = requests.get_mut(key) {
                r.answer = Some(answer.clone());
            }
            let status = if requests.values().any(|r| r.is_outstanding()) {
                TaskStatus::InputRequired
            } else {
                TaskStatus::Working
            };
            let change = TransitionParams {
                id: id.clone(),
                expected_version: Some(current.version),
                status,
                status_message: None,
                outcome: None,
                now: now_ms(),
                input_requests: Some(requests),
                expected_lease_generation: None,
                external: None,
            };
            match self.apply(change).await {
                Ok(_) => break,
                Err(StoreError::Conflict { .. }) => continue,
                Err(StoreError::NotFound) => return Err(EngineError::NotFound),
                Err(e) => return Err(e.into()),
            }
        }
        match self.lock_waiters().remove(&(id.clone(), key.to_string())) {
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
            if let Some(tx) = self
                .lock_waiters()
                .remove(&(record.id.clone(), key.clone()))
            {
                let _ = tx.send(answer.clone());
            }
        }
    }

    /// Ends a task as failed with `message` and stops its work.
    pub(crate) async fn fail_task(&self, id: &TaskId, failure: Failure, message: String) {
        let change = TransitionParams {
            id: id.clone(),
            expected_version: None,
            status: TaskStatus::Failed,
            status_message: Some(Some(message.clone())),
            outcome: Some(Outcome::failed(failure, message)),
            now: now_ms(),
            input_requests: Some(Default::default()),
            expected_lease_generation: None,
            external: None,
        };
        if self.apply(change).await.is_ok() {
            self.stop_work(id);
        }
    }
}

/// Builds the params of a form-mode elicitation.
pub(crate) fn elicit_params(message: &str, requested_schema: Value) -> Value {
    json!({ "mode": "form", "message": message, "requestedSchema": requested_schema })
}
