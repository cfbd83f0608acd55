//! # mcp-tasks-gateway
//!
//! Durable tasks in front of any MCP server. Each `[[upstream]]` (a stdio command or a
//! Streamable HTTP URL) has its tools offered again by mcp-tasks, with task support:
//! a call made as a task runs the upstream `tools/call` in the background and its
//! result is stored like any other task's. While it runs, what the upstream sends maps
//! onto the task: progress becomes its progress and status message, elicitation,
//! sampling and roots requests become its input requests (answered by our client on
//! either task wire), log lines become ours; cancelling the task cancels the upstream
//! request (`notifications/cancelled`).
//!
//! | module | what it owns |
//! |---|---|
//! | [`config`] | [`UpstreamConfig`]: the `[[upstream]]` entry, checked ([`ConfigError`]) |
//! | [`upstream`] | [`Upstream`]: the connections to one server, restarts with backoff |
//! | `connection` | one connection, used by one call at a time, relaying what the upstream sends to that call |
//! | [`passthrough`] | resources, prompts and completions of the upstreams, offered as ours |
//! | [`tools`] | upstream tools as tools of ours (name prefix, schemas, annotations, task support) |
//!
//! One call holds one connection: a question or a progress report from the upstream
//! then belongs to exactly one task, whatever the transport. For stdio that means up
//! to `max_connections` processes of the upstream server.
#![deny(missing_docs)]

pub mod config;
mod connection;
pub mod passthrough;
pub mod tools;
pub mod upstream;

pub use config::{check_all, ConfigError, UpstreamConfig};
pub use upstream::Upstream;

use mcp_tasks_server::{Server, Tool, ToolRegistry};
use std::sync::Arc;
use std::time::Duration;

/// Every upstream of a server.
#[derive(Debug, Clone)]
pub struct Gateway {
    upstreams: Vec<Arc<Upstream>>,
}

impl Gateway {
    /// The upstreams of `configs`, not yet connected.
    ///
    /// # Errors
    /// The first invalid entry.
    pub fn new(configs: Vec<UpstreamConfig>) -> Result<Self, ConfigError> {
        check_all(&configs)?;
        let upstreams = configs
            .into_iter()
            .map(Upstream::new)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Gateway { upstreams })
    }

    /// The upstreams.
    pub fn upstreams(&self) -> &[Arc<Upstream>] {
        &self.upstreams
    }

    /// Lists every upstream's tools, waiting at most `wait` for each: an upstream that
    /// is slow to start or unreachable contributes no tools now (a warning says why)
    /// and is listed again by [`Gateway::keep_tools_current`].
    ///
    /// # Errors
    /// Two upstreams offering the same tool name ([`ConfigError::Collision`]), or an
    /// upstream's `task_support` naming a tool it does not list
    /// ([`ConfigError::UnknownTool`]).
    pub async fn tools(&self, wait: Duration) -> Result<Vec<Tool>, ConfigError> {
        let listings = futures::future::join_all(
            self.upstreams
                .iter()
                .map(|u| async move { (u, tokio::time::timeout(wait, u.list_tools()).await) }),
        )
        .await;
        let mut tools: Vec<(Tool, String)> = Vec::new();
        for (upstream, listing) in listings {
            let name = &upstream.config().name;
            let infos = match listing {
                Ok(Ok(infos)) => {
                    upstream.set_listing_error(None);
                    infos
                }
                Ok(Err(e)) => {
                    tracing::warn!(upstream = %name, "no tools from upstream for now: {}", e.message);
                    upstream.set_listing_error(Some(e.message));
                    continue;
                }
                Err(_) => {
                    tracing::warn!(upstream = %name, "upstream did not list its tools within {wait:?}; serving without them until it does");
                    upstream.set_listing_error(Some(format!(
                        "upstream '{name}' did not list its tools within {wait:?}"
                    )));
                    continue;
                }
            };
            upstream
                .config()
                .check_task_support(infos.iter().map(|i| i.name.as_str()))?;
            for info in &infos {
                match tools::proxy_tool(upstream, info) {
                    Ok(tool) => {
                        if mcp_tasks_server::task_tools::is_task_tool(tool.name()) {
                            return Err(ConfigError::TaskToolCollision {
                                tool: tool.name().to_string(),
                                upstream: name.clone(),
                            });
                        }
                        if let Some((_, first)) =
                            tools.iter().find(|(t, _)| t.name() == tool.name())
                        {
                            return Err(ConfigError::Collision {
                                tool: tool.name().to_string(),
                                first: first.clone(),
                                second: name.clone(),
                            });
                        }
                        tools.push((tool, name.clone()));
                    }
                    Err(e) => {
                        tracing::warn!(upstream = %name, tool = %info.name, "tool left out: {e}")
                    }
                }
            }
        }
        Ok(tools.into_iter().map(|(t, _)| t).collect())
    }

    /// Attaches the gateway to `server`: upstream resources, prompts and completions
    /// are answered through it, and the upstreams' resource and prompt notifications
    /// reach its clients. Call before serving, after [`Gateway::tools`] reached the
    /// upstreams (their capabilities are read then).
    pub fn attach(&self, server: &Server) {
        server.set_passthrough(Arc::new(passthrough::UpstreamPassthrough::new(
            self.upstreams.clone(),
        )));
        for upstream in &self.upstreams {
            let probe = Arc::clone(upstream);
            server.add_readiness_probe(
                format!("upstream {}", upstream.config().name),
                Arc::new(move || {
                    let upstream = Arc::clone(&probe);
                    Box::pin(async move { upstream.readiness().await })
                }),
            );
            let _ = upstream.counted_by.set(server.clone());
            let target = server.clone();
            *upstream.forward.lock() =
                Some(Arc::new(move |method: &str, params: &serde_json::Value| {
                    target.notify_all(method, params.clone());
                }));
        }
    }

    /// Keeps `server`'s tools current: when an upstream says its list changed, or
    /// every `relist` for upstreams that were not listed yet, lists again and sets
    /// `base` (the server's own tools) plus every upstream's tools. Runs until the
    /// server shuts down.
    pub async fn keep_tools_current(self, server: Server, base: Vec<Tool>, relist: Duration) {
        let stop = server.shutdown_token();
        if self.upstreams.is_empty() {
            return;
        }
        loop {
            let changed = futures::future::select_all(
                self.upstreams.iter().map(|u| Box::pin(u.list_changed())),
            );
            tokio::select! {
                () = stop.cancelled() => return,
                _ = changed => {}
                () = tokio::time::sleep(relist) => {}
            }
            let tools = match self.tools(relist).await {
                Ok(tools) => tools,
                Err(e) => {
                    tracing::error!("upstream tools not updated: {e}");
                    continue;
                }
            };
            let mut registry = ToolRegistry::new();
            for tool in base.iter().cloned().chain(tools) {
                if let Err(e) = registry.register(tool) {
                    tracing::warn!("tool left out: {e}");
                }
            }
            let current = server.tools();
            let same = registry.iter().count() == current.iter().count()
                && registry
                    .iter()
                    .zip(current.iter())
                    .all(|(a, b)| a.definition() == b.definition());
            if !same {
                tracing::info!(tools = registry.iter().count(), "upstream tools changed");
                server.set_tools(registry);
            }
        }
    }
}
