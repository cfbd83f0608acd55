//! [`McpServer`]: the state every transport shares, and the router that turns engine
//! events into notifications on the owning session.

use mcp_tasks_engine::{Engine, Outcome};
use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::jsonrpc::{self, Incoming, RequestId};
use mcp_tasks_protocol::methods::NOTIF_PROGRESS;
use mcp_tasks_protocol::{RpcError, TaskId};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::outgoing::{Exchange, Outgoing};
use crate::registry::ToolRegistry;
use crate::session::Session;

/// Default largest request body accepted: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Server settings that are not the engine's.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// Optional `instructions` returned by `initialize`.
    pub instructions: Option<String>,
    /// Largest request body (HTTP) or line (stdio) accepted, in bytes.
    pub max_body_bytes: usize,
    /// Extra `Origin` values accepted over HTTP besides localhost ones.
    pub allowed_origins: Vec<String>,
    /// When set, the `Host` header (without port) must be one of these: protection
    /// against DNS rebinding for servers bound to loopback.
    pub allowed_hosts: Option<Vec<String>>,
    /// Bearer-token authentication over HTTP.
    pub auth: crate::auth::AuthMode,
    /// Client-hosted tasks (2025-11-25 only, off by default): when the client declares
    /// `tasks.requests.elicitation.create` / `tasks.requests.sampling.createMessage`,
    /// input requests are sent as tasks on the client and polled there.
    pub client_hosted_tasks: bool,
    /// How long the server waits for the client to answer one of its own requests
    /// (client-hosted task polling).
    pub client_request_timeout: std::time::Duration,
    /// Sessions unused this long, with no open stream and no call in flight, are
    /// forgotten (clients often leave without `DELETE`); a later request with that id
    /// gets 404 and the client initializes again, its tasks still reachable by id.
    /// `None` (or zero) keeps sessions until they are deleted. Default: one hour.
    pub session_idle_timeout: Option<std::time::Duration>,
    /// Most HTTP sessions held at once. Opening one more forgets the session unused
    /// the longest (idle ones before ones with an open stream; never one with a
    /// request in progress): 20,000 `initialize` calls must not all be kept for an
    /// hour. Its client gets 404 and initializes again; its tasks stay reachable by id.
    pub max_sessions: usize,
    /// Limits on HTTP connections (timeouts, how many at once, SSE keep-alive).
    pub http: crate::transport::connections::HttpLimits,
}

/// Default [`ServerConfig::max_sessions`]: 10,000.
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;

/// Default [`ServerConfig::session_idle_timeout`].
pub const DEFAULT_SESSION_IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3600);

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            name: "mcp-tasks".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            instructions: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            allowed_origins: Vec::new(),
            allowed_hosts: None,
            auth: crate::auth::AuthMode::Off,
            client_hosted_tasks: false,
            client_request_timeout: std::time::Duration::from_secs(60),
            session_idle_timeout: Some(DEFAULT_SESSION_IDLE_TIMEOUT),
            max_sessions: DEFAULT_MAX_SESSIONS,
            http: Default::default(),
        }
    }
}

pub(crate) struct ServerInner {
    pub(crate) engine: Engine,
    pub(crate) tools: ToolRegistry,
    pub(crate) config: ServerConfig,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Requests the server sent to clients and waits on.
    pub(crate) outgoing: Outgoing,
    pub(crate) shutdown: CancellationToken,
}

/// An MCP server. Cheap to clone; clones share sessions and the engine.
#[derive(Clone)]
pub struct McpServer {
    pub(crate) inner: Arc<ServerInner>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("config", &self.inner.config)
            .finish()
    }
}

impl McpServer {
    /// Builds a server and starts routing engine events to sessions. Must be called
    /// inside a tokio runtime.
    pub fn new(engine: Engine, tools: ToolRegistry, config: ServerConfig) -> Self {
        for tool in tools.iter() {
            if let Some(spec) = tool.external_spec() {
                engine.register_external(tool.name(), spec.poller.clone());
            }
        }
        engine.set_reader(Arc::new(crate::mcp_reader::McpReader));
        let resumable = tools.clone();
        engine.set_resumer(Arc::new(move |record| {
            let name = record.request.get("name")?.as_str()?;
            let tool = resumable.get(name)?.clone();
            if !tool.is_resumable() {
                return None;
            }
            let args = record
                .request
                .get("arguments")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            Some(Box::new(move |ctx| {
                Box::pin(async move { crate::dispatch::to_outcome(tool.call(args, ctx).await) })
                    as mcp_tasks_engine::Work
            }))
        }));
        let server = McpServer {
            inner: Arc::new(ServerInner {
                engine,
                tools,
                config,
                sessions: Mutex::new(HashMap::new()),
                outgoing: Outgoing::default(),
                shutdown: CancellationToken::new(),
            }),
        };
        tokio::spawn(crate::routing::route_events(
            Arc::downgrade(&server.inner),
            server.inner.engine.subscribe(),
            server.inner.shutdown.clone(),
        ));
        let weak = Arc::downgrade(&server.inner);
        server.inner.engine.set_log_router(Arc::new(move |log| {
            if let Some(inner) = weak.upgrade() {
                crate::routing::deliver_log(&McpServer { inner }, log);
            }
        }));
        let idle_timeout = server
            .inner
            .config
            .session_idle_timeout
            .filter(|t| !t.is_zero());
        if let Some(timeout) = idle_timeout {
            tokio::spawn(forget_idle_sessions(
                Arc::downgrade(&server.inner),
                timeout,
                server.inner.shutdown.clone(),
            ));
        }
        server
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// The settings.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// A token cancelled when [`McpServer::shutdown`] is called; transports end their
    /// long-lived streams on it.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.inner.shutdown.clone()
    }

