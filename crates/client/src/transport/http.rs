//! Streamable HTTP: every message is a `POST` to the endpoint; answers come back as
//! JSON or as an SSE stream (which may carry server requests and notifications before
//! the answer). With a session (2025-11-25), a `GET` stream carries what the server
//! sends on its own (task status, progress, input requests) and is reopened when it
//! drops. On the stateless wire (2026-07-28) every request carries its routing headers
//! and there is no session.

use futures::StreamExt;
use mcp_tasks_protocol::jsonrpc::{self, Incoming, RequestId};
use mcp_tasks_protocol::version;
use mcp_tasks_protocol::Secret;
use parking_lot::Mutex;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

use crate::error::ClientError;
use crate::peer::Peer;
use crate::sse::SseReader;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
const LAST_EVENT_ID: &str = "last-event-id";
/// Longest wait between two attempts to reopen the session stream.
const MAX_STREAM_BACKOFF: Duration = Duration::from_secs(10);
/// How long to wait for the server to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How requests are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HttpMode {
    /// Sessions (`Mcp-Session-Id`), 2025-11-25 and older.
    Session,
    /// The 2026-07-28 stateless wire: routing headers on every request.
    Stateless,
}

#[derive(Debug, Default)]
struct State {
    session: Option<String>,
    protocol_version: Option<String>,
    mode: Option<HttpMode>,
}

/// An HTTP connection to one MCP endpoint.
#[derive(Debug)]
pub(crate) struct HttpTransport {
    http: reqwest::Client,
    url: String,
    token: Option<Secret<String>>,
    /// Headers sent with every request (e.g. an API key), already validated.
    extra_headers: HeaderMap,
    peer: Arc<Peer>,
    state: Arc<Mutex<State>>,
    stream: Mutex<Option<JoinHandle<()>>>,
}

