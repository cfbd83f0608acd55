//! [`ToolInfo`]: a tool as `tools/list` describes it, with its task support.

use serde_json::Value;
use std::fmt;

use crate::error::ClientError;

/// Whether a tool may, must or must not run as a task (`execution.taskSupport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSupport {
    /// Never as a task (the default when a tool says nothing).
    Forbidden,
    /// As a task or not, as the client asks.
    Optional,
    /// Only as a task.
    Required,
}

impl TaskSupport {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

impl fmt::Display for TaskSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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
}

impl ToolInfo {
    /// Reads one entry of `tools/list`.
    pub(crate) fn parse(v: &Value) -> Result<Self, ClientError> {
        let name = v
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| ClientError::protocol("a tool without a name in tools/list"))?
            .to_string();
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let task_support = match v
            .get("execution")
            .and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str)
        {
            Some("required") => TaskSupport::Required,
            Some("optional") => TaskSupport::Optional,
            _ => TaskSupport::Forbidden,
        };
        Ok(ToolInfo {
            name,
            title: text("title"),
            description: text("description"),
            task_support,
            input_schema: v.get("inputSchema").cloned().unwrap_or(Value::Null),
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
