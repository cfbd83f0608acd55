//! Plain calls that ask, on this wire: the input-required round (SEP-2322).
//!
//! A plain `tools/call` (no task asked for) runs under the sync budget as a task of
//! its caller's (see [`crate::calls::plain`]). When that task waits for answers the
//! client declared it can give (`elicitation`, `sampling`, `roots` in its
//! `clientCapabilities`), the call answers with an `InputRequiredResult`: the open
//! questions as `inputRequests`, and a sealed `requestState` naming the task
//! ([`super::request_state`]). The client calls again with the same name and
//! arguments, its `inputResponses` and the state: the answers go to the task, and the
//! call waits on it again. The work was never stopped, so nothing before the question
//! runs twice; after a restart the task's run is resumed from its journal (finished
//! steps and answered questions return from it), which is why the journal stays in
//! the store rather than in the state. A client that declared none of that keeps the
//! handle (the task tools, `tasks/get`).

use mcp_tasks_engine::{EngineError, Outcome, TaskRecord};
use mcp_tasks_protocol::codec::v2026_07_28;
use mcp_tasks_protocol::RpcError;
use serde_json::{json, Map, Value};

use super::request_state::{self, StateKey};
use super::Request;
use crate::calls::budget::{self, AskInReply, Waited};
use crate::calls::plain::CallLink;
use crate::error_map::to_rpc;
use crate::tools::registry::Tool;

/// What one plain call needs to issue (or check) a `requestState`.
pub(super) struct Round<'a> {
    req: &'a Request<'a>,
    key: StateKey,
    call: String,
}

impl<'a> Round<'a> {
    /// The round of the call of `tool` with `args` by `req`'s caller.
    pub(super) fn new(req: &'a Request<'a>, tool: &str, args: &Map<String, Value>) -> Self {
        let key = StateKey::new(
            req.server
                .config()
                .request_state_key
                .as_ref()
                .map(|k| k.expose().as_slice()),
        );
        Round {
            req,
            key,
            call: request_state::call_hash(tool, args),
        }
    }

    /// The `InputRequiredResult` for `record`'s open questions, when the client
    /// declared it can answer every one of them; `None`: the handle instead (a
    /// question it cannot answer, or one only its assignees may).
    pub(super) fn reply(&self, record: &TaskRecord) -> Option<Value> {
        let mut requests = Map::new();
        for (key, q) in record
            .input_requests
            .iter()
            .filter(|(_, q)| q.is_outstanding())
        {
            if q.assignment.as_ref().is_some_and(|a| a.only)
                || crate::answers::check_input(&self.req.capabilities, &q.method, &q.params)
                    .is_err()
            {
                return None;
            }
            requests.insert(
                key.clone(),
                json!({ "method": q.method, "params": q.params }),
            );
        }
        if requests.is_empty() {
            return None;
        }
        let ttl = self.req.server.config().request_state_ttl;
        let expires = chrono::Utc::now()
            .timestamp_millis()
            .saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
        let state = request_state::seal(
            &self.key,
            &record.id,
            &self.req.caller.principal,
            &self.call,
            expires,
        );
        let mut result = v2026_07_28::input_required_result(requests);
        result["requestState"] = json!(state);
        Some(result)
    }

    /// The round as the hook [`budget::run_with_budget`] takes.
    pub(super) fn hook(&self) -> impl Fn(&TaskRecord) -> Option<Value> + Send + Sync + '_ {
        move |r| self.reply(r)
    }
}

/// A call that came back with a `requestState`: checks it, gives the task the answers
/// in `inputResponses` (those to its open questions; others are ignored), and waits on
/// the task again as the first call did.
pub(super) async fn resume(
    req: &Request<'_>,
    params: &Value,
    tool: &Tool,
    args: &Map<String, Value>,
    state: &Value,
    task_tools: bool,
) -> Result<Value, RpcError> {
    let Some(state) = state.as_str() else {
        return Err(RpcError::invalid_params(
            "requestState must be the string an input_required result gave; call the tool again without it to start over",
        ));
    };
    let round = Round::new(req, tool.name(), args);
    let now = chrono::Utc::now().timestamp_millis();
    let id = request_state::open(&round.key, state, &req.caller.principal, &round.call, now)
        .map_err(|refused| refused.to_rpc())?;
    let engine = req.server.engine();
    // Before the answers: a change they cause is not missed.
    let events = engine.subscribe();
    let record = engine.get(&id, &req.caller).await.map_err(|e| match e {
        EngineError::NotFound => RpcError::invalid_params(
            "the call this requestState continues is gone (its task expired or was removed); call the tool again without requestState and inputResponses to start over",
        ),
        e => to_rpc(e),
    })?;
    let responses = params.get("inputResponses").and_then(Value::as_object);
    for (key, answer) in responses.into_iter().flatten() {
        let Some(q) = record
            .input_requests
            .get(key)
            .filter(|q| q.is_outstanding())
        else {
            // Answered before, or not a question of this call: ignored (SEP-2322).
            continue;
        };
        crate::answers::check_answer(&q.method, &q.params, answer).map_err(|problem| {
            RpcError::invalid_params(format!(
                "the answer to '{key}' in inputResponses was refused: {problem}; send the call again with the same requestState and a corrected answer"
            ))
        })?;
        let outcome = Outcome::Result {
            value: answer.clone(),
        };
        engine
            .answer_input(&id, key, outcome, &req.caller)
            .await
            .map_err(to_rpc)?;
    }
    let cancel = req.server.shutdown_token().child_token();
    let link = CallLink::new(req.server, None, None, params, cancel, task_tools);
    let waited = Waited {
        id: &id,
        caller: &req.caller,
        tool: tool.name(),
        schema: tool.has_output_schema(),
    };
    let hook = round.hook();
    let asks: &AskInReply<'_> = &hook;
    match budget::resume(req.server, &link, &waited, events, Some(asks)).await {
        Some(r) => r.map(v2026_07_28::complete),
        None => Err(shutting_down()),
    }
}

/// A plain call stopped by the server's shutdown.
pub(super) fn shutting_down() -> RpcError {
    RpcError::new(
        mcp_tasks_protocol::error_code::INTERNAL_ERROR,
        "the server is shutting down; call the tool again after it restarts",
    )
}
