//! JSON-RPC 2.0 framing: what a message is, how a raw body becomes one, and how replies
//! are written.
//!
//! Parsing never panics and separates the two failure classes the spec names: bytes that
//! are not JSON at all ([`PARSE_ERROR`]) and JSON that is not a JSON-RPC message
//! ([`INVALID_REQUEST`]). Batches (JSON arrays) were removed from MCP in 2025-06-18, so
//! they are rejected with a message saying so.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::fmt;

use crate::error_code::{INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR};

/// A JSON-RPC request id: a string or an integer, echoed back verbatim in the response.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id, as most clients send.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// A JSON-RPC error object. Built by handlers, serialized as the `error` member of a
/// response, and stored as the outcome of a task whose request failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("JSON-RPC error {code}: {message}")]
pub struct RpcError {
    /// One of the constants in [`crate::error_code`].
    pub code: i64,
    /// A sentence saying what was wrong and what to do about it.
    pub message: String,
    /// Structured detail, when there is any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with a code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `-32602 Invalid params` with a message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    /// `-32601 Method not found` naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            METHOD_NOT_FOUND,
            format!("method '{method}' is not supported by this server"),
        )
    }

    /// `-32600 Invalid Request` with a message.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST, message)
    }

    /// Adds structured data to the error.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The error as a JSON value (the `error` member of a response).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self)
            .unwrap_or_else(|_| json!({"code": self.code, "message": self.message}))
    }
}

/// One parsed JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request: the peer waits for a response with the same id.
    Request {
        /// Echoed in the response.
        id: RequestId,
        /// The method name, e.g. `tools/call`.
        method: String,
        /// The `params` object; `Value::Null` when absent.
        params: Value,
    },
    /// A notification: no response is sent.
    Notification {
        /// The method name, e.g. `notifications/cancelled`.
        method: String,
        /// The `params` object; `Value::Null` when absent.
        params: Value,
    },
    /// A successful response to a request we sent.
    Response {
        /// The id of our request.
        id: RequestId,
        /// The `result` member.
        result: Value,
    },
    /// An error response to a request we sent (or to nothing, when the id is null).
    ErrorResponse {
        /// The id of our request, when the peer could tell it.
        id: Option<RequestId>,
        /// The error.
        error: RpcError,
    },
}

/// A message that could not be accepted, with the id to answer to when one was readable.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The request id, if the message had a valid one; `None` answers with `id: null`.
    pub id: Option<RequestId>,
    /// Why it was rejected.
    pub error: RpcError,
}

impl Rejected {
    /// The error response to send back.
    pub fn to_response(&self) -> Value {
        error_response(self.id.as_ref(), &self.error)
    }
}

/// Parses one message from raw bytes.
///
/// # Errors
/// [`PARSE_ERROR`] when the bytes are not JSON, [`INVALID_REQUEST`] when the JSON is not a
/// single JSON-RPC 2.0 message (batches included).
// A rejection is the rare path (a malformed message) and is answered at once; its
// size (a JSON value, larger with ordered maps) costs nothing that boxing would save.
#[allow(clippy::result_large_err)]
pub fn parse(bytes: &[u8]) -> Result<Incoming, Rejected> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| Rejected {
        id: None,
        error: RpcError::new(PARSE_ERROR, format!("body is not valid JSON: {e}")),
    })?;
    parse_value(value)
}

