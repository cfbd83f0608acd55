//! [`Client`]: one connection to one server, with the wire negotiated, and the calls
//! that do not follow a task (tools, get, list, cancel). Following a task lives in
//! [`crate::task`].

use mcp_tasks_protocol::jsonrpc::{self, RequestId};
use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::{version, LoggingLevel, RpcError, TaskId};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::ClientError;
use crate::input::Handlers;
use crate::peer::Peer;
use crate::task::{Progress, TaskHandle, WatchEvent};
use crate::tools::ToolInfo;
use crate::transport::Transport;
use crate::wire::{self, CallReply, Wire};

use crate::connect::raw_request;
pub use crate::connect::ClientBuilder;

/// How long a request may wait for its answer by default (`tasks/result` excepted:
/// it waits for the task by design).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Most pages `tasks/list` and `tools/list` are followed for, against a server whose
/// cursors never end.
pub(crate) const MAX_PAGES: usize = 1000;
/// Most MRTR rounds of one extension `tools/call`.
pub(crate) const MAX_INPUT_ROUNDS: usize = 16;

/// Where the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A Streamable HTTP endpoint, e.g. `http://127.0.0.1:8080/mcp`.
    Http(String),
    /// A command to spawn that speaks MCP on stdio.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// What the server said about itself when the connection was made.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    /// The wire in use.
    pub wire: Wire,
    /// The protocol version agreed on.
    pub protocol_version: String,
    /// `serverInfo.name`, when sent.
    pub name: Option<String>,
    /// `serverInfo.version`, when sent.
    pub version: Option<String>,
    /// The server's capabilities as sent; `null` after rejoining a session (unknown,
    /// so every task method is tried).
    pub capabilities: Value,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while these locks are held.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The state behind a [`Client`].
pub(crate) struct Inner {
    pub(crate) peer: Arc<Peer>,
    pub(crate) transport: Transport,
    pub(crate) server: ServerInfo,
    pub(crate) handlers: Handlers,
    pub(crate) capabilities: Value,
    pub(crate) client_info: Value,
    pub(crate) timeout: Option<Duration>,
    /// Drivers of task handles, by task, for status, progress and input events.
    pub(crate) watchers: Mutex<HashMap<TaskId, Vec<mpsc::UnboundedSender<WatchEvent>>>>,
    /// Progress tokens of our task calls, by token text.
    pub(crate) progress: Mutex<HashMap<String, TaskId>>,
    /// Progress tokens of plain calls that follow progress
    /// ([`Client::call_tool_with_progress`]), by token text, with who sees it.
    pub(crate) call_progress: Mutex<HashMap<String, ProgressSink>>,
    /// Input requests seen (2025-11-25), by id: `None` while the handler runs, then
    /// the response sent (re-sent if the server asks again).
    pub(crate) answers: Mutex<HashMap<String, Option<Value>>>,
    pub(crate) next_token: AtomicU64,
    pub(crate) dispatcher: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(d) = lock(&self.dispatcher).take() {
            d.abort();
        }
        self.peer.close();
    }
}

impl Inner {
    /// The watchers of `task`, to send an event to.
    pub(crate) fn notify(&self, task: &TaskId, event: &WatchEvent) {
        let mut w = lock(&self.watchers);
        if let Some(list) = w.get_mut(task) {
            list.retain(|tx| tx.send(event.clone()).is_ok());
            if list.is_empty() {
                w.remove(task);
            }
        }
    }

    /// The task a progress token belongs to.
    pub(crate) fn progress_task(&self, token: &Value) -> Option<TaskId> {
        lock(&self.progress).get(&token.to_string()).cloned()
    }

    /// Who follows the progress of the plain call a token belongs to.
    pub(crate) fn call_progress(&self, token: &Value) -> Option<ProgressSink> {
        lock(&self.call_progress).get(&token.to_string()).cloned()
    }
}

/// Sees the progress notifications of one plain call.
pub(crate) type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// Forgets a plain call's progress token when the call ends, however it ends.
struct ProgressGuard<'a> {
    inner: &'a Inner,
    token: String,
}

impl Drop for ProgressGuard<'_> {
    fn drop(&mut self) {
        lock(&self.inner.call_progress).remove(&self.token);
    }
}

