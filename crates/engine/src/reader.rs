//! What the engine needs to know about a request or a result without knowing their wire
//! format. The server, which speaks MCP, answers for it (given at start in [`EngineHooks`]); the
//! engine never parses `_meta`, `isError` or content blocks itself.
//!
//! [`EngineHooks`]: crate::EngineHooks

use mcp_tasks_store::Outcome;
use serde_json::Value;

/// How the engine reads the few things it acts on out of opaque requests and results
/// (progress tokens, a result's own error, whether an answer fits its question): a
/// policy the server gives it, not a reader of any wire.
pub trait ResultReading: Send + Sync {
    /// The token under which progress of this request is reported, if the request
    /// asked for progress (MCP: `params._meta.progressToken`).
    fn progress_token(&self, request: &Value) -> Option<Value>;

    /// Whether a result reports an error of its own (MCP: `isError: true`). The wires
    /// differ on what such a task is called (`failed` on one, `completed` on the
    /// other); the engine only carries the flag to them.
    fn result_reports_error(&self, result: &Value) -> bool {
        self.result_error_message(result).is_some()
    }

    /// The status message of a finished task whose result reports an error of its own
    /// (MCP: a tool result with `isError: true`), or `None` when the result does not
    /// report one.
    fn result_error_message(&self, result: &Value) -> Option<String>;

    /// Whether a client that declared `client_capabilities` can be asked `method`
    /// with `params` (MCP: `elicitation/create` needs `capabilities.elicitation`, ...).
    /// `Err` says what the client lacks, for the tool's error. The default asks
    /// anything.
    fn check_input(
        &self,
        _client_capabilities: &Value,
        _method: &str,
        _params: &Value,
    ) -> Result<(), String> {
        Ok(())
    }

    /// Whether `answer` (a client's or a person's result for an input request of
    /// `method` with `params`) fits its question (MCP: an accepted elicitation form's
    /// values against its `requestedSchema`). Checked by the engine's one answer entry
    /// point before the answer is stored or handed to the work, so a wrong answer
    /// leaves the question open. `Err` says what is wrong, naming the field. The
    /// default takes every answer.
    fn check_answer(&self, _method: &str, _params: &Value, _answer: &Value) -> Result<(), String> {
        Ok(())
    }

    /// A few words on what an answer said, for the task's timeline when a person gave
    /// it ("approved", "rejected: too risky"); `None`: "question '…' answered". The
    /// default says nothing.
    fn describe_answer(&self, _method: &str, _params: &Value, _answer: &Outcome) -> Option<String> {
        None
    }

    /// Whether a person could answer a question of `method` in the client's place
    /// (MCP: a form or URL elicitation, a sampling request; never roots, which only
    /// the client knows). Consulted only when the engine is configured with
    /// `people_answer_questions` (a task board takes questions): a task may then ask
    /// such a question even of a client that did not declare it can answer. The
    /// default: no method.
    fn people_may_answer(&self, _method: &str) -> bool {
        false
    }
}

/// The reader of an engine no server has configured: no progress, no messages.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpaqueReader;

impl ResultReading for OpaqueReader {
    fn progress_token(&self, _request: &Value) -> Option<Value> {
        None
    }

    fn result_error_message(&self, _result: &Value) -> Option<String> {
        None
    }
}
