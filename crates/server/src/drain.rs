//! Stopping a server well: [`ShutdownSignals`] counts Ctrl-C and SIGTERM, so that the
//! first drains the engine ([`mcp_tasks_engine::Engine::drain`]: `/readyz` answers
//! 503, no new task starts, resumable tasks are handed over, the others get the drain
//! timeout) and a second stops at once ([`drain_signal`], [`drain_on`]).

use mcp_tasks_engine::Engine;

use crate::shared::Shared;

/// Ctrl-C and SIGTERM counted as they arrive, so that the first can start a drain and
/// a second stop at once. Clones share one count; the listener ends when the last
/// clone is dropped.
#[derive(Debug, Clone)]
pub struct ShutdownSignals {
    count: tokio::sync::watch::Receiver<u32>,
}

impl ShutdownSignals {
    /// Starts listening (inside a tokio runtime). On Unix the handlers are in place
    /// when this returns, so a signal sent right after is counted, not fatal.
    pub fn listen() -> Self {
        let (tx, count) = tokio::sync::watch::channel(0);
        tokio::spawn(count_signals(tx, Handlers::install()));
        ShutdownSignals { count }
    }

    /// Completes once `n` signals arrived (1: the first).
    pub async fn nth(mut self, n: u32) {
        if self.count.wait_for(|c| *c >= n).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// The signal streams a [`ShutdownSignals`] counts.
struct Handlers {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
}

impl Handlers {
    fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Handlers {
                term: signal(SignalKind::terminate()).ok(),
                int: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        Handlers {}
    }

    /// The next signal.
    async fn next(&mut self) {
        #[cfg(unix)]
        {
            async fn recv(s: &mut Option<tokio::signal::unix::Signal>) {
                match s.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            }
            tokio::select! {
                () = recv(&mut self.term) => {}
                () = recv(&mut self.int) => {}
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Counts the signals of `handlers` into `tx` until nobody listens.
async fn count_signals(tx: tokio::sync::watch::Sender<u32>, mut handlers: Handlers) {
    loop {
        tokio::select! {
            () = handlers.next() => {}
            () = tx.closed() => return,
        }
        tx.send_modify(|c| *c += 1);
        if *tx.borrow() == 1 {
            tracing::info!("shutting down: draining (a second Ctrl-C or SIGTERM stops at once)");
        } else {
            tracing::warn!("second signal: stopping at once, without waiting for the drain");
        }
    }
}

/// Completes when a server should stop serving: at the first Ctrl-C or SIGTERM its
/// engine drains ([`mcp_tasks_engine::Engine::drain`] for the configured
/// `drain_timeout`: `/readyz` answers 503, no new task starts, resumable tasks are
/// handed over, the others get the timeout to finish); this completes when the drain
/// ends, or at once on a second signal.
///
/// The handlers are installed when this is called, not when it is first polled.
pub fn drain_signal(
    server: impl AsRef<Shared>,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    drain_on(server.as_ref().clone(), ShutdownSignals::listen())
}

/// [`drain_signal`] with signals listened to already (before the server announced
/// itself, so that no early signal is missed).
pub async fn drain_on(server: impl AsRef<Shared>, signals: ShutdownSignals) {
    signals.clone().nth(1).await;
    drain_unless(server.as_ref().engine(), signals.nth(2)).await;
}

/// Drains `engine` unless `stop_now` completes first.
pub(crate) async fn drain_unless(engine: &Engine, stop_now: impl std::future::Future<Output = ()>) {
    let timeout = engine.config().drain_timeout;
    tokio::select! {
        _ = engine.drain(timeout) => {}
        () = stop_now => {}
    }
}
