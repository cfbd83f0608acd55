//! Engine errors to JSON-RPC errors, for the 2025-11-25 wire. Internal detail goes to
//! the log; the client gets a stable message that says what to do.

use mcp_tasks_engine::{EngineError, Failure, Outcome};
use mcp_tasks_protocol::error_code::{
    INTERNAL_ERROR, INVALID_PARAMS, LIMIT_EXCEEDED, REQUEST_CANCELLED, REQUEST_TIMEOUT,
};
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
        EngineError::NotAllowed(msg) => RpcError::invalid_params(msg),
        EngineError::ShuttingDown => RpcError::new(INTERNAL_ERROR, "the server is shutting down; retry later"),
        EngineError::Draining => RpcError::new(INTERNAL_ERROR, EngineError::Draining.to_string()),
        other => {
            tracing::error!(error = %other, "engine failure");
            RpcError::new(INTERNAL_ERROR, "internal error while handling the task; see the server log")
        }
    }
}

/// The JSON-RPC error a task's failure is sent as, on both wires (`tasks/result` on
/// 2025-11-25, the inlined `error` of a `DetailedTask` on the extension).
pub fn failure_code(failure: Failure) -> i64 {
    match failure {
        Failure::Cancelled => REQUEST_CANCELLED,
        Failure::InputTimedOut => REQUEST_TIMEOUT,
        Failure::InvalidAnswer => INVALID_PARAMS,
        Failure::ResultTooLarge => LIMIT_EXCEEDED,
        Failure::ServerRestarted
        | Failure::LeaseLost
        | Failure::ToolPanicked
        | Failure::ExternalJobFailed
        | Failure::Internal => INTERNAL_ERROR,
        _ => INTERNAL_ERROR,
    }
}

/// The error of an outcome that is one (a protocol error as its handler gave it, or an
/// engine failure mapped by [`failure_code`]); `None` for a result.
pub fn outcome_error(outcome: &Outcome) -> Option<RpcError> {
    match outcome {
        Outcome::Result { .. } => None,
        Outcome::Error {
            code,
            message,
            data,
        } => Some(RpcError {
            code: *code,
            message: message.clone(),
            data: data.clone(),
        }),
        Outcome::Failed { failure, message } => {
            Some(RpcError::new(failure_code(*failure), message.clone()))
        }
    }
}

/// `-32021`: the request needs the Tasks extension, which its `_meta` did not declare.
/// `what` is said as given (quote names in it: `"'tasks/get'"`, `"tool 'x'"`).
pub(crate) fn missing_extension(what: &str) -> RpcError {
    RpcError::new(
        mcp_tasks_protocol::error_code::MISSING_CAPABILITY,
        format!(
            "{what} needs the client to declare the '{}' extension in _meta clientCapabilities.extensions",
            mcp_tasks_protocol::codec::v2026_07_28::EXTENSION_ID
        ),
    )
    .with_data(mcp_tasks_protocol::codec::v2026_07_28::required_extension_data())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_failures_keep_the_codes_clients_saw_before() {
        let code = |f| outcome_error(&Outcome::failed(f, "m")).map(|e| e.code);
        assert_eq!(code(Failure::Cancelled), Some(REQUEST_CANCELLED));
        assert_eq!(code(Failure::InputTimedOut), Some(REQUEST_TIMEOUT));
        assert_eq!(code(Failure::ResultTooLarge), Some(LIMIT_EXCEEDED));
        assert_eq!(code(Failure::ServerRestarted), Some(INTERNAL_ERROR));
        assert_eq!(code(Failure::LeaseLost), Some(INTERNAL_ERROR));
        assert_eq!(code(Failure::ToolPanicked), Some(INTERNAL_ERROR));
        let tool = Outcome::Error {
            code: -32099,
            message: "m".into(),
            data: None,
        };
        assert_eq!(outcome_error(&tool).map(|e| e.code), Some(-32099));
        let result = Outcome::Result {
            value: serde_json::json!({}),
        };
        assert!(outcome_error(&result).is_none());
    }
}
