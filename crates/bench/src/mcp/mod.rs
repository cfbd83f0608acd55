//! One MCP session over one keep-alive connection, speaking either task wire.
//!
//! | | `2025-11-25` | `extension` (`io.modelcontextprotocol/tasks`) |
//! |---|---|---|
//! | session | `initialize` (`protocolVersion` 2025-11-25) | stateless 2026-07-28 (`server/discover`; `_meta` protocol version and capabilities with the extension in every request, `Mcp-Method`/`Mcp-Name` headers), or, for servers without it (rmcp), `initialize` declaring `capabilities.extensions["io.modelcontextprotocol/tasks"]` |
//! | create | `tools/call` with `params.task: {}` → `{task: {taskId, status}}` | `tools/call` (the server decides) → flat `{resultType: "task", taskId, status}`, or a plain result (done, no task) |
//! | poll | `tasks/get` → flat task | `tasks/get` → `DetailedTask` (result inlined when completed) |
//! | result | `tasks/result` (blocks until terminal) | none: poll `tasks/get` until terminal |
//! | sync call | `tools/call` without `task` | `tools/call` without the extension declared |

//!
//! `open.rs` opens a session, `calls.rs` holds the requests the figures send, and
//! `reply.rs` reads the replies (only the fields the bench looks at).

mod calls;
mod open;
mod reply;

use std::borrow::Cow;

use crate::error::BenchError;
use crate::http::HttpConn;
use reply::reply_bytes;

/// The protocol version the bench proposes at `initialize`.
pub const PROTOCOL_VERSION: &str = "2025-11-25";
/// The stateless protocol version of the extension wire, tried before a session.
pub const STATELESS_VERSION: &str = "2026-07-28";
/// The Tasks extension id.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Which task wire to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum Wire {
    /// MCP 2025-11-25 experimental tasks: `params.task`, `tasks/get|result`.
    #[value(name = "2025-11-25")]
    #[serde(rename = "2025-11-25")]
    V2025_11_25,
    /// The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): the server
    /// decides which calls become tasks; `tasks/get` returns a `DetailedTask`.
    #[value(name = "2026-07-28", alias = "extension")]
    #[serde(rename = "2026-07-28")]
    V2026_07_28,
}

impl Wire {
    /// The flag spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Wire::V2025_11_25 => "2025-11-25",
            Wire::V2026_07_28 => "2026-07-28",
        }
    }
}

/// How a session is opened.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// The task wire.
    pub wire: Wire,
    /// Declare the tasks extension at `initialize` (extension wire only). A session
    /// without it gets plain synchronous tool calls.
    pub declare_tasks: bool,
    /// Also accept `text/event-stream` replies. Servers that require it (rmcp) get it
    /// always; ours answers JSON to clients that accept only JSON.
    pub accept_sse: bool,
    /// Keep the socket's default options (Nagle's algorithm on), as ordinary HTTP
    /// clients do, instead of the generator's `TCP_NODELAY`.
    pub ordinary_socket: bool,
}

/// A task's status as the server reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// `working` or `input_required`.
    Live,
    /// `completed`, `failed` or `cancelled`.
    Terminal,
}

/// What a task-capable `tools/call` came back as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    /// A task, with its id.
    Task(String),
    /// A plain result (extension wire: the server ran the call synchronously), so the
    /// call is done without any poll.
    Done,
}

/// An initialized session on its own connection.
#[derive(Debug)]
pub struct McpConn {
    http: HttpConn,
    wire: Wire,
    next_id: u64,
    body: Vec<u8>,
    /// On the stateless 2026-07-28 wire: the `"_meta":{…}` member every request's
    /// params carry (protocol version and client capabilities); `None` in a session.
    meta: Option<String>,
    /// Whether the server answers `ping` (rmcp 3.9 does not on the stateless wire).
    ping: bool,
    /// The server's port, read once when the connection opened.
    server_port: u16,
}

impl McpConn {
    /// The wire this session speaks.
    pub fn wire(&self) -> Wire {
        self.wire
    }

    /// The port of the server this session talks to: with several replicas on one
    /// host, each on its own port, it names the replica (`bench replicas` counts the
    /// reads that reach another replica than the one that created the task).
    pub fn server_port(&self) -> u16 {
        self.server_port
    }

    /// Whether the server answers `ping` on this session's wire.
    pub fn supports_ping(&self) -> bool {
        self.ping
    }

    /// Sends one request and returns the JSON-RPC reply body. `name` is what the
    /// request is about (a tool name or task id): on the stateless wire it goes in the
    /// `Mcp-Name` header, with the method in `Mcp-Method` and `_meta` in the params.
    async fn request(
        &mut self,
        method: &str,
        name: Option<&str>,
        params: &str,
    ) -> Result<Cow<'_, [u8]>, BenchError> {
        let id = self.next_id;
        self.next_id += 1;
        self.body.clear();
        let params: Cow<'_, str> = match &self.meta {
            None => Cow::Borrowed(params),
            Some(meta) => Cow::Owned(with_meta(params, meta)),
        };
        self.body.extend_from_slice(
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
                .as_bytes(),
        );
        let resp = if self.meta.is_some() {
            let mut headers = vec![("Mcp-Method", method)];
            if let Some(n) = name {
                headers.push(("Mcp-Name", n));
            }
            self.http.post_with(&self.body, &headers).await?
        } else {
            self.http.post(&self.body).await?
        };
        if resp.status != 200 {
            return Err(BenchError::Rpc {
                method: method.into(),
                message: format!(
                    "HTTP {}: {}",
                    resp.status,
                    String::from_utf8_lossy(resp.body)
                ),
            });
        }
        reply_bytes(resp.event_stream, resp.body)
    }
}

/// `params` (a JSON object text) with the `_meta` member added first.
fn with_meta(params: &str, meta: &str) -> String {
    let inner = params
        .trim()
        .strip_prefix('{')
        .unwrap_or(params)
        .trim_start();
    if inner.starts_with('}') {
        format!("{{{meta}}}")
    } else {
        format!("{{{meta},{inner}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_goes_first_into_the_params() {
        assert_eq!(with_meta("{}", r#""_meta":{}"#), r#"{"_meta":{}}"#);
        assert_eq!(
            with_meta(r#"{"taskId":"a"}"#, r#""_meta":{}"#),
            r#"{"_meta":{},"taskId":"a"}"#
        );
    }
}
