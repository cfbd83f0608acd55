//! Client-hosted tasks (2025-11-25 §Capabilities, client side; off by default): an input
//! request is sent to the client augmented with `task`, the client answers with a
//! `CreateTaskResult`, and the server polls it with `tasks/get` until the client's task
//! is terminal, then collects the answer with `tasks/result`. The answer is handed to the
//! engine exactly like a direct response.

use mcp_tasks_engine::{InputRequest, Outcome};
use mcp_tasks_protocol::{RpcError, TaskId};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

use crate::questions::outgoing::Exchange;
use crate::questions::Questions;
use crate::session::Session;

/// Poll interval used when the client suggests none, and the floor of any it suggests.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
const MIN_POLL: Duration = Duration::from_millis(50);
/// Retention asked for the client's task.
const CLIENT_TASK_TTL_MS: u64 = 10 * 60 * 1000;

pub(crate) async fn drive(
    questions: Arc<Questions>,
    session: Arc<Session>,
    task: TaskId,
    key: String,
    request: InputRequest,
) {
    let outcome = match run(&questions, &session, &task, &request).await {
        Ok(value) => Outcome::Result { value },
        Err(e) => Outcome::Error {
            code: e.code,
            message: e.message,
            data: e.data,
        },
    };
    match questions
        .engine
        .answer_input(&task, &key, outcome, &session.caller())
        .await
    {
        Ok(_) => {}
        // The client's task answered, but not as the form asks: the question, still
        // open, is asked again directly, saying what was wrong.
        Err(mcp_tasks_engine::EngineError::InvalidInput(problem)) => {
            crate::questions::reask::ask_again(&questions, &session, &task, &key, &problem).await;
        }
        Err(e) => {
            tracing::debug!(task_id = %task, key, error = %e, "client-hosted answer not applied")
        }
    }
}

async fn run(
    questions: &Arc<Questions>,
    session: &Session,
    task: &TaskId,
    request: &InputRequest,
) -> Result<Value, RpcError> {
    let mut params = crate::messages::params_for(task, &request.params);
    params["task"] = json!({ "ttl": CLIENT_TASK_TTL_MS });
    let created = questions
        .call_client(session, Some(task), &request.method, params)
        .await?;
    let Some(client_task) = created.get("task") else {
        // The client answered directly instead of creating a task: that is the answer.
        return Ok(created);
    };
    let client_id = client_task
        .get("taskId")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("client CreateTaskResult without task.taskId"))?
        .to_string();
    let mut poll = poll_interval(client_task);
    let mut status = client_task
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("working")
        .to_string();
    let shutdown = questions.shutdown.clone();
    while !matches!(status.as_str(), "completed" | "failed" | "cancelled") {
        tokio::select! {
            _ = tokio::time::sleep(poll) => {}
            _ = shutdown.cancelled() => return Err(RpcError::new(mcp_tasks_protocol::error_code::INTERNAL_ERROR, "server shutting down")),
        }
        let got = questions
            .call_client(
                session,
                Some(task),
                "tasks/get",
                json!({ "taskId": client_id }),
            )
            .await?;
        status = got
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        poll = poll_interval(&got);
    }
    questions
        .call_client(
            session,
            Some(task),
            "tasks/result",
            json!({ "taskId": client_id }),
        )
        .await
}

fn poll_interval(task: &Value) -> Duration {
    task.get("pollInterval")
        .and_then(Value::as_u64)
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_POLL)
        .max(MIN_POLL)
}

impl Questions {
    /// Sends a request of the server's own to the client (on the task's stream when
    /// `task` is given) and waits for the response.
    ///
    /// # Errors
    /// The client's error, or `-32001` when it does not answer within the configured
    /// time, or `-32603` when nothing could be sent.
    pub(crate) async fn call_client(
        &self,
        session: &Session,
        task: Option<&TaskId>,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        let timeout = self.client_request_timeout;
        let sent = self
            .outgoing
            .exchange(session, method, params, timeout, |message| match task {
                Some(t) => session.send_for_task(t, message),
                None => session.send(message),
            })
            .await;
        sent.map_err(|e| match e {
            Exchange::NotSent => RpcError::new(
                mcp_tasks_protocol::error_code::INTERNAL_ERROR,
                format!("could not send {method} to the client: no open stream"),
            ),
            Exchange::TimedOut => RpcError::new(
                mcp_tasks_protocol::error_code::REQUEST_TIMEOUT,
                format!("the client did not answer {method} within {timeout:?}"),
            ),
            Exchange::Refused(e) => e,
        })
    }
}
