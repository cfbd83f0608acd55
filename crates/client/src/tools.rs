//! [`ToolInfo`]: a tool as `tools/list` describes it, with its task support.

use serde_json::Value;

use crate::error::ClientError;
use crate::reply::{self, ToolEntry};

pub use mcp_tasks_protocol::TaskSupport;

/// One tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// The name to call it by.
    pub name: String,
    /// A display title, when given.
    pub title: Option<String>,
    /// What it does, when given.
    pub description: Option<String>,
    /// Whether it runs as a task.
    pub task_support: TaskSupport,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
    /// The `tools/list` entry as the server sent it (output schema, annotations,
    /// icons, `_meta`): for a gateway that offers the tool again.
    pub definition: Value,
}

impl ToolInfo {
    /// Reads one entry of `tools/list` as a server sent it (for code that got the
    /// list by other means, and for tests).
    ///
    /// # Errors
    /// [`ClientError::Protocol`] when the entry has no name or a field of the wrong
    /// type, naming the field.
    pub fn from_definition(v: &Value) -> Result<Self, ClientError> {
        Self::parse(v)
    }

    /// Reads one entry of `tools/list`.
    pub(crate) fn parse(v: &Value) -> Result<Self, ClientError> {
        Self::read("a tools/list entry", v)
    }

    /// Reads one entry of `tools/list`; `what` names it in an error (`tools/list:
    /// tools[3]`).
    pub(crate) fn read(what: &str, v: &Value) -> Result<Self, ClientError> {
        let entry: ToolEntry = reply::parse(what, v)?;
        Ok(ToolInfo {
            name: entry.name,
            title: entry.title,
            description: entry.description,
            task_support: TaskSupport::of_tool(v),
            input_schema: entry.input_schema.unwrap_or(Value::Null),
            definition: v.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn task_support_defaults_to_forbidden() {
        let t = ToolInfo::parse(&json!({"name": "a", "inputSchema": {}})).unwrap();
        assert_eq!(t.task_support, TaskSupport::Forbidden);
        let t = ToolInfo::parse(&json!({"name": "b", "execution": {"taskSupport": "required"}}))
            .unwrap();
        assert_eq!(t.task_support, TaskSupport::Required);
        assert!(ToolInfo::parse(&json!({})).is_err());
    }
}
