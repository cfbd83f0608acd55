//! One MCP session over one keep-alive connection, speaking either task wire.
//!
//! | | `2025-11-25` | `extension` (`io.modelcontextprotocol/tasks`) |
//! |---|---|---|
//! | session | `initialize` (`protocolVersion` 2025-11-25) | stateless 2026-07-28 (`server/discover`; `_meta` protocol version and capabilities with the extension in every request, `Mcp-Method`/`Mcp-Name` headers), or, for servers without it (rmcp), `initialize` declaring `capabilities.extensions["io.modelcontextprotocol/tasks"]` |
//! | create | `tools/call` with `params.task: {}` → `{task: {taskId, status}}` | `tools/call` (the server decides) → flat `{resultType: "task", taskId, status}`, or a plain result (done, no task) |
//! | poll | `tasks/get` → flat task | `tasks/get` → `DetailedTask` (result inlined when completed) |
//! | result | `tasks/result` (blocks until terminal) | none: poll `tasks/get` until terminal |
//! | sync call | `tools/call` without `task` | `tools/call` without the extension declared |

use serde::Deserialize;
use std::borrow::Cow;

use crate::error::BenchError;
use crate::http::{sse_response, Endpoint, HttpConn};

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
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    result: Option<TaskFields<'a>>,
    #[serde(borrow, default)]
    error: Option<ErrorFields<'a>>,
}

#[derive(Deserialize)]
struct ErrorFields<'a> {
    #[serde(default)]
    code: i64,
    #[serde(borrow, default)]
    message: Cow<'a, str>,
}

/// The fields of a result the bench looks at; every other field is skipped unread.
#[derive(Deserialize, Default)]
struct TaskFields<'a> {
    #[serde(rename = "taskId", borrow, default)]
    task_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    task: Option<Box<TaskFields<'a>>>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
}

