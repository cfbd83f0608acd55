//! [`Client`]: one connection to one server, with the wire negotiated, and the calls
//! that do not follow a task (tools, get, list, cancel). Following a task lives in
//! [`crate::task`].

use futures::FutureExt;
use mcp_tasks_protocol::codec::v2026_07_28;
use mcp_tasks_protocol::jsonrpc::{self, RequestId};
use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::{version, LoggingLevel, RpcError, TaskId, TaskView};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::ClientError;
use crate::input::{Handler, Handlers, InputRequest};
use crate::log::ServerLog;
use crate::peer::Peer;
use crate::task::{TaskHandle, TaskOptions, WatchEvent};
use crate::tools::ToolInfo;
use crate::transport::http::{HttpMode, HttpTransport};
use crate::transport::stdio::StdioTransport;
use crate::transport::Transport;
use crate::wire::{self, CallReply, Wire, WirePreference};

/// How long a request may wait for its answer by default (`tasks/result` excepted:
/// it waits for the task by design).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Most pages `tasks/list` and `tools/list` are followed for, against a server whose
/// cursors never end.
const MAX_PAGES: usize = 1000;
/// Most MRTR rounds of one extension `tools/call`.
const MAX_INPUT_ROUNDS: usize = 16;

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

/// Settings and handlers for a connection; [`ClientBuilder::connect`] makes it.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    handlers: Handlers,
    token: Option<String>,
    wire: WirePreference,
    client_name: String,
    client_version: String,
    request_timeout: Option<Duration>,
    session: Option<String>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            handlers: Handlers::default(),
            token: None,
            wire: WirePreference::Auto,
            client_name: "mcp-tasks-client".into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            session: None,
        }
    }
}

fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(InputRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
{
    Arc::new(move |r| f(r).boxed())
}

impl ClientBuilder {
    /// Defaults: no handlers, no token, wire chosen automatically.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends `Authorization: Bearer <token>` on every HTTP request.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Chooses the wire instead of negotiating it.
    pub fn wire(mut self, wire: WirePreference) -> Self {
        self.wire = wire;
        self
    }

    /// The `clientInfo` sent to the server.
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_name = name.into();
        self.client_version = version.into();
        self
    }

    /// How long a request waits for its answer (`None`: forever). `tasks/result` always
    /// waits as long as its task runs.
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Over HTTP, rejoins an existing 2025-11-25 session (from [`Client::session_id`]
    /// before a [`Client::detach`]) instead of opening a new one; a server that no
    /// longer knows it gets a fresh `initialize`. Servers that bind tasks to sessions
    /// need this to let a restarted client pick its tasks up again.
    pub fn resume_session(mut self, session_id: impl Into<String>) -> Self {
        self.session = Some(session_id.into());
        self
    }

    /// Answers elicitations (`elicitation/create`) with `f`, and declares the
    /// `elicitation` capability. `f` returns an `ElicitResult` (see
    /// [`crate::input::accept`]).
    pub fn on_elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(InputRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handlers.elicitation = Some(handler(f));
        self
    }

    /// Answers sampling requests (`sampling/createMessage`) with `f`, and declares the
    /// `sampling` capability. `f` returns a `CreateMessageResult`.
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(InputRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handlers.sampling = Some(handler(f));
        self
    }

    /// Answers `roots/list` with `f`, and declares the `roots` capability. `f` returns
    /// a `ListRootsResult`.
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(InputRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handlers.roots = Some(handler(f));
        self
    }

    /// Shows every log message the server sends (`notifications/message`) to `f`;
    /// without it they are dropped. Which levels come is the server's choice until
    /// [`Client::set_log_level`] says.
    pub fn on_log<F>(mut self, f: F) -> Self
    where
        F: Fn(ServerLog) + Send + Sync + 'static,
    {
        self.handlers.log = Some(Arc::new(f));
        self
    }

    /// Connects to `target` and negotiates the wire.
    ///
    /// # Errors
    /// [`ClientError::Connect`] when the server cannot be reached or started, an error
    /// from the server when it refuses the handshake, [`ClientError::Unsupported`] when
    /// the extension wire was required and is not offered.
    pub async fn connect(self, target: &Target) -> Result<Client, ClientError> {
        let (peer, inbound) = Peer::new();
        let peer = Arc::new(peer);
        let transport = match target {
            Target::Http(url) => Transport::Http(HttpTransport::new(
                url,
                self.token.clone(),
                Arc::clone(&peer),
            )?),
            Target::Stdio { program, args } => {
                if self.wire == WirePreference::V2026_07_28 {
                    return Err(ClientError::Unsupported(
                        "the extension wire is stateless HTTP; connect over HTTP to use it".into(),
                    ));
                }
                Transport::Stdio(StdioTransport::spawn(program, args, Arc::clone(&peer))?)
            }
        };
        let capabilities = self.handlers.capabilities();
        let info = json!({ "name": self.client_name, "version": self.client_version });
        let mut conn = Handshake {
            peer: &peer,
            transport: &transport,
            timeout: self.request_timeout,
        };
        let negotiated = match &self.session {
            Some(sid) => conn.rejoin(sid).await,
            None => Ok(None),
        };
        let negotiated = match negotiated {
            Ok(Some(s)) => Ok(s),
            Ok(None) => conn.negotiate(self.wire, &capabilities, &info).await,
            Err(e) => Err(e),
        };
        let server = match negotiated {
            Ok(s) => s,
            Err(e) => {
                let e = match (e, transport.diagnostics()) {
                    (ClientError::Closed, Some(tail)) => {
                        ClientError::Connect(format!("the server exited:\n{tail}"))
                    }
                    (ClientError::Closed, None) => {
                        ClientError::Connect("the server closed the connection".into())
                    }
                    (e, _) => e,
                };
                transport.close().await;
                return Err(e);
            }
        };
        let inner = Arc::new(Inner {
            peer,
            transport,
            server,
            handlers: self.handlers,
            capabilities,
            client_info: info,
            timeout: self.request_timeout,
            watchers: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            answers: Mutex::new(HashMap::new()),
            next_token: AtomicU64::new(1),
            dispatcher: Mutex::new(None),
        });
        let task = tokio::spawn(crate::dispatch::run(Arc::downgrade(&inner), inbound));
        *lock(&inner.dispatcher) = Some(task);
        Ok(Client { inner })
    }
}

/// The requests made before the client exists: discover, initialize.
struct Handshake<'a> {
    peer: &'a Arc<Peer>,
    transport: &'a Transport,
    timeout: Option<Duration>,
}