impl HttpTransport {
    /// A transport for `url`; nothing is sent yet.
    pub(crate) fn new(
        url: &str,
        token: Option<Secret<String>>,
        extra_headers: &[(String, Secret<String>)],
        peer: Arc<Peer>,
    ) -> Result<Self, ClientError> {
        let mut headers = HeaderMap::new();
        for (name, value) in extra_headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| ClientError::Connect(format!("header name '{name}': {e}")))?;
            // The value may be a secret: never repeat it in the error.
            let mut value = HeaderValue::from_str(value.expose()).map_err(|_| {
                ClientError::Connect(format!("the value of header '{name}' is not valid in HTTP"))
            })?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| ClientError::Connect(format!("'{url}' is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ClientError::Connect(format!(
                "'{url}' is not an http:// URL"
            )));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            // Requests are small writes on a reused connection: with Nagle on, one
            // waiting on the server's delayed ACK stalls ~40 ms. reqwest's default today;
            // said here so a change of default cannot bring the stall back.
            .tcp_nodelay(true)
            .build()
            .map_err(|e| ClientError::Connect(format!("cannot build the HTTP client: {e}")))?;
        Ok(HttpTransport {
            http,
            url: url.to_string(),
            token,
            extra_headers: headers,
            peer,
            state: Arc::new(Mutex::new(State::default())),
            stream: Mutex::new(None),
        })
    }

    /// Chooses the framing (set once negotiation has decided).
    pub(crate) fn set_mode(&self, mode: HttpMode) {
        self.state.lock().mode = Some(mode);
    }

    /// Uses an existing session (a client picking up where an earlier one left off).
    pub(crate) fn set_session(&self, id: Option<String>) {
        self.state.lock().session = id;
    }

    /// The session id, once `initialize` returned one.
    pub(crate) fn session(&self) -> Option<String> {
        self.state.lock().session.clone()
    }

    /// Stops the session stream and leaves the session open on the server.
    pub(crate) fn leave(&self) {
        if let Some(h) = self.stream.lock().take() {
            h.abort();
        }
    }

    /// Records the negotiated version, sent as `MCP-Protocol-Version` from now on.
    pub(crate) fn set_protocol_version(&self, v: &str) {
        self.state.lock().protocol_version = Some(v.to_string());
    }

    fn headers(&self, message: &Value, accept_sse: bool) -> HeaderMap {
        let mut h = self.extra_headers.clone();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h.insert(
            ACCEPT,
            HeaderValue::from_static(if accept_sse {
                "application/json, text/event-stream"
            } else {
                "application/json"
            }),
        );
        if let Some(t) = &self.token {
            if let Ok(mut v) = HeaderValue::from_str(&format!("Bearer {}", t.expose())) {
                v.set_sensitive(true);
                h.insert(AUTHORIZATION, v);
            }
        }
        let state = self.state.lock();
        if let Some(s) = state
            .session
            .as_deref()
            .and_then(|s| HeaderValue::from_str(s).ok())
        {
            h.insert(SESSION_HEADER, s);
        }
        if state.mode == Some(HttpMode::Stateless) {
            h.insert(
                VERSION_HEADER,
                HeaderValue::from_static(version::V2026_07_28),
            );
            if let Some(method) = message.get("method").and_then(Value::as_str) {
                if let Ok(v) = HeaderValue::from_str(method) {
                    h.insert(METHOD_HEADER, v);
                }
                if let Some(name) = routing_name(method, message.get("params")) {
                    if let Ok(v) = HeaderValue::from_str(&name) {
                        h.insert(NAME_HEADER, v);
                    }
                }
            }
        } else if let Some(v) = state
            .protocol_version
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            h.insert(VERSION_HEADER, v);
        }
        h
    }

    /// Sends a request; its answer (and anything the server sends before it) is routed
    /// to the peer in the background. A transport failure fails the request.
    pub(crate) fn send_request(&self, id: RequestId, message: Value) {
        let headers = self.headers(&message, true);
        let http = self.http.clone();
        let url = self.url.clone();
        let peer = Arc::clone(&self.peer);
        let state = Arc::clone(&self.state);
        let is_initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
        tokio::spawn(async move {
            let sent = http.post(&url).headers(headers).json(&message).send().await;
            let response = match sent {
                Ok(r) => r,
                Err(e) => {
                    peer.fail(&id, connect_error(&url, &e));
                    return;
                }
            };
            if is_initialize {
                if let Some(s) = response
                    .headers()
                    .get(SESSION_HEADER)
                    .and_then(|v| v.to_str().ok())
                {
                    state.lock().session = Some(s.to_string());
                }
            }
            if let Err(e) = read_reply(response, &peer, Some(&id)).await {
                peer.fail(&id, e);
            }
            if peer.is_pending(&id) {
                peer.fail(
                    &id,
                    ClientError::transport("the server closed the response without answering"),
                );
            }
        });
    }

    /// Sends a notification or a response to a server request.
    pub(crate) async fn send_message(&self, message: &Value) -> Result<(), ClientError> {
        let headers = self.headers(message, true);
        let response = self
            .http
            .post(&self.url)
            .headers(headers)
            .json(message)
            .send()
            .await
            .map_err(|e| connect_error(&self.url, &e))?;
        read_reply(response, &self.peer, None).await
    }

    /// Opens the session's `GET` stream and keeps it open (reconnecting with
    /// `Last-Event-ID`) until the transport is closed, and waits (at most
    /// [`STREAM_OPEN_WAIT`]) until the server answered the first `GET`: messages the
    /// server sends right after (a new task's first log line, its first status) then
    /// have a stream to go to. A server without one (405) is fine: everything then
    /// arrives on POST streams.
    pub(crate) async fn open_session_stream(&self) {
        let http = self.http.clone();
        let url = self.url.clone();
        let peer = Arc::clone(&self.peer);
        let base = self.headers(&Value::Null, true);
        let (opened, answered) = tokio::sync::oneshot::channel::<()>();
        let handle = tokio::spawn(async move {
            let mut opened = Some(opened);
            let mut backoff = Duration::from_millis(250);
            let mut last_event: Option<String> = None;
            while !peer.is_closed() {
                let mut headers = base.clone();
                headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
                if let Some(id) = last_event
                    .as_deref()
                    .and_then(|i| HeaderValue::from_str(i).ok())
                {
                    headers.insert(LAST_EVENT_ID, id);
                }
                let response = http.get(&url).headers(headers).send().await;
                // The first answer, whatever it is: the caller may go on.
                if let Some(opened) = opened.take() {
                    let _ = opened.send(());
                }
                match response {
                    Ok(r) if r.status() == reqwest::StatusCode::METHOD_NOT_ALLOWED => return,
                    Ok(r) if r.status() == reqwest::StatusCode::NOT_FOUND => {
                        tracing::debug!("session stream: the session is gone");
                        return;
                    }
                    Ok(r) if r.status().is_success() => {
                        backoff = Duration::from_millis(250);
                        let mut body = r.bytes_stream();
                        let mut sse = SseReader::default();
                        while let Some(Ok(chunk)) = body.next().await {
                            for ev in sse.push(&chunk) {
                                if ev.id.is_some() {
                                    last_event.clone_from(&ev.id);
                                }
                                if ev.event == "message" && !ev.data.trim().is_empty() {
                                    peer.route_text(&ev.data);
                                }
                            }
                        }
                    }
                    Ok(r) => tracing::debug!(status = %r.status(), "session stream refused"),
                    Err(e) => tracing::debug!(error = %e, "session stream failed"),
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_STREAM_BACKOFF);
            }
        });
        if let Some(old) = self.stream.lock().replace(handle) {
            old.abort();
        }
        let _ = tokio::time::timeout(STREAM_OPEN_WAIT, answered).await;
    }

    /// Ends the session (`DELETE`, best effort) and stops the session stream.
    pub(crate) async fn close(&self) {
        if let Some(h) = self.stream.lock().take() {
            h.abort();
        }
        let has_session = self.state.lock().session.is_some();
        if has_session {
            let headers = self.headers(&Value::Null, false);
            let _ = tokio::time::timeout(
                Duration::from_secs(2),
                self.http.delete(&self.url).headers(headers).send(),
            )
            .await;
        }
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        if let Some(h) = self.stream.lock().take() {
            h.abort();
        }
    }
}

