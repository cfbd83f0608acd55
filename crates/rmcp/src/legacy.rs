//! Sessions that negotiated a protocol version before 2026-07-28 (most hosts today
//! speak 2025-11-25): their requests run through our own 2025-11-25 wire
//! ([`Server::handle`]) in an mcp-tasks [`Session`] that mirrors the rmcp session, so
//! a tool that asks reaches the client the way that wire asks: `elicitation/create`
//! (or `sampling/createMessage`, `roots/list`) as a request of the server's own, sent
//! here through rmcp's [`Peer`](rmcp::Peer) from within the call's handler, so rmcp's
//! Streamable HTTP transport carries it on the call's own SSE stream. The client's
//! answer wakes the tool. rmcp would refuse the other way, an `InputRequiredResult`, on
//! such a session (`src/handler/server.rs` 308-313 of rmcp 3.11.0).
//!
//! Plain calls of `optional` tools run under the server's sync budget as on our own
//! server: a task from the start (durable, resumable), answered with the result when
//! it ends in time, else with a handle and the task tools.

use futures::stream::{FuturesUnordered, StreamExt};
use mcp_tasks_protocol::jsonrpc::{Incoming, RequestId, RpcError};
use mcp_tasks_protocol::{error_code, version};
use mcp_tasks_server::{Server, Session};
use parking_lot::Mutex;
use rmcp::model::{ClientResult, ServerNotification, ServerRequest};
use rmcp::service::{RequestContext, RoleServer, ServiceError};
use rmcp::ErrorData;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Whether the request's negotiated (or declared) protocol version is before
/// 2026-07-28: the session model, where a server asks its client with requests of its
/// own. ISO dates compare lexically as they do in time (as rmcp compares them).
pub(crate) fn is_legacy(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() < version::V2026_07_28)
}

/// The mcp-tasks session of one rmcp session, opened at its first legacy request and
/// closed when the handler (one per rmcp session) is dropped.
#[derive(Default)]
pub(crate) struct Slot {
    open: Mutex<Option<Opened>>,
}

/// An open session, and the principal it was opened for.
struct Opened {
    server: Server,
    principal: Option<String>,
    session: Arc<Session>,
}

impl Drop for Opened {
    fn drop(&mut self) {
        self.server.close_session(self.session.id());
    }
}

impl Slot {
    /// The session for a request of `principal` (`None`: anonymous, the session is
    /// its own principal, as on our own server), with what rmcp negotiated: the
    /// protocol version and the client's capabilities (elicitation, sampling, roots;
    /// rmcp's model has no `tasks` capability, so the client is taken as one that
    /// declared no tasks). A request for another principal opens a new session.
    fn session(
        &self,
        server: &Server,
        principal: Option<String>,
        context: &RequestContext<RoleServer>,
    ) -> Arc<Session> {
        let mut open = self.open.lock();
        if let Some(o) = open.as_ref().filter(|o| o.principal == principal) {
            return Arc::clone(&o.session);
        }
        let session = match &principal {
            Some(subject) => server.open_subject_session(subject.clone()),
            None => server.open_session(None),
        };
        let negotiated = context
            .protocol_version()
            .map_or_else(|| version::V2025_11_25.to_string(), |v| v.to_string());
        let capabilities = context
            .client_capabilities()
            .and_then(|c| serde_json::to_value(c).ok())
            .unwrap_or_else(|| json!({}));
        session.set_negotiated(&negotiated, capabilities);
        session.mark_initialized();
        *open = Some(Opened {
            server: server.clone(),
            principal,
            session: Arc::clone(&session),
        });
        session
    }

    /// Cancels in-flight request `id` of this session with the client's `reason`
    /// (`notifications/cancelled`: a host's timeout leaves a plain call's task running,
    /// a person's stop cancels it).
    pub(crate) fn cancel(&self, id: &RequestId, reason: Option<&str>) {
        if let Some(o) = self.open.lock().as_ref() {
            o.session.cancel_request_because(id, reason);
        }
    }
}

