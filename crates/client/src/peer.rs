//! The transport-neutral half of a connection: requests waiting for their answers, and
//! the queue of messages the server started (requests and notifications) for the
//! client's dispatcher.
//!
//! Transports only move bytes: whatever arrives is handed to [`Peer::route`], which
//! completes a waiting request or queues the message for the dispatcher.

use mcp_tasks_protocol::jsonrpc::{self, Incoming, RequestId, RpcError};
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use tokio::sync::{mpsc, oneshot};

use crate::error::ClientError;

/// A message the server started: the dispatcher answers requests and routes
/// notifications to the tasks they are about.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// A server-to-client request (elicitation, sampling, roots, ping).
    Request {
        id: RequestId,
        method: String,
        params: Value,
    },
    /// A notification (task status, progress).
    Notification { method: String, params: Value },
    /// The answer to one of our requests, handed to its waiter by the dispatcher once
    /// every message that arrived before it was handled: a call's last progress
    /// notification reaches its handler before the call's caller sees the result.
    Answer {
        waiter: Waiter,
        result: Result<Value, ClientError>,
    },
}

impl Inbound {
    /// Hands an answer to its waiter (the dispatcher's part of [`Inbound::Answer`]).
    pub(crate) fn deliver(waiter: Waiter, result: Result<Value, ClientError>) {
        let _ = waiter.send(result);
    }
}

pub(crate) type Waiter = oneshot::Sender<Result<Value, ClientError>>;

/// Requests in flight and the inbound queue.
#[derive(Debug)]
pub(crate) struct Peer {
    pending: Mutex<HashMap<RequestId, Waiter>>,
    next_id: AtomicI64,
    inbound: mpsc::UnboundedSender<Inbound>,
    closed: AtomicBool,
    /// Whether a dispatcher reads the inbound queue: answers then go through it, in
    /// order with the notifications before them ([`Inbound::Answer`]). Before (the
    /// handshake) they go straight to their waiters.
    ordered: AtomicBool,
}

impl Peer {
    /// A peer and the receiving end of its inbound queue.
    pub(crate) fn new() -> (Self, mpsc::UnboundedReceiver<Inbound>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Peer {
                pending: Mutex::new(HashMap::new()),
                next_id: AtomicI64::new(1),
                inbound: tx,
                closed: AtomicBool::new(false),
                ordered: AtomicBool::new(false),
            },
            rx,
        )
    }

    /// Registers a request about to be sent; the receiver gets its answer.
    pub(crate) fn register(
        &self,
    ) -> Result<(RequestId, oneshot::Receiver<Result<Value, ClientError>>), ClientError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(ClientError::Closed);
        }
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(id.clone(), tx);
        Ok((id, rx))
    }

    /// Whether a request still waits for its answer.
    pub(crate) fn is_pending(&self, id: &RequestId) -> bool {
        self.pending.lock().contains_key(id)
    }

    /// Ends a waiting request with an error (the transport could not deliver it or
    /// lost its answer).
    pub(crate) fn fail(&self, id: &RequestId, error: ClientError) {
        if let Some(tx) = self.pending.lock().remove(id) {
            let _ = tx.send(Err(error));
        }
    }

    /// Forgets a waiting request (its caller gave up).
    pub(crate) fn forget(&self, id: &RequestId) {
        self.pending.lock().remove(id);
    }

    /// Marks the connection closed and fails every waiting request.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let waiting: Vec<Waiter> = self.pending.lock().drain().map(|(_, w)| w).collect();
        for w in waiting {
            let _ = w.send(Err(ClientError::Closed));
        }
    }

    /// From now on a dispatcher reads the inbound queue: answers are delivered through
    /// it, after the messages that arrived before them.
    pub(crate) fn start_ordering(&self) {
        self.ordered.store(true, Ordering::Release);
    }

    /// Whether [`Peer::close`] ran.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Handles one message from the server.
    pub(crate) fn route_value(&self, value: Value) {
        match jsonrpc::parse_value(value) {
            Ok(m) => self.route(m),
            Err(rejected) => {
                tracing::debug!(error = %rejected.error.message, "unreadable message from the server ignored");
            }
        }
    }

    /// Handles one message from the server, as text.
    pub(crate) fn route_text(&self, text: &str) {
        match serde_json::from_str::<Value>(text) {
            Ok(v) => self.route_value(v),
            Err(e) => tracing::debug!(error = %e, "non-JSON message from the server ignored"),
        }
    }

    fn route(&self, message: Incoming) {
        match message {
            Incoming::Response { id, result } => self.complete(&id, Ok(result)),
            Incoming::ErrorResponse {
                id: Some(id),
                error,
            } => self.complete(&id, Err(ClientError::Rpc(error))),
            Incoming::ErrorResponse { id: None, error } => {
                tracing::debug!(code = error.code, message = %error.message, "error without id from the server");
            }
            Incoming::Request { id, method, params } => {
                let _ = self.inbound.send(Inbound::Request { id, method, params });
            }
            Incoming::Notification { method, params } => {
                let _ = self.inbound.send(Inbound::Notification { method, params });
            }
        }
    }

    fn complete(&self, id: &RequestId, result: Result<Value, ClientError>) {
        let Some(waiter) = self.pending.lock().remove(id) else {
            tracing::debug!(%id, "answer to a request nobody waits for ignored");
            return;
        };
        if !self.ordered.load(Ordering::Acquire) {
            Inbound::deliver(waiter, result);
            return;
        }
        if let Err(mpsc::error::SendError(Inbound::Answer { waiter, result })) =
            self.inbound.send(Inbound::Answer { waiter, result })
        {
            // No dispatcher any more: answer at once.
            Inbound::deliver(waiter, result);
        }
    }
}

