//! `logging/setLevel`: the least severe log message the client wants on this session.

use mcp_tasks_protocol::{LoggingLevel, RpcError};
use serde_json::{json, Value};

use crate::session::Session;

pub(super) fn set_level(session: &Session, params: &Value) -> Result<Value, RpcError> {
    let level = params.get("level").and_then(Value::as_str).ok_or_else(|| {
        RpcError::invalid_params(
            "logging/setLevel needs params.level: one of debug, info, notice, warning, error, critical, alert, emergency",
        )
    })?;
    let level: LoggingLevel = level.parse().map_err(RpcError::invalid_params)?;
    session.set_log_level(level);
    Ok(json!({}))
}
