use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::jsonrpc::{RequestId, RpcError};
use crate::task::TaskId;

/// Parses a request's params into `T`, answering `-32602` with the method and the serde
/// message (which names the missing or mistyped field).
///
/// # Errors
/// `-32602 Invalid params` when the params do not fit `T`.
pub fn parse_params<T: DeserializeOwned>(method: &str, params: &Value) -> Result<T, RpcError> {
    // Deserializing from the borrowed value copies only what `T` keeps, instead of
    // cloning the whole params tree first (every request comes through here).
    let parsed = if params.is_null() {
        T::deserialize(&Value::Object(Map::new()))
    } else {
        T::deserialize(params)
    };
    parsed.map_err(|e| RpcError::invalid_params(format!("invalid params for '{method}': {e}")))
}

/// Params of `initialize`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The version the client proposes.
    pub protocol_version: String,
    /// What the client can do (elicitation, sampling, tasks, ...), kept as sent.
    #[serde(default)]
    pub capabilities: Value,
    /// The client's name and version, for logs.
    #[serde(default)]
    pub client_info: Value,
}

/// Params of `tools/call`.
#[derive(Debug, Clone, Deserialize)]
pub struct CallToolParams {
    /// The tool to call.
    pub name: String,
    /// Its arguments; absent means `{}`.
    #[serde(default)]
    pub arguments: Option<Map<String, Value>>,
}

/// Params of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: TaskId,
}

/// Params of `tasks/list`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ListParams {
    /// The opaque cursor from a previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// Params of `notifications/cancelled`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledParams {
    /// The in-flight request to cancel.
    pub request_id: RequestId,
    /// Why, for logs.
    #[serde(default)]
    pub reason: Option<String>,
}

/// The `_meta.progressToken` of a request, if it has one.
pub fn progress_token(params: &Value) -> Option<Value> {
    params
        .get("_meta")
        .and_then(|m| m.get("progressToken"))
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_field_names_it() {
        let e = parse_params::<CallToolParams>("tools/call", &json!({})).unwrap_err();
        assert_eq!(e.code, crate::error_code::INVALID_PARAMS);
        assert!(e.message.contains("name"), "{}", e.message);
    }

    #[test]
    fn wrong_type_is_invalid_params() {
        let e = parse_params::<TaskIdParams>("tasks/get", &json!({"taskId": 5})).unwrap_err();
        assert_eq!(e.code, crate::error_code::INVALID_PARAMS);
    }

    #[test]
    fn progress_token_is_read_from_meta() {
        assert_eq!(
            progress_token(&json!({"_meta": {"progressToken": 3}})),
            Some(json!(3))
        );
        assert_eq!(
            progress_token(&json!({"_meta": {"progressToken": 1.5}})),
            None
        );
        assert_eq!(progress_token(&json!({})), None);
    }
}