fn is_terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

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

    /// The wire this session speaks.
    pub fn wire(&self) -> Wire {
        self.wire
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

    /// `ping`.
    ///
    /// # Errors
    /// Transport failures or a JSON-RPC error.
    pub async fn ping(&mut self) -> Result<(), BenchError> {
        let body = self.request("ping", None, "{}").await?;
        check_envelope("ping", &body).map(|_| ())
    }

    /// Calls `tool` with `arguments` (a JSON object text) as a task; returns the id.
    ///
    /// # Errors
    /// Transport failures, a JSON-RPC error, or a reply that is not a task (the
    /// long-running calls of the create and get figures must become tasks).
    pub async fn create_task(&mut self, tool: &str, arguments: &str) -> Result<String, BenchError> {
        match self.call_as_task(tool, arguments).await? {
            Created::Task(id) => Ok(id),
            Created::Done => Err(BenchError::Rpc {
                method: "tools/call".into(),
                message: "the reply is a plain result, not a task (does the tool support tasks on this wire, and does it keep working?)".into(),
            }),
        }
    }

    /// Calls `tool` with `arguments` as a task. On the extension wire the server decides:
    /// it may answer a quick call with a plain `CallToolResult` (no task), which comes
    /// back as [`Created::Done`].
    ///
    /// # Errors
    /// Transport failures, a JSON-RPC error, a tool error, or (on 2025-11-25) a reply
    /// that is not a task.
    pub async fn call_as_task(
        &mut self,
        tool: &str,
        arguments: &str,
    ) -> Result<Created, BenchError> {
        let params = match self.wire {
            Wire::V2025_11_25 => {
                format!(r#"{{"name":"{tool}","arguments":{arguments},"task":{{}}}}"#)
            }
            Wire::V2026_07_28 => format!(r#"{{"name":"{tool}","arguments":{arguments}}}"#),
        };
        let wire = self.wire;
        let body = self.request("tools/call", Some(tool), &params).await?;
        created(wire, &body)
    }

    /// `tasks/get` until the task is terminal; returns how many requests that took.
    ///
    /// # Errors
    /// Transport failures or a JSON-RPC error.
    pub async fn poll_until_done(&mut self, task_id: &str) -> Result<u32, BenchError> {
        let mut n = 0;
        loop {
            n += 1;
            if self.get_task(task_id).await? == Status::Terminal {
                return Ok(n);
            }
            tokio::task::yield_now().await;
        }
    }

    /// `tasks/get`: the task's status.
    ///
    /// # Errors
    /// Transport failures, a JSON-RPC error, or a reply without a status.
    pub async fn get_task(&mut self, task_id: &str) -> Result<Status, BenchError> {
        let params = format!(r#"{{"taskId":"{task_id}"}}"#);
        let body = self.request("tasks/get", Some(task_id), &params).await?;
        let result = check_envelope("tasks/get", &body)?;
        match result.status.as_deref() {
            Some(s) if is_terminal(s) => Ok(Status::Terminal),
            Some(_) => Ok(Status::Live),
            None => Err(BenchError::Rpc {
                method: "tasks/get".into(),
                message: format!("no status in the reply: {}", String::from_utf8_lossy(&body)),
            }),
        }
    }

    /// Waits for the task's outcome: `tasks/result` on 2025-11-25; on the extension
    /// wire, `tasks/get` until the task is terminal. Returns how many requests it took.
    ///
    /// # Errors
    /// Transport failures or a JSON-RPC error.
    pub async fn task_result(&mut self, task_id: &str) -> Result<u32, BenchError> {
        match self.wire {
            Wire::V2025_11_25 => {
                let params = format!(r#"{{"taskId":"{task_id}"}}"#);
                let body = self.request("tasks/result", Some(task_id), &params).await?;
                check_envelope("tasks/result", &body)?;
                Ok(1)
            }
            Wire::V2026_07_28 => self.poll_until_done(task_id).await,
        }
    }

    /// Any request, its reply envelope parsed whole (`result` or `error`): for the
    /// soak's less frequent requests (`tasks/update`, a `tasks/get` that may find
    /// nothing), where reading every field matters more than parsing speed.
    ///
    /// # Errors
    /// Transport failures, an HTTP error status, or a reply that is not JSON.
    pub async fn request_json(
        &mut self,
        method: &str,
        name: Option<&str>,
        params: &str,
    ) -> Result<serde_json::Value, BenchError> {
        let body = self.request(method, name, params).await?;
        serde_json::from_slice(&body).map_err(|e| BenchError::Rpc {
            method: method.into(),
            message: format!("the reply is not JSON ({e})"),
        })
    }

    /// A plain synchronous `tools/call`.
    ///
    /// # Errors
    /// Transport failures, a JSON-RPC error, or a reply that is a task.
    pub async fn call_sync(&mut self, tool: &str, arguments: &str) -> Result<(), BenchError> {
        let params = format!(r#"{{"name":"{tool}","arguments":{arguments}}}"#);
        let body = self.request("tools/call", Some(tool), &params).await?;
        let result = check_envelope("tools/call", &body)?;
        if result.task_id.is_some() || result.task.is_some() {
            return Err(BenchError::Rpc {
                method: "tools/call".into(),
                message: "a synchronous call came back as a task".into(),
            });
        }
        if result.is_error == Some(true) {
            return Err(BenchError::Rpc {
                method: "tools/call".into(),
                message: format!("tool error: {}", String::from_utf8_lossy(&body)),
            });
        }
        Ok(())
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

/// Reads the reply to a task-capable `tools/call`.
fn created(wire: Wire, body: &[u8]) -> Result<Created, BenchError> {
    let result = check_envelope("tools/call", body)?;
    let is_error = result.is_error == Some(true);
    let id = match wire {
        Wire::V2025_11_25 => result.task.and_then(|t| t.task_id),
        Wire::V2026_07_28 => result.task_id,
    };
    match (id, wire) {
        (Some(id), _) => Ok(Created::Task(id.into_owned())),
        (None, Wire::V2026_07_28) if !is_error => Ok(Created::Done),
        (None, _) => Err(BenchError::Rpc {
            method: "tools/call".into(),
            message: format!(
                "the reply is not a task (does the tool support tasks on this wire?): {}",
                String::from_utf8_lossy(body)
            ),
        }),
    }
}

/// Refuses a server whose `initialize` result does not announce tasks on the chosen
/// wire: otherwise a long-running call would quietly run synchronously and hang.
fn check_task_support(wire: Wire, init_reply: &[u8]) -> Result<(), BenchError> {
    let v: serde_json::Value = serde_json::from_slice(init_reply).unwrap_or_default();
    let caps = &v["result"]["capabilities"];
    let ok = match wire {
        Wire::V2025_11_25 => caps["tasks"]["requests"]["tools"]["call"].is_object(),
        Wire::V2026_07_28 => caps["extensions"][TASKS_EXTENSION].is_object(),
    };
    if ok {
        return Ok(());
    }
    let how = match wire {
        Wire::V2025_11_25 => "capabilities.tasks.requests.tools.call",
        Wire::V2026_07_28 => "capabilities.extensions[\"io.modelcontextprotocol/tasks\"]",
    };
    Err(BenchError::Rpc {
        method: "initialize".into(),
        message: format!(
            "the server does not announce {how}, so it cannot run tools as tasks on the {} wire (try the other --wire); capabilities: {caps}",
            wire.as_str()
        ),
    })
}

/// The JSON-RPC message of a reply body (JSON, or the reply event of an SSE body).
fn reply_bytes(event_stream: bool, body: &[u8]) -> Result<Cow<'_, [u8]>, BenchError> {
    if !event_stream {
        return Ok(Cow::Borrowed(body));
    }
    sse_response(body)
        .map(Cow::Owned)
        .ok_or_else(|| BenchError::Http("an event stream without a JSON-RPC reply".into()))
}

/// Parses a reply, turning a JSON-RPC error into [`BenchError::Rpc`].
fn check_envelope<'a>(method: &str, body: &'a [u8]) -> Result<TaskFields<'a>, BenchError> {
    let env: Envelope<'a> = serde_json::from_slice(body).map_err(|e| BenchError::Rpc {
        method: method.into(),
        message: format!(
            "unparsable reply ({e}): {}",
            String::from_utf8_lossy(&body[..body.len().min(300)])
        ),
    })?;
    if let Some(err) = env.error {
        return Err(BenchError::Rpc {
            method: method.into(),
            message: format!("JSON-RPC error {}: {}", err.code, err.message),
        });
    }
    env.result.ok_or_else(|| BenchError::Rpc {
        method: method.into(),
        message: "a reply with neither result nor error".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_reads_both_create_shapes() {
        let nested = br#"{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"ab","status":"working","ttl":null},"_meta":{}}}"#;
        let r = check_envelope("tools/call", nested).expect("ok");
        assert_eq!(r.task.and_then(|t| t.task_id).as_deref(), Some("ab"));
        let flat = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"cd","status":"working","ttlMs":1}}"#;
        let r = check_envelope("tools/call", flat).expect("ok");
        assert_eq!(r.task_id.as_deref(), Some("cd"));
    }

    #[test]
    fn a_plain_result_is_done_only_on_the_extension_wire() {
        let plain =
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}"#;
        assert_eq!(created(Wire::V2026_07_28, plain).ok(), Some(Created::Done));
        assert!(created(Wire::V2025_11_25, plain).is_err());
        let failed = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}"#;
        assert!(created(Wire::V2026_07_28, failed).is_err());
        let task = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"t1","status":"working"}}"#;
        assert_eq!(
            created(Wire::V2026_07_28, task).ok(),
            Some(Created::Task("t1".into()))
        );
    }

    #[test]
    fn meta_goes_first_into_the_params() {
        assert_eq!(with_meta("{}", r#""_meta":{}"#), r#"{"_meta":{}}"#);
        assert_eq!(
            with_meta(r#"{"taskId":"a"}"#, r#""_meta":{}"#),
            r#"{"_meta":{},"taskId":"a"}"#
        );
    }

    #[test]
    fn envelope_turns_errors_into_rpc_errors() {
        let err = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown task"}}"#;
        match check_envelope("tasks/get", err) {
            Err(BenchError::Rpc { message, .. }) => assert!(message.contains("-32602")),
            other => panic!("expected an RPC error, got {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn task_support_is_read_from_the_initialize_result() {
        let ours = br#"{"result":{"capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}}}}"#;
        let ext =
            br#"{"result":{"capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}"#;
        assert!(check_task_support(Wire::V2025_11_25, ours).is_ok());
        assert!(check_task_support(Wire::V2026_07_28, ours).is_err());
        assert!(check_task_support(Wire::V2026_07_28, ext).is_ok());
        assert!(check_task_support(Wire::V2025_11_25, ext).is_err());
    }

    #[test]
    fn escaped_strings_still_parse() {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"taskId":"a\"b","status":"completed"}}"#;
        let r = check_envelope("tasks/get", body).expect("ok");
        assert_eq!(r.task_id.as_deref(), Some("a\"b"));
        assert!(is_terminal(r.status.as_deref().unwrap_or("")));
    }
}
