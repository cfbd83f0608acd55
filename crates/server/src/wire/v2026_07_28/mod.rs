//! The 2026-07-28 stateless wire with the Tasks extension (`io.modelcontextprotocol/tasks`).
//!
//! Every request stands alone: the protocol version, client info and client capabilities
//! travel in its `_meta`, routing headers (`Mcp-Method`, `Mcp-Name`) must agree with the
//! body (SEP-2243), and every result carries `resultType`. Tasks are server-directed: a
//! task-capable tool becomes a task when the request declares the extension. Same engine,
//! same store as the 2025-11-25 wire; only this codec and dispatch differ.

mod headers;
mod inline_rounds;
mod input_rounds;
mod request_state;
mod server_discover;
mod subscriptions_listen;
mod tasks_cancel;
mod tasks_get;
mod tasks_update;
mod tools_call;
mod tools_list;

pub use headers::RoutingHeaders;

use mcp_tasks_engine::Caller;
use mcp_tasks_protocol::codec::v2026_07_28;
use mcp_tasks_protocol::error_code::{HEADER_MISMATCH, MISSING_CAPABILITY};
use mcp_tasks_protocol::jsonrpc::{self, RequestId, RpcError};
use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::version;
use serde_json::{json, Value};

use crate::error_map::missing_extension;
use crate::ops::auth::Identity;
use crate::shared::Shared;

pub use mcp_tasks_protocol::codec::{
    META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, META_SERVER_INFO,
};
pub use mcp_tasks_protocol::error_code::UNSUPPORTED_VERSION;

/// Whether a request belongs on the stateless wire: it names a stateless protocol
/// version in its header or its `_meta`, and is neither `initialize` nor part of a
/// session.
pub fn is_stateless(
    header_version: Option<&str>,
    method: &str,
    params: &Value,
    has_session: bool,
) -> bool {
    if method == m::INITIALIZE || has_session {
        return false;
    }
    header_version.is_some_and(|v| version::STATELESS.contains(&v))
        || params
            .get("_meta")
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .is_some()
}

/// The per-request context of a stateless call.
pub(crate) struct Request<'a> {
    pub(crate) server: &'a Shared,
    pub(crate) caller: Caller,
    pub(crate) capabilities: Value,
    pub(crate) extension: bool,
}

pub use mcp_tasks_protocol::methods::SUBSCRIPTIONS_LISTEN;

/// Opens a `subscriptions/listen` stream: the messages to send as SSE, or the HTTP
/// status and error response when the request is refused. `subject` is the
/// authenticated principal (`None`: anonymous); [`listen_as`] takes its groups too.
pub async fn listen(
    server: &impl AsRef<Shared>,
    subject: Option<String>,
    headers: &RoutingHeaders,
    id: &RequestId,
    params: Value,
) -> Result<tokio::sync::mpsc::Receiver<Value>, (u16, Value)> {
    listen_as(server, subject.map(Identity::named), headers, id, params).await
}

/// [`listen`] for an authenticated [`Identity`]: the caller is its principal, a member
/// of its groups (an access token's groups claim) and of the `[groups]` that list it.
pub async fn listen_as(
    server: &impl AsRef<Shared>,
    who: Option<Identity>,
    headers: &RoutingHeaders,
    id: &RequestId,
    params: Value,
) -> Result<tokio::sync::mpsc::Receiver<Value>, (u16, Value)> {
    let server = server.as_ref();
    let refuse = |e: RpcError| (http_status(&e), jsonrpc::error_response(Some(id), &e));
    headers
        .check(SUBSCRIPTIONS_LISTEN, &params)
        .map_err(refuse)?;
    let req = request(server, who, &params);
    subscriptions_listen::start(req, id, &params)
        .await
        .map_err(refuse)
}

fn request<'a>(server: &'a Shared, who: Option<Identity>, params: &Value) -> Request<'a> {
    let meta = params.get("_meta").cloned().unwrap_or(json!({}));
    let capabilities = meta
        .get(META_CLIENT_CAPABILITIES)
        .cloned()
        .unwrap_or(json!({}));
    let extension = v2026_07_28::declares_extension(&capabilities);
    let caller = match who {
        Some(who) => {
            let groups = server.caller_groups(&who.principal, &who.groups);
            Caller::authenticated(who.principal, None).with_groups(groups)
        }
        None => Caller::anonymous("stateless", None),
    };
    Request {
        server,
        caller,
        capabilities,
        extension,
    }
}

