//! With a board, a task may ask what its client cannot answer: a person can.

use mcp_tasks_engine::WireReader;
use mcp_tasks_protocol::methods::{ELICITATION_CREATE, SAMPLING_CREATE_MESSAGE};
use mcp_tasks_server::mcp_reader::McpReader;
use serde_json::Value;

/// MCP's reader, except that a task may ask a form or URL elicitation or a sampling
/// request even of a client that did not declare it: the question waits on the board
/// (and in the webhooks) for a person. Roots are still the client's alone, and a
/// plain (non-task) call still asks only what its client declared.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PeopleAnswer;

impl WireReader for PeopleAnswer {
    fn progress_token(&self, request: &Value) -> Option<Value> {
        McpReader.progress_token(request)
    }

    fn result_reports_error(&self, result: &Value) -> bool {
        McpReader.result_reports_error(result)
    }

    fn result_error_message(&self, result: &Value) -> Option<String> {
        McpReader.result_error_message(result)
    }

    fn check_answer(&self, method: &str, params: &Value, answer: &Value) -> Result<(), String> {
        McpReader.check_answer(method, params, answer)
    }

    fn check_input(&self, caps: &Value, method: &str, params: &Value) -> Result<(), String> {
        McpReader.check_input(caps, method, params)
    }

    fn check_task_input(&self, caps: &Value, method: &str, params: &Value) -> Result<(), String> {
        match method {
            ELICITATION_CREATE | SAMPLING_CREATE_MESSAGE => Ok(()),
            _ => McpReader.check_input(caps, method, params),
        }
    }
}
