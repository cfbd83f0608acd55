//! Engine errors to JSON-RPC errors, for the 2025-11-25 wire. Internal detail goes to
//! the log; the client gets a stable message that says what to do.

use mcp_tasks_engine::EngineError;
use mcp_tasks_protocol::error_code::{INTERNAL_ERROR, INVALID_PARAMS, LIMIT_EXCEEDED};
use mcp_tasks_protocol::RpcError;

/// Maps an engine error to the error a 2025-11-25 client receives.
pub fn to_rpc(err: EngineError) -> RpcError {
    match err {
        EngineError::NotFound => RpcError::new(
            INVALID_PARAMS,
            "task not found: the id is unknown, the task expired (its ttl ended), or it is not yours",
        ),
        EngineError::AlreadyTerminal(status) => RpcError::new(
            INVALID_PARAMS,
            format!("task is already {status}; a finished task cannot be cancelled"),
        ),
        EngineError::InvalidInput(msg) => RpcError::new(INVALID_PARAMS, msg),
        EngineError::QuotaExceeded(msg) => RpcError::new(LIMIT_EXCEEDED, msg),
        EngineError::ShuttingDown => RpcError::new(INTERNAL_ERROR, "the server is shutting down; retry later"),
        other => {
            tracing::error!(error = %other, "engine failure");
            RpcError::new(INTERNAL_ERROR, "internal error while handling the task; see the server log")
        }
    }
}
