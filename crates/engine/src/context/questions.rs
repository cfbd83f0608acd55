//! Questions from running work: to the client (a task stores them, a plain call asks
//! on its own stream) or to people (assigned, with deadlines), and waiting for the
//! answer.

use mcp_tasks_store::{DeadlineOutcome, InputRequest};
use serde_json::Value;

use super::TaskContext;
use crate::ask::Ask;
use crate::input::InputError;

impl TaskContext {
    /// Asks the client something on behalf of this task and waits for the answer: the
    /// task shows `input_required` until every outstanding request is answered. Several
    /// requests may be outstanding at once (call this from concurrent futures).
    ///
    /// In a synchronous call the request goes to the client on the call's own stream
    /// and the call waits for the answer (how MCP clients without tasks are asked).
    ///
    /// # Errors
    /// [`InputError::Unsupported`] when the client did not declare the capability (or
    /// this synchronous call cannot reach its client), [`InputError::Cancelled`] when
    /// the task or call is cancelled while waiting, [`InputError::TimedOut`] after the
    /// configured limit (a task fails), [`InputError::Rejected`] when the client
    /// answers with an error.
    pub async fn request_input(
        &self,
        client_method: &str,
        params: Value,
    ) -> Result<Value, InputError> {
        self.ask(client_method, params, Ask::new()).await
    }

    /// [`TaskContext::request_input`] with a deadline: when nobody answered within
    /// `after`, `outcome` happens (the task fails, the question is answered as
    /// declined, or with a default answer), and the task's timeline says so. Without a
    /// deadline a task's question waits as long as the task lives (its TTL). The
    /// deadline is stored with the question: a restart does not move it.
    ///
    /// # Errors
    /// As [`TaskContext::request_input`]; [`InputError::TimedOut`] when the deadline
    /// passed with [`DeadlineOutcome::Fail`] (the task has failed).
    pub async fn request_input_until(
        &self,
        client_method: &str,
        params: Value,
        after: std::time::Duration,
        outcome: DeadlineOutcome,
    ) -> Result<Value, InputError> {
        let ask = Ask::new().deadline(after, outcome);
        self.ask(client_method, params, ask).await
    }

    /// [`TaskContext::request_input`] for a question people answer: assigned to
    /// principals or groups (who see it in their inbox on the task board and may
    /// answer it although the task is not theirs), with a deadline, as `ask` says.
    /// A question only its assignees may answer (an approval) needs a task: its
    /// client never answers it, so a synchronous call cannot wait for it.
    ///
    /// # Errors
    /// As [`TaskContext::request_input_until`]; [`InputError::Unsupported`] for a
    /// question only its assignees may answer outside a task.
    pub async fn request_input_with(
        &self,
        method: &str,
        params: Value,
        ask: Ask,
    ) -> Result<Value, InputError> {
        self.ask(method, params, ask).await
    }

    async fn ask(&self, client_method: &str, params: Value, ask: Ask) -> Result<Value, InputError> {
        let Ask {
            deadline,
            assignment,
        } = ask;
        let Some((id, inner)) = &self.shared.task else {
            let Some(requester) = &self.shared.requester else {
                return Err(InputError::Unsupported(
                    "asking the client for input needs the tool to run as a task (call it with \"task\": {}) or a client connection that can carry requests".into(),
                ));
            };
            if assignment.as_ref().is_some_and(|a| a.only) {
                return Err(InputError::Unsupported(format!(
                    "this call waits for {} to answer, which needs a task: call the tool with \"task\": {{}} (or through a server with a sync budget)",
                    assignment.map(|a| a.to.join(", ")).unwrap_or_default()
                )));
            }
            self.check_input(client_method, &params)?;
            let timer = async {
                match &deadline {
                    Some((_, DeadlineOutcome::KeepWaiting | DeadlineOutcome::Escalate { .. }))
                    | None => std::future::pending().await,
                    Some((after, _)) => tokio::time::sleep(*after).await,
                }
            };
            return tokio::select! {
                answer = requester(client_method, params) => answer,
                _ = self.cancel.cancelled() => Err(InputError::Cancelled),
                _ = timer => match deadline {
                    Some((_, DeadlineOutcome::Answer { value })) => Ok(value),
                    Some((_, DeadlineOutcome::Decline)) if client_method == "elicitation/create" => {
                        Ok(serde_json::json!({"action": "decline"}))
                    }
                    Some((after, _)) => Err(InputError::TimedOut {
                        key: "call".into(),
                        method: client_method.to_string(),
                        after,
                    }),
                    None => Err(InputError::Cancelled),
                },
            };
        };
        // A task's question is stored with it, so someone other than its client (a
        // person on the task board) may answer it, when people answer questions here.
        // A later attempt (after a takeover or a retry) does not know what its client
        // declared (capabilities are not stored with the task): it asks, and the
        // question waits for whoever can answer it (the client, a person), within its
        // deadline or the task's TTL, rather than failing a task its first attempt
        // could have asked.
        let unknown_client = self.shared.client_capabilities.is_null();
        let someone_else_may_answer = assignment.is_some()
            || (self.shared.people_answer && self.shared.reader.people_may_answer(client_method));
        if !(unknown_client || someone_else_may_answer) {
            self.check_input(client_method, &params)?;
        }
        let inner = inner.upgrade().ok_or(InputError::TaskEnded)?;
        let n = self.shared.steps.next_input_number();
        // `elicitation-0`, `sampling-1`; the server's own questions by their name
        // (`mcp-tasks/approval`: `approval-0`).
        let short = match client_method.strip_prefix("mcp-tasks/") {
            Some(own) => own,
            None => client_method.split('/').next().unwrap_or("input"),
        };
        let key = format!("{short}-{n}");
        let mut request = InputRequest::new(client_method, params);
        request.assignment = assignment;
        inner.ask(id, key, request, deadline, &self.cancel).await
    }

    /// Whether the client can be asked `method` (see [`ResultReading::check_input`]).
    fn check_input(&self, method: &str, params: &Value) -> Result<(), InputError> {
        self.shared
            .reader
            .check_input(&self.shared.client_capabilities, method, params)
            .map_err(InputError::Unsupported)
    }
}
