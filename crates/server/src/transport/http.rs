//! Streamable HTTP transport (MCP 2025-06-18 / 2025-11-25) on axum, at one endpoint:
//!
//! - `POST` carries one JSON-RPC message. `initialize` opens a session and returns its
//!   `Mcp-Session-Id`; every later message must echo it (missing: 400, unknown: 404).
//!   Requests are answered with JSON, or with an SSE stream for `tools/call` and
//!   `tasks/result` when the client accepts `text/event-stream` (progress notifications
//!   then precede the response). Notifications and responses get 202.
//! - `GET` opens the session's stream of server-initiated messages (task status
//!   notifications, task progress).
//! - `DELETE` ends the session; its tasks live on and can be collected from a new one.
//!
//! Browsers are kept out by an `Origin` check (localhost origins and configured ones).
//! JSON-RPC errors on a well-formed request travel with HTTP 200, so clients read the
//! error instead of failing the transport.

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use futures::StreamExt;
use mcp_tasks_protocol::error_code::INVALID_REQUEST;
use mcp_tasks_protocol::jsonrpc::{self, Incoming, RpcError};
use mcp_tasks_protocol::methods::{INITIALIZE, TASKS_RESULT, TOOLS_CALL};
use mcp_tasks_protocol::version;
use serde_json::Value;
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::ops::auth::{AuthMode, Identity};
use crate::session::{Session, OUTBOUND_CAPACITY};
use crate::shared::Shared;
use crate::wire::v2026_07_28::{self, RoutingHeaders};

/// The session header.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The negotiated-version header clients send after `initialize`.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// The default endpoint path.
pub const DEFAULT_PATH: &str = "/mcp";

/// A router serving MCP at `path`, to mount in an existing axum app or serve alone.
pub fn router(server: impl AsRef<Shared>, path: &str) -> Router {
    let server = server.as_ref().clone();
    Router::new()
        .route(
            path,
            post(handle_post).get(handle_get).delete(handle_delete),
        )
        .route("/healthz", get(super::health::healthz))
        .route("/readyz", get(super::health::readyz))
        .route("/metrics", get(super::health::metrics))
        .route(
            crate::ops::auth::resource::WELL_KNOWN,
            get(protected_resource),
        )
        .route(
            &format!("{}{path}", crate::ops::auth::resource::WELL_KNOWN),
            get(protected_resource),
        )
        .with_state(server)
}

/// Serves `router(server, DEFAULT_PATH)` on `listener` until `shutdown` completes, then
/// closes long-lived streams and waits for connections to finish.
///
/// # Errors
/// I/O errors from the listener.
pub async fn serve(
    server: impl AsRef<Shared>,
    listener: TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let server = server.as_ref().clone();
    serve_with(server, listener, Router::new(), shutdown).await
}

/// [`serve`] with more routes beside MCP's (the task board): `extra` is merged into
/// the router, and its connections get the same limits and graceful shutdown.
///
/// # Errors
/// I/O errors from the listener.
pub async fn serve_with(
    server: impl AsRef<Shared>,
    listener: TcpListener,
    extra: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let server = server.as_ref().clone();
    let app = router(server.clone(), DEFAULT_PATH).merge(extra);
    let token = server.shutdown_token();
    let limits = server.config().http.clone();
    super::connections::serve_connections(listener, app, limits, async move {
        tokio::select! {
            _ = shutdown => {},
            _ = token.cancelled() => {},
        }
        server.inner.shutdown.cancel();
    })
    .await
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        // Straight to bytes: Value's Display goes through fmt::Write, which costs more.
        serde_json::to_vec(body).unwrap_or_default(),
    )
        .into_response()
}

fn error_response(status: StatusCode, code: i64, message: String) -> Response {
    json_response(
        status,
        &jsonrpc::error_response(None, &RpcError::new(code, message)),
    )
}

/// A transport-level refusal: an HTTP status plus a JSON-RPC error body with no id
/// (and a `WWW-Authenticate` challenge for 401).
#[derive(Debug)]
struct Refusal {
    status: StatusCode,
    message: String,
    challenge: Option<String>,
}

