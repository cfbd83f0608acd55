//! [`Server`]: the state every transport and handler shares (the engine, the tools,
//! the settings, the session table, the server's own requests to clients) and the
//! session table's rules. It depends on no handler: `start` builds it and wires the
//! event routing, `Server::handle` (in `wire::v2025_11_25`) takes messages to the
//! per-method handlers.

use mcp_tasks_engine::Engine;
use mcp_tasks_protocol::TaskId;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

use crate::questions::outgoing::Outgoing;
use crate::session::Session;
use crate::tools::registry::ToolRegistry;

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
    pub auth: crate::ops::auth::AuthMode,
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
    pub http: crate::transport::limits::HttpLimits,
    /// On the Tasks extension wire the server decides which calls become tasks: a call
    /// of an `optional` task tool whose work finishes within this window is answered
    /// with its plain `CallToolResult` and leaves no task behind; otherwise the task is
    /// created (durably, before the reply) and the work started in the window goes on.
    /// `required` tools always become tasks. Zero makes every such call a task.
    /// Default [`DEFAULT_TASK_AFTER`].
    pub task_after: std::time::Duration,
    /// How long a plain `tools/call` (the client asked for no task, on either wire) of
    /// an `optional` task tool may hold its connection: the call runs as a task from
    /// the start; ending within the budget it is answered with its ordinary result,
    /// otherwise, before the budget ends, with a result telling the model that the
    /// work goes on as a task and how to wait for it, see it and cancel it (see
    /// `tools::plain`). Zero turns this off (plain calls run inline, as before).
    /// Default [`DEFAULT_SYNC_BUDGET`].
    pub sync_budget: std::time::Duration,
    /// Who is offered the task tools (`task_wait`, `task_status`, `task_answer`,
    /// `task_cancel`, `task_list`). Default [`TaskTools::Auto`].
    pub task_tools: TaskTools,
    /// A plain call carrying a `progressToken` gets `notifications/progress` at least
    /// this often while it runs (its tool's own, else a heartbeat). Default
    /// [`DEFAULT_PROGRESS_INTERVAL`].
    pub progress_interval: std::time::Duration,
    /// Where people see this server's tasks: the task board's root URL (ending in
    /// `/board`), when one is served. The answer to a call that became a task links to
    /// the task's page under it.
    pub board_url: Option<String>,
    /// Where people answer the questions assigned to them (approvals) through this
    /// server, each as the model is told it: e.g. `"on the task board"`, `"in Slack"`,
    /// `"through a signed link"`. Empty: only the task board when
    /// [`ServerConfig::board_url`] is set, else none (a stdio server: handles then say
    /// that nobody can answer through it).
    pub people_channels: Vec<String>,
    /// Approval rules (`[[approval]]`) and groups (`[groups]`): calls that wait for
    /// people before their tool runs, and who belongs to which group (approvers and
    /// question assignees name groups). Default: none.
    pub approvals: crate::approvals::Approvals,
    /// The key that seals the `requestState` of the 2026-07-28 input-required round (a
    /// plain call whose tool asks mid-call): replicas behind one load balancer, and a
    /// server that restarts while a client is answering, must share one to honour each
    /// other's states. `None`: a random key per process, so a state outlives neither a
    /// restart nor a hop to another replica (the client is told to call again). Any
    /// length; 32 random bytes are plenty.
    pub request_state_key: Option<mcp_tasks_protocol::Secret<Vec<u8>>>,
    /// How long a `requestState` is honoured after it was issued: the time a person has
    /// to answer the questions of a plain call. Default [`DEFAULT_REQUEST_STATE_TTL`].
    pub request_state_ttl: std::time::Duration,
}

/// Default [`ServerConfig::request_state_ttl`]: one hour, the default task TTL (the
/// task that keeps the call's work lives no longer by default).
pub const DEFAULT_REQUEST_STATE_TTL: std::time::Duration = std::time::Duration::from_secs(3600);

pub use crate::tools::task_tools_mode::TaskTools;

