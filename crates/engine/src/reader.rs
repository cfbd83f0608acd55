//! What the engine needs to know about a request or a result without knowing their wire
//! format. The server, which speaks MCP, answers for it ([`Engine::set_reader`]); the
//! engine never parses `_meta`, `isError` or content blocks itself.
//!
//! [`Engine::set_reader`]: crate::Engine::set_reader

use serde_json::Value;

/// Reads the few things the engine acts on out of opaque requests and results.
pub trait WireReader: Send + Sync {
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

    /// [`WireReader::check_input`] for a question a *task* asks: such a question is
    /// stored with the task and may be answered by someone other than the client (a
    /// person on the task board), so a reader that knows such a person exists may
    /// allow what the client did not declare. The default is `check_input`.
    fn check_task_input(
        &self,
        client_capabilities: &Value,
        method: &str,
        params: &Value,
    ) -> Result<(), String> {
        self.check_input(client_capabilities, method, params)
    }
}

/// The reader of an engine no server has configured: no progress, no messages.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpaqueReader;

impl WireReader for OpaqueReader {
    fn progress_token(&self, _request: &Value) -> Option<Value> {
        None
    }

    fn result_error_message(&self, _result: &Value) -> Option<String> {
        None
    }
}