impl Refusal {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Refusal {
            status,
            message: message.into(),
            challenge: None,
        }
    }

    /// 401 with a Bearer challenge (RFC 6750), as the MCP authorization spec asks.
    fn unauthorized(message: impl Into<String>, invalid_token: bool) -> Self {
        let message = message.into();
        let challenge = if invalid_token {
            format!(
                "Bearer realm=\"mcp-tasks\", error=\"invalid_token\", error_description=\"{}\"",
                message.replace('"', "'")
            )
        } else {
            "Bearer realm=\"mcp-tasks\"".to_string()
        };
        Refusal {
            status: StatusCode::UNAUTHORIZED,
            message,
            challenge: Some(challenge),
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let mut r = error_response(self.status, INVALID_REQUEST, self.message);
        if let Some(c) = self.challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, c);
        }
        r
    }
}

/// Who sent a request (the principal and the groups its token names): `None` when auth
/// is off, or optional and no token was sent. With OAuth access tokens ([`AuthMode::resource_metadata`]) a 401
/// names the Protected Resource Metadata, and a token without a required scope gets 403
/// `insufficient_scope`. Each refused token is an audit event with its reason (and the
/// principal it claims, unverified, when it names one); the token itself is never logged.
async fn authenticate(server: &Shared, headers: &HeaderMap) -> Result<Option<Identity>, Refusal> {
    let auth = &server.config().auth;
    let Some(authenticator) = auth.authenticator() else {
        return Ok(None);
    };
    let metadata = auth.resource_metadata();
    let unauthorized = |message: String, invalid_token: bool| match metadata {
        Some(m) => Refusal {
            status: StatusCode::UNAUTHORIZED,
            challenge: Some(m.challenge(invalid_token.then_some(message.as_str()))),
            message,
        },
        None => Refusal::unauthorized(message, invalid_token),
    };
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return match auth {
            AuthMode::Required(_) => Err(unauthorized(
                "authentication required: send 'Authorization: Bearer <token>'".into(),
                false,
            )),
            _ => Ok(None),
        };
    };
    let token = value
        .to_str()
        .ok()
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            unauthorized(
                "the Authorization header must be 'Bearer <token>'".into(),
                true,
            )
        })?;
    let identity = match authenticator.identify(token).await {
        Ok(identity) => identity,
        Err(e) => {
            let claimed = crate::ops::auth::claimed_principal(token);
            tracing::info!(
                target: "mcp_tasks::audit",
                event = "token_refused",
                principal = claimed.as_deref().unwrap_or("-"),
                reason = %e.0,
                "bearer token refused"
            );
            return Err(unauthorized(e.0, true));
        }
    };
    if let (Some(m), Some(granted)) = (metadata, identity.scopes.as_ref()) {
        let missing = m.missing_scopes(granted);
        if !missing.is_empty() {
            let reason = format!(
                "the token lacks the scope {} this server requires: ask the authorization server for it",
                missing.join(" ")
            );
            tracing::info!(
                target: "mcp_tasks::audit",
                event = "token_refused",
                principal = %identity.principal,
                reason = %reason,
                "bearer token refused"
            );
            return Err(Refusal {
                status: StatusCode::FORBIDDEN,
                message: reason,
                challenge: Some(m.insufficient_scope()),
            });
        }
    }
    Ok(Some(identity))
}

/// `GET /.well-known/oauth-protected-resource[/mcp]`: the Protected Resource Metadata
/// (RFC 9728) when the server takes OAuth access tokens; 404 otherwise.
async fn protected_resource(State(server): State<Shared>) -> Response {
    match server.config().auth.resource_metadata() {
        Some(m) => {
            let mut r = json_response(StatusCode::OK, &m.document());
            // Hosts running in a browser (the MCP Inspector) read it across origins.
            r.headers_mut().insert(
                header::ACCESS_CONTROL_ALLOW_ORIGIN,
                HeaderValue::from_static("*"),
            );
            r
        }
        None => error_response(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            "this server takes no OAuth access tokens (no [oauth] configured)".into(),
        ),
    }
}