/// Runs one request of a legacy session through our 2025-11-25 wire. While it runs,
/// the requests the wire sends to the client on the call's stream go out through
/// rmcp's peer (polled in this task, so rmcp routes them to this request's SSE
/// stream) and their answers come back into the wire; its notifications (progress, log
/// messages) go out as rmcp notifications. Returns the JSON-RPC response.
pub(crate) async fn request(
    server: &Server,
    slot: &Slot,
    principal: Option<String>,
    method: &str,
    params: Value,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    let session = slot.session(server, principal, context);
    let id = crate::request_id(context);
    let (tx, mut rx) = mpsc::channel::<Value>(64);
    let message = Incoming::Request {
        id: id.clone(),
        method: method.to_string(),
        params,
    };
    let handled = server.handle(&session, message, Some(tx));
    tokio::pin!(handled);
    let mut asked = FuturesUnordered::new();
    let mut stream_open = true;
    let mut cancelled = false;
    let response = loop {
        tokio::select! {
            response = &mut handled => break response,
            message = rx.recv(), if stream_open => match message {
                Some(message) => {
                    if let Some(exchange) = to_client(context, message).await {
                        asked.push(exchange);
                    }
                }
                None => stream_open = false,
            },
            Some((our_id, answer)) = asked.next(), if !asked.is_empty() => {
                server.handle(&session, from_client(our_id, answer), None).await;
            }
            () = context.ct.cancelled(), if !cancelled => {
                cancelled = true;
                session.cancel_request_because(&id, None);
            }
        }
    };
    match response {
        Some(response) => crate::convert::response(response),
        None => Err(ErrorData::internal_error(
            format!("the client cancelled '{method}'"),
            None,
        )),
    }
}

/// One request of ours to the client, under way through rmcp: our id and the answer.
type Exchange = std::pin::Pin<
    Box<dyn std::future::Future<Output = (RequestId, Result<ClientResult, ServiceError>)> + Send>,
>;

/// Sends one message of the wire to the client through rmcp's peer. A request comes
/// back as the exchange to wait on (its answer is fed to the wire under our id; rmcp
/// numbers its own); a notification is sent and forgotten.
async fn to_client(context: &RequestContext<RoleServer>, message: Value) -> Option<Exchange> {
    let method = message.get("method").and_then(Value::as_str)?.to_string();
    let body =
        json!({ "method": method, "params": message.get("params").cloned().unwrap_or(json!({})) });
    match message.get("id") {
        Some(id) => {
            let our_id: RequestId = match serde_json::from_value(id.clone()) {
                Ok(id) => id,
                Err(e) => {
                    tracing::warn!(%method, error = %e, "a request to the client without a usable id; not sent");
                    return None;
                }
            };
            let request = match serde_json::from_value::<ServerRequest>(body) {
                Ok(r) => r,
                Err(e) => {
                    let refused = Err(ServiceError::McpError(ErrorData::internal_error(
                        format!("'{method}' could not be written as rmcp's model: {e}"),
                        None,
                    )));
                    return Some(Box::pin(async move { (our_id, refused) }));
                }
            };
            let peer = context.peer.clone();
            // Sent now, in this task (the originating request is task-local in rmcp);
            // only the wait for the answer is deferred.
            let sent = peer
                .send_request_with_option(request, rmcp::service::PeerRequestOptions::no_options())
                .await;
            Some(Box::pin(async move {
                let answer = match sent {
                    Ok(handle) => handle.await_response().await,
                    Err(e) => Err(e),
                };
                (our_id, answer)
            }))
        }
        None => {
            match serde_json::from_value::<ServerNotification>(body) {
                Ok(n) => {
                    if let Err(e) = context.peer.send_notification(n).await {
                        tracing::debug!(%method, error = %e, "a notification to the client was not sent");
                    }
                }
                Err(e) => {
                    tracing::debug!(%method, error = %e, "a notification rmcp cannot carry; not sent")
                }
            }
            None
        }
    }
}

/// The client's answer to our request `id`, as the wire reads a response.
fn from_client(id: RequestId, answer: Result<ClientResult, ServiceError>) -> Incoming {
    let error = match answer {
        Ok(result) => match serde_json::to_value(&result) {
            Ok(result) => return Incoming::Response { id, result },
            Err(e) => RpcError {
                code: error_code::INTERNAL_ERROR,
                message: format!("the client's answer could not be read: {e}"),
                data: None,
            },
        },
        Err(ServiceError::McpError(e)) => RpcError {
            code: i64::from(e.code.0),
            message: e.message.to_string(),
            data: e.data,
        },
        Err(e) => RpcError {
            code: error_code::INTERNAL_ERROR,
            message: format!("the client did not answer: {e}"),
            data: None,
        },
    };
    Incoming::ErrorResponse {
        id: Some(id),
        error,
    }
}

/// `params` with the request's `_meta` (a related-task id, a progress token) as rmcp
/// read it, and the call's own.
pub(crate) fn with_meta(mut params: Value, context: &RequestContext<RoleServer>) -> Value {
    let mut meta = match serde_json::to_value(&context.meta) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    if let Some(Value::Object(own)) = params.get("_meta") {
        meta.extend(own.clone());
    }
    if let Some(o) = params.as_object_mut() {
        if meta.is_empty() {
            o.remove("_meta");
        } else {
            o.insert("_meta".into(), Value::Object(meta));
        }
    }
    params
}