    /// Ends long-lived streams and stops event routing.
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
    }

    /// Opens a session owned by `principal` (`None`: the session itself is the
    /// principal).
    pub fn open_session(&self, principal: Option<String>) -> Arc<Session> {
        let id = TaskId::generate().to_string();
        let principal = principal.unwrap_or_else(|| format!("session:{id}"));
        self.hold_session(Arc::new(Session::new(id, principal, false)))
    }

    /// Opens a session for an authenticated subject: its tasks are bound to the subject,
    /// visible from any of the subject's sessions and to nobody else.
    pub fn open_subject_session(&self, subject: String) -> Arc<Session> {
        let id = TaskId::generate().to_string();
        self.hold_session(Arc::new(Session::new(id, subject, true)))
    }

    /// Adds `session` to the table, first making room at
    /// [`ServerConfig::max_sessions`] (see there); returns the session held under its
    /// id (an existing one when another request added it first).
    fn hold_session(&self, session: Arc<Session>) -> Arc<Session> {
        let evicted = {
            let mut sessions = self.lock_sessions();
            if let Some(held) = sessions.get(session.id()) {
                return Arc::clone(held);
            }
            let evicted = if sessions.len() >= self.inner.config.max_sessions.max(1) {
                crate::session::least_needed(sessions.values())
                    .map(|s| s.id().to_string())
                    .and_then(|id| sessions.remove(&id))
            } else {
                None
            };
            sessions.insert(session.id().to_string(), Arc::clone(&session));
            evicted
        };
        if let Some(old) = evicted {
            tracing::info!(
                max_sessions = self.inner.config.max_sessions,
                "session limit reached: forgot the session unused the longest"
            );
            old.detach_outbound();
            old.cancel_all_requests();
        }
        session
    }

    /// Looks a session up by id.
    pub fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.lock_sessions().get(id).cloned()
    }

    /// How many sessions this process holds.
    pub fn session_count(&self) -> usize {
        self.lock_sessions().len()
    }

    /// Finds a session for a client request (and marks it used): one opened here, or
    /// one another replica opened and stored in the shared database (it is then served
    /// here too; its streams stay where they are).
    pub async fn find_session(&self, id: &str) -> Option<Arc<Session>> {
        let known = self.lock_sessions().get(id).map(|s| {
            // Touched under the table's lock, so the idle sweep cannot drop it between
            // the lookup and the touch.
            s.touch();
            Arc::clone(s)
        });
        if known.is_some() {
            return known;
        }
        let stored = match self.inner.engine.load_session(id).await {
            Ok(Some(r)) => r,
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!(error = %e, "could not read a shared session");
                return None;
            }
        };
        let session = Arc::new(Session::new(
            stored.id.clone(),
            stored.principal,
            stored.authenticated,
        ));
        session.set_negotiated(&stored.protocol_version, stored.client_capabilities);
        session.mark_initialized();
        Some(self.hold_session(session))
    }

    /// Stores an initialized session so that other replicas can serve it.
    pub async fn share_session(&self, session: &Session) {
        let Some(version) = session.protocol_version() else {
            return;
        };
        let record = mcp_tasks_engine::SessionRecord {
            id: session.id().to_string(),
            principal: session.caller().principal,
            authenticated: session.subject().is_some(),
            protocol_version: version,
            client_capabilities: session.client_capabilities(),
            created_at: chrono::Utc::now(),
        };
        if let Err(e) = self.inner.engine.save_session(&record).await {
            tracing::warn!(error = %e, "could not share the session with other replicas");
        }
    }

    /// Ends a session: its synchronous calls are cancelled, its tasks go on.
    pub fn close_session(&self, id: &str) -> bool {
        let removed = self.lock_sessions().remove(id);
        if let Some(s) = &removed {
            s.cancel_all_requests();
        }
        removed.is_some()
    }

    /// Handles one parsed message. Returns the response to send, if any (requests get
    /// one unless they were cancelled; notifications and responses get none).
    /// `request_stream` receives notifications tied to this request (progress of a
    /// synchronous call) when the transport can carry them.
    pub async fn handle(
        &self,
        session: &Arc<Session>,
        message: Incoming,
        request_stream: Option<mpsc::Sender<Value>>,
    ) -> Option<Value> {
        match message {
            Incoming::Request { id, method, params } => {
                let _busy = session.busy();
                let outcome =
                    crate::dispatch::request(self, session, &id, &method, params, request_stream)
                        .await;
                outcome.map(|r| reply(&id, r))
            }
            Incoming::Notification { method, params } => {
                crate::dispatch::notification(self, session, &method, params);
                None
            }
            Incoming::Response { id, result } => {
                let outcome = Outcome::Result { value: result };
                if let Some(outcome) = self.inner.outgoing.complete(session, &id, outcome) {
                    crate::input::answer(self, session, &id, outcome).await;
                }
                None
            }
            Incoming::ErrorResponse {
                id: Some(id),
                error,
            } => {
                let outcome = Outcome::Error {
                    code: error.code,
                    message: error.message,
                    data: error.data,
                };
                if let Some(outcome) = self.inner.outgoing.complete(session, &id, outcome) {
                    crate::input::answer(self, session, &id, outcome).await;
                }
                None
            }
            Incoming::ErrorResponse { id: None, error } => {
                tracing::warn!(code = error.code, message = %error.message, "client reported an error");
                None
            }
        }
    }

    /// Sends a request of the server's own to the client (on the task's stream when
    /// `task` is given) and waits for the response.
    ///
    /// # Errors
    /// The client's error, or `-32001` when it does not answer within the configured
    /// time, or `-32603` when nothing could be sent.
    pub(crate) async fn call_client(
        &self,
        session: &Session,
        task: Option<&TaskId>,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        let timeout = self.inner.config.client_request_timeout;
        let sent = self
            .inner
            .outgoing
            .exchange(session, method, params, timeout, |message| match task {
                Some(t) => session.send_for_task(t, message),
                None => session.send(message),
            })
            .await;
        sent.map_err(|e| match e {
            Exchange::NotSent => RpcError::new(
                mcp_tasks_protocol::error_code::INTERNAL_ERROR,
                format!("could not send {method} to the client: no open stream"),
            ),
            Exchange::TimedOut => RpcError::new(
                mcp_tasks_protocol::error_code::REQUEST_TIMEOUT,
                format!("the client did not answer {method} within {timeout:?}"),
            ),
            Exchange::Refused(e) => e,
        })
    }

    fn lock_sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}

