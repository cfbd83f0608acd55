//! The engine's [`ResultReading`] for MCP: where a request's progress token is and what a
//! tool result's `isError` means. The engine holds requests and results as opaque JSON;
//! this is the one place that reads them for it.

use mcp_tasks_engine::ResultReading;
use mcp_tasks_protocol::methods::{self, progress_token};

use crate::answers::{check_answer, check_input};
use serde_json::Value;

/// Longest part of a tool's error text kept in a task's status message.
const MAX_ERROR_TEXT_CHARS: usize = 500;

/// Reads MCP requests (`_meta.progressToken`) and `CallToolResult`s (`isError`, the
/// first text block).
#[derive(Debug, Clone, Copy, Default)]
pub struct McpResults;

impl ResultReading for McpResults {
    fn progress_token(&self, request: &Value) -> Option<Value> {
        progress_token(request)
    }

    fn check_input(
        &self,
        client_capabilities: &Value,
        method: &str,
        params: &Value,
    ) -> Result<(), String> {
        check_input(client_capabilities, method, params)
    }

    /// A person (on the task board, through a webhook) can answer a form or URL
    /// elicitation or a sampling request; roots only the client knows.
    fn people_may_answer(&self, method: &str) -> bool {
        matches!(
            method,
            methods::ELICITATION_CREATE | methods::SAMPLING_CREATE_MESSAGE
        )
    }

    fn result_reports_error(&self, result: &Value) -> bool {
        result.get("isError") == Some(&Value::Bool(true))
    }

    fn check_answer(&self, method: &str, params: &Value, answer: &Value) -> Result<(), String> {
        check_answer(method, params, answer)
    }

    fn describe_answer(
        &self,
        method: &str,
        params: &Value,
        answer: &mcp_tasks_engine::Outcome,
    ) -> Option<String> {
        crate::answers::describe_answer(method, params, answer)
    }

    fn result_error_message(&self, result: &Value) -> Option<String> {
        if !self.result_reports_error(result) {
            return None;
        }
        let text = result
            .get("content")
            .and_then(Value::as_array)
            .and_then(|c| c.iter().find_map(|b| b.get("text").and_then(Value::as_str)))
            .unwrap_or("");
        let text: String = text.chars().take(MAX_ERROR_TEXT_CHARS).collect();
        let text = if text.is_empty() {
            "no details".to_string()
        } else {
            text
        };
        Some(format!("the tool reported an error: {text}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_tasks_engine::Outcome;
    use serde_json::json;

    #[test]
    fn only_is_error_results_have_an_error_message() {
        let failed = json!({"content": [{"type": "text", "text": "disk full"}], "isError": true});
        assert_eq!(
            McpResults.result_error_message(&failed).as_deref(),
            Some("the tool reported an error: disk full")
        );
        let empty = json!({"content": [], "isError": true});
        assert_eq!(
            McpResults.result_error_message(&empty).as_deref(),
            Some("the tool reported an error: no details")
        );
        assert!(McpResults
            .result_error_message(&json!({"content": [], "isError": false}))
            .is_none());
        assert!(!McpResults.result_reports_error(&json!({"content": []})));
    }

    #[test]
    fn the_progress_token_is_read_from_meta() {
        let request = json!({"name": "t", "_meta": {"progressToken": 7}});
        assert_eq!(McpResults.progress_token(&request), Some(json!(7)));
        assert_eq!(McpResults.progress_token(&json!({"name": "t"})), None);
    }

    #[test]
    fn a_persons_answer_is_said_in_words_without_the_questions_key() {
        let params = json!({"message": "Delete the file 'notes.txt'?", "requestedSchema": {}});
        let accepted = Outcome::Result {
            value: json!({"action": "accept", "content": {"confirm": true}}),
        };
        let said = McpResults
            .describe_answer(methods::ELICITATION_CREATE, &params, &accepted)
            .unwrap();
        assert_eq!(said, "\"Delete the file 'notes.txt'?\" answered");
        let declined = Outcome::Result {
            value: json!({"action": "decline"}),
        };
        let said = McpResults
            .describe_answer(methods::ELICITATION_CREATE, &json!({}), &declined)
            .unwrap();
        assert_eq!(said, "the question declined");
        let long = json!({"message": "x".repeat(200)});
        let said = McpResults
            .describe_answer(methods::ELICITATION_CREATE, &long, &accepted)
            .unwrap();
        assert!(said.chars().count() < 100 && said.contains('…'), "{said}");
    }
}
