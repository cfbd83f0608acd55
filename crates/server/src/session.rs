//! One MCP session: what was negotiated, where server-initiated messages go, and which
//! synchronous calls are in flight (so `notifications/cancelled` can stop them).

use mcp_tasks_engine::Caller;
use mcp_tasks_protocol::{version, LoggingLevel, RequestId, TaskId};
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Messages queued for a session's server-to-client stream before it is considered
/// stuck; further messages are dropped (status notifications are advisory, clients poll).
pub const OUTBOUND_CAPACITY: usize = 1024;

#[derive(Debug, Default)]
struct Negotiated {
    protocol_version: Option<String>,
    initialized: bool,
    client_capabilities: Value,
}

/// A session. Shared between the transport and the event router.
#[derive(Debug)]
pub struct Session {
    id: String,
    principal: String,
    authenticated: bool,
    /// The groups of the principal as of the latest request (its token's groups claim
    /// and `[groups]`): read again on every request, so a token minted after a change
    /// at the identity provider counts at once.
    groups: Mutex<Vec<String>>,
    negotiated: Mutex<Negotiated>,
    outbound: Mutex<Option<mpsc::Sender<Value>>>,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    /// Why the client cancelled an in-flight request (`notifications/cancelled`
    /// `reason`), until the request ends.
    cancel_reasons: Mutex<HashMap<RequestId, String>>,
    /// Input requests already sent on this session (task, key): each is sent once per
    /// connection.
    delivered: Mutex<HashSet<(TaskId, String)>>,
    /// Streams of pending `tasks/result` calls, by task: input requests of that task go
    /// there first.
    result_streams: Mutex<HashMap<TaskId, mpsc::Sender<Value>>>,
    /// When the client last sent anything on this session, on tokio's clock (which a
    /// test can pause and advance, so idle sessions are tested without waiting).
    last_active: Mutex<Instant>,
    /// The least severe log message the client wants (`logging/setLevel`).
    log_level: Mutex<LoggingLevel>,
    /// Requests of this session being handled right now (any method).
    busy: AtomicUsize,
}

/// Counts a request as being handled on its session until dropped.
#[derive(Debug)]
pub struct Busy<'a>(&'a Session);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The log level of a session whose client never sent `logging/setLevel`: routine
/// messages and above, not debug chatter.
pub const DEFAULT_LOG_LEVEL: LoggingLevel = LoggingLevel::Info;

impl Session {
    /// A new session; `principal` is who owns the tasks created in it, `authenticated`
    /// whether it comes from verified credentials (then only it may see its tasks).
    pub fn new(id: String, principal: String, authenticated: bool) -> Self {
        Session {
            id,
            principal,
            authenticated,
            groups: Mutex::new(Vec::new()),
            negotiated: Mutex::new(Negotiated::default()),
            outbound: Mutex::new(None),
            in_flight: Mutex::new(HashMap::new()),
            cancel_reasons: Mutex::new(HashMap::new()),
            delivered: Mutex::new(HashSet::new()),
            result_streams: Mutex::new(HashMap::new()),
            last_active: Mutex::new(Instant::now()),
            log_level: Mutex::new(DEFAULT_LOG_LEVEL),
            busy: AtomicUsize::new(0),
        }
    }

    /// Sets the least severe log message to send (`logging/setLevel`).
    pub fn set_log_level(&self, level: LoggingLevel) {
        *self.log_level.lock() = level;
    }

    /// Whether the client wants log messages of `level`.
    pub fn wants_log(&self, level: LoggingLevel) -> bool {
        level >= *self.log_level.lock()
    }