/// The JSON-RPC error a client sends back for a server request it cannot serve.
pub(crate) fn refusal(method: &str) -> RpcError {
    RpcError::method_not_found(method)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn answers_reach_their_waiter_and_requests_are_queued() {
        let (peer, mut rx) = Peer::new();
        let (id, answer) = peer.register().unwrap();
        peer.route_value(json!({"jsonrpc": "2.0", "id": id, "result": {"ok": true}}));
        assert_eq!(answer.await.unwrap().unwrap()["ok"], true);
        peer.route_text(r#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#);
        assert!(
            matches!(rx.recv().await, Some(Inbound::Request { method, .. }) if method == "ping")
        );
    }

    /// A notification that arrived before a response is handled before the response's
    /// waiter sees it: once a dispatcher runs, answers queue behind the notifications.
    #[tokio::test]
    async fn an_answer_waits_for_the_notifications_before_it() {
        let (peer, mut rx) = Peer::new();
        peer.start_ordering();
        let (id, mut answer) = peer.register().unwrap();
        peer.route_value(json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "t", "progress": 3}}));
        peer.route_value(json!({"jsonrpc": "2.0", "id": id, "result": {"ok": true}}));
        assert!(
            answer.try_recv().is_err(),
            "the answer must not overtake the notification before it"
        );
        // The dispatcher's order: the notification, then the answer.
        assert!(matches!(
            rx.recv().await,
            Some(Inbound::Notification { .. })
        ));
        match rx.recv().await {
            Some(Inbound::Answer { waiter, result }) => Inbound::deliver(waiter, result),
            other => panic!("expected the answer, got {other:?}"),
        }
        assert_eq!(answer.await.unwrap().unwrap()["ok"], true);
    }

    #[tokio::test]
    async fn errors_keep_their_code_and_close_fails_everyone() {
        let (peer, _rx) = Peer::new();
        let (id, answer) = peer.register().unwrap();
        peer.route_value(
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "no"}}),
        );
        assert_eq!(answer.await.unwrap().unwrap_err().code(), Some(-32602));
        let (_id, answer) = peer.register().unwrap();
        peer.close();
        assert!(matches!(answer.await.unwrap(), Err(ClientError::Closed)));
        assert!(peer.register().is_err());
    }
}
