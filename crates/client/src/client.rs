//! [`Client`]: one connection to one server, with the wire negotiated: what the
//! server said about itself, requests of any method, the tool list, log levels,
//! detaching and closing. A client is its `Connection`, the dispatcher's
//! `Subscriptions` and the [`ServerInfo`]. Tool calls and the task methods live in
//! `task_calls`; following a task lives in [`crate::task`].

use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::{version, LoggingLevel};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::connection::Connection;
use crate::dispatch::{Dispatched, Subscriptions};
use crate::error::ClientError;
use crate::input::Handlers;
use crate::peer::Inbound;
use crate::reply::{self, ToolsPage};
use crate::tools::ToolInfo;
use crate::transport::Transport;
use crate::wire::{self, Wire};

pub use crate::builder::ClientBuilder;
pub use crate::connection::DEFAULT_REQUEST_TIMEOUT;

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

/// The state behind a [`Client`]: the connection, what the server said, the
/// caller's handlers, and who listens for what the server sends on its own.
pub(crate) struct Inner {
    pub(crate) conn: Connection,
    pub(crate) server: ServerInfo,
    pub(crate) handlers: Handlers,
    pub(crate) capabilities: Value,
    pub(crate) client_info: Value,
    pub(crate) timeout: Option<Duration>,
    pub(crate) subscriptions: Subscriptions,
    pub(crate) next_token: AtomicU64,
    dispatcher: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(d) = self.dispatcher.lock().take() {
            d.abort();
        }
        self.conn.close_peer();
    }
}

impl Dispatched for Inner {
    fn connection(&self) -> &Connection {
        &self.conn
    }

    fn handlers(&self) -> &Handlers {
        &self.handlers
    }

    fn subscriptions(&self) -> &Subscriptions {
        &self.subscriptions
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
    /// The client of a connection whose handshake is done: starts the dispatcher that
    /// answers what the server sends on its own (`inbound`).
    pub(crate) fn new(
        conn: Connection,
        inbound: mpsc::UnboundedReceiver<Inbound>,
        server: ServerInfo,
        handlers: Handlers,
        capabilities: Value,
        client_info: Value,
        timeout: Option<Duration>,
    ) -> Client {
        let inner = Arc::new(Inner {
            conn,
            server,
            handlers,
            capabilities,
            client_info,
            timeout,
            subscriptions: Subscriptions::default(),
            next_token: AtomicU64::new(1),
            dispatcher: Mutex::new(None),
        });
        let task = tokio::spawn(crate::dispatch::run(Arc::downgrade(&inner), inbound));
        *inner.dispatcher.lock() = Some(task);
        inner.conn.start_ordering();
        Client { inner }
    }

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
        self.inner.conn.request(method, params, timeout).await
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
        self.inner
            .conn
            .request_cancellable(method, params, cancel, reason)
            .await
    }

    /// How a stdio server this client started ended ("exited with status 1"),
    /// waiting at most `wait` for it to end; `None` while it runs and for HTTP
    /// servers.
    pub async fn server_exit_status(&self, wait: Duration) -> Option<String> {
        self.inner.conn.transport().exit_status(wait).await
    }

    /// The last lines a stdio server wrote on stderr, for error messages.
    pub fn server_stderr_tail(&self) -> Option<String> {
        self.inner.conn.transport().diagnostics()
    }

    /// Whether the connection is gone (the server exited or closed the stream).
    pub fn is_closed(&self) -> bool {
        self.inner.conn.is_closed()
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
            let page: ToolsPage = reply::parse(m::TOOLS_LIST, &page)?;
            for (i, t) in page.tools.iter().enumerate() {
                tools.push(ToolInfo::read(&format!("tools/list: tools[{i}]"), t)?);
            }
            match next_cursor(page.next_cursor, &cursor)? {
                Some(c) => cursor = Some(c),
                None => return Ok(tools),
            }
        }
        Err(ClientError::protocol("tools/list never stopped paging"))
    }

    /// The HTTP session id (2025-11-25 over HTTP), to rejoin it later with
    /// [`ClientBuilder::resume_session`].
    pub fn session_id(&self) -> Option<String> {
        self.inner.conn.transport().session()
    }

    /// Stops this client but leaves its HTTP session open on the server, so a later
    /// client can rejoin it (servers that bind tasks to sessions need that); returns
    /// the session id. Over stdio this is [`Client::close`].
    pub async fn detach(self) -> Option<String> {
        match self.inner.conn.transport() {
            Transport::Http(t) => {
                let sid = t.session();
                t.leave();
                self.inner.conn.close_peer();
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
        self.inner.conn.close().await;
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

/// The cursor of the next page, refusing one that repeats the current cursor (a
/// server that would page forever).
pub(crate) fn next_cursor(
    next: Option<String>,
    current: &Option<String>,
) -> Result<Option<String>, ClientError> {
    match next {
        Some(c) if Some(&c) == current.as_ref() => {
            Err(ClientError::protocol("the server repeated the same cursor"))
        }
        next => Ok(next),
    }
}