    /// Counts a request as being handled until the returned guard drops: such a
    /// session is never idle (a `tasks/result` may wait for hours).
    pub fn busy(&self) -> Busy<'_> {
        self.busy.fetch_add(1, Ordering::SeqCst);
        Busy(self)
    }

    /// Records that the client used the session just now (any request on it).
    pub fn touch(&self) {
        *self.last_active.lock() = Instant::now();
    }

    /// Whether the session has been unused for `timeout` and nothing keeps it alive:
    /// no open server-to-client stream, no request being handled ([`Session::busy`]
    /// covers synchronous calls and waiting `tasks/result`s, whatever stream they
    /// answer on). Clients that vanish without `DELETE` leave such sessions behind.
    /// `now` is on tokio's clock, as [`Session::touch`] records it.
    pub fn is_idle(&self, now: Instant, timeout: Duration) -> bool {
        let quiet = now.saturating_duration_since(*self.last_active.lock()) >= timeout;
        let streaming = self
            .outbound
            .lock()
            .as_ref()
            .is_some_and(|tx| !tx.is_closed());
        quiet && !streaming && self.busy.load(Ordering::SeqCst) == 0
    }

    /// How much the session is in use now, for choosing which one to forget at the
    /// session limit: `None` while a request is being handled (never forgotten),
    /// otherwise whether a server-to-client stream is open and when it was last used.
    fn use_now(&self) -> Option<(bool, Instant)> {
        if self.busy.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let streaming = self
            .outbound
            .lock()
            .as_ref()
            .is_some_and(|tx| !tx.is_closed());
        Some((streaming, *self.last_active.lock()))
    }

    /// The session id (`Mcp-Session-Id` over HTTP).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The caller identity for engine calls.
    pub fn caller(&self) -> Caller {
        Caller {
            principal: self.principal.clone(),
            session: Some(self.id.clone()),
            authenticated: self.authenticated,
            operator: false,
            groups: self.groups.lock().clone(),
        }
    }

    /// Sets the groups the session's principal is in, for the requests that follow
    /// (the HTTP transport calls it with each request's credentials).
    pub fn set_groups(&self, groups: Vec<String>) {
        *self.groups.lock() = groups;
    }

    /// The authenticated subject owning this session, if any.
    pub fn subject(&self) -> Option<&str> {
        self.authenticated.then_some(self.principal.as_str())
    }

    /// Records the outcome of `initialize`.
    pub fn set_negotiated(&self, protocol_version: &str, client_capabilities: Value) {
        let mut n = self.negotiated.lock();
        n.protocol_version = Some(protocol_version.to_string());
        n.client_capabilities = client_capabilities;
    }

    /// Records `notifications/initialized`.
    pub fn mark_initialized(&self) {
        self.negotiated.lock().initialized = true;
    }

    /// The negotiated protocol version, once `initialize` ran.
    pub fn protocol_version(&self) -> Option<String> {
        self.negotiated.lock().protocol_version.clone()
    }

    /// The capabilities the client declared at `initialize`.
    pub fn client_capabilities(&self) -> Value {
        self.negotiated.lock().client_capabilities.clone()
    }

    /// Whether the negotiated version carries the 2025-11-25 task wire.
    pub fn speaks_tasks(&self) -> bool {
        self.protocol_version()
            .is_some_and(|v| version::has_tasks(&v))
    }

    /// Connects the server-to-client stream (stdio writer, HTTP GET SSE stream),
    /// replacing an earlier one.
    pub fn attach_outbound(&self, tx: mpsc::Sender<Value>) {
        *self.outbound.lock() = Some(tx);
    }

    /// Disconnects the server-to-client stream (the connection ended).
    pub fn detach_outbound(&self) {
        *self.outbound.lock() = None;
    }

    /// Sends a server-initiated message if a stream is attached. Returns whether it was
    /// queued.
    pub fn send(&self, message: Value) -> bool {
        let tx = self.outbound.lock().clone();
        match tx {
            Some(tx) => match tx.try_send(message) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    *self.outbound.lock() = None;
                    false
                }
                Err(mpsc::error::TrySendError::Full(_)) => {
                    tracing::warn!(session = %self.id, "outbound stream full; message dropped");
                    false
                }
            },
            None => false,
        }
    }

    /// Registers an in-flight synchronous request and returns its cancellation token.
    pub fn begin_request(&self, id: &RequestId) -> CancellationToken {
        let token = CancellationToken::new();
        self.in_flight.lock().insert(id.clone(), token.clone());
        token
    }

    /// Forgets an in-flight request.
    pub fn end_request(&self, id: &RequestId) {
        self.in_flight.lock().remove(id);
        self.cancel_reasons.lock().remove(id);
    }

    /// Cancels an in-flight request and keeps the client's `reason` for its handler
    /// (a plain call that became a task tells a host's timeout from a person's stop).
    /// Returns whether one was found.
    pub fn cancel_request_because(&self, id: &RequestId, reason: Option<&str>) -> bool {
        if let Some(reason) = reason {
            if self.in_flight.lock().contains_key(id) {
                self.cancel_reasons
                    .lock()
                    .insert(id.clone(), reason.to_string());
            }
        }
        self.cancel_request(id)
    }

    /// Why the client cancelled in-flight request `id`, when it said.
    pub(crate) fn cancel_reason(&self, id: &RequestId) -> Option<String> {
        self.cancel_reasons.lock().get(id).cloned()
    }

    /// Cancels an in-flight request (from `notifications/cancelled`). Returns whether
    /// one was found.
    pub fn cancel_request(&self, id: &RequestId) -> bool {
        match self.in_flight.lock().get(id) {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels every in-flight synchronous request (the session ended). Tasks go on.
    pub fn cancel_all_requests(&self) {
        for t in self.in_flight.lock().values() {
            t.cancel();
        }
    }

    /// Records that an input request is about to be sent on this session. Returns false
    /// when it already was (so it is not sent twice).
    pub fn claim_delivery(&self, task: &TaskId, key: &str) -> bool {
        self.delivered
            .lock()
            .insert((task.clone(), key.to_string()))
    }

    /// Undoes [`Session::claim_delivery`] after a failed send.
    pub fn release_delivery(&self, task: &TaskId, key: &str) {
        self.delivered
            .lock()
            .remove(&(task.clone(), key.to_string()));
    }

    /// Registers the stream of a pending `tasks/result` for `task`.
    pub fn open_result_stream(&self, task: &TaskId, tx: mpsc::Sender<Value>) {
        self.result_streams.lock().insert(task.clone(), tx);
    }

    /// Forgets the stream of a finished `tasks/result`.
    pub fn close_result_stream(&self, task: &TaskId) {
        self.result_streams.lock().remove(task);
    }

    /// Sends a message about `task`: on its pending `tasks/result` stream when one is
    /// open, else on the session's server-to-client stream. Returns whether it was
    /// queued.
    pub fn send_for_task(&self, task: &TaskId, message: Value) -> bool {
        let stream = self.result_streams.lock().get(task).cloned();
        match stream {
            Some(tx) if tx.try_send(message.clone()).is_ok() => true,
            _ => self.send(message),
        }
    }
}

/// The session to forget when the table is full: among those with no request being
/// handled, one without an open stream before one with, and of those the one unused the
/// longest. `None` when every session is handling a request.
pub(crate) fn least_needed<'a>(
    sessions: impl Iterator<Item = &'a Arc<Session>>,
) -> Option<&'a Arc<Session>> {
    sessions
        .filter_map(|s| s.use_now().map(|(streaming, last)| ((streaming, last), s)))
        .min_by_key(|(key, _)| *key)
        .map(|(_, s)| s)
}