/// Default [`ServerConfig::sync_budget`]: 45 s.
///
/// Why 45 s: the hosts people use cut a tool call at 60 s (Claude Code and most
/// clients on the TypeScript SDK, its default request timeout) or 300 s (Claude
/// Desktop, Claude.ai). A budget under the shortest of them answers before any of
/// them gives up, with room for the network and the host's own overhead.
pub const DEFAULT_SYNC_BUDGET: std::time::Duration = std::time::Duration::from_secs(45);

/// Default [`ServerConfig::progress_interval`]: 10 s, well inside the shortest host
/// timeout that progress resets (60 s).
pub const DEFAULT_PROGRESS_INTERVAL: std::time::Duration = std::time::Duration::from_secs(10);

/// Default [`ServerConfig::task_after`]: 20 ms.
///
/// Why 20 ms: an instant call answered inline costs what a synchronous call costs
/// (tens of microseconds), while becoming a task costs at least one more round trip
/// (`tasks/get`) and, on a durable store, one fsync of the creation (about 1-5 ms on
/// the disks measured, see docs/benchmarks.md) plus the client's first poll, which it
/// spaces by `pollIntervalMs` (1 s by default). Any call finishing in less than a poll
/// interval is answered sooner inline; 20 ms keeps the reply to a call that does become
/// a task well under human notice and under typical client request timeouts, and is
/// four times the slowest fsync measured, so a call whose work waits on one store write
/// of its own still fits.
pub const DEFAULT_TASK_AFTER: std::time::Duration = std::time::Duration::from_millis(20);

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
            auth: crate::ops::auth::AuthMode::Off,
            client_hosted_tasks: false,
            client_request_timeout: std::time::Duration::from_secs(60),
            session_idle_timeout: Some(DEFAULT_SESSION_IDLE_TIMEOUT),
            max_sessions: DEFAULT_MAX_SESSIONS,
            http: Default::default(),
            task_after: DEFAULT_TASK_AFTER,
            sync_budget: DEFAULT_SYNC_BUDGET,
            task_tools: TaskTools::Auto,
            progress_interval: DEFAULT_PROGRESS_INTERVAL,
            board_url: None,
            people_channels: Vec::new(),
            approvals: crate::approvals::Approvals::default(),
            request_state_key: None,
            request_state_ttl: DEFAULT_REQUEST_STATE_TTL,
        }
    }
}

/// A readiness check: why a part of the server is not ready, or `None`.
pub type ReadinessCheck = Arc<dyn Fn() -> Option<String> + Send + Sync>;

/// A readiness probe that has to ask something (an upstream server, over the network
/// or a pipe): resolves to why a part of the server is not ready, or `None`. `/readyz`
/// runs every probe at once on each request and bounds the wait
/// ([`crate::transport::health::PROBE_TIMEOUT`]), so a probe may well be slow.
pub type ReadinessProbe =
    Arc<dyn Fn() -> futures::future::BoxFuture<'static, Option<String>> + Send + Sync>;

pub(crate) struct ServerInner {
    pub(crate) engine: Engine,
    /// Swapped whole when the set changes (a gateway's upstream listed new tools);
    /// readers keep the set they started with.
    pub(crate) tools: std::sync::RwLock<Arc<ToolRegistry>>,
    /// Prometheus metrics (see [`crate::ops::metrics`]).
    pub(crate) metrics: Arc<crate::ops::metrics::Metrics>,
    /// Extra readiness checks for `/readyz` (name, check): `Some(reason)` when not ready.
    pub(crate) readiness: std::sync::RwLock<Vec<(String, ReadinessProbe)>>,
    /// Who answers the methods we do not (see [`crate::Passthrough`]).
    pub(crate) passthrough: std::sync::RwLock<Option<Arc<dyn crate::Passthrough>>>,
    pub(crate) config: ServerConfig,
    pub(crate) sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Requests the server sent to clients and waits on.
    pub(crate) outgoing: Outgoing,
    /// Tasks that plain calls became, while their call (or a `task_wait`) waits on
    /// them, and the session of that call (see [`Server::attach_plain_wait`]).
    pub(crate) plain_waits: Mutex<HashMap<TaskId, String>>,
    pub(crate) shutdown: CancellationToken,
    /// Whether each tool's calls usually outlast the task window (see
    /// [`crate::tools::durations`]).
    pub(crate) durations: crate::tools::durations::ToolDurations,
}

