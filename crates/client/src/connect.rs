//! [`ClientBuilder::connect`]: the handshake that opens a connection
//! (`server/discover` or `initialize`, a resumed session, the wire chosen) and makes
//! the [`Client`].

use mcp_tasks_protocol::codec::v2026_07_28;
use mcp_tasks_protocol::jsonrpc;
use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::version;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

use crate::builder::ClientBuilder;
use crate::client::{Client, ServerInfo, Target};
use crate::connection::Connection;
use crate::error::ClientError;
use crate::peer::Peer;
use crate::reply::{self, DiscoverResult, InitializeResult};
use crate::transport::http::{HttpMode, HttpTransport};
use crate::transport::stdio::StdioTransport;
use crate::transport::Transport;
use crate::wire::{self, Wire, WirePreference};

impl ClientBuilder {
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
        let conn = Connection::new(peer, transport);
        let capabilities = self.handlers.capabilities();
        let info = json!({ "name": self.client_name, "version": self.client_version });
        let mut handshake = Handshake {
            conn: &conn,
            timeout: self.request_timeout,
        };
        let negotiated = match &self.session {
            Some(sid) => handshake.rejoin(sid).await,
            None => Ok(None),
        };
        let negotiated = match negotiated {
            Ok(Some(s)) => Ok(s),
            Ok(None) => handshake.negotiate(self.wire, &capabilities, &info).await,
            Err(e) => Err(e),
        };
        let server = match negotiated {
            Ok(s) => s,
            Err(e) => {
                let e = match (e, conn.transport().diagnostics()) {
                    (ClientError::Closed, Some(tail)) => {
                        ClientError::Connect(format!("the server exited:\n{tail}"))
                    }
                    (ClientError::Closed, None) => {
                        ClientError::Connect("the server closed the connection".into())
                    }
                    (e, _) => e,
                };
                conn.transport().close().await;
                return Err(e);
            }
        };
        Ok(Client::new(
            conn,
            inbound,
            server,
            self.handlers,
            capabilities,
            info,
            self.request_timeout,
        ))
    }
}

/// The requests made before the client exists: discover, initialize.
struct Handshake<'a> {
    conn: &'a Connection,
    timeout: Option<Duration>,
}

impl Handshake<'_> {
    async fn request(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.conn.request(method, params, self.timeout).await
    }

    /// Rejoins session `sid`: `Ok(None)` when the server no longer knows it.
    async fn rejoin(&mut self, sid: &str) -> Result<Option<ServerInfo>, ClientError> {
        let Transport::Http(http) = self.conn.transport() else {
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
        http.open_session_stream().await;
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
        if let Transport::Http(http) = self.conn.transport() {
            if pref != WirePreference::V2025_11_25 {
                http.set_mode(HttpMode::Stateless);
                let meta = wire::stateless_meta(capabilities, true, info);
                let reply = self
                    .request(m::SERVER_DISCOVER, wire::with_meta(json!({}), &meta))
                    .await
                    .and_then(|v| reply::parse::<DiscoverResult>(m::SERVER_DISCOVER, &v));
                match reply {
                    Ok(d) if offers_extension(&d) => {
                        let server_info = d.meta.server_info.unwrap_or_default();
                        return Ok(ServerInfo {
                            wire: Wire::V2026_07_28,
                            protocol_version: version::V2026_07_28.into(),
                            name: server_info.name,
                            version: server_info.version,
                            capabilities: d.capabilities.unwrap_or_else(|| json!({})),
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
        // This client speaks tasks (it makes task-augmented calls and polls them):
        // said in `capabilities.tasks`, so a server offers it no task tools (those are
        // for clients that cannot poll).
        let mut capabilities = capabilities.clone();
        if let Some(caps) = capabilities.as_object_mut() {
            caps.entry("tasks").or_insert_with(|| json!({}));
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
        let reply: InitializeResult = reply::parse(m::INITIALIZE, &reply)?;
        let agreed = reply.protocol_version;
        if let Transport::Http(http) = self.conn.transport() {
            http.set_protocol_version(&agreed);
        }
        self.conn
            .transport()
            .send_message(&jsonrpc::notification(m::NOTIF_INITIALIZED, Value::Null))
            .await?;
        if let Transport::Http(http) = self.conn.transport() {
            http.open_session_stream().await;
        }
        let server_info = reply.server_info.unwrap_or_default();
        Ok(ServerInfo {
            wire: Wire::V2025_11_25,
            protocol_version: agreed,
            name: server_info.name,
            version: server_info.version,
            capabilities: reply.capabilities.unwrap_or_else(|| json!({})),
        })
    }
}

/// Whether a `server/discover` result offers the 2026-07-28 wire with the tasks
/// extension.
fn offers_extension(discover: &DiscoverResult) -> bool {
    discover
        .supported_versions
        .iter()
        .any(|v| v == version::V2026_07_28)
        && v2026_07_28::declares_extension(discover.capabilities.as_ref().unwrap_or(&Value::Null))
}