impl Handshake<'_> {
    async fn request(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        raw_request(self.peer, self.transport, method, params, self.timeout).await
    }

    /// Rejoins session `sid`: `Ok(None)` when the server no longer knows it.
    async fn rejoin(&mut self, sid: &str) -> Result<Option<ServerInfo>, ClientError> {
        let Transport::Http(http) = self.transport else {
            return Err(ClientError::Unsupported(
                "only an HTTP connection has a session to resume".into(),
            ));
        };
        http.set_mode(HttpMode::Session);
        http.set_session(Some(sid.to_string()));
        http.set_protocol_version(version::V2025_11_25);
        match self.request(m::PING, json!({})).await {
            Ok(_) => {}
            Err(ClientError::Transport {
                status: Some(400 | 404),
                ..
            }) => {
                tracing::debug!("the server no longer knows the session; opening a new one");
                http.set_session(None);
                return Ok(None);
            }
            Err(e) => return Err(e),
        }
        http.open_session_stream();
        Ok(Some(ServerInfo {
            wire: Wire::V2025_11_25,
            protocol_version: version::V2025_11_25.into(),
            name: None,
            version: None,
            // Not known when rejoining: every task method is tried.
            capabilities: Value::Null,
        }))
    }

    async fn negotiate(
        &mut self,
        pref: WirePreference,
        capabilities: &Value,
        info: &Value,
    ) -> Result<ServerInfo, ClientError> {
        if let Transport::Http(http) = self.transport {
            if pref != WirePreference::V2025_11_25 {
                http.set_mode(HttpMode::Stateless);
                let meta = wire::stateless_meta(capabilities, true, info);
                let reply = self
                    .request(m::SERVER_DISCOVER, wire::with_meta(json!({}), &meta))
                    .await;
                match reply {
                    Ok(v) if offers_extension(&v) => {
                        let server_info = &v["_meta"]["io.modelcontextprotocol/serverInfo"];
                        return Ok(ServerInfo {
                            wire: Wire::V2026_07_28,
                            protocol_version: version::V2026_07_28.into(),
                            name: server_info["name"].as_str().map(str::to_string),
                            version: server_info["version"].as_str().map(str::to_string),
                            capabilities: v.get("capabilities").cloned().unwrap_or(json!({})),
                        });
                    }
                    Err(e @ (ClientError::Connect(_) | ClientError::Timeout(_))) => return Err(e),
                    Err(ClientError::Transport {
                        status: None,
                        message,
                    }) => return Err(ClientError::Connect(message)),
                    Err(e) if pref == WirePreference::V2026_07_28 => {
                        return Err(ClientError::Unsupported(format!(
                            "the server does not offer the tasks extension on 2026-07-28 ({e})"
                        )))
                    }
                    Ok(_) if pref == WirePreference::V2026_07_28 => {
                        return Err(ClientError::Unsupported(
                            "the server does not offer the tasks extension on 2026-07-28".into(),
                        ))
                    }
                    Ok(_) | Err(_) => {
                        tracing::debug!("server/discover did not offer the extension; initializing with 2025-11-25");
                    }
                }
            }
            http.set_mode(HttpMode::Session);
        }
        let reply = self
            .request(
                m::INITIALIZE,
                json!({
                    "protocolVersion": version::V2025_11_25,
                    "capabilities": capabilities,
                    "clientInfo": info,
                }),
            )
            .await?;
        let agreed = reply
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| ClientError::protocol("initialize answered without protocolVersion"))?
            .to_string();
        if let Transport::Http(http) = self.transport {
            http.set_protocol_version(&agreed);
        }
        self.transport
            .send_message(&jsonrpc::notification(m::NOTIF_INITIALIZED, Value::Null))
            .await?;
        if let Transport::Http(http) = self.transport {
            http.open_session_stream();
        }
        Ok(ServerInfo {
            wire: Wire::V2025_11_25,
            protocol_version: agreed,
            name: reply["serverInfo"]["name"].as_str().map(str::to_string),
            version: reply["serverInfo"]["version"].as_str().map(str::to_string),
            capabilities: reply.get("capabilities").cloned().unwrap_or(json!({})),
        })
    }
}

