//! `initialize`: version negotiation and capabilities.

use mcp_tasks_protocol::methods::{parse_params, InitializeParams, INITIALIZE};
use mcp_tasks_protocol::{version, RpcError};
use serde_json::{json, Value};
use std::sync::Arc;

use crate::session::Session;
use crate::shared::Shared;

pub(super) fn handle(
    server: &Shared,
    session: &Arc<Session>,
    params: &Value,
) -> Result<Value, RpcError> {
    if session.protocol_version().is_some() {
        return Err(RpcError::invalid_request(
            "this session is already initialized; open a new session to initialize again",
        ));
    }
    let p: InitializeParams = parse_params(INITIALIZE, params)?;
    let agreed = version::negotiate(&p.protocol_version);
    session.set_negotiated(agreed, p.capabilities);
    tracing::info!(requested = %p.protocol_version, agreed, client = %p.client_info, "session initialized");

    let mut capabilities = json!({ "tools": { "listChanged": true }, "logging": {} });
    crate::passthrough::merge_capabilities(&mut capabilities, &server.passthrough_capabilities());
    if version::has_tasks(agreed) {
        capabilities["tasks"] = json!({
            "list": {},
            "cancel": {},
            "requests": { "tools": { "call": {} } }
        });
    }
    let config = server.config();
    let mut result = json!({
        "protocolVersion": agreed,
        "capabilities": capabilities,
        "serverInfo": { "name": config.name, "version": config.version },
    });
    if let Some(i) = &config.instructions {
        result["instructions"] = json!(i);
    }
    Ok(result)
}
