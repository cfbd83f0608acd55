//! What the wire says about a tool's relation to tasks: `execution.taskSupport`. One
//! type for both sides, so that the server's declaration and the client's reading of
//! it can never drift apart.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// Whether a tool may, must or must not run as a task (`execution.taskSupport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Only synchronous calls (the default, as in the spec when the field is absent).
    #[default]
    Forbidden,
    /// Either way; the client chooses with `params.task`.
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

    /// Reads a tool object of `tools/list`: its `execution.taskSupport`, and
    /// [`TaskSupport::Forbidden`] when absent or unknown, as the spec says.
    pub fn of_tool(tool: &Value) -> Self {
        match tool
            .get("execution")
            .and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str)
        {
            Some("required") => TaskSupport::Required,
            Some("optional") => TaskSupport::Optional,
            _ => TaskSupport::Forbidden,
        }
    }
}

impl fmt::Display for TaskSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn read_from_a_tool_and_spelled_as_on_the_wire() {
        for support in [
            TaskSupport::Forbidden,
            TaskSupport::Optional,
            TaskSupport::Required,
        ] {
            let tool = json!({"name": "t", "execution": {"taskSupport": support}});
            assert_eq!(TaskSupport::of_tool(&tool), support);
            assert_eq!(json!(support), json!(support.as_str()));
            assert_eq!(support.to_string(), support.as_str());
        }
        assert_eq!(
            TaskSupport::of_tool(&json!({"name": "t"})),
            TaskSupport::Forbidden
        );
        let odd = json!({"execution": {"taskSupport": "sometimes"}});
        assert_eq!(TaskSupport::of_tool(&odd), TaskSupport::Forbidden);
    }
}