/// Handles one stateless request; returns the HTTP status and the JSON-RPC response.
/// `subject` is the authenticated principal (`None`: anonymous); [`handle_as`] takes
/// its groups too.
pub async fn handle(
    server: &impl AsRef<Shared>,
    subject: Option<String>,
    headers: &RoutingHeaders,
    id: &RequestId,
    method: &str,
    params: Value,
) -> (u16, Value) {
    handle_as(
        server,
        subject.map(Identity::named),
        headers,
        id,
        method,
        params,
    )
    .await
}

/// [`handle`] for an authenticated [`Identity`]: the caller is its principal, a member
/// of its groups (an access token's groups claim) and of the `[groups]` that list it,
/// as the task board names a signed-in person.
pub async fn handle_as(
    server: &impl AsRef<Shared>,
    who: Option<Identity>,
    headers: &RoutingHeaders,
    id: &RequestId,
    method: &str,
    params: Value,
) -> (u16, Value) {
    let server = server.as_ref();
    let version = params
        .get("_meta")
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let span = crate::ops::telemetry::request_span(&crate::ops::telemetry::RequestInfo {
        method,
        params: &params,
        id,
        protocol_version: version,
        session: None, // no sessions on this wire
        known_tool: server.knows_tool(&params),
    });
    let work = dispatch(server, who, headers, method, params);
    let result = crate::wire::observe_request(server.metrics(), method, span, work).await;
    match result {
        Ok(v) => (200, jsonrpc::response(id, v)),
        Err(e) => (http_status(&e), jsonrpc::error_response(Some(id), &e)),
    }
}

async fn dispatch(
    server: &Shared,
    who: Option<Identity>,
    headers: &RoutingHeaders,
    method: &str,
    params: Value,
) -> Result<Value, RpcError> {
    headers.check(method, &params)?;
    let req = request(server, who, &params);
    let extension = req.extension;
    match method {
        m::SERVER_DISCOVER => Ok(server_discover::handle(server)),
        m::PING => Ok(v2026_07_28::ack()),
        m::TOOLS_LIST => Ok(tools_list::handle(server, extension)),
        m::TOOLS_CALL => tools_call::handle(&req, &params).await,
        m::TASKS_GET | m::TASKS_UPDATE | m::TASKS_CANCEL if !extension => {
            Err(missing_extension(&format!("'{method}'")))
        }
        m::TASKS_GET => tasks_get::handle(&req, &params).await,
        m::TASKS_UPDATE => tasks_update::handle(&req, &params).await,
        m::TASKS_CANCEL => tasks_cancel::handle(&req, &params).await,
        m::TASKS_RESULT | m::TASKS_LIST => Err(RpcError::method_not_found(method).with_data(json!({
            "reason": "removed by the Tasks extension: results are inlined in tasks/get, and tasks are not listed"
        }))),
        other => match server.passthrough_for(other) {
            Some(p) => {
                let result = p.request(other, without_stateless_meta(params)).await?;
                // An upstream on an older wire sends no cache hints; this wire requires them.
                Ok(if v2026_07_28::CACHEABLE_METHODS.contains(&other) {
                    v2026_07_28::cacheable(result)
                } else {
                    v2026_07_28::complete(result)
                })
            }
            None => Err(RpcError::method_not_found(other)),
        },
    }
}

/// The params without the stateless `_meta` keys (protocol version, client
/// capabilities and info), which mean nothing to whoever a request is handed on to.
pub(super) fn without_stateless_meta(mut params: Value) -> Value {
    if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) {
        // The per-request keys only: others (`relatedTaskIds`, a progress token, a
        // trace) are the request's own and stay.
        meta.retain(|k, _| {
            ![
                META_PROTOCOL_VERSION,
                META_CLIENT_CAPABILITIES,
                mcp_tasks_protocol::codec::META_CLIENT_INFO,
            ]
            .contains(&k.as_str())
        });
        if meta.is_empty() {
            if let Some(o) = params.as_object_mut() {
                o.remove("_meta");
            }
        }
    }
    params
}

/// The HTTP status of an error on this wire: 400 for what the spec calls bad requests
/// (header mismatch, missing capability, unsupported version), 200 otherwise.
fn http_status(e: &RpcError) -> u16 {
    match e.code {
        HEADER_MISMATCH | MISSING_CAPABILITY | UNSUPPORTED_VERSION => 400,
        _ => 200,
    }
}

/// Answers a protocol version this wire does not speak.
pub(crate) fn unsupported_version(requested: &str) -> RpcError {
    RpcError::new(
        UNSUPPORTED_VERSION,
        format!("protocol version '{requested}' is not supported on the stateless wire"),
    )
    .with_data(json!({ "requested": requested, "supported": version::STATELESS }))
}

/// A `-32020` header mismatch.
pub(crate) fn header_mismatch(message: String) -> RpcError {
    RpcError::new(HEADER_MISMATCH, message)
}
