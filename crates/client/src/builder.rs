//! [`ClientBuilder`]: the settings and handlers of a connection, gathered before it
//! is made. [`ClientBuilder::connect`] (in the handshake module) makes it.

use futures::FutureExt;
use mcp_tasks_protocol::{RpcError, Secret};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::connection::DEFAULT_REQUEST_TIMEOUT;
use crate::input::{Handler, Handlers, InputRequest};
use crate::log::ServerLog;
use crate::transport::stdio::StdioOptions;
use crate::wire::WirePreference;

/// Settings and handlers for a connection; [`ClientBuilder::connect`] makes it.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    pub(crate) handlers: Handlers,
    // Secrets: the derived `Debug` prints `***` for them.
    pub(crate) token: Option<Secret<String>>,
    pub(crate) wire: WirePreference,
    pub(crate) client_name: String,
    pub(crate) client_version: String,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) session: Option<String>,
    pub(crate) stdio: StdioOptions,
    pub(crate) headers: Vec<(String, Secret<String>)>,
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
            stdio: StdioOptions::default(),
            headers: Vec::new(),
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
        self.token = Some(Secret::new(token.into()));
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

    /// Over HTTP, rejoins an existing 2025-11-25 session (from [`Client::session_id`](crate::Client::session_id)
    /// before a [`Client::detach`](crate::Client::detach)) instead of opening a new one; a server that no
    /// longer knows it gets a fresh `initialize`. Servers that bind tasks to sessions
    /// need this to let a restarted client pick its tasks up again.
    pub fn resume_session(mut self, session_id: impl Into<String>) -> Self {
        self.session = Some(session_id.into());
        self
    }

    /// Sets an environment variable of a stdio server this client starts (added to
    /// the inherited environment).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.stdio
            .env
            .push((name.into(), Secret::new(value.into())));
        self
    }

    /// Starts a stdio server in `dir` rather than the current directory.
    pub fn current_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.stdio.cwd = Some(dir.into());
        self
    }

    /// Sends a header with every HTTP request (an API key, say). Values are never
    /// printed in errors or logs.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), Secret::new(value.into())));
        self
    }

    /// Shows every notification the client does not consume itself to `f` (method and
    /// params): progress that no task handle follows, `notifications/tools/list_changed`,
    /// resource updates. Status notifications of followed tasks and log messages go
    /// their own ways.
    pub fn on_notification<F>(mut self, f: F) -> Self
    where
        F: Fn(&str, &Value) + Send + Sync + 'static,
    {
        self.handlers.notification = Some(Arc::new(f));
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
    /// [`Client::set_log_level`](crate::Client::set_log_level) says.
    pub fn on_log<F>(mut self, f: F) -> Self
    where
        F: Fn(ServerLog) + Send + Sync + 'static,
    {
        self.handlers.log = Some(Arc::new(f));
        self
    }
}
