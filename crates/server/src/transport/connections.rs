//! The HTTP accept loop and what each connection may cost: how many are open at once,
//! how long one may sit idle or dribble its request headers, and `TCP_NODELAY` on every
//! accepted socket.
//!
//! Why not `axum::serve`: it holds a connection for as long as its peer likes (a
//! client that sends half a header, or opens hundreds of keep-alive sockets and says
//! nothing, ties up file descriptors until the server stops answering anyone), and it
//! leaves Nagle's algorithm on, so a response written in two pieces (SSE headers, then
//! the event) waits ~40 ms for the client's delayed ACK on a reused connection.
//!
//! Each connection is driven by hyper's HTTP/1 server with a watchdog beside it. The
//! watchdog knows whether a request is being served (from the moment its headers are
//! parsed until its response body is dropped, so a long SSE stream counts as busy, as
//! it should) and when the first byte of the next request arrived:
//!
//! | state | limit | then |
//! |---|---|---|
//! | no request, nothing received | [`HttpLimits::idle_timeout`] | closed gracefully |
//! | no request, headers arriving | [`HttpLimits::header_timeout`] | closed |
//! | request being served | none here; the body read has [`HttpLimits::body_timeout`] | |
//!
//! At [`HttpLimits::max_connections`], a new connection displaces the connection idle
//! the longest; when every connection is busy the new one is closed at once, so the
//! process never holds more sockets than the limit (plus the one being refused).

use axum::body::Body;
use axum::Router;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

pub use crate::http_limits::*;

/// Accepts connections on `listener` and serves `app` on each until `shutdown`
/// completes; then closes idle connections, lets busy ones finish for up to
/// [`SHUTDOWN_DEADLINE`], and returns.
///
/// # Errors
/// None today: accept errors (out of file descriptors, a connection reset before it
/// was accepted) are logged and accepting goes on.
pub async fn serve_connections(
    listener: TcpListener,
    app: Router,
    limits: HttpLimits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let table = Arc::new(Table::new(limits.max_connections.max(1)));
    let stop = CancellationToken::new();
    let tracker = TaskTracker::new();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(e) => {
                    // Out of descriptors (EMFILE) or similar: back off instead of
                    // spinning on an accept that fails at once.
                    tracing::warn!(error = %e, "accepting an HTTP connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        let Some(slot) = table.admit() else {
            tracing::warn!(
                max_connections = table.max,
                "connection refused: every connection is busy (raise --max-connections)"
            );
            drop(stream);
            continue;
        };
        tracker.spawn(drive(
            stream,
            app.clone(),
            slot,
            limits.clone(),
            stop.clone(),
        ));
    }
    stop.cancel();
    tracker.close();
    if tokio::time::timeout(SHUTDOWN_DEADLINE, tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!("connections still open {SHUTDOWN_DEADLINE:?} after shutdown; closing them");
    }
    Ok(())
}

