//! Typed questions to the user: the form's schema comes from a Rust type and the
//! answer is read back into it.

use mcp_tasks_engine::{DeadlineOutcome, InputError, TaskContext};

use crate::questions::ask::{AskClient, ElicitAction};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;

use crate::tools::typed::schema_value;

/// What the user did with a typed question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// Submitted the form; the values, typed.
    Accepted(T),
    /// Explicitly said no.
    Declined,
    /// Dismissed the question without answering.
    Cancelled,
}

impl<T> Elicited<T> {
    /// The values when the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicited::Accepted(v) => Some(v),
            _ => None,
        }
    }
}

/// Adds [`ElicitAs::elicit_as`] to [`TaskContext`]; in the prelude of the `mcp-tasks`
/// crate.
pub trait ElicitAs {
    /// Asks the user to fill in a form whose schema is `T`'s (a struct of strings,
    /// numbers, booleans and enums: what elicitation forms allow) and waits for the
    /// answer. The task shows `input_required` meanwhile.
    ///
    /// # Errors
    /// As [`TaskContext::elicit`]; [`InputError::Rejected`] when the client's values
    /// do not fit `T`.
    fn elicit_as<T: JsonSchema + DeserializeOwned + Send>(
        &self,
        message: &str,
    ) -> impl Future<Output = Result<Elicited<T>, InputError>> + Send;

    /// [`ElicitAs::elicit_as`] with a deadline and what happens when it passes (see
    /// [`AskClient::elicit_until`]).
    ///
    /// # Errors
    /// As [`ElicitAs::elicit_as`]; [`InputError::TimedOut`] when the deadline passed
    /// with [`DeadlineOutcome::Fail`].
    fn elicit_as_until<T: JsonSchema + DeserializeOwned + Send>(
        &self,
        message: &str,
        after: std::time::Duration,
        outcome: DeadlineOutcome,
    ) -> impl Future<Output = Result<Elicited<T>, InputError>> + Send;
}

impl ElicitAs for TaskContext {
    async fn elicit_as<T: JsonSchema + DeserializeOwned + Send>(
        &self,
        message: &str,
    ) -> Result<Elicited<T>, InputError> {
        let response = self.elicit(message, form_schema::<T>()).await?;
        typed(response)
    }

    async fn elicit_as_until<T: JsonSchema + DeserializeOwned + Send>(
        &self,
        message: &str,
        after: std::time::Duration,
        outcome: DeadlineOutcome,
    ) -> Result<Elicited<T>, InputError> {
        let response = self
            .elicit_until(message, form_schema::<T>(), after, outcome)
            .await?;
        typed(response)
    }
}

/// A form's answer read into `T`.
fn typed<T: DeserializeOwned>(
    response: crate::questions::ask::ElicitResponse,
) -> Result<Elicited<T>, InputError> {
    {
        match response.action {
            ElicitAction::Decline => Ok(Elicited::Declined),
            ElicitAction::Cancel => Ok(Elicited::Cancelled),
            ElicitAction::Accept => {
                let content = Value::Object(response.content.unwrap_or_default());
                serde_json::from_value(content.clone())
                    .map(Elicited::Accepted)
                    .map_err(|e| InputError::Rejected {
                        code: mcp_tasks_protocol::error_code::INVALID_PARAMS,
                        message: format!("the answer {content} does not fit the form: {e}"),
                    })
            }
        }
    }
}

/// `T`'s schema as an elicitation form: a flat object, without the root `title`
/// schemars adds (clients show the message instead).
pub fn form_schema<T: JsonSchema>() -> Value {
    let mut schema = schema_value::<T>();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("title");
    }
    schema
}