/// A connection to one MCP server. Cheap to clone; clones share the connection.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.inner.server)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A builder, to register handlers and choose settings before connecting.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// Connects with default settings and no input handlers.
    ///
    /// # Errors
    /// See [`ClientBuilder::connect`].
    pub async fn connect(target: &Target) -> Result<Client, ClientError> {
        ClientBuilder::new().connect(target).await
    }

    /// What the server said about itself, and the wire in use.
    pub fn server(&self) -> &ServerInfo {
        &self.inner.server
    }

    /// The wire in use.
    pub fn wire(&self) -> Wire {
        self.inner.server.wire
    }

    /// Whether the server can run tool calls as tasks.
    pub fn supports_tasks(&self) -> bool {
        match self.wire() {
            Wire::V2026_07_28 => true,
            Wire::V2025_11_25 => {
                let caps = &self.inner.server.capabilities;
                version::has_tasks(&self.inner.server.protocol_version)
                    && (caps.is_null() || !caps["tasks"]["requests"]["tools"]["call"].is_null())
            }
        }
    }

    /// Sends a request and waits for its answer. On the extension wire the stateless
    /// `_meta` is added (declaring the extension when `extension` is set).
    pub(crate) async fn request_with(
        &self,
        method: &str,
        params: Value,
        extension: bool,
        timeout: Option<Duration>,
    ) -> Result<Value, ClientError> {
        let params = match self.wire() {
            Wire::V2026_07_28 => {
                let meta = wire::stateless_meta(
                    &self.inner.capabilities,
                    extension,
                    &self.inner.client_info,
                );
                wire::with_meta(params, &meta)
            }
            Wire::V2025_11_25 => params,
        };
        raw_request(
            &self.inner.peer,
            &self.inner.transport,
            method,
            params,
            timeout,
        )
        .await
    }

    /// Sends any request and returns its result: for methods this crate does not wrap.
    ///
    /// # Errors
    /// The server's JSON-RPC error, or a connection error.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.request_with(method, params, true, self.inner.timeout)
            .await
    }

    /// Sends a request and waits for its answer or for `cancel` to complete, whichever
    /// comes first. On cancel the server is told (`notifications/cancelled` naming the
    /// request, with `reason`) and [`ClientError::Cancelled`] is returned. No timeout
    /// applies: the caller's `cancel` is the limit.
    ///
    /// # Errors
    /// The server's JSON-RPC error, a connection error, or the cancellation.
    pub async fn request_cancellable(
        &self,
        method: &str,
        params: Value,
        cancel: impl std::future::Future<Output = ()>,
        reason: &str,
    ) -> Result<Value, ClientError> {
        let (id, answer) = self.inner.peer.register()?;
        let message = jsonrpc::request(&id, method, params);
        if let Err(e) = self.inner.transport.send_request(id.clone(), message) {
            self.inner.peer.forget(&id);
            return Err(e);
        }
        tokio::select! {
            answer = answer => answer.unwrap_or(Err(ClientError::Closed)),
            () = cancel => {
                self.inner.peer.forget(&id);
                let notice = jsonrpc::notification(
                    m::NOTIF_CANCELLED,
                    json!({ "requestId": id, "reason": reason }),
                );
                if let Err(e) = self.inner.transport.send_message(&notice).await {
                    tracing::debug!(error = %e, "could not tell the server of a cancelled request");
                }
                Err(ClientError::Cancelled)
            }
        }
    }

    /// How a stdio server this client started ended ("exited with status 1"),
    /// waiting at most `wait` for it to end; `None` while it runs and for HTTP
    /// servers.
    pub async fn server_exit_status(&self, wait: Duration) -> Option<String> {
        self.inner.transport.exit_status(wait).await
    }

    /// The last lines a stdio server wrote on stderr, for error messages.
    pub fn server_stderr_tail(&self) -> Option<String> {
        self.inner.transport.diagnostics()
    }

    /// Whether the connection is gone (the server exited or closed the stream).
    pub fn is_closed(&self) -> bool {
        self.inner.peer.is_closed()
    }

    /// Asks the server for log messages of `level` and above (`logging/setLevel`);
    /// they reach the handler registered with [`ClientBuilder::on_log`].
    ///
    /// # Errors
    /// [`ClientError::Unsupported`] on a connection without a session to set it on
    /// (the extension wire) or when the server did not declare `logging`; the
    /// server's JSON-RPC error; a connection error.
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        if self.wire() == Wire::V2026_07_28 {
            return Err(ClientError::Unsupported(
                "the extension wire has no logging/setLevel (connect with the 2025-11-25 wire to get log messages)".into(),
            ));
        }
        let declared = self.inner.server.capabilities.get("logging").is_some()
            || self.inner.server.capabilities.is_null();
        if !declared {
            return Err(ClientError::Unsupported(
                "the server offers no logging (no capabilities.logging)".into(),
            ));
        }
        self.request(m::LOGGING_SET_LEVEL, json!({ "level": level }))
            .await
            .map(|_| ())
    }

    /// Lists the server's tools (every page).
    ///
    /// # Errors
    /// The server's JSON-RPC error, a connection error, or an unreadable tool list.
    pub async fn tools(&self) -> Result<Vec<ToolInfo>, ClientError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let page = self.request(m::TOOLS_LIST, params).await?;
            let list = page
                .get("tools")
                .and_then(Value::as_array)
                .ok_or_else(|| ClientError::protocol("tools/list answered without 'tools'"))?;
            for t in list {
                tools.push(ToolInfo::parse(t)?);
            }
            match next_cursor(&page, &cursor)? {
                Some(c) => cursor = Some(c),
                None => return Ok(tools),
            }
        }
        Err(ClientError::protocol("tools/list never stopped paging"))
    }

    /// Calls a tool and waits for its result, without asking for a task. On the
    /// extension wire the extension is not declared, so the server runs the call at
    /// once (a tool that requires a task then fails with -32021).
    ///
    /// # Errors
    /// The server's JSON-RPC error or a connection error. A tool error is a result
    /// with `isError: true`, not an error.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        self.call_plain(json!({ "name": name, "arguments": arguments }))
            .await
    }

    /// `tools/call` without asking for a task, with the given params.
    async fn call_plain(&self, params: Value) -> Result<Value, ClientError> {
        match self.call_rounds(params, false).await? {
            CallReply::Immediate(v) => Ok(v),
            CallReply::Task(view) => {
                let handle = TaskHandle::follow(self.clone(), view, None);
                let outcome = handle.result().await?;
                match (outcome.result, outcome.error) {
                    (Some(r), _) => Ok(r),
                    (None, Some(e)) => Err(ClientError::Rpc(e)),
                    (None, None) => Err(ClientError::protocol("the task ended without a result")),
                }
            }
            CallReply::InputRequired(_) => Err(ClientError::protocol(
                "the server kept asking for input; gave up",
            )),
        }
    }

    /// [`Client::call_tool`] with a progress token: the server's progress notifications
    /// for this call (`notifications/progress`) go to `on_progress` while it runs.
    /// Tools that are not tasks report their progress only this way (the everything
    /// server's `trigger-long-running-operation`, say), so a caller that shows a
    /// progress bar needs it.
    ///
    /// # Errors
    /// As [`Client::call_tool`].
    pub async fn call_tool_with_progress<F>(
        &self,
        name: &str,
        arguments: Value,
        on_progress: F,
    ) -> Result<Value, ClientError>
    where
        F: Fn(Progress) + Send + Sync + 'static,
    {
        let token = json!(format!(
            "mcp-tasks-client-{}",
            self.inner.next_token.fetch_add(1, Ordering::Relaxed)
        ));
        lock(&self.inner.call_progress).insert(token.to_string(), Arc::new(on_progress));
        let _guard = ProgressGuard {
            inner: &self.inner,
            token: token.to_string(),
        };
        let params = json!({
            "name": name,
            "arguments": arguments,
            "_meta": { "progressToken": token },
        });
        self.call_plain(params).await
    }

    /// Sends a response to a server request.
    pub(crate) async fn respond(&self, id: &RequestId, result: Result<Value, RpcError>) -> Value {
        let message = match result {
            Ok(v) => jsonrpc::response(id, v),
            Err(e) => jsonrpc::error_response(Some(id), &e),
        };
        if let Err(e) = self.inner.transport.send_message(&message).await {
            tracing::debug!(%id, error = %e, "could not send the answer to a server request");
        }
        message
    }

    /// The HTTP session id (2025-11-25 over HTTP), to rejoin it later with
    /// [`ClientBuilder::resume_session`].
    pub fn session_id(&self) -> Option<String> {
        self.inner.transport.session()
    }

    /// Stops this client but leaves its HTTP session open on the server, so a later
    /// client can rejoin it (servers that bind tasks to sessions need that); returns
    /// the session id. Over stdio this is [`Client::close`].
    pub async fn detach(self) -> Option<String> {
        match &self.inner.transport {
            Transport::Http(t) => {
                let sid = t.session();
                t.leave();
                self.inner.peer.close();
                sid
            }
            Transport::Stdio(_) => {
                self.close().await;
                None
            }
        }
    }

    /// Ends the session (HTTP `DELETE`) or stops the child process (stdio). Tasks go on
    /// on the server and can be resumed by id from another connection.
    pub async fn close(self) {
        self.inner.transport.close().await;
        self.inner.peer.close();
    }
}

/// A -32601 answer to a task method means the server does not offer it.
pub(crate) fn unsupported_if_unknown(e: ClientError, method: &str) -> ClientError {
    match e {
        ClientError::Rpc(r) if r.code == mcp_tasks_protocol::error_code::METHOD_NOT_FOUND => {
            ClientError::Unsupported(format!(
                "the server does not offer {method} ({})",
                r.message
            ))
        }
        other => other,
    }
}

pub(crate) fn next_cursor(
    page: &Value,
    current: &Option<String>,
) -> Result<Option<String>, ClientError> {
    match page.get("nextCursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(c)) if Some(c) == current.as_ref() => {
            Err(ClientError::protocol("the server repeated the same cursor"))
        }
        Some(Value::String(c)) => Ok(Some(c.clone())),
        Some(_) => Err(ClientError::protocol("nextCursor must be a string")),
    }
}
