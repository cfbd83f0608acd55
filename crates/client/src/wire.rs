//! What differs between the two task wires, on the client side: how a task is asked
//! for, and how the server's answers are read. The protocol crate's codecs do the
//! field-level work (`ttl` vs `ttlMs`). Also the related task a server message
//! names in its `_meta`, which input requests and log messages both read.

use mcp_tasks_protocol::codec::{v2025_11_25, v2026_07_28};
use mcp_tasks_protocol::{methods, version, TaskId, TaskView};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::error::ClientError;
use crate::reply::{self, CallResultKind, WithMeta};

/// `_meta` key of the client capabilities of a stateless request.
pub(crate) use mcp_tasks_protocol::codec::META_CLIENT_CAPABILITIES;
/// `_meta` key of the client info of a stateless request.
pub(crate) use mcp_tasks_protocol::codec::META_CLIENT_INFO;
/// `_meta` key of the protocol version of a stateless request.
pub(crate) use mcp_tasks_protocol::codec::META_PROTOCOL_VERSION;

/// Which task wire a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Wire {
    /// 2025-11-25 with a session: `params.task`, `tasks/get|result|list|cancel`,
    /// input requests as server-to-client requests.
    V2025_11_25,
    /// 2026-07-28 stateless requests with the `io.modelcontextprotocol/tasks`
    /// extension: server-directed tasks, `DetailedTask`, `tasks/update`.
    V2026_07_28,
}

impl Wire {
    /// The protocol version this wire speaks.
    pub fn protocol_version(self) -> &'static str {
        match self {
            Wire::V2025_11_25 => version::V2025_11_25,
            Wire::V2026_07_28 => version::V2026_07_28,
        }
    }
}

/// Which wire to use when connecting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WirePreference {
    /// Over HTTP, ask `server/discover` first and use the extension wire when the
    /// server offers it, else `initialize` with 2025-11-25. Over stdio, 2025-11-25.
    #[default]
    Auto,
    /// Always `initialize` with 2025-11-25.
    V2025_11_25,
    /// Always the extension wire (HTTP only); fails if the server does not offer it.
    V2026_07_28,
}

/// The `_meta` a stateless request carries. `with_extension` declares the tasks
/// extension (which lets the server turn the call into a task).
pub(crate) fn stateless_meta(capabilities: &Value, with_extension: bool, info: &Value) -> Value {
    let mut caps = capabilities.clone();
    if with_extension {
        caps["extensions"] = json!({ v2026_07_28::EXTENSION_ID: {} });
    }
    json!({
        META_PROTOCOL_VERSION: version::V2026_07_28,
        META_CLIENT_CAPABILITIES: caps,
        META_CLIENT_INFO: info,
    })
}

/// Merges `meta` into `params._meta`.
pub(crate) fn with_meta(mut params: Value, meta: &Value) -> Value {
    if !params.is_object() {
        params = json!({});
    }
    let target = params
        .as_object_mut()
        .map(|o| o.entry("_meta").or_insert_with(|| json!({})));
    if let (Some(Value::Object(t)), Value::Object(m)) = (target, meta) {
        for (k, v) in m {
            t.insert(k.clone(), v.clone());
        }
    }
    params
}

/// What `tools/call` answered.
#[derive(Debug)]
pub(crate) enum CallReply {
    /// A task was created.
    Task(TaskView),
    /// The tool ran at once; this is its result.
    Immediate(Value),
    /// MRTR round (SEP-2322): answer these and call again with `inputResponses`, and
    /// the `requestState` when the server gave one (echoed verbatim).
    InputRequired(Map<String, Value>, Option<Value>),
}

/// Reads the answer to `tools/call`.
pub(crate) fn call_reply(wire: Wire, v: Value) -> Result<CallReply, ClientError> {
    let kind: CallResultKind = reply::parse(methods::TOOLS_CALL, &v)?;
    match wire {
        Wire::V2025_11_25 => match kind.task {
            Some(task) => v2025_11_25::parse_task(&task)
                .map(CallReply::Task)
                .map_err(ClientError::Protocol),
            None => Ok(CallReply::Immediate(v)),
        },
        Wire::V2026_07_28 => match kind.result_type.as_deref() {
            Some(v2026_07_28::RESULT_TASK) => v2026_07_28::parse_task(&v)
                .map(CallReply::Task)
                .map_err(ClientError::Protocol),
            Some(v2026_07_28::RESULT_INPUT_REQUIRED) => match kind.input_requests {
                Some(requests) => Ok(CallReply::InputRequired(requests, kind.request_state)),
                None => Err(ClientError::protocol(
                    "an input_required result without inputRequests",
                )),
            },
            _ => Ok(CallReply::Immediate(v)),
        },
    }
}

/// Reads the answer to `tasks/get` (and `tasks/cancel` on 2025-11-25).
pub(crate) fn task_reply(
    wire: Wire,
    v: &Value,
) -> Result<(TaskView, v2026_07_28::Detail), ClientError> {
    match wire {
        // 2025-11-25 `tasks/get` carries no outcome. Servers that removed
        // `tasks/result` (tower-mcp 0.25.0 answers it -32601) inline the result or
        // error as the extension does; that is kept, for the handle to read once
        // `tasks/result` turned out missing. Input requests are not a 2025-11-25 thing.
        Wire::V2025_11_25 => v2025_11_25::parse_task(v)
            .map(|t| {
                let detail = match v2026_07_28::parse_detail(v) {
                    v2026_07_28::Detail::InputRequests(_) => v2026_07_28::Detail::None,
                    d => d,
                };
                (t, detail)
            })
            .map_err(ClientError::Protocol),
        Wire::V2026_07_28 => v2026_07_28::parse_task(v)
            .map(|t| (t, v2026_07_28::parse_detail(v)))
            .map_err(ClientError::Protocol),
    }
}