fn reply(id: &RequestId, result: Result<Value, RpcError>) -> Value {
    match result {
        Ok(v) => jsonrpc::response(id, v),
        Err(e) => jsonrpc::error_response(Some(id), &e),
    }
}

/// Forgets, every so often, the sessions [`Session::is_idle`] for `timeout`, then sweeps
/// the shared store: the sessions still held here are marked in use, and those no
/// replica used within `timeout` are deleted (a shared session alive on another
/// replica is kept by that replica's sweep).
async fn forget_idle_sessions(
    server: std::sync::Weak<ServerInner>,
    timeout: std::time::Duration,
    shutdown: CancellationToken,
) {
    let every = (timeout / 4).clamp(
        std::time::Duration::from_millis(10),
        std::time::Duration::from_secs(60),
    );
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let Some(server) = server.upgrade() else {
            return;
        };
        let now = std::time::Instant::now();
        let (forgotten, alive) = {
            let mut sessions = server.sessions.lock().unwrap_or_else(|p| p.into_inner());
            let before = sessions.len();
            sessions.retain(|_, s| !s.is_idle(now, timeout));
            let alive: Vec<String> = sessions.keys().cloned().collect();
            (before - sessions.len(), alive)
        };
        if forgotten > 0 {
            tracing::info!(forgotten, "forgot sessions idle for {timeout:?}");
        }
        match server.engine.sweep_sessions(&alive, timeout).await {
            Ok(0) => {}
            Ok(deleted) => tracing::info!(deleted, "deleted shared sessions idle for {timeout:?}"),
            Err(e) => tracing::warn!(error = %e, "could not sweep the shared sessions; will retry"),
        }
    }
}

/// A `notifications/message` message; for a task, with the related-task `_meta`.
pub(crate) fn log_notification(
    message: &mcp_tasks_engine::LogMessage,
    task: Option<&TaskId>,
) -> Value {
    let mut params = json!({ "level": message.level, "data": message.data });
    if let Some(logger) = &message.logger {
        params["logger"] = json!(logger);
    }
    if let Some(task) = task {
        params["_meta"] = v2025_11_25::related_task(task.as_str());
    }
    jsonrpc::notification(mcp_tasks_protocol::methods::NOTIF_MESSAGE, params)
}

/// A `notifications/progress` message.
pub(crate) fn progress_notification(token: &Value, p: &mcp_tasks_engine::Progress) -> Value {
    let mut params = json!({ "progressToken": token, "progress": p.progress });
    if let Some(t) = p.total {
        params["total"] = json!(t);
    }
    if let Some(m) = &p.message {
        params["message"] = json!(m);
    }
    jsonrpc::notification(NOTIF_PROGRESS, params)
}
