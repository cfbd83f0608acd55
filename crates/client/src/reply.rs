//! Typed reading of what a server sends: the private serde shapes of the results and
//! notifications the client looks at, and [`parse`], which turns a shape that does not
//! fit into a [`ClientError::Protocol`] naming the method and the malformed field
//! (`tools/list: tools[2].name: invalid type: integer, expected a string`).
//!
//! The shapes accept unknown fields (MCP adds fields over time) and hold only what
//! the client reads; a task itself is read by the protocol crate's codecs
//! (`v2025_11_25::parse_task`, `v2026_07_28::parse_task`), which know `ttl` from `ttlMs`.

use mcp_tasks_protocol::TaskId;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::ClientError;

/// Reads `v` as `T`; `what` names the message (a method, or a method and a member)
/// for the error.
///
/// # Errors
/// [`ClientError::Protocol`] with `what`, the path of the field that did not fit, and
/// serde's reason.
pub(crate) fn parse<T: DeserializeOwned>(what: &str, v: &Value) -> Result<T, ClientError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            ClientError::protocol(format!("{what}: {}", e.inner()))
        } else {
            ClientError::protocol(format!("{what}: {path}: {}", e.inner()))
        }
    })
}

/// `serverInfo` (and the extension's `_meta` server info): who answered.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Implementation {
    /// The server's name.
    #[serde(default)]
    pub name: Option<String>,
    /// Its version.
    #[serde(default)]
    pub version: Option<String>,
}

/// The result of `initialize`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeResult {
    /// The version the server agreed on.
    pub protocol_version: String,
    /// What the server offers, kept as sent (the public [`crate::ServerInfo`] holds it).
    #[serde(default)]
    pub capabilities: Option<Value>,
    /// Who the server is.
    #[serde(default)]
    pub server_info: Option<Implementation>,
}

/// The result of `server/discover` (2026-07-28).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DiscoverResult {
    /// The protocol versions the server speaks.
    #[serde(default)]
    pub supported_versions: Vec<String>,
    /// What it offers, kept as sent.
    #[serde(default)]
    pub capabilities: Option<Value>,
    /// Where the stateless protocol puts the server's info.
    #[serde(default, rename = "_meta")]
    pub meta: DiscoverMeta,
}

/// The `_meta` of a `server/discover` result.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct DiscoverMeta {
    /// `io.modelcontextprotocol/serverInfo`.
    #[serde(default, rename = "io.modelcontextprotocol/serverInfo")]
    pub server_info: Option<Implementation>,
}

/// One page of `tools/list`. The entries stay JSON: [`crate::ToolInfo`] keeps each one
/// as sent next to what it reads from it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolsPage {
    /// The tools of this page.
    pub tools: Vec<Value>,
    /// The cursor of the next page; none on the last.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// One page of `tasks/list` (2025-11-25). The entries go through the codec.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TasksPage {
    /// The tasks of this page.
    pub tasks: Vec<Value>,
    /// The cursor of the next page; none on the last.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// One entry of `tools/list`: what [`crate::ToolInfo`] reads by name (task support is
/// read by the protocol crate's `TaskSupport::of_tool`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolEntry {
    /// The name to call it by.
    pub name: String,
    /// A display title.
    #[serde(default)]
    pub title: Option<String>,
    /// What it does.
    #[serde(default)]
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    #[serde(default)]
    pub input_schema: Option<Value>,
}

/// What a `tools/call` result says about its own kind, on either wire: a task
/// (`task` on 2025-11-25, `resultType: "task"` on 2026-07-28), an input-required
/// round, or the tool's result.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CallResultKind {
    /// 2025-11-25: the created task.
    #[serde(default)]
    pub task: Option<Value>,
    /// 2026-07-28: `task`, `input_required` or `complete` (absent: a result).
    #[serde(default)]
    pub result_type: Option<String>,
    /// 2026-07-28 `input_required`: the questions by key.
    #[serde(default)]
    pub input_requests: Option<Map<String, Value>>,
    /// 2026-07-28 `input_required`: the server's memory of the call, echoed verbatim.
    #[serde(default)]
    pub request_state: Option<Value>,
}

/// A 2025-11-25 `tasks/cancel` answer: the task, or (tower-mcp 0.25.0) an empty
/// acknowledgement, told apart by its `status`.
#[derive(Debug, Deserialize)]
pub(crate) struct CancelReply {
    /// The task's status, when the answer is the task.
    #[serde(default)]
    pub status: Option<Value>,
}

