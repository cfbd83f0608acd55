//! The gateway part of `serve`: `[[upstream]]` entries (and `wrap`'s one command)
//! become tools of this server, listed at start and kept current.

use anyhow::{Context, Result};
use mcp_tasks_gateway::{Gateway, UpstreamConfig};
use mcp_tasks_server::{Server, Tool, ToolRegistry};
use std::time::Duration;

/// `wrap`'s `--max-upstream-connections` default.
pub const DEFAULT_MAX_CONNECTIONS: usize = mcp_tasks_gateway::config::DEFAULT_MAX_CONNECTIONS;

/// `wrap`'s upstream: `command`, a stdio MCP server, named `name` in messages.
///
/// # Errors
/// None in this build (the build without the `gateway` feature refuses here).
pub fn stdio_upstream(
    name: String,
    command: Vec<String>,
    prefix: Option<String>,
    resumable: bool,
    max_connections: usize,
) -> Result<UpstreamConfig> {
    let mut upstream = UpstreamConfig::stdio(name, command);
    upstream.prefix = prefix;
    upstream.resumable = resumable;
    upstream.max_connections = max_connections;
    Ok(upstream)
}

/// How long the start waits for an upstream to list its tools before serving
/// without them (they are added when the upstream answers).
pub const STARTUP_WAIT: Duration = Duration::from_secs(20);

/// How often upstreams that have not listed their tools yet are asked again (and
/// every upstream's list refreshed).
pub const RELIST_EVERY: Duration = Duration::from_secs(30);

/// The upstreams and the server's own tools, kept to rebuild the tool set when an
/// upstream's list changes.
pub struct GatewayTools {
    gateway: Gateway,
    base: Vec<Tool>,
}

/// Adds every upstream's tools to `tools`. `None` when there are no upstreams.
///
/// # Errors
/// An invalid entry, or two upstreams (or an upstream and a local tool) offering the
/// same tool name.
pub async fn add_upstream_tools(
    upstreams: Vec<UpstreamConfig>,
    tools: &mut ToolRegistry,
    strict: bool,
) -> Result<Option<GatewayTools>> {
    if upstreams.is_empty() {
        return Ok(None);
    }
    let gateway = Gateway::new(upstreams).context("checking the upstreams")?;
    let base: Vec<Tool> = tools.iter().cloned().collect();
    for tool in gateway
        .tools(STARTUP_WAIT)
        .await
        .context("listing the upstreams' tools")?
    {
        let name = tool.name().to_string();
        tools.register(tool).with_context(|| {
            format!("tool '{name}' of an upstream: give the upstream a `prefix`")
        })?;
    }
    for u in gateway.upstreams() {
        match u.listing_error() {
            // `wrap` serves one upstream: without it there is nothing to serve.
            Some(e) if strict => anyhow::bail!("{e}"),
            Some(_) => {}
            None => tracing::info!(upstream = %u.config().name, "upstream ready"),
        }
    }
    Ok(Some(GatewayTools { gateway, base }))
}

impl GatewayTools {
    /// Attaches the upstreams' resources and prompts to `server`, and keeps its
    /// tools current in the background until it shuts down.
    pub fn keep_current(self, server: &Server) {
        self.gateway.attach(server);
        let server = server.clone();
        tokio::spawn(
            self.gateway
                .keep_tools_current(server, self.base, RELIST_EVERY),
        );
    }
}
