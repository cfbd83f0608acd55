//! Starting an [`Server`]: registers what the engine needs to know of this server
//! (external pollers, the MCP reader, how to re-run resumable tools, where task logs
//! go), starts routing engine events to sessions, and the idle-session sweep.

use mcp_tasks_engine::Engine;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

use crate::questions::outgoing::Outgoing;
use crate::server::{Server, ServerConfig, ServerInner};
use crate::tools::registry::ToolRegistry;

impl Server {
    /// Builds a server and starts routing engine events to sessions. Must be called
    /// inside a tokio runtime.
    pub(crate) fn new(engine: Engine, tools: ToolRegistry, config: ServerConfig) -> Self {
        // Task spans are registry roots traced as children of their request.
        crate::ops::telemetry::link_task_spans();
        for tool in tools.iter() {
            if let Some(spec) = tool.external_spec() {
                engine.register_external(tool.name(), spec.poller.clone());
            }
        }
        engine.set_reader(Arc::new(crate::mcp_reader::McpReader));
        let resumer_tools: Arc<std::sync::OnceLock<std::sync::Weak<ServerInner>>> = Arc::default();
        let resolve = Arc::clone(&resumer_tools);
        engine.set_resumer(Arc::new(move |record| {
            let name = record.request.name()?;
            let inner = resolve.get()?.upgrade()?;
            let tool = inner
                .tools
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .get(&name)?
                .clone();
            if !tool.is_resumable() {
                return None;
            }
            let args = match record.request.field("arguments") {
                Some(Value::Object(args)) => args,
                _ => Default::default(),
            };
            Some(Box::new(move |ctx| {
                Box::pin(async move { crate::tools::call::to_outcome(tool.call(args, ctx).await) })
                    as mcp_tasks_engine::Work
            }))
        }));
        let server = Server {
            inner: Arc::new(ServerInner {
                engine,
                tools: std::sync::RwLock::new(Arc::new(tools)),
                passthrough: std::sync::RwLock::new(None),
                readiness: std::sync::RwLock::new(Vec::new()),
                metrics: Arc::default(),
                config,
                sessions: Mutex::new(HashMap::new()),
                outgoing: Outgoing::default(),
                shutdown: CancellationToken::new(),
            }),
        };
        tokio::spawn(crate::notify::routing::route_events(
            Arc::downgrade(&server.inner),
            server.inner.engine.subscribe(),
            server.inner.shutdown.clone(),
        ));
        let _ = resumer_tools.set(Arc::downgrade(&server.inner));
        server
            .inner
            .engine
            .set_store_observer(Arc::clone(&server.inner.metrics) as _);
        let observed = Arc::downgrade(&server.inner);
        server
            .inner
            .engine
            .add_transition_observer(Arc::new(move |record| {
                if let Some(inner) = observed.upgrade() {
                    let name = record.request.name();
                    let known = name.filter(|n| {
                        inner
                            .tools
                            .read()
                            .unwrap_or_else(|p| p.into_inner())
                            .get(n)
                            .is_some()
                    });
                    let tool = known.map_or_else(|| "other".to_string(), String::from);
                    inner.metrics.observe_task(record, tool);
                }
            }));
        let weak = Arc::downgrade(&server.inner);
        server.inner.engine.set_log_router(Arc::new(move |log| {
            if let Some(inner) = weak.upgrade() {
                crate::notify::routing::deliver_log(&Server { inner }, log);
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
        // Tokio's clock, as sessions record their use: paused time drives this sweep.
        let now = tokio::time::Instant::now();
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
