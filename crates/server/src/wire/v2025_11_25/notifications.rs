//! Client notifications: `initialized`, `cancelled` (of an in-flight synchronous call).

use mcp_tasks_protocol::methods::{
    parse_params, CancelledParams, NOTIF_CANCELLED, NOTIF_INITIALIZED,
};
use serde_json::Value;
use std::sync::Arc;

use crate::session::Session;
use crate::shared::Shared;

pub(super) fn handle(_server: &Shared, session: &Arc<Session>, method: &str, params: Value) {
    match method {
        NOTIF_INITIALIZED => session.mark_initialized(),
        NOTIF_CANCELLED => match parse_params::<CancelledParams>(method, &params) {
            Ok(p) => {
                let found = session.cancel_request_because(&p.request_id, p.reason.as_deref());
                tracing::debug!(request = %p.request_id, found, reason = p.reason.as_deref().unwrap_or(""), "cancel notification");
            }
            Err(e) => tracing::debug!(error = %e.message, "malformed cancel notification ignored"),
        },
        // Unknown notifications are ignored, as JSON-RPC requires (no response possible).
        other => tracing::debug!(method = other, "notification ignored"),
    }
}
