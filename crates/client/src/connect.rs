//! [`ClientBuilder`]: the options of a connection and the handshake that opens it
//! (`server/discover` or `initialize`, a resumed session, the wire chosen).

use futures::FutureExt;
use mcp_tasks_protocol::codec::v2026_07_28;
use mcp_tasks_protocol::jsonrpc::{self};
use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::{version, RpcError};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::client::{lock, Client, Inner, ServerInfo, Target, DEFAULT_REQUEST_TIMEOUT};
use crate::error::ClientError;
use crate::input::{Handler, Handlers, InputRequest};
use crate::log::ServerLog;
use crate::peer::Peer;
use crate::transport::http::{HttpMode, HttpTransport};
use crate::transport::stdio::StdioTransport;
use crate::transport::Transport;
use crate::wire::{self, Wire, WirePreference};
use mcp_tasks_protocol::Secret;

/// Settings and handlers for a connection; [`ClientBuilder::connect`] makes it.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    handlers: Handlers,
    // Secrets: the derived `Debug` prints `***` for them.
    token: Option<Secret<String>>,
    wire: WirePreference,
    client_name: String,
    client_version: String,
    request_timeout: Option<Duration>,
    session: Option<String>,
    stdio: StdioOptions,
    headers: Vec<(String, Secret<String>)>,
}

/// How a stdio server is started besides its command line.
#[derive(Debug, Clone, Default)]
pub(crate) struct StdioOptions {
    /// Variables added to the inherited environment (values may be API keys).
    pub(crate) env: Vec<(String, Secret<String>)>,
    /// The working directory, when not ours.
    pub(crate) cwd: Option<std::path::PathBuf>,
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

    /// Over HTTP, rejoins an existing 2025-11-25 session (from [`Client::session_id`]
    /// before a [`Client::detach`]) instead of opening a new one; a server that no
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
                &self.headers,
                Arc::clone(&peer),
            )?),
            Target::Stdio { program, args } => {
                if self.wire == WirePreference::V2026_07_28 {
                    return Err(ClientError::Unsupported(
                        "the extension wire is stateless HTTP; connect over HTTP to use it".into(),
                    ));
                }
                Transport::Stdio(StdioTransport::spawn(
                    program,
                    args,
                    &self.stdio,
                    Arc::clone(&peer),
                )?)
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
            call_progress: Mutex::new(HashMap::new()),
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

pub(crate) async fn raw_request(
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
