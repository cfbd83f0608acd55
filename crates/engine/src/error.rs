//! The engine's error type. It never contains JSON-RPC: the server maps it to codes.

use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::StoreError;

/// What an engine call can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// No such task, it expired, or it belongs to someone else (indistinguishable on
    /// purpose).
    #[error("task not found: it does not exist, has expired, or is not yours")]
    NotFound,
    /// The task already ended; it cannot be cancelled or changed.
    #[error("task is already {0}; a terminal task cannot change")]
    AlreadyTerminal(TaskStatus),
    /// The caller sent something unusable (a bad cursor, ...).
    #[error("{0}")]
    InvalidInput(String),
    /// The caller may see the task but not do this (answer an approval it is not an
    /// approver of, answer a person's question as the client). The message says who
    /// may.
    #[error("{0}")]
    NotAllowed(String),
    /// A configured limit was reached.
    #[error("{0}")]
    QuotaExceeded(String),
    /// The engine is shutting down and takes no new work.
    #[error("the server is shutting down")]
    ShuttingDown,
    /// The engine is draining (its process is shutting down): no new task starts
    /// here. Another replica (or this server once restarted) takes the call.
    #[error("the server is draining before it shuts down and starts no new task here; retry the call on another replica or once it restarted")]
    Draining,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}
