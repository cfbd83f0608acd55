//! [`HttpLimits`]: what one HTTP client may hold and for how long, with the documented
//! defaults. Part of the server's settings; enforced by `transport::connections`.

use std::time::Duration;

/// Default [`HttpLimits::header_timeout`]: 10 seconds.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default [`HttpLimits::body_timeout`]: 30 seconds.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// Default [`HttpLimits::idle_timeout`]: 60 seconds.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default [`HttpLimits::max_connections`]: 1,024.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Default [`HttpLimits::sse_keep_alive`]: 15 seconds.
pub const DEFAULT_SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);
/// How long connections get to finish their responses once the server stops.
pub const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(5);

/// Limits on HTTP connections: what one client can hold, and for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLimits {
    /// From the first byte of a request until its headers are complete. A client
    /// slower than this (or one sending headers a byte at a time) is disconnected.
    pub header_timeout: Duration,
    /// From a request's headers until its whole body is read; a slower body gets
    /// `408 Request Timeout` and the connection is closed.
    pub body_timeout: Duration,
    /// How long a connection may stay open with no request in progress: a new
    /// connection that never sends anything, or a keep-alive connection between
    /// requests. Open SSE streams are requests in progress, never idle.
    pub idle_timeout: Duration,
    /// Most connections open at once. At the limit the longest-idle connection is
    /// closed for a new one; if none is idle the new one is refused.
    pub max_connections: usize,
    /// Interval of the keep-alive comments on open SSE streams, so proxies and
    /// clients see a long-lived stream is still alive.
    pub sse_keep_alive: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            sse_keep_alive: DEFAULT_SSE_KEEP_ALIVE,
        }
    }
}
