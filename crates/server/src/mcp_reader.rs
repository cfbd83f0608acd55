//! The engine's [`WireReader`] for MCP: where a request's progress token is and what a
//! tool result's `isError` means. The engine holds requests and results as opaque JSON;
//! this is the one place that reads them for it.

use mcp_tasks_engine::WireReader;
use mcp_tasks_protocol::answer;
use mcp_tasks_protocol::methods::{self, progress_token};
use serde_json::Value;

/// Longest part of a tool's error text kept in a task's status message.
const MAX_ERROR_TEXT_CHARS: usize = 500;

/// Reads MCP requests (`_meta.progressToken`) and `CallToolResult`s (`isError`, the
/// first text block).
#[derive(Debug, Clone, Copy, Default)]
pub struct McpReader;

impl WireReader for McpReader {
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
        match method {
            crate::approvals::APPROVAL_METHOD => crate::approvals::describe_answer(params, answer),
            methods::ELICITATION_CREATE => Some(describe_elicitation_answer(params, answer)),
            methods::SAMPLING_CREATE_MESSAGE => Some(match answer {
                mcp_tasks_engine::Outcome::Result { .. } => "the model's reply given".to_string(),
                _ => "the model's reply refused".to_string(),
            }),
            _ => None,
        }
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

/// Whether `answer` fits the question `method` with `params` asked: an elicitation's
/// answer is checked against its form ([`answer::check_elicit_result`]); other
/// questions (sampling, roots) are taken as they come.
pub fn check_answer(method: &str, params: &Value, answer: &Value) -> Result<(), String> {
    match method {
        methods::ELICITATION_CREATE => {
            answer::check_elicit_result(params, answer).map_err(|e| e.to_string())
        }
        crate::approvals::APPROVAL_METHOD => crate::approvals::check_answer(params, answer),
        _ => Ok(()),
    }
}

/// What a client must have declared at initialize to be asked `method`: form
/// elicitation needs `capabilities.elicitation`, URL mode `elicitation.url`, sampling
/// `sampling`, roots `roots`. Other methods are not checked.
pub fn check_input(caps: &Value, method: &str, params: &Value) -> Result<(), String> {
    let (path, what): (&[&str], &str) = match method {
        methods::ELICITATION_CREATE
            if params.get("mode").and_then(Value::as_str) == Some("url") =>
        {
            (
                &["elicitation", "url"],
                "URL-mode elicitation (capabilities.elicitation.url)",
            )
        }
        methods::ELICITATION_CREATE => (&["elicitation"], "elicitation (capabilities.elicitation)"),
        methods::SAMPLING_CREATE_MESSAGE => (&["sampling"], "sampling (capabilities.sampling)"),
        methods::ROOTS_LIST => (&["roots"], "roots (capabilities.roots)"),
        // An approval is for people (the approvers), never for a client.
        crate::approvals::APPROVAL_METHOD => {
            return Err("an approval is answered by its approvers, not by the client".into())
        }
        _ => return Ok(()),
    };
    let mut at = caps;
    for p in path {
        match at.get(p) {
            Some(v) if !v.is_null() => at = v,
            _ => {
                return Err(format!(
                    "this tool needs the client to support {what}, which the client did not declare at initialize"
                ))
            }
        }
    }
    Ok(())
}

/// How long a question's own words may run in a status message before they are cut.
const MAX_QUESTION_CHARS: usize = 80;

/// A person's answer to an elicitation, in words for the timeline: what was asked
/// (the question's own message, cut at [`MAX_QUESTION_CHARS`]) and how it was
/// answered, never the question's internal key.
fn describe_elicitation_answer(params: &Value, answer: &mcp_tasks_engine::Outcome) -> String {
    let asked = params
        .get("message")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(|m| {
            let mut cut: String = m.chars().take(MAX_QUESTION_CHARS).collect();
            if cut.len() < m.len() {
                cut.push('…');
            }
            format!("\"{cut}\"")
        })
        .unwrap_or_else(|| "the question".to_string());
    let action = match answer {
        mcp_tasks_engine::Outcome::Result { value } => value
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or("accept"),
        _ => "error",
    };
    match action {
        "decline" => format!("{asked} declined"),
        "cancel" => format!("{asked} dismissed"),
        "error" => format!("{asked} refused"),
        _ => format!("{asked} answered"),
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
            McpReader.result_error_message(&failed).as_deref(),
            Some("the tool reported an error: disk full")
        );
        let empty = json!({"content": [], "isError": true});
        assert_eq!(
            McpReader.result_error_message(&empty).as_deref(),
            Some("the tool reported an error: no details")
        );
        assert!(McpReader
            .result_error_message(&json!({"content": [], "isError": false}))
            .is_none());
        assert!(!McpReader.result_reports_error(&json!({"content": []})));
    }

    #[test]
    fn the_progress_token_is_read_from_meta() {
        let request = json!({"name": "t", "_meta": {"progressToken": 7}});
        assert_eq!(McpReader.progress_token(&request), Some(json!(7)));
        assert_eq!(McpReader.progress_token(&json!({"name": "t"})), None);
    }

    #[test]
    fn a_persons_answer_is_said_in_words_without_the_questions_key() {
        let params = json!({"message": "Delete the file 'notes.txt'?", "requestedSchema": {}});
        let accepted = Outcome::Result {
            value: json!({"action": "accept", "content": {"confirm": true}}),
        };
        let said = McpReader
            .describe_answer(methods::ELICITATION_CREATE, &params, &accepted)
            .unwrap();
        assert_eq!(said, "\"Delete the file 'notes.txt'?\" answered");
        let declined = Outcome::Result {
            value: json!({"action": "decline"}),
        };
        let said = McpReader
            .describe_answer(methods::ELICITATION_CREATE, &json!({}), &declined)
            .unwrap();
        assert_eq!(said, "the question declined");
        let long = json!({"message": "x".repeat(200)});
        let said = McpReader
            .describe_answer(methods::ELICITATION_CREATE, &long, &accepted)
            .unwrap();
        assert!(said.chars().count() < 100 && said.contains('…'), "{said}");
    }
}
