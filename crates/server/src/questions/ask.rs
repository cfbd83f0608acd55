//! [`AskClient`]: the MCP questions a tool asks its client in the middle of a call
//! (elicitation in form and URL mode, sampling, roots), on top of the engine's
//! wire-neutral [`TaskContext::request_input`]. In a task the question is stored and
//! the task shows `input_required`; in a plain call it goes out on the call's stream.

use async_trait::async_trait;
use mcp_tasks_engine::{InputError, TaskContext};
use mcp_tasks_protocol::methods;
use serde_json::{json, Map, Value};

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form (or agreed to open the URL).
    Accept,
    /// Explicitly said no.
    Decline,
    /// Dismissed the question.
    Cancel,
}

/// The answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitResponse {
    /// Accept, decline or cancel.
    pub action: ElicitAction,
    /// The submitted form values (accept, form mode).
    pub content: Option<Map<String, Value>>,
}

impl ElicitResponse {
    /// Reads an `ElicitResult`.
    ///
    /// # Errors
    /// [`InputError::Malformed`] without a valid `action`.
    pub fn from_value(v: Value) -> Result<Self, InputError> {
        let action = v
            .get("action")
            .cloned()
            .and_then(|a| serde_json::from_value(a).ok())
            .ok_or_else(|| {
                InputError::Malformed(format!("elicitation answer without a valid 'action': {v}"))
            })?;
        let content = v.get("content").and_then(Value::as_object).cloned();
        Ok(ElicitResponse { action, content })
    }

    /// Whether the user accepted.
    pub fn accepted(&self) -> bool {
        self.action == ElicitAction::Accept
    }
}

/// MCP questions to the client, for any [`TaskContext`]: `use
/// mcp_tasks_server::AskClient;` (or the `mcp_tasks` prelude) and call them on `ctx`.
/// Every method fails as [`TaskContext::request_input`] does, and with
/// [`InputError::Unsupported`] when the client did not declare the capability.
#[async_trait]
pub trait AskClient {
    /// Asks the user to fill in a form (`elicitation/create`, form mode);
    /// `requested_schema` is a flat JSON Schema object of primitive properties.
    async fn elicit(
        &self,
        message: &str,
        requested_schema: Value,
    ) -> Result<ElicitResponse, InputError>;

    /// [`AskClient::elicit`] with a deadline: when nobody answered within `after`,
    /// `outcome` happens (the task fails, the question is declined, or it gets a
    /// default answer) and the task's timeline says so. Without one, a task's question
    /// waits as long as the task lives.
    async fn elicit_until(
        &self,
        message: &str,
        requested_schema: Value,
        after: std::time::Duration,
        outcome: mcp_tasks_engine::DeadlineOutcome,
    ) -> Result<ElicitResponse, InputError>;

    /// Asks the user to visit a URL (`elicitation/create`, URL mode); needs a client
    /// that declared `capabilities.elicitation.url`.
    async fn elicit_url(
        &self,
        message: &str,
        url: &str,
        elicitation_id: &str,
    ) -> Result<ElicitResponse, InputError>;

    /// Asks the client's model (`sampling/createMessage`); `params` are the
    /// `CreateMessageRequest` params (`messages`, `maxTokens`, ...). Returns the
    /// `CreateMessageResult`.
    async fn create_message(&self, params: Value) -> Result<Value, InputError>;

    /// Asks the client for its roots (`roots/list`). Returns the `ListRootsResult`.
    async fn list_roots(&self) -> Result<Value, InputError>;
}

#[async_trait]
impl AskClient for TaskContext {
    async fn elicit(
        &self,
        message: &str,
        requested_schema: Value,
    ) -> Result<ElicitResponse, InputError> {
        let params =
            json!({ "mode": "form", "message": message, "requestedSchema": requested_schema });
        let answer = self
            .request_input(methods::ELICITATION_CREATE, params)
            .await?;
        ElicitResponse::from_value(answer)
    }

    async fn elicit_until(
        &self,
        message: &str,
        requested_schema: Value,
        after: std::time::Duration,
        outcome: mcp_tasks_engine::DeadlineOutcome,
    ) -> Result<ElicitResponse, InputError> {
        let params =
            json!({ "mode": "form", "message": message, "requestedSchema": requested_schema });
        let answer = self
            .request_input_until(methods::ELICITATION_CREATE, params, after, outcome)
            .await?;
        ElicitResponse::from_value(answer)
    }

    async fn elicit_url(
        &self,
        message: &str,
        url: &str,
        elicitation_id: &str,
    ) -> Result<ElicitResponse, InputError> {
        let params = json!({ "mode": "url", "message": message, "url": url, "elicitationId": elicitation_id });
        let answer = self
            .request_input(methods::ELICITATION_CREATE, params)
            .await?;
        ElicitResponse::from_value(answer)
    }

    async fn create_message(&self, params: Value) -> Result<Value, InputError> {
        self.request_input(methods::SAMPLING_CREATE_MESSAGE, params)
            .await
    }

    async fn list_roots(&self) -> Result<Value, InputError> {
        self.request_input(methods::ROOTS_LIST, json!({})).await
    }
}
