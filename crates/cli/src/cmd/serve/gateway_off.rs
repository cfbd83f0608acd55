//! The gateway part of `serve` in a build without the `gateway` feature: the config
//! file's `[[upstream]]` entries were refused when it was read, and `wrap` refuses
//! here, naming the feature.

use anyhow::Result;
use mcp_tasks_server::{Server, ToolRegistry};

use crate::config::UpstreamEntry;

/// `wrap`'s `--max-upstream-connections` default (the gateway's, for the same help
/// text in every build).
pub const DEFAULT_MAX_CONNECTIONS: usize = 4;

/// Refuses: `wrap` needs the gateway.
///
/// # Errors
/// Always, naming the feature.
pub fn stdio_upstream(
    _name: String,
    _command: Vec<String>,
    _prefix: Option<String>,
    _resumable: bool,
    _max_connections: usize,
) -> Result<UpstreamEntry> {
    Err(crate::features::missing("`mcp-tasks wrap`", "gateway"))
}

/// No upstreams here: never made.
#[derive(Debug)]
pub enum GatewayTools {}

/// No upstream tools: there are none (`[[upstream]]` was refused at load).
///
/// # Errors
/// Never.
pub async fn add_upstream_tools(
    upstreams: Vec<UpstreamEntry>,
    _tools: &mut ToolRegistry,
    _strict: bool,
) -> Result<Option<GatewayTools>> {
    if !upstreams.is_empty() {
        return Err(crate::features::missing("[[upstream]]", "gateway"));
    }
    Ok(None)
}

impl GatewayTools {
    /// Never called: there is no value of this type.
    pub fn keep_current(self, _server: &Server) {
        match self {}
    }
}
