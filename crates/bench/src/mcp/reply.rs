//! Reading replies: the JSON-RPC envelope, the few result fields the bench looks at
//! (every other field is skipped unread), and the capabilities check at `initialize`.

use serde::Deserialize;
use std::borrow::Cow;

use super::{Created, Wire, TASKS_EXTENSION};
use crate::error::BenchError;
use crate::http::sse_response;

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
pub(super) struct TaskFields<'a> {
    #[serde(rename = "taskId", borrow, default)]
    pub(super) task_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) status: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) task: Option<Box<TaskFields<'a>>>,
    #[serde(rename = "isError", default)]
    pub(super) is_error: Option<bool>,
}

pub(super) fn is_terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

/// Reads the reply to a task-capable `tools/call`.
pub(super) fn created(wire: Wire, body: &[u8]) -> Result<Created, BenchError> {
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
pub(super) fn check_task_support(wire: Wire, init_reply: &[u8]) -> Result<(), BenchError> {
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
pub(super) fn reply_bytes(event_stream: bool, body: &[u8]) -> Result<Cow<'_, [u8]>, BenchError> {
    if !event_stream {
        return Ok(Cow::Borrowed(body));
    }
    sse_response(body)
        .map(Cow::Owned)
        .ok_or_else(|| BenchError::Http("an event stream without a JSON-RPC reply".into()))
}

/// Parses a reply, turning a JSON-RPC error into [`BenchError::Rpc`].
pub(super) fn check_envelope<'a>(
    method: &str,
    body: &'a [u8],
) -> Result<TaskFields<'a>, BenchError> {
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
