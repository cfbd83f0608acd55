//! [`BenchError`]: why a benchmark run stopped.

/// Why a benchmark run stopped. Every variant carries what was being done, so the
/// message alone tells the user what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// Bad flags or flag combinations.
    #[error("{0}")]
    Usage(String),
    /// A socket or file operation failed.
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    /// The server answered something that is not a usable HTTP response.
    #[error("HTTP: {0}")]
    Http(String),
    /// The server answered with a JSON-RPC error or an unexpected result.
    #[error("{method}: {message}")]
    Rpc {
        /// The request method.
        method: String,
        /// What was wrong.
        message: String,
    },
    /// A server the bench started did not come up or died.
    #[error("server: {0}")]
    Server(String),
}
