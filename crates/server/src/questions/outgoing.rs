//! Requests of the server's own to a client (elicitation, sampling, roots, client-hosted
//! task polls): sent under an unguessable id, answered only by the session they went
//! to, and withdrawn with `notifications/cancelled` when nobody waits any more.

use mcp_tasks_engine::Outcome;
use mcp_tasks_protocol::error_code::INTERNAL_ERROR;
use mcp_tasks_protocol::jsonrpc::{self, RequestId};
use mcp_tasks_protocol::methods::NOTIF_CANCELLED;
use mcp_tasks_protocol::{RpcError, TaskId};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::oneshot;

use crate::session::Session;

/// Marks the ids of the server's requests, so responses to them are told apart from
/// answers to a task's input requests.
const PREFIX: &str = "mcp-tasks-srv:";

/// Why a request of the server's own got no answer.
#[derive(Debug)]
pub(crate) enum Exchange {
    /// No stream could carry it.
    NotSent,
    /// The client did not answer in time.
    TimedOut,
    /// The client answered with an error.
    Refused(RpcError),
}

/// One request waiting for its answer.
struct Pending {
    /// The session it was sent to: the only one whose answer counts.
    session: String,
    answer: oneshot::Sender<Outcome>,
}

/// The server's requests waiting for answers, by id.
#[derive(Default)]
pub(crate) struct Outgoing {
    pending: Mutex<HashMap<String, Pending>>,
}

impl Outgoing {
    /// Sends `method` to `session`'s client through `send` (false: nothing could carry
    /// it) and waits up to `timeout` for the answer. When the wait ends without one (a
    /// timeout, or the waiting future dropped because its call or task was cancelled)
    /// the client is sent `notifications/cancelled` the same way, so that it can close
    /// the question it may be showing.
    pub(crate) async fn exchange(
        &self,
        session: &Session,
        method: &str,
        params: Value,
        timeout: Duration,
        send: impl Fn(Value) -> bool + Sync,
    ) -> Result<Value, Exchange> {
        let id = format!("{PREFIX}{}", TaskId::generate());
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(
            id.clone(),
            Pending {
                session: session.id().to_string(),
                answer: tx,
            },
        );
        if !send(jsonrpc::request(
            &RequestId::String(id.clone()),
            method,
            params,
        )) {
            self.pending.lock().remove(&id);
            return Err(Exchange::NotSent);
        }
        let mut waiting = Waiting {
            outgoing: self,
            id: &id,
            send: &send,
            withdraw: Some(
                "the server no longer needs the answer: the call or task asking was cancelled",
            ),
        };
        let answer = tokio::time::timeout(timeout, rx).await;
        waiting.withdraw = match answer {
            Ok(Ok(_)) => None,
            Ok(Err(_)) | Err(_) => Some("no answer came in time"),
        };
        match answer {
            Ok(Ok(Outcome::Result { value })) => Ok(value),
            Ok(Ok(refused)) => Err(Exchange::Refused(
                crate::error_map::outcome_error(&refused)
                    .unwrap_or_else(|| RpcError::new(INTERNAL_ERROR, "the client refused")),
            )),
            Ok(Err(_)) | Err(_) => Err(Exchange::TimedOut),
        }
    }

    /// Hands a response that arrived on `session` to the server request waiting for
    /// it. Gives the outcome back when the id is not one of the server's (an answer to
    /// a task's input request). A response from another session than the one asked is
    /// dropped: ids are unguessable, and even a leaked one answers nothing elsewhere.
    pub(crate) fn complete(
        &self,
        session: &Session,
        id: &RequestId,
        outcome: Outcome,
    ) -> Option<Outcome> {
        let RequestId::String(s) = id else {
            return Some(outcome);
        };
        if !s.starts_with(PREFIX) {
            return Some(outcome);
        }
        let mut pending = self.pending.lock();
        match pending.get(s) {
            Some(p) if p.session == session.id() => {
                if let Some(p) = pending.remove(s) {
                    let _ = p.answer.send(outcome);
                }
            }
            Some(_) => {
                tracing::warn!(%id, session = %session.id(), "a response to a server request sent to another session; ignored")
            }
            None => tracing::warn!(
                %id,
                "a response to a server request this process is not waiting for (late, or sent to another replica: a synchronous call's question must be answered where it was asked); ignored"
            ),
        }
        None
    }
}

/// Removes a request when its wait ends, and withdraws it from the client with the
/// reason in `withdraw` (`None` once it was answered).
struct Waiting<'a> {
    outgoing: &'a Outgoing,
    id: &'a str,
    send: &'a (dyn Fn(Value) -> bool + Sync),
    withdraw: Option<&'static str>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.outgoing.pending.lock().remove(self.id);
        if let Some(reason) = self.withdraw {
            (self.send)(jsonrpc::notification(
                NOTIF_CANCELLED,
                json!({ "requestId": self.id, "reason": reason }),
            ));
        }
    }
}
