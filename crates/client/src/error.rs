//! [`ClientError`]: everything a client call can fail with, by what the caller can do
//! about it.

use mcp_tasks_protocol::RpcError;

/// Why a client call failed.
///
/// Match on the variant to decide what to do: [`ClientError::Rpc`] is the server's
/// answer (its JSON-RPC code is kept), [`ClientError::Connect`] and
/// [`ClientError::Transport`] mean the server could not be reached or the connection
/// broke, [`ClientError::Protocol`] means the server answered something this client
/// cannot read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered the request with a JSON-RPC error.
    #[error("server error {}: {}", .0.code, .0.message)]
    Rpc(#[from] RpcError),
    /// The server could not be reached or the child process could not be started.
    #[error("cannot connect: {0}")]
    Connect(String),
    /// The connection broke or answered at the HTTP level with an error.
    #[error("transport error: {message}")]
    Transport {
        /// The HTTP status, when the server answered with one.
        status: Option<u16>,
        /// What happened.
        message: String,
    },
    /// The server's answer does not fit the protocol (missing fields, wrong types).
    #[error("unexpected answer from the server: {0}")]
    Protocol(String),
    /// The server does not offer what was asked (no tasks, no `tasks/list` on the
    /// extension wire, ...).
    #[error("not supported by this server: {0}")]
    Unsupported(String),
    /// The connection was closed before the answer arrived.
    #[error("the connection to the server is closed")]
    Closed,
    /// The request got no answer in time.
    #[error("no answer from the server within {0:?}")]
    Timeout(std::time::Duration),
    /// The caller cancelled the request ([`crate::Client::request_cancellable`]); the
    /// server was told.
    #[error("the request was cancelled")]
    Cancelled,
}

impl ClientError {
    /// The JSON-RPC error code when the server answered with an error.
    pub fn code(&self) -> Option<i64> {
        match self {
            ClientError::Rpc(e) => Some(e.code),
            _ => None,
        }
    }

    /// Whether the failure is about reaching the server (as opposed to an answer from
    /// it): connecting, a broken connection or a closed one, a timeout.
    pub fn is_connection(&self) -> bool {
        matches!(
            self,
            ClientError::Connect(_)
                | ClientError::Transport { .. }
                | ClientError::Closed
                | ClientError::Timeout(_)
        )
    }

    /// The HTTP status the server answered with, when the failure is an HTTP error
    /// (401: a bearer token is missing or refused).
    pub fn http_status(&self) -> Option<u16> {
        match self {
            ClientError::Transport { status, .. } => *status,
            _ => None,
        }
    }

    pub(crate) fn transport(message: impl Into<String>) -> Self {
        ClientError::Transport {
            status: None,
            message: message.into(),
        }
    }

    pub(crate) fn protocol(message: impl Into<String>) -> Self {
        ClientError::Protocol(message.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rpc_errors_keep_their_code() {
        let e = ClientError::from(RpcError::invalid_params("no such task"));
        assert_eq!(e.code(), Some(-32602));
        assert!(!e.is_connection());
        assert!(e.to_string().contains("-32602"));
        assert!(ClientError::Closed.is_connection());
        assert_eq!(ClientError::Closed.code(), None);
    }
}