/// Parses one message from an already decoded JSON value.
///
/// # Errors
/// [`INVALID_REQUEST`] when the value is not a single JSON-RPC 2.0 message.
// A rejection is the rare path (a malformed message) and is answered at once; its
// size (a JSON value, larger with ordered maps) costs nothing that boxing would save.
#[allow(clippy::result_large_err)]
pub fn parse_value(value: Value) -> Result<Incoming, Rejected> {
    let mut obj = match value {
        Value::Object(obj) => obj,
        Value::Array(_) => {
            return Err(reject(
                None,
                "JSON-RPC batches are not supported (removed from MCP in 2025-06-18); send one message per request",
            ))
        }
        other => {
            return Err(reject(
                None,
                format!("a JSON-RPC message must be an object, got {}", kind(&other)),
            ))
        }
    };
    let id = match obj.remove("id") {
        None => None,
        Some(Value::String(s)) => Some(RequestId::String(s)),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(i) => Some(RequestId::Number(i)),
            None => return Err(reject(None, "'id' must be a string or an integer")),
        },
        Some(Value::Null) if !obj.contains_key("method") => None,
        Some(other) => {
            return Err(reject(
                None,
                format!("'id' must be a string or an integer, got {}", kind(&other)),
            ))
        }
    };
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        _ => return Err(reject(id, "'jsonrpc' must be the string \"2.0\"")),
    }
    if let Some(method) = obj.remove("method") {
        let Value::String(method) = method else {
            return Err(reject(id, "'method' must be a string"));
        };
        let params = obj.remove("params").unwrap_or(Value::Null);
        if !matches!(params, Value::Object(_) | Value::Null) {
            return Err(Rejected {
                id,
                error: RpcError::invalid_params(format!(
                    "'params' of '{method}' must be an object, got {}",
                    kind(&params)
                )),
            });
        }
        return Ok(match id {
            Some(id) => Incoming::Request { id, method, params },
            None => Incoming::Notification { method, params },
        });
    }
    if let Some(result) = obj.remove("result") {
        return match id {
            Some(id) => Ok(Incoming::Response { id, result }),
            None => Err(reject(None, "a response needs an 'id'")),
        };
    }
    if let Some(error) = obj.remove("error") {
        let error: RpcError = serde_json::from_value(error)
            .map_err(|e| reject(id.clone(), format!("malformed 'error' object: {e}")))?;
        return Ok(Incoming::ErrorResponse { id, error });
    }
    Err(reject(
        id,
        "message has neither 'method' (request/notification) nor 'result'/'error' (response)",
    ))
}

fn reject(id: Option<RequestId>, message: impl Into<String>) -> Rejected {
    Rejected {
        id,
        error: RpcError::invalid_request(message),
    }
}

/// A short name for a JSON value's type, for error messages.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A success response.
pub fn response(id: &RequestId, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response; `id: null` when the request id could not be read.
pub fn error_response(id: Option<&RequestId>, error: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": error.to_value()})
}

/// A notification.
pub fn notification(method: &str, params: Value) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), json!("2.0"));
    m.insert("method".into(), json!(method));
    if !params.is_null() {
        m.insert("params".into(), params);
    }
    Value::Object(m)
}

/// A request (server-to-client or client-to-server).
pub fn request(id: &RequestId, method: &str, params: Value) -> Value {
    let mut v = notification(method, params);
    v["id"] = json!(id);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_json_is_parse_error() {
        let e = parse(b"{not json").unwrap_err();
        assert_eq!(e.error.code, PARSE_ERROR);
        assert_eq!(e.id, None);
    }

    #[test]
    fn batch_is_invalid_request() {
        let e = parse(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).unwrap_err();
        assert_eq!(e.error.code, INVALID_REQUEST);
        assert!(e.error.message.contains("batch"));
    }

    #[test]
    fn wrong_version_keeps_id() {
        let e = parse(br#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#).unwrap_err();
        assert_eq!(e.error.code, INVALID_REQUEST);
        assert_eq!(e.id, Some(RequestId::Number(7)));
    }

    #[test]
    fn request_notification_and_response_are_told_apart() {
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#),
            Ok(Incoming::Request { .. })
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Incoming::Notification { .. })
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Ok(Incoming::Response { .. })
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}"#),
            Ok(Incoming::ErrorResponse { .. })
        ));
    }

    #[test]
    fn non_object_params_are_invalid_params() {
        let e = parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#).unwrap_err();
        assert_eq!(e.error.code, INVALID_PARAMS);
    }

    #[test]
    fn float_or_bool_id_is_rejected() {
        for body in [
            &br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
        ] {
            assert_eq!(parse(body).unwrap_err().error.code, INVALID_REQUEST);
        }
    }

    #[test]
    fn responses_serialize_with_id() {
        let r = response(&RequestId::Number(1), json!({}));
        assert_eq!(r["id"], 1);
        let e = error_response(None, &RpcError::method_not_found("x"));
        assert!(e["id"].is_null());
        assert_eq!(e["error"]["code"], METHOD_NOT_FOUND);
    }
}
