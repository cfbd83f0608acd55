//! Input requests: running work asks the client a question (elicitation, sampling,
//! roots) and waits for the answer.
//!
//! A request is written into the task record (status `input_required`) before anyone
//! is told about it, so a client that reconnects is asked again; the answer removes it
//! (status back to `working` once none is left). Both are compare-and-set transitions,
//! so an answer arriving twice is applied once. The waiting work is woken through an
//! in-process channel; cancellation, expiry and the configured time limit wake it too.
//!
//! This module holds the error a tool sees; the waiting itself is `waiters`. What the
//! questions are (MCP's elicitation, sampling, roots) and what a client must declare
//! to be asked them is the server's business: the engine stores a method name and
//! params it does not read.

use std::time::Duration;

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