/// Longest a connection waits for the server to answer its session stream's first
/// `GET` before going on without it (a slow or odd server must not stall the connect).
pub(crate) const STREAM_OPEN_WAIT: Duration = Duration::from_secs(2);

/// The `Mcp-Name` of a stateless request: the tool or task it targets.
fn routing_name(method: &str, params: Option<&Value>) -> Option<String> {
    let field = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    params?.get(field)?.as_str().map(str::to_string)
}

/// A request that got no HTTP answer, naming the URL and the innermost cause
/// (reqwest's own message, "error sending request", hides "Connection refused").
fn connect_error(url: &str, e: &reqwest::Error) -> ClientError {
    let mut cause: &dyn std::error::Error = e;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    let message = if std::ptr::addr_eq(cause, e as &dyn std::error::Error) {
        format!("{url}: {e}")
    } else {
        format!("{url}: {e}: {cause}")
    };
    if e.is_connect() || e.is_timeout() {
        ClientError::Connect(message)
    } else {
        ClientError::transport(message)
    }
}

/// Reads the answer to one POST: JSON, an SSE stream, or nothing (202). Messages in it
/// are routed to the peer; `id` is the request the POST carried, if any, so an HTTP
/// error without a JSON-RPC id still reaches its waiter.
async fn read_reply(
    response: reqwest::Response,
    peer: &Peer,
    id: Option<&RequestId>,
) -> Result<(), ClientError> {
    let status = response.status();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if status == reqwest::StatusCode::ACCEPTED || status == reqwest::StatusCode::NO_CONTENT {
        return Ok(());
    }
    if content_type.starts_with("text/event-stream") && status.is_success() {
        let mut body = response.bytes_stream();
        let mut sse = SseReader::default();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| ClientError::transport(format!("stream broke: {e}")))?;
            for ev in sse.push(&chunk) {
                if ev.event == "message" && !ev.data.trim().is_empty() {
                    peer.route_text(&ev.data);
                }
            }
            if id.is_some_and(|id| !peer.is_pending(id)) {
                // Our answer arrived; the server may keep the stream open, we need not.
                return Ok(());
            }
        }
        return Ok(());
    }
    let body = response
        .bytes()
        .await
        .map_err(|e| ClientError::transport(format!("reading the answer: {e}")))?;
    let parsed: Option<Value> = serde_json::from_slice(&body).ok();
    if status.is_success() {
        return match parsed {
            Some(v) => {
                peer.route_value(v);
                Ok(())
            }
            None if body.is_empty() => Ok(()),
            None => Err(ClientError::protocol(format!(
                "the server answered {status} with a body that is not JSON"
            ))),
        };
    }
    // An HTTP error. A JSON-RPC error with our id is the server's answer; anything else
    // is a transport failure that keeps the HTTP status.
    if let Some(v) = parsed {
        if let Ok(Incoming::ErrorResponse { id: eid, error }) = jsonrpc::parse_value(v) {
            if eid.is_some() && eid.as_ref() == id {
                return Err(ClientError::Rpc(error));
            }
            return Err(ClientError::Transport {
                status: Some(status.as_u16()),
                message: format!("HTTP {status}: {}", error.message),
            });
        }
    }
    let text = String::from_utf8_lossy(&body);
    let text = text.trim();
    Err(ClientError::Transport {
        status: Some(status.as_u16()),
        message: if text.is_empty() {
            format!("HTTP {status}")
        } else {
            format!("HTTP {status}: {}", truncate(text, 300))
        },
    })
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn routing_names_follow_the_method() {
        let p = json!({"name": "greet", "taskId": "t1"});
        assert_eq!(
            routing_name("tools/call", Some(&p)).as_deref(),
            Some("greet")
        );
        assert_eq!(routing_name("tasks/get", Some(&p)).as_deref(), Some("t1"));
        assert_eq!(routing_name("tools/list", Some(&p)), None);
    }
}
