//! Opening a session: the stateless 2026-07-28 wire when the server speaks it, else
//! `initialize` and `notifications/initialized`.

use super::reply::{check_envelope, check_task_support, reply_bytes};
use super::{McpConn, SessionOptions, Wire, PROTOCOL_VERSION, STATELESS_VERSION, TASKS_EXTENSION};
use crate::error::BenchError;
use crate::http::{Endpoint, HttpConn};

impl McpConn {
    /// Opens a session. On the extension wire it first asks `server/discover` on the
    /// stateless 2026-07-28 protocol (every request then carries its own `_meta`);
    /// a server that does not speak it (rmcp) gets a 2025-11-25 session that declares
    /// the extension at `initialize`. On 2025-11-25: `initialize` and
    /// `notifications/initialized`.
    ///
    /// # Errors
    /// Connection failures, a refused `initialize`, or a missing session id.
    pub async fn open(endpoint: &Endpoint, opts: &SessionOptions) -> Result<Self, BenchError> {
        Self::open_with(endpoint, opts, "").await
    }

    /// [`McpConn::open`], declaring more client capabilities: `more` is members of the
    /// capabilities object (e.g. `"elicitation":{}`, for tools that ask questions).
    ///
    /// # Errors
    /// As [`McpConn::open`].
    pub async fn open_with(
        endpoint: &Endpoint,
        opts: &SessionOptions,
        more: &str,
    ) -> Result<Self, BenchError> {
        let mut members: Vec<String> = Vec::new();
        if opts.wire == Wire::V2026_07_28 && opts.declare_tasks {
            members.push(format!(r#""extensions":{{"{TASKS_EXTENSION}":{{}}}}"#));
        }
        if !more.is_empty() {
            members.push(more.to_string());
        }
        let capabilities = format!("{{{}}}", members.join(","));
        if opts.wire == Wire::V2026_07_28 {
            if let Some(conn) = Self::open_stateless(endpoint, opts, &capabilities).await? {
                return Ok(conn);
            }
        }
        let mut conn = Self::connect(endpoint, opts).await?;
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{PROTOCOL_VERSION}","capabilities":{capabilities},"clientInfo":{{"name":"mcp-tasks-bench","version":"{}"}}}}}}"#,
            env!("CARGO_PKG_VERSION")
        );
        let resp = conn.http.post(init.as_bytes()).await?;
        if resp.status != 200 {
            return Err(BenchError::Rpc {
                method: "initialize".into(),
                message: format!(
                    "HTTP {}: {}",
                    resp.status,
                    String::from_utf8_lossy(resp.body)
                ),
            });
        }
        let session = resp.session_id.clone();
        let body = reply_bytes(resp.event_stream, resp.body)?.into_owned();
        check_envelope("initialize", &body)?;
        if opts.declare_tasks {
            check_task_support(opts.wire, &body)?;
        }
        if let Some(id) = session {
            conn.http.add_header("Mcp-Session-Id", &id);
        }
        conn.http
            .add_header("Mcp-Protocol-Version", PROTOCOL_VERSION);
        let resp = conn
            .http
            .post(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await?;
        if !(200..300).contains(&resp.status) {
            return Err(BenchError::Rpc {
                method: "notifications/initialized".into(),
                message: format!("HTTP {}", resp.status),
            });
        }
        Ok(conn)
    }

    async fn connect(endpoint: &Endpoint, opts: &SessionOptions) -> Result<Self, BenchError> {
        let accept = if opts.accept_sse || opts.wire == Wire::V2026_07_28 {
            "application/json, text/event-stream"
        } else {
            "application/json"
        };
        let http = HttpConn::connect(endpoint, accept, !opts.ordinary_socket).await?;
        Ok(McpConn {
            server_port: http.peer_port(),
            http,
            wire: opts.wire,
            next_id: 1,
            body: Vec::with_capacity(512),
            meta: None,
            ping: true,
        })
    }

    /// The stateless 2026-07-28 wire, when the server answers `server/discover` with
    /// it; `None` otherwise.
    async fn open_stateless(
        endpoint: &Endpoint,
        opts: &SessionOptions,
        capabilities: &str,
    ) -> Result<Option<Self>, BenchError> {
        let mut conn = Self::connect(endpoint, opts).await?;
        conn.http
            .add_header("Mcp-Protocol-Version", STATELESS_VERSION);
        conn.meta = Some(format!(
            r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{STATELESS_VERSION}","io.modelcontextprotocol/clientCapabilities":{capabilities},"io.modelcontextprotocol/clientInfo":{{"name":"mcp-tasks-bench","version":"{}"}}}}"#,
            env!("CARGO_PKG_VERSION")
        ));
        let body = match conn.request("server/discover", None, "{}").await {
            Ok(body) => body.into_owned(),
            Err(BenchError::Rpc { .. } | BenchError::Http(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let speaks = v["result"]["supportedVersions"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == STATELESS_VERSION));
        if !speaks {
            return Ok(None);
        }
        if opts.declare_tasks {
            check_task_support(opts.wire, &body)?;
        }
        conn.ping = match conn.ping().await {
            Ok(()) => true,
            Err(BenchError::Rpc { message, .. }) if message.contains("-32601") => false,
            Err(e) => return Err(e),
        };
        Ok(Some(conn))
    }
}
