//! [`Server::handle`]: one parsed message in, the response out. Requests and
//! notifications go to the handlers of their wire; responses answer the server's own
//! requests to the client (input for tasks and synchronous calls).

use mcp_tasks_engine::Outcome;
use mcp_tasks_protocol::jsonrpc::{self, Incoming, RequestId};
use mcp_tasks_protocol::{RpcError, TaskId};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;
use tracing::Instrument;

use crate::questions::outgoing::Exchange;
use crate::server::Server;
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
        match message {
            Incoming::Request { id, method, params } => {
                let _busy = session.busy();
                let started = std::time::Instant::now();
                let version = session.protocol_version();
                let version = version.as_deref().or_else(|| {
                    // initialize: the version the client asks for.
                    params.get("protocolVersion").and_then(Value::as_str)
                });
                let span =
                    crate::ops::telemetry::request_span(&crate::ops::telemetry::RequestInfo {
                        method: &method,
                        params: &params,
                        id: &id,
                        protocol_version: version,
                        session: Some(session.id()),
                        known_tool: self.knows_tool(&params),
                    });
                let outcome = crate::wire::v2025_11_25::request(
                    self,
                    session,
                    &id,
                    &method,
                    params,
                    request_stream,
                )
                .instrument(span.clone())
                .await;
                if let Some(result) = &outcome {
                    crate::ops::telemetry::record_response(&span, result);
                    self.metrics()
                        .observe_request(&method, result.is_ok(), started.elapsed());
                }
                outcome.map(|r| reply(&id, r))
            }
            Incoming::Notification { method, params } => {
                crate::wire::v2025_11_25::notification(self, session, &method, params);
                None
            }
            Incoming::Response { id, result } => {
                let outcome = Outcome::Result { value: result };
                if let Some(outcome) = self.inner.outgoing.complete(session, &id, outcome) {
                    crate::questions::in_task::answer(self, session, &id, outcome).await;
                }
                None
            }
            Incoming::ErrorResponse {
                id: Some(id),
                error,
            } => {
                let outcome = Outcome::Error {
                    code: error.code,
                    message: error.message,
                    data: error.data,
                };
                if let Some(outcome) = self.inner.outgoing.complete(session, &id, outcome) {
                    crate::questions::in_task::answer(self, session, &id, outcome).await;
                }
                None
            }
            Incoming::ErrorResponse { id: None, error } => {
                tracing::warn!(code = error.code, message = %error.message, "client reported an error");
                None
            }
        }
    }

    /// Whether the `name` in `params` is a tool registered here (span names use only
    /// those).
    pub(crate) fn knows_tool(&self, params: &Value) -> bool {
        params
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| self.tools().get(n).is_some())
    }

    /// Sends a request of the server's own to the client (on the task's stream when
    /// `task` is given) and waits for the response.
    ///
    /// # Errors
    /// The client's error, or `-32001` when it does not answer within the configured
    /// time, or `-32603` when nothing could be sent.
    pub(crate) async fn call_client(
        &self,
        session: &Session,
        task: Option<&TaskId>,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        let timeout = self.inner.config.client_request_timeout;
        let sent = self
            .inner
            .outgoing
            .exchange(session, method, params, timeout, |message| match task {
                Some(t) => session.send_for_task(t, message),
                None => session.send(message),
            })
            .await;
        sent.map_err(|e| match e {
            Exchange::NotSent => RpcError::new(
                mcp_tasks_protocol::error_code::INTERNAL_ERROR,
                format!("could not send {method} to the client: no open stream"),
            ),
            Exchange::TimedOut => RpcError::new(
                mcp_tasks_protocol::error_code::REQUEST_TIMEOUT,
                format!("the client did not answer {method} within {timeout:?}"),
            ),
            Exchange::Refused(e) => e,
        })
    }
}

fn reply(id: &RequestId, result: Result<Value, RpcError>) -> Value {
    match result {
        Ok(v) => jsonrpc::response(id, v),
        Err(e) => jsonrpc::error_response(Some(id), &e),
    }
}