/// Checks `Host` against the allowed names when configured (DNS-rebinding defence).
fn check_host(server: &Shared, headers: &HeaderMap) -> Result<(), Refusal> {
    let Some(allowed) = &server.config().allowed_hosts else {
        return Ok(());
    };
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let name = if host.starts_with('[') {
        host.split(']')
            .next()
            .map(|h| format!("{h}]"))
            .unwrap_or_default()
    } else {
        host.rsplit_once(':')
            .map(|(h, _)| h)
            .unwrap_or(host)
            .to_string()
    };
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(&name)) {
        Ok(())
    } else {
        Err(Refusal::new(
            StatusCode::FORBIDDEN,
            format!("Host '{host}' is not allowed; add it with --allowed-host to accept it"),
        ))
    }
}

/// The `Origin` and `Host` checks of `/mcp`, for other pages a browser loads from this
/// server (the task board): a request from another site, or naming a host this server
/// does not answer to, is refused with the status and reason to show.
///
/// # Errors
/// `403 Forbidden` with a message naming the flag that would allow the request.
pub fn check_browser_request(
    server: &impl AsRef<Shared>,
    headers: &HeaderMap,
) -> Result<(), (StatusCode, String)> {
    let server = server.as_ref();
    check_origin(server, headers)
        .and_then(|()| check_host(server, headers))
        .map_err(|refusal| (refusal.status, refusal.message))
}

/// Only the `Host` half of [`check_browser_request`], for pages that accept their own
/// origin (a page served from the public address posting back to it) besides the
/// origins `/mcp` accepts.
///
/// # Errors
/// `403 Forbidden` naming `--allowed-host`.
pub fn check_browser_host(
    server: &impl AsRef<Shared>,
    headers: &HeaderMap,
) -> Result<(), (StatusCode, String)> {
    check_host(server.as_ref(), headers).map_err(|refusal| (refusal.status, refusal.message))
}

/// Runs the checks every method shares (origin, host, credentials) and, unless
/// `initialize` opens one, finds the session and checks it belongs to the caller.
async fn admit(
    server: &Shared,
    headers: &HeaderMap,
    needs_session: bool,
) -> Result<(Option<Identity>, Option<Arc<Session>>), Refusal> {
    check_origin(server, headers)?;
    check_host(server, headers)?;
    let who = authenticate(server, headers).await?;
    if !needs_session {
        return Ok((who, None));
    }
    let session = session_of(server, headers, who.as_ref()).await?;
    Ok((who, Some(session)))
}

/// The session a request names, checked to belong to the request's identity `who`
/// (already authenticated by [`admit`]); the session's caller takes the groups `who`
/// is in now.
async fn session_of(
    server: &Shared,
    headers: &HeaderMap,
    who: Option<&Identity>,
) -> Result<Arc<Session>, Refusal> {
    let session = find_session(server, headers).await?;
    if session.subject() != who.map(|w| w.principal.as_str()) {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            "this session belongs to another principal: send the token it was opened with",
        ));
    }
    if let Some(who) = who {
        session.set_groups(server.caller_groups(&who.principal, &who.groups));
    }
    Ok(session)
}

/// Accepts requests without `Origin` (non-browser clients), from localhost origins, and
/// from origins listed in the configuration. Guards against DNS rebinding.
fn check_origin(server: &Shared, headers: &HeaderMap) -> Result<(), Refusal> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin.to_str().unwrap_or("");
    let host = origin
        .split_once("://")
        .map(|(_, rest)| rest)
        .unwrap_or(origin);
    let host = if host.starts_with('[') {
        host.split(']')
            .next()
            .map(|h| format!("{h}]"))
            .unwrap_or_default()
    } else {
        host.split(':').next().unwrap_or("").to_string()
    };
    let local = matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]");
    if local || server.config().allowed_origins.iter().any(|o| o == origin) {
        Ok(())
    } else {
        Err(Refusal::new(
            StatusCode::FORBIDDEN,
            format!("origin '{origin}' is not allowed; add it with --allowed-origin to accept it"),
        ))
    }
}

fn accepts_sse(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("text/event-stream"))
}

