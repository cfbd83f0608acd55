//! [`Server::handle`]: one incoming message of the 2025-11-25 wire, for embedders that
//! bring their own transport. The work is the wire's (`wire::v2025_11_25`); the
//! 2026-07-28 wire's entry points (`wire::v2026_07_28::handle`, `listen`) take a
//! `Server` as they are.

use mcp_tasks_protocol::jsonrpc::Incoming;
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;

use super::Server;
use crate::session::Session;

impl Server {
    /// Handles one parsed message. Returns the response to send, if any (requests get
    /// one unless they were cancelled; notifications and responses get none).
    /// `request_stream` receives notifications tied to this request (progress of a
    /// synchronous call) when the transport can carry them.
    pub async fn handle(
        &self,
        session: &Arc<Session>,
        message: Incoming,
        request_stream: Option<mpsc::Sender<Value>>,
    ) -> Option<Value> {
        crate::wire::v2025_11_25::handle(&self.shared, session, message, request_stream).await
    }
}
