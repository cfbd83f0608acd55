//! Starting a [`Server`]: starts the engine with what it needs to know of this server
//! (the MCP results policy, how to re-run resumable tools, where task logs go, the metrics),
//! registers external pollers, starts routing engine events to sessions, and the
//! idle-session sweep.

use mcp_tasks_engine::{
    Engine, EngineConfig, EngineError, EngineHooks, LogRouter, Resumer, Resumption,
    TransitionObserver,
};
use mcp_tasks_store::TaskStore;
use serde_json::Value;
use std::sync::{Arc, OnceLock, Weak};
use tokio_util::sync::CancellationToken;

use super::{Server, ServerConfig};
use crate::shared::{Shared, SharedInner};
use crate::tools::registry::ToolRegistry;

impl Server {
    /// Starts a server: the engine on `store` with everything it is to know of this
    /// server (the MCP results policy, how to re-run resumable tools, where task logs go, the
    /// metrics, then `observers`: other parties told of every task change, such as the
    /// board's webhooks), the tools' external pollers, the routing of engine events to
    /// sessions and the idle-session sweep. The engine's maintenance stops with
    /// [`Server::shutdown`]. Must be called inside a tokio runtime.
    ///
    /// # Errors
    /// When the engine cannot start (its recovery step reads the store), and
    /// [`EngineError::InvalidInput`] for an approval rule whose deadline lets a call
    /// wait longer than the engine's `max_ttl` (see [`crate::approvals::Approvals::check_max_ttl`]).
    pub async fn start(
        store: Arc<dyn TaskStore>,
        engine_config: EngineConfig,
        tools: ToolRegistry,
        config: ServerConfig,
        observers: Vec<TransitionObserver>,
    ) -> Result<Self, EngineError> {
        // A held call must outlive its approval's deadline: refused before anything runs.
        config
            .approvals
            .check_max_ttl(engine_config.max_ttl)
            .map_err(EngineError::InvalidInput)?;
        // Task spans are registry roots traced as children of their request.
        crate::ops::telemetry::link_task_spans();
        // The hooks reach the server, which exists only once the engine does.
        let me: Arc<OnceLock<Weak<SharedInner>>> = Arc::default();
        let metrics: Arc<crate::ops::metrics::Metrics> = Arc::default();
        // The resumer may be asked while the engine starts (it takes over the tasks of
        // a dead process of this host at once), before the server exists: it then
        // finds the tools in this registry.
        let tools = Arc::new(tools);
        let mut hooks = EngineHooks::default()
            .reader(Arc::new(crate::mcp_results::McpResults))
            .resumer(resumer(
                Arc::clone(&me),
                Arc::clone(&tools),
                config.approvals.clone(),
            ))
            .log_router(log_router(Arc::clone(&me)));
        // Without the `metrics` feature nothing is counted, so nothing observes.
        #[cfg(feature = "metrics")]
        {
            hooks = hooks
                .store_observer(Arc::clone(&metrics) as _)
                .observe_transitions(metrics_observer(Arc::clone(&me)));
        }
        hooks = hooks.observe_transitions(durations_observer(Arc::clone(&me)));
        for observer in observers {
            hooks = hooks.observe_transitions(observer);
        }
        let engine = Engine::start(store, engine_config, hooks).await?;
        for tool in tools.iter() {
            if let Some(spec) = tool.external_spec() {
                engine.register_external(tool.name(), spec.poller.clone());
            }
        }
        let shared = Shared::new(engine, tools, config, metrics);
        let _ = me.set(Arc::downgrade(&shared.inner));
        tokio::spawn(crate::notify::routing::route_events(
            Arc::downgrade(shared.questions()),
            shared.engine().subscribe(),
            shared.shutdown_token(),
        ));
        let engine = shared.engine().clone();
        let stop = shared.shutdown_token();
        tokio::spawn(async move {
            stop.cancelled().await;
            engine.shutdown().await;
        });
        let idle_timeout = shared
            .config()
            .session_idle_timeout
            .filter(|t| !t.is_zero());
        if let Some(timeout) = idle_timeout {
            tokio::spawn(forget_idle_sessions(
                Arc::downgrade(&shared.inner),
                timeout,
                shared.shutdown_token(),
            ));
        }
        Ok(Server { shared })
    }
}

