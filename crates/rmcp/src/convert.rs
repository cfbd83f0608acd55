//! Between rmcp's typed model and the JSON our wire speaks: request params out,
//! JSON-RPC responses and results back. Both sides follow the same 2026-07-28 schema,
//! so this is serde in both directions; a value one side cannot read becomes an
//! internal error that names what it was.

use rmcp::model::{
    CallToolResponse, CallToolResult, CreateTaskResult, ErrorCode, InputRequiredResult,
};
use rmcp::ErrorData;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// rmcp's request params as the JSON object our wire reads.
pub(crate) fn params<T: Serialize>(params: &T) -> Result<Value, ErrorData> {
    serde_json::to_value(params).map_err(|e| {
        ErrorData::internal_error(format!("could not write the request's params: {e}"), None)
    })
}

/// The `result` of a JSON-RPC response, or its `error` as rmcp's [`ErrorData`].
pub(crate) fn response(mut response: Value) -> Result<Value, ErrorData> {
    if let Some(error) = response.get("error") {
        let code = error
            .get("code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(ErrorCode::INTERNAL_ERROR.0);
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the request failed")
            .to_string();
        return Err(ErrorData::new(
            ErrorCode(code),
            message,
            error.get("data").cloned(),
        ));
    }
    match response.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => Err(ErrorData::internal_error(
            "the task server answered with neither a result nor an error",
            None,
        )),
    }
}

/// Reads `value` as rmcp's `T`; `what` names it in the error.
pub(crate) fn read<T: DeserializeOwned>(value: Value, what: &str) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| {
        ErrorData::internal_error(
            format!("{what} could not be read as rmcp's model ({e}); this is a bug of mcp-tasks-rmcp, please report it"),
            None,
        )
    })
}

/// A `tools/call` result by its `resultType`: a task, an input-required round, or the
/// tool's result.
pub(crate) fn call_response(result: Value) -> Result<CallToolResponse, ErrorData> {
    match result.get("resultType").and_then(Value::as_str) {
        Some("task") => Ok(CallToolResponse::Task(read::<CreateTaskResult>(
            result,
            "the created task",
        )?)),
        Some("input_required") => Ok(CallToolResponse::InputRequired(
            read::<InputRequiredResult>(result, "the input-required result")?,
        )),
        _ => Ok(CallToolResponse::Complete(read::<CallToolResult>(
            result,
            "the tool's result",
        )?)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn an_error_response_keeps_its_code_message_and_data() {
        let e = response(json!({"jsonrpc": "2.0", "id": 1, "error": {
            "code": -32602, "message": "unknown task", "data": {"taskId": "x"}
        }}))
        .unwrap_err();
        assert_eq!(e.code.0, -32602);
        assert_eq!(e.message, "unknown task");
        assert_eq!(e.data, Some(json!({"taskId": "x"})));
    }

    #[test]
    fn call_results_are_read_by_their_result_type() {
        let task = call_response(json!({
            "resultType": "task", "taskId": "t1", "status": "working",
            "createdAt": "2026-11-26T06:00:00Z", "lastUpdatedAt": "2026-11-26T06:00:00Z",
            "ttlMs": 60000, "pollIntervalMs": 500
        }))
        .unwrap();
        assert!(matches!(task, CallToolResponse::Task(t) if t.task.task_id == "t1"));
        let done = call_response(json!({
            "resultType": "complete", "content": [{"type": "text", "text": "hi"}]
        }))
        .unwrap();
        assert!(matches!(done, CallToolResponse::Complete(r) if r.content.len() == 1));
    }
}
