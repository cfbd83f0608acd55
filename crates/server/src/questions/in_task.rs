//! Input requests of tasks on the 2025-11-25 wire: sending a task's questions to the
//! client as JSON-RPC requests, and routing the client's responses back to the engine.
//!
//! The request id encodes the task and the request key (`mcp-tasks:<task>:<key>`), so a
//! response is routed without any table: it works from any session (a reconnected
//! client answers on a new one) and survives a restart of the server.

use mcp_tasks_engine::{EngineError, Outcome, TaskRecord};
use mcp_tasks_protocol::jsonrpc::{self, RequestId};
use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::TaskId;
use std::sync::Arc;

use crate::messages::params_for;
use crate::questions::reask::RETRY_PREFIX;
use crate::questions::Questions;
use crate::session::Session;

const ID_PREFIX: &str = "mcp-tasks:";

/// The JSON-RPC id of the request asking input `key` of `task`.
pub(crate) fn request_id(task: &TaskId, key: &str) -> RequestId {
    RequestId::String(format!("{ID_PREFIX}{task}:{key}"))
}

/// The task and key an id of ours names, if it is one.
pub(crate) fn parse_request_id(id: &RequestId) -> Option<(TaskId, String)> {
    let RequestId::String(s) = id else {
        return None;
    };
    let rest = match s.strip_prefix(ID_PREFIX) {
        Some(rest) => rest,
        None => s.strip_prefix(RETRY_PREFIX)?.split_once(':')?.1,
    };
    let (task, key) = rest.split_once(':')?;
    Some((TaskId::from_string(task), key.to_string()))
}

/// Sends every outstanding input request of `record` that this session has not been
/// sent yet: on the task's pending `tasks/result` stream if one is open, else on the
/// session's stream. Each request carries the related-task `_meta`.
pub(crate) fn deliver(questions: &Arc<Questions>, session: &Arc<Session>, record: &TaskRecord) {
    let capabilities = session.client_capabilities();
    for (key, request) in record
        .input_requests
        .iter()
        .filter(|(_, r)| r.is_outstanding())
    {
        // A question the client cannot answer (it did not declare the capability) is
        // not sent to it: someone else answers it (a person on the task board).
        if crate::answers::check_input(&capabilities, &request.method, &request.params).is_err() {
            continue;
        }
        if !session.claim_delivery(&record.id, key) {
            continue;
        }
        if questions.client_hosted_tasks && client_hosts(session, &request.method) {
            tokio::spawn(crate::questions::client_hosted::drive(
                Arc::clone(questions),
                Arc::clone(session),
                record.id.clone(),
                key.clone(),
                request.clone(),
            ));
            continue;
        }
        let params = if questions.sessions.relates_to_task(&record.id) {
            params_for(&record.id, &request.params)
        } else {
            request.params.clone()
        };
        let message = jsonrpc::request(&request_id(&record.id, key), &request.method, params);
        if !session.send_for_task(&record.id, message) {
            session.release_delivery(&record.id, key);
        }
    }
}

/// Whether the client declared it can run `method` as a task of its own.
fn client_hosts(session: &Session, method: &str) -> bool {
    let caps = session.client_capabilities();
    let requests = &caps["tasks"]["requests"];
    match method {
        m::ELICITATION_CREATE => requests["elicitation"]["create"].is_object(),
        m::SAMPLING_CREATE_MESSAGE => requests["sampling"]["createMessage"].is_object(),
        _ => false,
    }
}

/// Routes a client's response to one of our input requests. Responses to ids we did
/// not issue are logged and dropped.
pub(crate) async fn answer(
    questions: &Arc<Questions>,
    session: &Arc<Session>,
    id: &RequestId,
    answer: Outcome,
) {
    let Some((task, key)) = parse_request_id(id) else {
        tracing::debug!(%id, "response to an id this server did not issue; ignored");
        return;
    };
    // While a plain call waits on its task, only the session it asked may answer.
    if let Some(asked) = questions.sessions.plain_wait_session(&task) {
        if asked != session.id() {
            tracing::info!(task_id = %task, key, "answer from another session to a plain call's question ignored");
            return;
        }
    }
    match questions
        .engine
        .answer_input(&task, &key, answer, &session.caller())
        .await
    {
        Ok(true) => tracing::debug!(task_id = %task, key, "input answered"),
        Ok(false) => tracing::debug!(task_id = %task, key, "duplicate or late answer ignored"),
        // A response cannot be answered with an error: the question, still open, is
        // asked again with what was wrong in front of its message.
        Err(EngineError::InvalidInput(problem)) => {
            tracing::info!(task_id = %task, key, %problem, "answer refused; asking again");
            crate::questions::reask::ask_again(questions, session, &task, &key, &problem).await;
        }
        Err(e) => {
            tracing::debug!(task_id = %task, key, error = %e, "answer for an unknown task ignored")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_foreign_ids_are_not_ours() {
        let t = TaskId::generate();
        let id = request_id(&t, "elicitation-3");
        assert_eq!(
            parse_request_id(&id),
            Some((t.clone(), "elicitation-3".to_string()))
        );
        let again = crate::questions::reask::retry_request_id(&t, "elicitation-3");
        assert_ne!(again, id);
        assert_eq!(
            parse_request_id(&again),
            Some((t.clone(), "elicitation-3".to_string()))
        );
        assert_eq!(parse_request_id(&RequestId::Number(4)), None);
        assert_eq!(parse_request_id(&RequestId::String("abc".into())), None);
    }
}