/// Re-runs a task taken over from a stopped process when its tool is resumable.
/// Before the server exists (while the engine starts) the tools are looked up in
/// `initial`, the registry the server starts with; then in the server's current one.
///
/// A call behind an approval rule runs behind its gate again (the votes given replay
/// from the record, open rounds wait on): its tool need not be resumable while the
/// approval is pending, and one that is not is not run twice (see
/// `approvals::gate`).
fn resumer(
    me: Arc<OnceLock<Weak<SharedInner>>>,
    initial: Arc<ToolRegistry>,
    approvals: crate::approvals::Approvals,
) -> Resumer {
    Arc::new(move |record| {
        let name = record.request.name()?;
        let tool = match me.get() {
            Some(weak) => weak.upgrade()?.tools.read().get(&name)?.clone(),
            None => initial.get(&name)?.clone(),
        };
        let args = match record.request.field("arguments") {
            Some(Value::Object(args)) => args,
            _ => Default::default(),
        };
        // Who ran the call again still may not approve it after a restart, and a call
        // an approval policy held waits for the same policy's approval.
        let request = record
            .request
            .field("_meta")
            .map_or(Value::Null, |meta| serde_json::json!({ "_meta": meta }));
        let tool = approvals.resumed(tool, &args, &request);
        if !tool.is_resumable() && !tool.needs_task() {
            return None;
        }
        let retry = tool.retry();
        Some(
            Resumption::new(move |ctx| crate::calls::call::work_of(&tool, args, ctx))
                .with_retry(retry),
        )
    })
}

/// Sends task logs to the sessions that should see them.
fn log_router(me: Arc<OnceLock<Weak<SharedInner>>>) -> LogRouter {
    Arc::new(move |log| {
        if let Some(inner) = me.get().and_then(Weak::upgrade) {
            crate::notify::routing::deliver_log(&inner.sessions, log);
        }
    })
}

/// Tells the task window how long each completed task ran (see
/// [`crate::shared::durations`]), so that a tool that became quick waits it again.
fn durations_observer(me: Arc<OnceLock<Weak<SharedInner>>>) -> TransitionObserver {
    Arc::new(move |record| {
        if record.status != mcp_tasks_protocol::TaskStatus::Completed {
            return;
        }
        let (Some(inner), Some(name)) = (me.get().and_then(Weak::upgrade), record.request.name())
        else {
            return;
        };
        let ran = (record.last_updated_at - record.created_at)
            .to_std()
            .unwrap_or_default();
        inner
            .durations
            .observe_finished(&name, ran, inner.config.task_after);
    })
}

/// Counts every task change in the metrics, by tool (`other` for unknown names).
#[cfg(feature = "metrics")]
fn metrics_observer(me: Arc<OnceLock<Weak<SharedInner>>>) -> TransitionObserver {
    Arc::new(move |record| {
        if let Some(inner) = me.get().and_then(Weak::upgrade) {
            let name = record.request.name();
            let known = name.filter(|n| inner.tools.read().get(n).is_some());
            let tool = known.map_or_else(|| "other".to_string(), String::from);
            inner.metrics.observe_task(record, tool);
        }
    })
}

/// Forgets, every so often, the sessions [`Session::is_idle`] for `timeout`, then sweeps
/// the shared store: the sessions still held here are marked in use, and those no
/// replica used within `timeout` are deleted (a shared session alive on another
/// replica is kept by that replica's sweep).
async fn forget_idle_sessions(
    server: std::sync::Weak<SharedInner>,
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
        let (forgotten, alive) = server.sessions.forget_idle(now, timeout);
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
