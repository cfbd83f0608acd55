//! [`ToolResult`]: a `CallToolResult` as a value, for tools that build their result by
//! hand and for handlers that return one.

use serde_json::{json, Map, Value};

/// A `CallToolResult`: content blocks, an optional `structuredContent` object, and
/// whether it reports a tool error (`isError`).
///
/// Why a type: a tool function may return one like any other result (it implements
/// [`IntoToolResult`](crate::IntoToolResult)), and a raw
/// [`ToolHandler`](crate::registry::ToolHandler), which answers with JSON, converts it
/// with `.into()`. [`ToolResult::error`] is a tool error: the
/// tool ran and failed, which the spec asks servers to report in the result so the
/// model can read why; a failure of the call itself is a
/// [`ProtocolError`](crate::ProtocolError) instead.
///
/// ```
/// # use mcp_tasks_server::ToolResult;
/// let done = ToolResult::text("3 rows copied");
/// let failed = ToolResult::error("the table is locked; try again in a minute");
/// assert!(!done.is_error() && failed.is_error());
/// let json: serde_json::Value = done.into();
/// assert_eq!(json["content"][0]["text"], "3 rows copied");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    content: Vec<Value>,
    structured: Option<Map<String, Value>>,
    is_error: bool,
}

impl ToolResult {
    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![text_block(text.into())],
            structured: None,
            is_error: false,
        }
    }

    /// A tool error (`isError: true`) with one text block: the tool ran and failed, so
    /// the model can read why. Not a protocol error.
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            is_error: true,
            ..ToolResult::text(text)
        }
    }

    /// The same result with one more content block (an image, a resource link, ...:
    /// any MCP `ContentBlock` as JSON).
    pub fn with_block(mut self, block: Value) -> Self {
        self.content.push(block);
        self
    }

    /// The same result carrying `data` as its `structuredContent` (an object, as MCP
    /// requires). Keep a text block that says the same for clients that read only
    /// `content`.
    pub fn with_structured(mut self, data: Map<String, Value>) -> Self {
        self.structured = Some(data);
        self
    }

    /// Whether the result reports a tool error (`isError: true`).
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// The `CallToolResult` JSON object.
    pub fn into_value(self) -> Value {
        let mut value = json!({ "content": self.content, "isError": self.is_error });
        if let Some(data) = self.structured {
            value["structuredContent"] = Value::Object(data);
        }
        value
    }
}

/// One MCP text content block.
fn text_block(text: String) -> Value {
    json!({ "type": "text", "text": text })
}

impl From<ToolResult> for Value {
    fn from(result: ToolResult) -> Self {
        result.into_value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON is what the handlers sent before `ToolResult` was a value: the same
    /// keys in the same order.
    #[test]
    fn a_result_is_the_call_tool_result_json() {
        assert_eq!(
            serde_json::to_string(&ToolResult::text("hi").into_value()).ok(),
            Some(r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#.into())
        );
        let mut data = Map::new();
        data.insert("n".into(), json!(3));
        let error = ToolResult::error("no")
            .with_block(json!({"type": "text", "text": "see the log"}))
            .with_structured(data);
        assert_eq!(
            Value::from(error),
            json!({
                "content": [
                    {"type": "text", "text": "no"},
                    {"type": "text", "text": "see the log"},
                ],
                "isError": true,
                "structuredContent": {"n": 3},
            })
        );
    }
}
