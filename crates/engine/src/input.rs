//! Input requests: running work asks the client a question (elicitation, sampling,
//! roots) and waits for the answer.
//!
//! A request is written into the task record (status `input_required`) before anyone
//! is told about it, so a client that reconnects is asked again; the answer removes it
//! (status back to `working` once none is left). Both are compare-and-set transitions,
//! so an answer arriving twice is applied once. The waiting work is woken through an
//! in-process channel; cancellation, expiry and the configured time limit wake it too.
//!
//! This module holds the types a tool sees (errors, elicitation answers, the client
//! methods and the capabilities they need); the waiting itself is `waiters`.

use serde_json::{json, Map, Value};
use std::time::Duration;

/// Client methods a task may call (defined once, in the protocol crate).
pub mod method {
    /// Ask the user (form or URL mode).
    pub use mcp_tasks_protocol::methods::ELICITATION_CREATE as ELICIT;
    /// Ask for the client's roots.
    pub use mcp_tasks_protocol::methods::ROOTS_LIST as ROOTS;
    /// Ask the client's model.
    pub use mcp_tasks_protocol::methods::SAMPLING_CREATE_MESSAGE as SAMPLE;
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

/// Builds the params of a form-mode elicitation.
pub(crate) fn elicit_params(message: &str, requested_schema: Value) -> Value {
    json!({ "mode": "form", "message": message, "requestedSchema": requested_schema })
}
