//! The two ways to reach a server. Both only move messages; answers and server-started
//! messages go through [`crate::peer::Peer`].

pub(crate) mod http;
pub(crate) mod stdio;

use mcp_tasks_protocol::jsonrpc::RequestId;
use serde_json::Value;

use crate::error::ClientError;

/// A connected transport.
#[derive(Debug)]
pub(crate) enum Transport {
    /// A child process on stdio.
    Stdio(stdio::StdioTransport),
    /// A Streamable HTTP endpoint.
    Http(http::HttpTransport),
}

impl Transport {
    /// Sends a request whose answer the peer waits for under `id`.
    pub(crate) fn send_request(&self, id: RequestId, message: Value) -> Result<(), ClientError> {
        match self {
            Transport::Stdio(t) => t.send(&message),
            Transport::Http(t) => {
                t.send_request(id, message);
                Ok(())
            }
        }
    }

    /// Sends a notification or a response.
    pub(crate) async fn send_message(&self, message: &Value) -> Result<(), ClientError> {
        match self {
            Transport::Stdio(t) => t.send(message),
            Transport::Http(t) => t.send_message(message).await,
        }
    }

    /// Closes the connection politely.
    pub(crate) async fn close(&self) {
        match self {
            Transport::Stdio(t) => t.close().await,
            Transport::Http(t) => t.close().await,
        }
    }

    /// How a stdio server process ended, once it has.
    pub(crate) async fn exit_status(&self, wait: std::time::Duration) -> Option<String> {
        match self {
            Transport::Stdio(t) => t.exit_status(wait).await,
            Transport::Http(_) => None,
        }
    }

    /// The HTTP session id, if there is one.
    pub(crate) fn session(&self) -> Option<String> {
        match self {
            Transport::Stdio(_) => None,
            Transport::Http(t) => t.session(),
        }
    }

    /// Extra detail for a connection error: the stdio server's last stderr lines.
    pub(crate) fn diagnostics(&self) -> Option<String> {
        match self {
            Transport::Stdio(t) => Some(t.stderr_tail()).filter(|s| !s.is_empty()),
            Transport::Http(_) => None,
        }
    }
}
