//! [`Server`]: the facade. It holds the state the server's parts share
//! ([`crate::shared::Shared`]) and every `impl Server`: building and starting a server,
//! serving it, draining it, its sessions, tools, readiness and metrics as an embedder
//! sees them. Nothing in the crate imports this module; it imports the parts below it
//! (the call pipeline, the wires, the transports, the features).
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`Server`] and its everyday methods; [`ServerConfig`] and its defaults, re-exported from `crate::config` |
//! | `builder` | [`crate::ServerBuilder`] and [`Server::builder`] |
//! | `start` | [`Server::start`]: what starting wires into the engine (the reader, resumable tools, log routing, metrics), the event routing and the idle-session sweep |
//! | `serve` | [`Server::serve_stdio`], [`Server::serve_http`], [`Server::router`], the shutdown signal |
//! | `handle` | [`Server::handle`]: one 2025-11-25 message (the 2026-07-28 wire's entry points, `wire::v2026_07_28::{handle, listen}`, take a `Server` as they are) |
//! | `start_call` | [`Server::start_tool_task`]: a call started as a task on someone's behalf (the board's "run again") |

pub mod builder;
mod handle;
pub(crate) mod serve;
mod start;
mod start_call;

use mcp_tasks_engine::Engine;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use crate::session::Session;
use crate::sessions::Sessions;
use crate::shared::Shared;
use crate::tools::registry::ToolRegistry;

pub use crate::config::{
    ServerConfig, TaskTools, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_SESSIONS,
    DEFAULT_PROGRESS_INTERVAL, DEFAULT_REQUEST_STATE_TTL, DEFAULT_SESSION_IDLE_TIMEOUT,
    DEFAULT_SYNC_BUDGET, DEFAULT_TASK_AFTER,
};
pub use crate::shared::{ReadinessCheck, ReadinessProbe};

/// An MCP server. Cheap to clone; clones share sessions and the engine.
#[derive(Clone)]
pub struct Server {
    shared: Shared,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("config", &self.shared.inner.config)
            .finish()
    }
}

/// A transport takes what a server shares (see [`crate::shared::Shared`]), so that
/// `transport::http::serve(server, ..)` and the like take a `Server` as they always did.
impl AsRef<Shared> for Server {
    fn as_ref(&self) -> &Shared {
        &self.shared
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
        self.shared.task_window(tool, cap)
    }

    /// Whether the calls of the tool called `name` are known (learned) to outlast the
    /// task window, so that they skip it (see [`Server::task_window`]).
    pub fn runs_long(&self, name: &str) -> bool {
        self.shared.inner.durations.runs_long(name)
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        self.shared.engine()
    }

    /// The tools this server offers now.
    pub fn tools(&self) -> Arc<ToolRegistry> {
        self.shared.tools()
    }

    /// Counts a failed call to a gateway's upstream `upstream` (a configured name) in
    /// the `mcp_tasks_upstream_errors_total` metric.
    pub fn count_upstream_error(&self, upstream: &str) {
        self.shared.metrics().store.upstream_error(upstream);
    }

    /// Counts one webhook delivery attempt for `mcp_tasks_webhook_attempts_total`:
    /// `sink` is the `[[notify]]` entry's name (configured, so bounded), `result` one of
    /// `delivered`, `retry`, `gave_up`. Called by the task board's notifier.
    pub fn count_webhook_attempt(&self, sink: &str, result: &'static str) {
        self.shared.metrics().store.webhook_attempt(sink, result);
    }

    /// The metrics in the Prometheus text format (what `/metrics` serves), for
    /// embedders that expose them elsewhere. The tasks-by-status gauge shows the last
    /// count: call [`Server::refresh_task_counts`] first to bring it up to date.
    pub fn metrics_text(&self) -> String {
        self.shared.metrics_text()
    }

    /// Counts the store's tasks by status for the `mcp_tasks_tasks` gauge, unless they
    /// were counted in the last 5 s (counting reads an index over every task, so
    /// frequent scrapes reuse the count). `/metrics` does this before rendering.
    pub async fn refresh_task_counts(&self) {
        self.shared
            .metrics()
            .store
            .refresh_tasks(self.shared.engine())
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
        self.shared
            .inner
            .readiness
            .write()
            .push((name.into(), probe));
    }

    /// Hands the methods `passthrough` handles (resources, prompts, completions, ...)
    /// to it, and adds its capabilities to ours. Set it before clients connect: a
    /// session already open keeps the capabilities it was told.
    pub fn set_passthrough(&self, passthrough: Arc<dyn crate::Passthrough>) {
        *self.shared.inner.passthrough.write() = Some(passthrough);
    }

    /// Sends a notification to every connected session (a passthrough's
    /// `notifications/resources/updated`, say).
    pub fn notify_all(&self, method: &str, params: Value) {
        let notice = mcp_tasks_protocol::jsonrpc::notification(method, params);
        for session in self.sessions().all() {
            session.send(notice.clone());
        }
    }

    /// Replaces the tools this server offers (a gateway whose upstream changed its
    /// list) and tells connected clients (`notifications/tools/list_changed`). Calls
    /// already running keep the tool they started with.
    pub fn set_tools(&self, tools: ToolRegistry) {
        *self.shared.inner.tools.write() = Arc::new(tools);
        self.notify_all(
            mcp_tasks_protocol::methods::NOTIF_TOOLS_LIST_CHANGED,
            serde_json::json!({}),
        );
    }

    /// The settings.
    pub fn config(&self) -> &ServerConfig {
        self.shared.config()
    }

    /// A token cancelled when [`Server::shutdown`] is called; transports end their
    /// long-lived streams on it.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shared.shutdown_token()
    }

    /// Ends long-lived streams and stops event routing.
    pub fn shutdown(&self) {
        self.shared.inner.shutdown.cancel();
    }

    /// Opens a session owned by `principal` (`None`: the session itself is the
    /// principal).
    pub fn open_session(&self, principal: Option<String>) -> Arc<Session> {
        self.sessions().open(principal)
    }

    /// Opens a session for an authenticated subject: its tasks are bound to the subject,
    /// visible from any of the subject's sessions and to nobody else.
    pub fn open_subject_session(&self, subject: String) -> Arc<Session> {
        self.sessions().open_subject(subject)
    }

    /// Looks a session up by id.
    pub fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions().get(id)
    }

    /// How many sessions this process holds.
    pub fn session_count(&self) -> usize {
        self.sessions().count()
    }

    /// Finds a session for a client request (and marks it used): one opened here, or
    /// one another replica opened and stored in the shared database (it is then served
    /// here too; its streams stay where they are).
    pub async fn find_session(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions().find(self.engine(), id).await
    }

    /// Stores an initialized session so that other replicas can serve it.
    pub async fn share_session(&self, session: &Session) {
        Sessions::share(self.engine(), session).await;
    }

    /// Ends a session: its synchronous calls are cancelled, its tasks go on.
    pub fn close_session(&self, id: &str) -> bool {
        self.sessions().close(id)
    }

    fn sessions(&self) -> &Sessions {
        self.shared.sessions()
    }
}