/// A `CallToolResult`, as far as the client reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolResult {
    /// The content items.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// Whether the tool failed (a result, not a JSON-RPC error).
    #[serde(default)]
    pub is_error: Option<bool>,
}

impl ToolResult {
    /// Reads `v` leniently: a result that does not fit reads as an empty one (no
    /// content, no tool error), as a result the client only shows.
    pub(crate) fn of(v: &Value) -> Self {
        ToolResult::deserialize(v).unwrap_or_default()
    }
}

/// One content item; only text items are read.
#[derive(Debug, Deserialize)]
pub(crate) struct ContentBlock {
    /// `text`, `image`, `resource`, …
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The text of a text item.
    #[serde(default)]
    pub text: Option<String>,
}

/// One extension input request (`inputRequests[key]`): a server-to-client request.
#[derive(Debug, Deserialize)]
pub(crate) struct InputRequestWire {
    /// `elicitation/create`, `sampling/createMessage`, `roots/list`.
    pub method: String,
    /// Its params as sent.
    #[serde(default)]
    pub params: Option<Value>,
}

/// The `_meta` of a message, as far as the client reads it.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Meta {
    /// `io.modelcontextprotocol/related-task`: the task the message belongs to.
    #[serde(default, rename = "io.modelcontextprotocol/related-task")]
    pub related_task: Option<RelatedTask>,
}

/// A message that may carry `_meta` (params, error data).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WithMeta {
    /// Its `_meta`.
    #[serde(default, rename = "_meta")]
    pub meta: Option<Meta>,
}

/// The related-task entry of a `_meta`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RelatedTask {
    /// The task (an entry without one still marks an error as the task's own).
    #[serde(default)]
    pub task_id: Option<TaskId>,
}

/// The params of `notifications/message`.
#[derive(Debug, Deserialize)]
pub(crate) struct LogParams {
    /// The severity, as sent (an unknown one drops the message).
    pub level: String,
    /// Which part of the server logged it.
    #[serde(default)]
    pub logger: Option<String>,
    /// The message: a string or any JSON value.
    #[serde(default)]
    pub data: Value,
}

/// The params of `notifications/progress`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProgressParams {
    /// The token of the request (or task) it belongs to.
    #[serde(default)]
    pub progress_token: Option<Value>,
    /// Work done so far.
    #[serde(default)]
    pub progress: Option<f64>,
    /// Total work, when known.
    #[serde(default)]
    pub total: Option<f64>,
    /// What is being done.
    #[serde(default)]
    pub message: Option<String>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use mcp_tasks_protocol::codec::RELATED_TASK_META;
    use serde_json::json;

    #[test]
    fn a_malformed_field_is_named_with_its_path_and_method() {
        let page = json!({"tools": [{"name": "a"}, {"name": 3}]});
        let ok: ToolsPage = parse("tools/list", &page).unwrap();
        let err = parse::<ToolEntry>("tools/list: tools[1]", &ok.tools[1]).unwrap_err();
        assert!(
            matches!(&err, ClientError::Protocol(m) if m.starts_with("tools/list: tools[1]: name: invalid type")),
            "{err}"
        );
        let err =
            parse::<ToolsPage>("tools/list", &json!({"tools": [], "nextCursor": 7})).unwrap_err();
        assert!(err.to_string().contains("nextCursor"), "{err}");
        let err = parse::<InitializeResult>("initialize", &json!({})).unwrap_err();
        assert!(err.to_string().contains("protocolVersion"), "{err}");
    }

    #[test]
    fn the_related_task_key_is_the_protocol_s() {
        let v = json!({"_meta": {RELATED_TASK_META: {"taskId": "t1"}}});
        let m: WithMeta = parse("x", &v).unwrap();
        assert_eq!(
            m.meta.and_then(|m| m.related_task).and_then(|r| r.task_id),
            Some(TaskId::from_string("t1"))
        );
    }

    #[test]
    fn a_tool_result_is_read_leniently() {
        let r = ToolResult::of(&json!({"content": [{"type": "text", "text": "a"},
            {"type": "image", "data": "..."}], "isError": true}));
        assert_eq!(r.is_error, Some(true));
        assert_eq!(r.content.len(), 2);
        assert_eq!(r.content[0].text.as_deref(), Some("a"));
        let odd = ToolResult::of(&json!({"content": "not a list"}));
        assert!(odd.content.is_empty() && odd.is_error.is_none());
    }
}
