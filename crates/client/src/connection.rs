//! [`Connection`]: one live link to a server, the [`Peer`] that matches answers to
//! requests and the [`Transport`] that moves the messages, with the one way to send
//! a request and wait for its answer (with a timeout, or until the caller cancels).
//!
//! The handshake uses it before a [`crate::Client`] exists, and the client, the
//! dispatcher and the task handles use it afterwards; it knows none of them.

use mcp_tasks_protocol::jsonrpc::{self, RequestId};
use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::RpcError;
use serde_json::{json, Value};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

use crate::error::ClientError;
use crate::peer::Peer;
use crate::transport::Transport;

/// How long a request may wait for its answer by default (`tasks/result` excepted:
/// it waits for the task by design).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// A peer and its transport: what a request needs to reach the server and come back.
#[derive(Debug)]
pub(crate) struct Connection {
    peer: Arc<Peer>,
    transport: Transport,
}

/// The answer to a request that was sent, once it comes.
type Answer = oneshot::Receiver<Result<Value, ClientError>>;

impl Connection {
    /// Joins a peer and the transport that feeds it.
    pub(crate) fn new(peer: Arc<Peer>, transport: Transport) -> Self {
        Connection { peer, transport }
    }

    /// A dispatcher now reads the peer's inbound queue: answers go through it, in
    /// order with the notifications that arrived before them.
    pub(crate) fn start_ordering(&self) {
        self.peer.start_ordering();
    }

    /// The transport, for what only one kind of transport does (HTTP sessions).
    pub(crate) fn transport(&self) -> &Transport {
        &self.transport
    }

    /// Registers a request and sends it; the request is forgotten again when it
    /// cannot be sent. Both ways of waiting for an answer start here.
    fn send(&self, method: &str, params: Value) -> Result<(RequestId, Answer), ClientError> {
        let (id, answer) = self.peer.register()?;
        let message = jsonrpc::request(&id, method, params);
        if let Err(e) = self.transport.send_request(id.clone(), message) {
            self.peer.forget(&id);
            return Err(e);
        }
        Ok((id, answer))
    }

    /// Sends a request and waits for its answer, at most `timeout` (`None`: as long as
    /// it takes).
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, ClientError> {
        let (id, answer) = self.send(method, params)?;
        let answer = match timeout {
            Some(d) => match tokio::time::timeout(d, answer).await {
                Ok(a) => a,
                Err(_) => {
                    self.peer.forget(&id);
                    return Err(ClientError::Timeout(d));
                }
            },
            None => answer.await,
        };
        answer.unwrap_or(Err(ClientError::Closed))
    }

    /// Sends a request and waits for its answer or for `cancel` to complete, whichever
    /// comes first. On cancel the server is told (`notifications/cancelled` naming the
    /// request, with `reason`) and [`ClientError::Cancelled`] is returned.
    pub(crate) async fn request_cancellable(
        &self,
        method: &str,
        params: Value,
        cancel: impl Future<Output = ()>,
        reason: &str,
    ) -> Result<Value, ClientError> {
        let (id, answer) = self.send(method, params)?;
        tokio::select! {
            answer = answer => answer.unwrap_or(Err(ClientError::Closed)),
            () = cancel => {
                self.peer.forget(&id);
                let notice = jsonrpc::notification(
                    m::NOTIF_CANCELLED,
                    json!({ "requestId": id, "reason": reason }),
                );
                if let Err(e) = self.transport.send_message(&notice).await {
                    tracing::debug!(error = %e, "could not tell the server of a cancelled request");
                }
                Err(ClientError::Cancelled)
            }
        }
    }

    /// Sends a notification or a response.
    pub(crate) async fn send_message(&self, message: &Value) -> Result<(), ClientError> {
        self.transport.send_message(message).await
    }

    /// Answers a server request; returns the response sent (to send again if the
    /// server repeats the request).
    pub(crate) async fn respond(&self, id: &RequestId, result: Result<Value, RpcError>) -> Value {
        let message = match result {
            Ok(v) => jsonrpc::response(id, v),
            Err(e) => jsonrpc::error_response(Some(id), &e),
        };
        if let Err(e) = self.transport.send_message(&message).await {
            tracing::debug!(%id, error = %e, "could not send the answer to a server request");
        }
        message
    }

    /// Whether the connection is gone (the server exited or closed the stream).
    pub(crate) fn is_closed(&self) -> bool {
        self.peer.is_closed()
    }

    /// Fails every request still waiting and stops taking new ones; the transport is
    /// left as it is.
    pub(crate) fn close_peer(&self) {
        self.peer.close();
    }

    /// Closes the transport politely (HTTP `DELETE`, or the child's stdin), then the
    /// peer.
    pub(crate) async fn close(&self) {
        self.transport.close().await;
        self.peer.close();
    }
}