fn offers_extension(discover: &Value) -> bool {
    let versions = discover
        .get("supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|vs| vs.iter().any(|v| v == version::V2026_07_28));
    versions
        && v2026_07_28::declares_extension(discover.get("capabilities").unwrap_or(&Value::Null))
}

async fn raw_request(
    peer: &Peer,
    transport: &Transport,
    method: &str,
    params: Value,
    timeout: Option<Duration>,
) -> Result<Value, ClientError> {
    let (id, answer) = peer.register()?;
    let message = jsonrpc::request(&id, method, params);
    if let Err(e) = transport.send_request(id.clone(), message) {
        peer.forget(&id);
        return Err(e);
    }
    let answer = match timeout {
        Some(d) => match tokio::time::timeout(d, answer).await {
            Ok(a) => a,
            Err(_) => {
                peer.forget(&id);
                return Err(ClientError::Timeout(d));
            }
        },
        None => answer.await,
    };
    answer.unwrap_or(Err(ClientError::Closed))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while these locks are held.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The state behind a [`Client`].
pub(crate) struct Inner {
    pub(crate) peer: Arc<Peer>,
    pub(crate) transport: Transport,
    pub(crate) server: ServerInfo,
    pub(crate) handlers: Handlers,
    capabilities: Value,
    client_info: Value,
    timeout: Option<Duration>,
    /// Drivers of task handles, by task, for status, progress and input events.
    watchers: Mutex<HashMap<TaskId, Vec<mpsc::UnboundedSender<WatchEvent>>>>,
    /// Progress tokens of our task calls, by token text.
    progress: Mutex<HashMap<String, TaskId>>,
    /// Input requests seen (2025-11-25), by id: `None` while the handler runs, then
    /// the response sent (re-sent if the server asks again).
    pub(crate) answers: Mutex<HashMap<String, Option<Value>>>,
    next_token: AtomicU64,
    dispatcher: Mutex<Option<JoinHandle<()>>>,
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
        let params = json!({ "name": name, "arguments": arguments });
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

    /// Calls a tool as a task and returns a handle to follow it: its id, a stream of
    /// updates, and its result. Input requests of the task go to the registered
    /// handlers.
    ///
    /// On the extension wire the server decides: a tool it runs at once gives a handle
    /// without a task id whose result is ready.
    ///
    /// # Errors
    /// [`ClientError::Unsupported`] when the server has no tasks, the server's
    /// JSON-RPC error (e.g. -32601 when the tool forbids tasks), a connection error.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
        options: TaskOptions,
    ) -> Result<TaskHandle, ClientError> {
        if !self.supports_tasks() {
            return Err(ClientError::Unsupported(format!(
                "the server (protocol {}) does not run tool calls as tasks",
                self.inner.server.protocol_version
            )));
        }
        let mut params = json!({ "name": name, "arguments": arguments });
        let mut token = None;
        if self.wire() == Wire::V2025_11_25 {
            let mut task = json!({});
            if let Some(ttl) = options.ttl {
                task["ttl"] = json!(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
            }
            params["task"] = task;
            if options.progress {
                let t = json!(format!(
                    "mcp-tasks-client-{}",
                    self.inner.next_token.fetch_add(1, Ordering::Relaxed)
                ));
                params["_meta"] = json!({ "progressToken": t });
                token = Some(t);
            }
        }
        match self.call_rounds(params, true).await? {
            CallReply::Task(view) => {
                if let Some(t) = &token {
                    lock(&self.inner.progress).insert(t.to_string(), view.id.clone());
                }
                Ok(TaskHandle::follow(self.clone(), view, token))
            }
            CallReply::Immediate(v) => Ok(TaskHandle::ready(v)),
            CallReply::InputRequired(_) => Err(ClientError::protocol(
                "the server kept asking for input; gave up",
            )),
        }
    }

    /// `tools/call`, answering extension MRTR rounds (`input_required` results) with
    /// the registered handlers.
    async fn call_rounds(
        &self,
        mut params: Value,
        extension: bool,
    ) -> Result<CallReply, ClientError> {
        let mut responses = Map::new();
        for _ in 0..MAX_INPUT_ROUNDS {
            let reply = self
                .request_with(m::TOOLS_CALL, params.clone(), extension, self.inner.timeout)
                .await?;
            match wire::call_reply(self.wire(), reply)? {
                CallReply::InputRequired(requests) => {
                    for (key, req) in requests {
                        if responses.contains_key(&key) {
                            continue;
                        }
                        let answer = self.answer_input(None, &key, &req).await;
                        responses.insert(key, answer);
                    }
                    params["inputResponses"] = Value::Object(responses.clone());
                }
                other => return Ok(other),
            }
        }
        Ok(CallReply::InputRequired(Map::new()))
    }

    /// Asks the registered handler to answer an extension input request; a missing
    /// handler or a failed one answers an elicitation with `cancel`.
    pub(crate) async fn answer_input(
        &self,
        task: Option<&TaskId>,
        key: &str,
        request: &Value,
    ) -> Value {
        let method = request
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let req = InputRequest {
            method: method.clone(),
            params: request.get("params").cloned().unwrap_or(json!({})),
            task_id: task.cloned(),
            key: key.to_string(),
        };
        if let Some(task) = task {
            self.inner.notify(task, &WatchEvent::Input(req.clone()));
        }
        match self.inner.handlers.for_method(&method) {
            Some(h) => match h(req).await {
                Ok(v) => v,
                Err(e) => {
                    tracing::debug!(key, error = %e.message, "input handler failed; answering cancel");
                    crate::input::cancel()
                }
            },
            None => {
                tracing::debug!(
                    key,
                    method,
                    "no handler for an input request; answering cancel"
                );
                crate::input::cancel()
            }
        }
    }

    /// The current state of a task.
    ///
    /// # Errors
    /// -32602 for an unknown or expired task, a connection error.
    pub async fn get(&self, task_id: &TaskId) -> Result<TaskView, ClientError> {
        Ok(self.get_detailed(task_id).await?.0)
    }

    /// `tasks/get` with what the extension wire inlines (result, error, input
    /// requests); on 2025-11-25 the detail is always `Detail::None`.
    pub(crate) async fn get_detailed(
        &self,
        task_id: &TaskId,
    ) -> Result<(TaskView, v2026_07_28::Detail), ClientError> {
        let v = self
            .request(m::TASKS_GET, json!({ "taskId": task_id }))
            .await?;
        wire::task_reply(self.wire(), &v)
    }

    /// Every task the server lists for this client, following `nextCursor`.
    ///
    /// # Errors
    /// [`ClientError::Unsupported`] on the extension wire (it has no `tasks/list`) or
    /// when the server answers -32601; a connection error.
    pub async fn list(&self) -> Result<Vec<TaskView>, ClientError> {
        if self.wire() == Wire::V2026_07_28 {
            return Err(ClientError::Unsupported(
                "the tasks extension has no tasks/list".into(),
            ));
        }
        let mut tasks = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let page = self
                .request(m::TASKS_LIST, params)
                .await
                .map_err(|e| unsupported_if_unknown(e, m::TASKS_LIST))?;
            let list = page
                .get("tasks")
                .and_then(Value::as_array)
                .ok_or_else(|| ClientError::protocol("tasks/list answered without 'tasks'"))?;
            for t in list {
                tasks.push(wire::task_reply(Wire::V2025_11_25, t)?.0);
            }
            match next_cursor(&page, &cursor)? {
                Some(c) if seen.insert(c.clone()) => cursor = Some(c),
                Some(_) => return Err(ClientError::protocol("tasks/list repeated a cursor")),
                None => return Ok(tasks),
            }
        }
        Err(ClientError::protocol("tasks/list never stopped paging"))
    }

    /// Cancels a task and returns its state afterwards. Tried even when the server
    /// does not advertise `tasks.cancel` (some handle it all the same).
    ///
    /// # Errors
    /// [`ClientError::Unsupported`] when the server answers -32601; -32602 for an
    /// unknown task or (2025-11-25) one that already ended; a connection error.
    pub async fn cancel(&self, task_id: &TaskId) -> Result<TaskView, ClientError> {
        let v = self
            .request(m::TASKS_CANCEL, json!({ "taskId": task_id }))
            .await
            .map_err(|e| unsupported_if_unknown(e, m::TASKS_CANCEL))?;
        match self.wire() {
            Wire::V2025_11_25 => Ok(wire::task_reply(Wire::V2025_11_25, &v)?.0),
            Wire::V2026_07_28 => self.get(task_id).await,
        }
    }

    /// Follows a task created earlier (by this client before a restart, or by anyone
    /// holding its id): the same handle [`Client::call_tool_as_task`] returns.
    ///
    /// # Errors
    /// -32602 for an unknown or expired task, a connection error.
    pub async fn resume(&self, task_id: &TaskId) -> Result<TaskHandle, ClientError> {
        let view = self.get(task_id).await?;
        Ok(TaskHandle::follow(self.clone(), view, None))
    }

    /// Registers a watcher of `task`'s events.
    pub(crate) fn watch(&self, task: &TaskId) -> mpsc::UnboundedReceiver<WatchEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        lock(&self.inner.watchers)
            .entry(task.clone())
            .or_default()
            .push(tx);
        rx
    }

    /// Forgets the progress token of a finished task.
    pub(crate) fn forget_progress(&self, token: &Value) {
        lock(&self.inner.progress).remove(&token.to_string());
    }

    /// `tasks/result` (2025-11-25): waits for the task's outcome however long it runs.
    pub(crate) async fn task_result(&self, task_id: &TaskId) -> Result<Value, ClientError> {
        self.request_with(m::TASKS_RESULT, json!({ "taskId": task_id }), true, None)
            .await
    }

    /// `tasks/update` (extension): answers input requests by key.
    pub(crate) async fn update(
        &self,
        task_id: &TaskId,
        responses: Map<String, Value>,
    ) -> Result<(), ClientError> {
        self.request(
            m::TASKS_UPDATE,
            json!({ "taskId": task_id, "inputResponses": responses }),
        )
        .await
        .map(|_| ())
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
fn unsupported_if_unknown(e: ClientError, method: &str) -> ClientError {
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

fn next_cursor(page: &Value, current: &Option<String>) -> Result<Option<String>, ClientError> {
    match page.get("nextCursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(c)) if Some(c) == current.as_ref() => {
            Err(ClientError::protocol("the server repeated the same cursor"))
        }
        Some(Value::String(c)) => Ok(Some(c.clone())),
        Some(_) => Err(ClientError::protocol("nextCursor must be a string")),
    }
}