/// The related task named in a message's `_meta` (none when it names none, or names
/// it in a shape that does not fit).
pub(crate) fn related_task(params: &Value) -> Option<TaskId> {
    WithMeta::deserialize(params)
        .ok()?
        .meta?
        .related_task?
        .task_id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_2025_task_keeps_an_inlined_outcome_but_no_input_requests() {
        let t = json!({"taskId": "t", "status": "completed", "createdAt": "2025-11-25T10:00:00Z",
            "lastUpdatedAt": "2025-11-25T10:00:01Z", "ttl": 1000,
            "result": {"content": [{"type": "text", "text": "done"}]}});
        let (view, detail) = task_reply(Wire::V2025_11_25, &t).unwrap();
        assert_eq!(view.id.as_str(), "t");
        assert_eq!(
            detail,
            v2026_07_28::Detail::Result(json!({"content": [{"type": "text", "text": "done"}]}))
        );
        let mut asking = t.clone();
        asking["status"] = json!("input_required");
        asking.as_object_mut().unwrap().remove("result");
        asking["inputRequests"] = json!({"k": {"method": "elicitation/create"}});
        let (_, detail) = task_reply(Wire::V2025_11_25, &asking).unwrap();
        assert_eq!(detail, v2026_07_28::Detail::None);
    }

    #[test]
    fn meta_is_merged_and_declares_the_extension_on_request() {
        let meta = stateless_meta(&json!({"sampling": {}}), true, &json!({"name": "t"}));
        let p = with_meta(json!({"name": "x", "_meta": {"progressToken": 1}}), &meta);
        assert_eq!(p["_meta"]["progressToken"], 1);
        assert_eq!(p["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
        assert!(
            v2026_07_28::declares_extension(&p["_meta"][META_CLIENT_CAPABILITIES]),
            "{p}"
        );
        let plain = stateless_meta(&json!({}), false, &json!({}));
        assert!(!v2026_07_28::declares_extension(
            &plain[META_CLIENT_CAPABILITIES]
        ));
    }

    /// turul-mcp-server (a Rust server with the Tasks extension) writes its durations
    /// as floats (`"pollIntervalMs": 500.0`); the schemas type them `number`. Before
    /// the client read only integers and refused every task of that server.
    #[test]
    fn tasks_with_float_durations_are_read_as_peers_send_them() {
        let created = json!({"resultType": "task", "taskId": "0199c5b2-7f3e-7000-8000-000000000001",
            "status": "working", "createdAt": "2026-11-25T10:00:00.000Z",
            "lastUpdatedAt": "2026-11-25T10:00:00.000Z", "ttlMs": 3600000.0,
            "pollIntervalMs": 500.0});
        let Ok(CallReply::Task(view)) = call_reply(Wire::V2026_07_28, created.clone()) else {
            panic!("a float pollIntervalMs is refused");
        };
        assert_eq!(
            view.poll_interval,
            Some(std::time::Duration::from_millis(500))
        );
        assert_eq!(view.ttl, Some(std::time::Duration::from_secs(3600)));
        let mut done = created.clone();
        done["status"] = json!("completed");
        done["result"] = json!({"content": [{"type": "text", "text": "ok"}]});
        let (view, _) = task_reply(Wire::V2026_07_28, &done).expect("tasks/get");
        assert_eq!(
            view.poll_interval,
            Some(std::time::Duration::from_millis(500))
        );
        let legacy = json!({"task": {"taskId": "t", "status": "working",
            "createdAt": "2025-11-25T10:00:00Z", "lastUpdatedAt": "2025-11-25T10:00:00Z",
            "ttl": 60000.0, "pollInterval": 1000.0}});
        assert!(matches!(
            call_reply(Wire::V2025_11_25, legacy),
            Ok(CallReply::Task(v)) if v.ttl == Some(std::time::Duration::from_secs(60))
        ));
        let mut negative = created;
        negative["pollIntervalMs"] = json!(-1.0);
        assert!(matches!(
            call_reply(Wire::V2026_07_28, negative),
            Err(ClientError::Protocol(m)) if m.contains("pollIntervalMs")
        ));
    }

    #[test]
    fn call_replies_are_told_apart() {
        let r = call_reply(
            Wire::V2026_07_28,
            json!({"resultType": "complete", "content": []}),
        );
        assert!(matches!(r, Ok(CallReply::Immediate(_))));
        let r = call_reply(
            Wire::V2026_07_28,
            json!({"resultType": "input_required", "inputRequests": {"k": {}}}),
        );
        assert!(matches!(r, Ok(CallReply::InputRequired(m, None)) if m.contains_key("k")));
        let r = call_reply(Wire::V2025_11_25, json!({"task": {"taskId": 3}}));
        assert!(matches!(r, Err(ClientError::Protocol(_))));
        let r = call_reply(
            Wire::V2026_07_28,
            json!({"resultType": "input_required", "inputRequests": ["k"]}),
        );
        assert!(
            matches!(&r, Err(ClientError::Protocol(m)) if m.starts_with("tools/call: inputRequests: invalid type")),
            "{r:?}"
        );
    }

    #[test]
    fn related_task_is_read_from_meta() {
        use mcp_tasks_protocol::codec::RELATED_TASK_META;
        let p = json!({"_meta": {RELATED_TASK_META: {"taskId": "t9"}}});
        assert_eq!(related_task(&p), Some(TaskId::from_string("t9")));
        assert_eq!(related_task(&json!({})), None);
    }
}
