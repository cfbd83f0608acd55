//! Log messages a server sends (`notifications/message`), and the handler a caller
//! registers to see them. The server decides what to send from the level the client
//! set with [`crate::Client::set_log_level`] (`info` and above until it does).

use mcp_tasks_protocol::{LoggingLevel, TaskId};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;

use crate::reply::LogParams;
use crate::wire::related_task;

/// One log message from the server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerLog {
    /// Its severity.
    pub level: LoggingLevel,
    /// Which part of the server logged it, when it says.
    pub logger: Option<String>,
    /// The message: a string or any JSON value.
    pub data: Value,
    /// The task it belongs to, when the server said (related-task `_meta`).
    pub task_id: Option<TaskId>,
}

impl ServerLog {
    /// Reads `notifications/message` params; `None` when the level is missing or
    /// unknown, or a field has the wrong type (such a message is not shown rather than
    /// shown wrongly).
    pub(crate) fn from_params(params: &Value) -> Option<Self> {
        let p = LogParams::deserialize(params).ok()?;
        Some(ServerLog {
            level: p.level.parse().ok()?,
            logger: p.logger,
            data: p.data,
            task_id: related_task(params),
        })
    }

    /// The message as one line of text: a string as it is, other JSON compact.
    pub fn text(&self) -> String {
        match &self.data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

/// A function that sees every log message the server sends.
pub type LogHandler = Arc<dyn Fn(ServerLog) + Send + Sync>;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_are_read_with_their_task_and_odd_levels_are_dropped() {
        let log = ServerLog::from_params(&json!({
            "level": "warning", "logger": "disk", "data": {"free": 3},
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}}
        }))
        .unwrap();
        assert_eq!(log.level, LoggingLevel::Warning);
        assert_eq!(log.logger.as_deref(), Some("disk"));
        assert_eq!(log.text(), r#"{"free":3}"#);
        assert_eq!(log.task_id, Some(TaskId::from_string("t1".to_string())));
        let plain = ServerLog::from_params(&json!({"level": "info", "data": "hi"})).unwrap();
        assert_eq!((plain.text(), plain.task_id), ("hi".to_string(), None));
        assert_eq!(
            ServerLog::from_params(&json!({"level": "loud", "data": 1})),
            None
        );
        assert_eq!(ServerLog::from_params(&json!({"data": 1})), None);
    }
}
