//! [`Shared`]: the state a server's parts share (the engine, the tools, the settings,
//! the session table, the questions in flight, the metrics), like axum's `State`. The
//! call pipeline (`calls`), both wires and the transports take it; the [`crate::Server`]
//! facade holds one and is the only public way to reach it.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`Shared`] and what every part reads of it |
//! | `durations` | how long each tool's calls run, as the task window cares |

pub(crate) mod durations;

use mcp_tasks_engine::Engine;
use parking_lot::RwLock;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::ops::metrics::Metrics;
use crate::passthrough::Passthrough;
use crate::questions::Questions;
use crate::sessions::Sessions;
use crate::tools::registry::{Tool, ToolRegistry};
use durations::ToolDurations;

/// A readiness check: why a part of the server is not ready, or `None`.
pub type ReadinessCheck = Arc<dyn Fn() -> Option<String> + Send + Sync>;

/// A readiness probe that has to ask something (an upstream server, over the network
/// or a pipe): resolves to why a part of the server is not ready, or `None`. `/readyz`
/// runs every probe at once on each request and bounds the wait (`PROBE_TIMEOUT` in
/// the HTTP transport's health checks), so a probe may well be slow.
pub type ReadinessProbe =
    Arc<dyn Fn() -> futures::future::BoxFuture<'static, Option<String>> + Send + Sync>;

/// The state a [`crate::Server`] shares with its transports and handlers. Cheap to
/// clone; clones share everything. Transports take it (`impl AsRef<Shared>`, which a
/// `Server` is), so that they need not know the facade; it has no public methods.
#[derive(Clone)]
pub struct Shared {
    pub(crate) inner: Arc<SharedInner>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("config", &self.inner.config)
            .finish()
    }
}

impl AsRef<Shared> for Shared {
    fn as_ref(&self) -> &Shared {
        self
    }
}

/// What [`Shared`] holds.
pub(crate) struct SharedInner {
    pub(crate) engine: Engine,
    /// Swapped whole when the set changes (a gateway's upstream listed new tools);
    /// readers keep the set they started with.
    pub(crate) tools: RwLock<Arc<ToolRegistry>>,
    /// Prometheus metrics (see [`crate::ops::metrics`]).
    pub(crate) metrics: Arc<Metrics>,
    /// Extra readiness checks for `/readyz` (name, check): `Some(reason)` when not ready.
    pub(crate) readiness: RwLock<Vec<(String, ReadinessProbe)>>,
    /// Who answers the methods we do not (see [`crate::Passthrough`]).
    pub(crate) passthrough: RwLock<Option<Arc<dyn Passthrough>>>,
    pub(crate) config: ServerConfig,
    /// The sessions this process holds, and the tasks plain calls wait on.
    pub(crate) sessions: Arc<Sessions>,
    /// Asking clients and routing their answers (it holds the server's own requests
    /// waiting for answers).
    pub(crate) questions: Arc<Questions>,
    pub(crate) shutdown: CancellationToken,
    /// Whether each tool's calls usually outlast the task window (see
    /// [`durations`]).
    pub(crate) durations: ToolDurations,
}

impl Shared {
    /// Shared state over a started `engine` with `tools` and `config`, and `metrics`
    /// (which the engine's hooks already count into).
    pub(crate) fn new(
        engine: Engine,
        tools: Arc<ToolRegistry>,
        config: ServerConfig,
        metrics: Arc<Metrics>,
    ) -> Self {
        let sessions = Arc::new(Sessions::new(config.max_sessions));
        let shutdown = CancellationToken::new();
        let questions = Arc::new(Questions {
            engine: engine.clone(),
            sessions: Arc::clone(&sessions),
            outgoing: Default::default(),
            client_hosted_tasks: config.client_hosted_tasks,
            client_request_timeout: config.client_request_timeout,
            shutdown: shutdown.clone(),
        });
        Shared {
            inner: Arc::new(SharedInner {
                durations: Default::default(),
                engine,
                tools: RwLock::new(tools),
                passthrough: RwLock::new(None),
                readiness: RwLock::new(Vec::new()),
                metrics,
                config,
                sessions,
                questions,
                shutdown,
            }),
        }
    }

    /// The engine.
    pub(crate) fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// The settings.
    pub(crate) fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// The tools offered now.
    pub(crate) fn tools(&self) -> Arc<ToolRegistry> {
        Arc::clone(&self.inner.tools.read())
    }

    /// The session table.
    pub(crate) fn sessions(&self) -> &Arc<Sessions> {
        &self.inner.sessions
    }

    /// Asking clients and routing their answers.
    pub(crate) fn questions(&self) -> &Arc<Questions> {
        &self.inner.questions
    }

    /// The metrics, updated as the server works.
    pub(crate) fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// A token cancelled when the server shuts down; long-lived streams end on it.
    pub(crate) fn shutdown_token(&self) -> CancellationToken {
        self.inner.shutdown.clone()
    }

    /// The window a call of `tool` waits now before its task is created (the
    /// extension wire's server-side decision; a plain call under the sync budget):
    /// [`ServerConfig::task_after`] (at most `cap`), or zero for a tool whose calls are
    /// known to outlast it (declared with [`crate::Tool::expected_duration`], or
    /// learned from its recent calls; a task of it that completes within the window
    /// undoes what was learned).
    pub(crate) fn task_window(&self, tool: &Tool, cap: std::time::Duration) -> std::time::Duration {
        let window = self.inner.config.task_after.min(cap);
        self.inner.durations.window_for(tool, window)
    }

    /// Records what a call that waited the window did (see [`Shared::task_window`]).
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

    /// The groups `principal` is in for the engine: those an identity provider named
    /// (`provider`, from an access token's groups claim) and those of `[groups]` that
    /// list the principal, once each. The board names a signed-in person the same way.
    pub(crate) fn caller_groups(&self, principal: &str, provider: &[String]) -> Vec<String> {
        let mut groups = provider.to_vec();
        for group in self.inner.config.approvals.groups_of(principal) {
            if !groups.contains(&group) {
                groups.push(group);
            }
        }
        groups
    }

    /// Whether the `name` in `params` is a tool registered here (span names use only
    /// those).
    pub(crate) fn knows_tool(&self, params: &Value) -> bool {
        params
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| self.tools().get(n).is_some())
    }

    /// The passthrough for `method`, if one handles it.
    pub(crate) fn passthrough_for(&self, method: &str) -> Option<Arc<dyn Passthrough>> {
        self.inner
            .passthrough
            .read()
            .clone()
            .filter(|p| p.handles(method))
    }

    /// Capabilities of the passthrough, to merge into ours (`null` without one).
    pub(crate) fn passthrough_capabilities(&self) -> Value {
        self.inner
            .passthrough
            .read()
            .as_ref()
            .map(|p| p.capabilities())
            .unwrap_or(Value::Null)
    }

    /// The metrics in the Prometheus text format (what `/metrics` serves).
    pub(crate) fn metrics_text(&self) -> String {
        let activity = *self.inner.engine.activity().borrow();
        self.inner
            .metrics
            .render(self.inner.sessions.count(), activity)
    }

    /// The failing readiness checks and probes, each given `within` to answer:
    /// (name, reason). `/readyz` asks; a build without HTTP has no other reader.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) async fn readiness_problems(
        &self,
        within: std::time::Duration,
    ) -> Vec<(String, String)> {
        let probes: Vec<(String, ReadinessProbe)> = self.inner.readiness.read().clone();
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
}