async fn find_session(server: &Shared, headers: &HeaderMap) -> Result<Arc<Session>, Refusal> {
    let Some(id) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "missing Mcp-Session-Id header: send 'initialize' first and echo the session id it returns",
        ));
    };
    server.sessions().find(server.engine(), id).await.ok_or_else(|| {
        Refusal::new(
            StatusCode::NOT_FOUND,
            "unknown or ended session (the server may have restarted): send 'initialize' to open a new one; tasks can still be collected by id",
        )
    })
}

fn check_version_header(headers: &HeaderMap) -> Result<(), Refusal> {
    match headers.get(PROTOCOL_VERSION_HEADER).map(|v| v.to_str()) {
        None => Ok(()),
        Some(Ok(v)) if version::SUPPORTED.contains(&v) => Ok(()),
        Some(v) => Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            format!(
                "unsupported MCP-Protocol-Version {:?}; supported: {}",
                v.unwrap_or("<not text>"),
                version::SUPPORTED.join(", ")
            ),
        )),
    }
}

/// `POST /mcp`: admit the caller once, read the body, then hand the message to the
/// stateless 2026-07-28 wire or to a session of the 2025-11-25 wire.
async fn handle_post(State(server): State<Shared>, headers: HeaderMap, body: Body) -> Response {
    let who = match admit(&server, &headers, false).await {
        Ok((who, _)) => who,
        Err(r) => return r.into_response(),
    };
    let bytes = match read_body(&server, body).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    let message = match jsonrpc::parse(&bytes) {
        Ok(m) => m,
        Err(rejected) => return json_response(StatusCode::BAD_REQUEST, &rejected.to_response()),
    };
    match handle_stateless(&server, who, &headers, message).await {
        Ok(response) => response,
        Err((who, message)) => handle_in_session(&server, who, &headers, message).await,
    }
}

/// The request body, within the size limit and the body timeout; otherwise the error
/// response that says which limit to raise.
async fn read_body(server: &Shared, body: Body) -> Result<Bytes, Response> {
    let limit = server.config().max_body_bytes;
    let body_timeout = server.config().http.body_timeout;
    match tokio::time::timeout(body_timeout, axum::body::to_bytes(body, limit)).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) => Err(error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            INVALID_REQUEST,
            format!("request body exceeds the limit of {limit} bytes (raise --max-body-bytes to allow it)"),
        )),
        Err(_) => {
            let mut response = error_response(
                StatusCode::REQUEST_TIMEOUT,
                INVALID_REQUEST,
                format!("the request body did not arrive within {body_timeout:?} (raise --http-body-timeout to allow slower clients)"),
            );
            // The rest of the body may still be on its way: this connection is done.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Err(response)
        }
    }
}

/// Answers a message of the 2026-07-28 stateless wire (no session, everything in the
/// request). Gives the message back when it belongs to a session instead.
async fn handle_stateless(
    server: &Shared,
    who: Option<Identity>,
    headers: &HeaderMap,
    message: Incoming,
) -> Result<Response, (Option<Identity>, Incoming)> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let header_version = header(PROTOCOL_VERSION_HEADER);
    let has_session = headers.contains_key(SESSION_HEADER);
    let stateless = |method: &str, params: &Value| {
        v2026_07_28::is_stateless(header_version.as_deref(), method, params, has_session)
    };
    match &message {
        Incoming::Request { id, method, params } if stateless(method, params) => {
            let routing = RoutingHeaders {
                method: header("mcp-method"),
                name: header("mcp-name"),
                protocol_version: header_version.clone(),
            };
            if method == v2026_07_28::SUBSCRIPTIONS_LISTEN {
                return Ok(
                    match v2026_07_28::listen_as(server, who, &routing, id, params.clone()).await {
                        Ok(rx) => sse_stream(server, rx),
                        Err((status, body)) => json_response(
                            StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
                            &body,
                        ),
                    },
                );
            }
            let (status, body) =
                v2026_07_28::handle_as(server, who, &routing, id, method, params.clone()).await;
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            Ok(json_response(status, &body))
        }
        Incoming::Notification { method, params } if stateless(method, params) => {
            Ok(StatusCode::ACCEPTED.into_response())
        }
        _ => Err((who, message)),
    }
}