/// An MCP server. Cheap to clone; clones share sessions and the engine.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("config", &self.inner.config)
            .finish()
    }
}

impl Server {
    /// The window a call of `tool` waits now before its task is created (the
    /// extension wire's server-side decision; a plain call under the sync budget):
    /// [`ServerConfig::task_after`] (at most `cap`), or zero for a tool whose calls are
    /// known to outlast it (declared with [`crate::Tool::expected_duration`], or
    /// learned from its recent calls; a task of it that completes within the window
    /// undoes what was learned).
    pub fn task_window(&self, tool: &crate::Tool, cap: std::time::Duration) -> std::time::Duration {
        let window = self.inner.config.task_after.min(cap);
        self.inner.durations.window_for(tool, window)
    }

    /// Whether the calls of the tool called `name` are known (learned) to outlast the
    /// task window, so that they skip it (see [`Server::task_window`]).
    pub fn runs_long(&self, name: &str) -> bool {
        self.inner.durations.runs_long(name)
    }

    /// Records what a call that waited the window did (see [`Server::task_window`]).
    pub(crate) fn observe_window(
        &self,
        tool: &str,
        window: std::time::Duration,
        ended_inline: bool,
    ) {
        if !window.is_zero() {
            self.inner.durations.observe(tool, ended_inline);
        }
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// The tools this server offers now.
    pub fn tools(&self) -> Arc<ToolRegistry> {
        Arc::clone(&self.inner.tools.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Whether the `name` in `params` is a tool registered here (span names use only
    /// those).
    pub(crate) fn knows_tool(&self, params: &Value) -> bool {
        params
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| self.tools().get(n).is_some())
    }

    /// The metrics, updated as the server works.
    pub(crate) fn metrics(&self) -> &crate::ops::metrics::Metrics {
        &self.inner.metrics
    }

    /// Counts a failed call to a gateway's upstream `upstream` (a configured name) in
    /// the `mcp_tasks_upstream_errors_total` metric.
    pub fn count_upstream_error(&self, upstream: &str) {
        self.inner.metrics.store.upstream_error(upstream);
    }

    /// Counts one webhook delivery attempt for `mcp_tasks_webhook_attempts_total`:
    /// `sink` is the `[[notify]]` entry's name (configured, so bounded), `result` one of
    /// `delivered`, `retry`, `gave_up`. Called by the task board's notifier.
    pub fn count_webhook_attempt(&self, sink: &str, result: &'static str) {
        self.inner.metrics.store.webhook_attempt(sink, result);
    }

    /// The metrics in the Prometheus text format (what `/metrics` serves), for
    /// embedders that expose them elsewhere. The tasks-by-status gauge shows the last
    /// count: call [`Server::refresh_task_counts`] first to bring it up to date.
    pub fn metrics_text(&self) -> String {
        let activity = *self.inner.engine.activity().borrow();
        self.inner.metrics.render(self.session_count(), activity)
    }

    /// Counts the store's tasks by status for the `mcp_tasks_tasks` gauge, unless they
    /// were counted in the last 5 s (counting reads an index over every task, so
    /// frequent scrapes reuse the count). `/metrics` does this before rendering.
    pub async fn refresh_task_counts(&self) {
        self.inner
            .metrics
            .store
            .refresh_tasks(&self.inner.engine)
            .await;
    }

    /// Adds a check to `/readyz` (a gateway adds one per upstream): `check` returns
    /// why the part named `name` is not ready, or `None` when it is.
    pub fn add_readiness_check(&self, name: impl Into<String>, check: ReadinessCheck) {
        self.add_readiness_probe(
            name,
            Arc::new(move || {
                let why = check();
                Box::pin(async move { why })
            }),
        );
    }

    /// Adds a probe to `/readyz` that has to ask something to know (a gateway pings
    /// each upstream): `probe` resolves to why the part named `name` is not ready, or
    /// `None` when it is. A probe that does not resolve in time counts as not ready.
    pub fn add_readiness_probe(&self, name: impl Into<String>, probe: ReadinessProbe) {
        self.inner
            .readiness
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push((name.into(), probe));
    }

    /// The failing readiness checks and probes, each given `within` to answer:
    /// (name, reason). `/readyz` asks; a build without HTTP has no other reader.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) async fn readiness_problems(
        &self,
        within: std::time::Duration,
    ) -> Vec<(String, String)> {
        let probes: Vec<(String, ReadinessProbe)> = self
            .inner
            .readiness
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let answers =
            futures::future::join_all(probes.into_iter().map(|(name, probe)| async move {
                match tokio::time::timeout(within, probe()).await {
                    Ok(why) => why.map(|why| (name, why)),
                    Err(_) => Some((name, format!("no answer within {within:?}"))),
                }
            }))
            .await;
        answers.into_iter().flatten().collect()
    }

    /// Hands the methods `passthrough` handles (resources, prompts, completions, ...)
    /// to it, and adds its capabilities to ours. Set it before clients connect: a
    /// session already open keeps the capabilities it was told.
    pub fn set_passthrough(&self, passthrough: Arc<dyn crate::Passthrough>) {
        *self
            .inner
            .passthrough
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(passthrough);
    }

    /// The passthrough for `method`, if one handles it.
    pub(crate) fn passthrough_for(&self, method: &str) -> Option<Arc<dyn crate::Passthrough>> {
        self.inner
            .passthrough
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .filter(|p| p.handles(method))
    }

    /// Capabilities of the passthrough, to merge into ours (`null` without one).
    pub(crate) fn passthrough_capabilities(&self) -> Value {
        self.inner
            .passthrough
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|p| p.capabilities())
            .unwrap_or(Value::Null)
    }

    /// Sends a notification to every connected session (a passthrough's
    /// `notifications/resources/updated`, say).
    pub fn notify_all(&self, method: &str, params: Value) {
        let notice = mcp_tasks_protocol::jsonrpc::notification(method, params);
        let sessions: Vec<Arc<Session>> = self.lock_sessions().values().cloned().collect();
        for session in sessions {
            session.send(notice.clone());
        }
    }

    /// Replaces the tools this server offers (a gateway whose upstream changed its
    /// list) and tells connected clients (`notifications/tools/list_changed`). Calls
    /// already running keep the tool they started with.
    pub fn set_tools(&self, tools: ToolRegistry) {
        *self.inner.tools.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(tools);
        self.notify_all(
            mcp_tasks_protocol::methods::NOTIF_TOOLS_LIST_CHANGED,
            serde_json::json!({}),
        );
    }

    /// The settings.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// A token cancelled when [`Server::shutdown`] is called; transports end their
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
            created_at: self.inner.engine.now(),
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

    /// Makes `tx` (a plain call's stream on `session`) task `task`'s while the call
    /// waits on it: the task's questions and log messages go there, without
    /// related-task `_meta` (the client asked for no task, and may never learn of
    /// one), and only `session` may answer its questions meanwhile.
    pub(crate) fn attach_plain_wait(
        &self,
        session: &Session,
        task: &TaskId,
        tx: tokio::sync::mpsc::Sender<Value>,
    ) {
        self.lock_plain_waits()
            .insert(task.clone(), session.id().to_string());
        session.open_result_stream(task, tx);
    }

    /// Undoes [`Server::attach_plain_wait`].
    pub(crate) fn detach_plain_wait(&self, session: &Session, task: &TaskId) {
        let mut waits = self.lock_plain_waits();
        if waits.get(task).is_some_and(|s| s == session.id()) {
            waits.remove(task);
        }
        drop(waits);
        session.close_result_stream(task);
    }

    /// The session whose plain call waits on `task` now, if one does.
    pub(crate) fn plain_wait_session(&self, task: &TaskId) -> Option<String> {
        self.lock_plain_waits().get(task).cloned()
    }

    /// Whether messages about `task` carry its related-task `_meta`: not while a
    /// plain call waits on it.
    pub(crate) fn relates_to_task(&self, task: &TaskId) -> bool {
        self.plain_wait_session(task).is_none()
    }

    fn lock_plain_waits(&self) -> MutexGuard<'_, HashMap<TaskId, String>> {
        self.inner
            .plain_waits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn lock_sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}