/// Serves one connection and closes it when it overstays a limit.
async fn drive(
    stream: TcpStream,
    app: Router,
    slot: Slot,
    limits: HttpLimits,
    stop: CancellationToken,
) {
    let state = Arc::clone(&slot.state);
    let io = TokioIo::new(Watched {
        inner: stream,
        state: Arc::clone(&state),
    });
    let service_state = Arc::clone(&state);
    let service = hyper::service::service_fn(move |request: http::Request<Incoming>| {
        let busy = Request::begin(Arc::clone(&service_state));
        let app = app.clone();
        async move {
            let response = app.oneshot(request.map(Body::new)).await?;
            // The request counts as in progress until its body is dropped: written out,
            // or abandoned by a client that left. `busy` lives in the closure.
            Ok::<_, std::convert::Infallible>(response.map(|body| {
                Body::new(body.map_frame(move |frame| {
                    let _in_progress = &busy;
                    frame
                }))
            }))
        }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .serve_connection(io, service);
    tokio::pin!(connection);
    // Once set, the connection was asked to close and gets until then to do so.
    let mut closing: Option<Instant> = None;
    loop {
        let changed = state.changed.notified();
        let limit = closing.or_else(|| state.deadline(&limits));
        tokio::select! {
            done = connection.as_mut() => {
                if let Err(e) = done {
                    tracing::debug!(error = %e, "HTTP connection ended with an error");
                }
                return;
            }
            _ = changed => {}
            _ = stop.cancelled(), if closing.is_none() => {
                connection.as_mut().graceful_shutdown();
                closing = Some(Instant::now() + SHUTDOWN_DEADLINE);
            }
            _ = slot.evicted.cancelled(), if closing.is_none() => {
                connection.as_mut().graceful_shutdown();
                closing = Some(Instant::now() + limits.header_timeout);
            }
            _ = sleep_until(limit) => {
                if closing.is_some() {
                    return; // asked to close and did not: drop the socket
                }
                match state.phase() {
                    Phase::Busy => {}
                    Phase::Idle => {
                        tracing::debug!("closing an idle HTTP connection");
                        connection.as_mut().graceful_shutdown();
                        closing = Some(Instant::now() + limits.header_timeout);
                    }
                    Phase::ReadingHeaders => {
                        tracing::debug!("closing an HTTP connection whose headers did not arrive in time");
                        return;
                    }
                }
            }
        }
    }
}

/// Sleeps until `deadline`, or forever without one.
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// What a connection is doing, as far as its limits are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// A request is being served.
    Busy,
    /// Nothing in progress and nothing received since.
    Idle,
    /// Nothing in progress, but bytes of the next request arrived.
    ReadingHeaders,
}

/// The watchdog's view of one connection, updated by the socket and the service.
#[derive(Debug)]
struct ConnState {
    /// When the connection was opened; the two times below count from here.
    opened: Instant,
    /// Requests being served (hyper/1 serves one at a time; counted to be safe).
    in_flight: AtomicUsize,
    /// Milliseconds from `opened` to when the last request ended (0 at first).
    idle_since_ms: AtomicU64,
    /// Milliseconds from `opened` to the first byte received while idle, plus one
    /// (0: none yet), so that a byte in the first millisecond still counts.
    first_byte_ms: AtomicU64,
    /// Wakes the watchdog when the phase changes.
    changed: Notify,
}

impl ConnState {
    fn new() -> Self {
        ConnState {
            opened: Instant::now(),
            in_flight: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(0),
            first_byte_ms: AtomicU64::new(0),
            changed: Notify::new(),
        }
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn at(&self, ms: u64) -> Instant {
        self.opened + Duration::from_millis(ms)
    }

    fn phase(&self) -> Phase {
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            Phase::Busy
        } else if self.first_byte_ms.load(Ordering::SeqCst) > 0 {
            Phase::ReadingHeaders
        } else {
            Phase::Idle
        }
    }

    /// When the current phase runs out, if it can.
    fn deadline(&self, limits: &HttpLimits) -> Option<Instant> {
        match self.phase() {
            Phase::Busy => None,
            Phase::Idle => {
                Some(self.at(self.idle_since_ms.load(Ordering::SeqCst)) + limits.idle_timeout)
            }
            Phase::ReadingHeaders => {
                let first = self.first_byte_ms.load(Ordering::SeqCst).saturating_sub(1);
                Some(self.at(first) + limits.header_timeout)
            }
        }
    }

    /// Bytes arrived: if nothing is in progress, headers of a request started.
    fn received(&self) {
        if self.in_flight.load(Ordering::SeqCst) == 0
            && self
                .first_byte_ms
                .compare_exchange(
                    0,
                    self.elapsed_ms().saturating_add(1),
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok()
        {
            self.changed.notify_one();
        }
    }

    /// Milliseconds this connection has been idle, or `None` when it is not idle.
    fn idle_for_ms(&self) -> Option<u64> {
        (self.phase() == Phase::Idle).then(|| {
            self.elapsed_ms()
                .saturating_sub(self.idle_since_ms.load(Ordering::SeqCst))
        })
    }
}

/// A request in progress on a connection, from its parsed headers until its response
/// body is dropped.
#[derive(Debug)]
struct Request(Arc<ConnState>);

impl Request {
    fn begin(state: Arc<ConnState>) -> Self {
        state.in_flight.fetch_add(1, Ordering::SeqCst);
        state.first_byte_ms.store(0, Ordering::SeqCst);
        state.changed.notify_one();
        Request(state)
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        let state = &self.0;
        state
            .idle_since_ms
            .store(state.elapsed_ms(), Ordering::SeqCst);
        state.first_byte_ms.store(0, Ordering::SeqCst);
        state.in_flight.fetch_sub(1, Ordering::SeqCst);
        state.changed.notify_one();
    }
}

/// A socket that tells its connection's watchdog when bytes arrive.
#[derive(Debug)]
struct Watched {
    inner: TcpStream,
    state: Arc<ConnState>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.state.received();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The open connections, to count them and to pick one to displace at the limit.
#[derive(Debug)]
struct Table {
    max: usize,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Entry>>,
}

#[derive(Debug)]
struct Entry {
    state: Arc<ConnState>,
    evicted: CancellationToken,
}

/// A connection's place in the [`Table`], given back when dropped.
#[derive(Debug)]
struct Slot {
    id: u64,
    table: Arc<Table>,
    state: Arc<ConnState>,
    evicted: CancellationToken,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.table.open.lock().remove(&self.id);
    }
}

impl Table {
    fn new(max: usize) -> Self {
        Table {
            max,
            next_id: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
        }
    }

    /// A place for a new connection: a free one, or the place of the connection idle
    /// the longest (which is told to close). `None` when every connection is busy.
    fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut open = self.open.lock();
        if open.len() >= self.max {
            let victim = open
                .iter()
                .filter_map(|(id, e)| e.state.idle_for_ms().map(|idle| (idle, *id)))
                .max()
                .map(|(_, id)| id)?;
            if let Some(entry) = open.remove(&victim) {
                tracing::debug!("connection limit reached: closing the longest-idle connection");
                entry.evicted.cancel();
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnState::new());
        let evicted = CancellationToken::new();
        open.insert(
            id,
            Entry {
                state: Arc::clone(&state),
                evicted: evicted.clone(),
            },
        );
        Some(Slot {
            id,
            table: Arc::clone(self),
            state,
            evicted,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_full_table_displaces_the_longest_idle_connection_and_refuses_when_all_are_busy() {
        let table = Arc::new(Table::new(2));
        let a = table.admit().unwrap();
        let b = table.admit().unwrap();
        // a is busy, b idle: the third connection displaces b.
        let busy_a = Request::begin(Arc::clone(&a.state));
        let c = table.admit().unwrap();
        assert!(b.evicted.is_cancelled());
        assert!(!a.evicted.is_cancelled());
        // a and c busy: nobody can be displaced.
        let busy_c = Request::begin(Arc::clone(&c.state));
        assert!(table.admit().is_none());
        drop(busy_c);
        let d = table.admit().unwrap();
        assert!(c.evicted.is_cancelled());
        drop((busy_a, d));
    }

    #[test]
    fn phases_follow_requests_and_received_bytes() {
        let state = Arc::new(ConnState::new());
        assert_eq!(state.phase(), Phase::Idle);
        state.received();
        assert_eq!(state.phase(), Phase::ReadingHeaders);
        let request = Request::begin(Arc::clone(&state));
        assert_eq!(state.phase(), Phase::Busy);
        state.received(); // the body: still busy
        assert_eq!(state.phase(), Phase::Busy);
        drop(request);
        assert_eq!(state.phase(), Phase::Idle);
        let limits = HttpLimits::default();
        assert!(state.deadline(&limits).is_some());
    }
}