/// Answers a message of the 2025-11-25 wire: `initialize` opens a session, anything
/// else must name one; tool calls and `tasks/result` answer on SSE when accepted.
async fn handle_in_session(
    server: &Shared,
    who: Option<Identity>,
    headers: &HeaderMap,
    message: Incoming,
) -> Response {
    let is_initialize =
        matches!(&message, Incoming::Request { method, .. } if method == INITIALIZE);
    let session = if is_initialize {
        match who {
            Some(who) => {
                let session = server.sessions().open_subject(who.principal.clone());
                session.set_groups(server.caller_groups(&who.principal, &who.groups));
                session
            }
            None => server.sessions().open(None),
        }
    } else {
        if let Err(r) = check_version_header(headers) {
            return r.into_response();
        }
        // Origin, host and credentials were checked once, in `handle_post`.
        match session_of(server, headers, who.as_ref()).await {
            Ok(s) => s,
            Err(r) => return r.into_response(),
        }
    };

    let streams = matches!(&message, Incoming::Request { method, .. } if method == TOOLS_CALL || method == TASKS_RESULT);
    if !matches!(message, Incoming::Request { .. }) {
        crate::wire::v2025_11_25::handle(server, &session, message, None).await;
        return StatusCode::ACCEPTED.into_response();
    }
    let mut response = if streams && accepts_sse(headers) {
        sse_reply(server, session.clone(), message)
    } else {
        match crate::wire::v2025_11_25::handle(server, &session, message, None).await {
            Some(reply) => {
                if is_initialize {
                    if reply.get("error").is_some() {
                        server.sessions().close(session.id());
                    } else {
                        crate::sessions::Sessions::share(server.engine(), &session).await;
                    }
                }
                json_response(StatusCode::OK, &reply)
            }
            None => StatusCode::ACCEPTED.into_response(),
        }
    };
    if is_initialize {
        if let Ok(v) = HeaderValue::from_str(session.id()) {
            response.headers_mut().insert(SESSION_HEADER, v);
        }
    }
    response
}

/// Answers a request on an SSE stream: notifications tied to it first, then the reply.
fn sse_reply(server: &Shared, session: Arc<Session>, message: Incoming) -> Response {
    let (tx, rx) = mpsc::channel::<Value>(OUTBOUND_CAPACITY);
    let handler_server = server.clone();
    tokio::spawn(async move {
        if let Some(reply) =
            crate::wire::v2025_11_25::handle(&handler_server, &session, message, Some(tx.clone()))
                .await
        {
            let _ = tx.send(reply).await;
        }
    });
    sse_stream(server, rx)
}

/// An SSE response carrying every message sent to `rx`, one `message` event each,
/// ended when the server shuts down.
fn sse_stream(server: &Shared, rx: mpsc::Receiver<Value>) -> Response {
    let shutdown = server.shutdown_token();
    let stream = ReceiverStream::new(rx)
        .map(|v| Ok::<_, Infallible>(Event::default().event("message").data(v.to_string())))
        .take_until(async move { shutdown.cancelled().await });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(server.config().http.sse_keep_alive))
        .into_response()
}

async fn handle_get(State(server): State<Shared>, headers: HeaderMap) -> Response {
    let session = match admit(&server, &headers, true).await {
        Ok((_, Some(s))) => s,
        Ok((_, None)) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        Err(r) => return r.into_response(),
    };
    if !accepts_sse(&headers) {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            INVALID_REQUEST,
            "GET opens the server-to-client event stream: send 'Accept: text/event-stream'".into(),
        );
    }
    let (tx, rx) = mpsc::channel::<Value>(OUTBOUND_CAPACITY);
    session.attach_outbound(tx);
    sse_stream(&server, rx)
}

async fn handle_delete(State(server): State<Shared>, headers: HeaderMap) -> Response {
    let session = match admit(&server, &headers, true).await {
        Ok((_, Some(s))) => s,
        Ok((_, None)) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        Err(r) => return r.into_response(),
    };
    session.detach_outbound();
    server.sessions().close(session.id());
    if let Err(e) = server.engine().delete_session(session.id()).await {
        tracing::warn!(error = %e, "could not forget the shared session");
    }
    StatusCode::OK.into_response()
}
