//! Running a [`Server`]: serve it over stdio or Streamable HTTP,
//! or mount its router in your own axum app.

#[cfg(feature = "http")]
use tokio::net::{TcpListener, ToSocketAddrs};

#[cfg(feature = "http")]
use crate::drain::drain_signal;
#[cfg(feature = "stdio")]
use crate::drain::ShutdownSignals;
#[cfg(any(feature = "http", feature = "stdio"))]
use crate::server::builder::BuildError;
use crate::server::Server;
#[cfg(feature = "http")]
use crate::transport::http;
#[cfg(feature = "stdio")]
use crate::transport::stdio;

impl Server {
    #[cfg(feature = "http")]
    /// An axum router answering MCP (Streamable HTTP, both task wires) at `path`; nest
    /// or merge it into an existing app. Call [`Server::shutdown`] when the app stops,
    /// so open event streams end.
    pub fn router(&self, path: &str) -> axum::Router {
        http::router(self.clone(), path)
    }

    #[cfg(feature = "stdio")]
    /// Serves MCP over stdin/stdout until the client closes stdin, Ctrl-C or SIGTERM;
    /// then drains the engine (see [`mcp_tasks_engine::Engine::drain`]: resumable tasks
    /// are handed over, the others get the drain timeout to finish) unless a second
    /// signal stops it at once.
    ///
    /// # Errors
    /// I/O errors on stdout.
    pub async fn serve_stdio(self) -> Result<(), BuildError> {
        let signals = ShutdownSignals::listen();
        stdio::serve_until(
            self,
            tokio::io::stdin(),
            tokio::io::stdout(),
            signals.clone().nth(1),
            signals.nth(2),
        )
        .await
        .map_err(|source| BuildError::Io {
            context: "serving stdio".into(),
            source,
        })
    }

    #[cfg(feature = "http")]
    /// Serves MCP over Streamable HTTP at `/mcp` on `addr` until Ctrl-C or SIGTERM
    /// and the drain that follows (see [`drain_signal`]). Bind a loopback address unless
    /// you configured authentication.
    ///
    /// # Errors
    /// When the address cannot be bound.
    pub async fn serve_http(self, addr: impl ToSocketAddrs) -> Result<(), BuildError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| BuildError::Io {
                context: "binding the HTTP address".into(),
                source,
            })?;
        let drained = drain_signal(self.clone());
        self.serve_http_on(listener, drained).await
    }

    #[cfg(feature = "http")]
    /// Serves MCP over Streamable HTTP at `/mcp` on a listener you bound, until
    /// `shutdown` completes (tests bind port 0 and read the address first).
    ///
    /// # Errors
    /// I/O errors from the listener.
    pub async fn serve_http_on(
        self,
        listener: TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), BuildError> {
        self.serve_http_with(listener, axum::Router::new(), shutdown)
            .await
    }

    #[cfg(feature = "http")]
    /// [`Server::serve_http_on`] with more routes served beside MCP on the same
    /// listener (the task board, an app's own pages), under the same connection limits.
    ///
    /// # Errors
    /// I/O errors from the listener.
    pub async fn serve_http_with(
        self,
        listener: TcpListener,
        extra: axum::Router,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), BuildError> {
        // The address as a plain value (not `Some(..)`): log collectors read it.
        match listener.local_addr() {
            Ok(addr) => tracing::info!(%addr, "serving MCP over HTTP at {}", http::DEFAULT_PATH),
            Err(_) => tracing::info!("serving MCP over HTTP at {}", http::DEFAULT_PATH),
        }
        http::serve_with(self, listener, extra, shutdown)
            .await
            .map_err(|source| BuildError::Io {
                context: "serving HTTP".into(),
                source,
            })
    }
}

/// Completes on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
}
