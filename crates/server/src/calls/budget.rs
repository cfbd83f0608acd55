//! Running a plain call under the sync budget (see [`crate::calls::plain`]): the call
//! waits on its task until the result, the budget's end (the handle), a question the
//! client cannot answer on this call (the handle, or on the 2026-07-28 wire the
//! input-required round), or the client's cancellation.

use mcp_tasks_engine::{Caller, CreateParams, Settled, TaskEvent, TaskRecord};
use mcp_tasks_protocol::{RpcError, TaskId};
use serde_json::{Map, Value};
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::calls::call::Answers;
use crate::calls::plain::{
    attach, follow, forward_progress, handle, no_outcome, ordinary, withdraw_questions, CallLink,
    Followed, Waiting,
};
use crate::error_map::to_rpc;
use crate::shared::Shared;
use crate::tools::registry::Tool;

/// Runs `tool` for a plain call under the sync budget (see [`crate::calls::plain`]). `None`:
/// the client cancelled the call, and no response is sent. Before the call became a
/// task its work stops with it. After, a cancellation because the host timed out
/// leaves the task running (that is what the budget is for: `task_list` finds it
/// again); any other cancellation (a person pressed stop) cancels the task.
pub(crate) async fn run_with_budget(
    server: &Shared,
    link: &CallLink,
    tool: Tool,
    args: Map<String, Value>,
    params: CreateParams,
    answers: Answers,
    asks: Option<&AskInReply<'_>>,
) -> Option<Result<Value, RpcError>> {
    let engine = server.engine();
    let budget = server.config().sync_budget;
    let deadline = Instant::now() + budget;
    let schema = tool.has_output_schema();
    let name = tool.name().to_string();
    let window = server.task_window(&tool, budget);
    let caller = params.caller.clone();
    let provisional = match crate::calls::call::start(engine, tool, args, params, answers) {
        Ok(p) => p,
        Err(e) => return Some(Err(to_rpc(e))),
    };
    // Before the work first runs: its first progress report and log message go to
    // this call, as they would from a tool run inline.
    let id = provisional.id().clone();
    let mut events = engine.subscribe();
    let _attached = attach(server, link, &id);
    let settled = tokio::select! {
        s = provisional.settle(window) => s,
        // Nothing exists yet that could carry the work on: it stops with the call.
        () = link.cancel.cancelled() => return None,
    };
    if let Ok(settled) = &settled {
        server.observe_window(&name, window, matches!(settled, Settled::Done(_)));
    }
    let record = match settled {
        Ok(Settled::Done(outcome)) => {
            forward_progress(link, &id, &mut events);
            return Some(ordinary(outcome));
        }
        Ok(Settled::Task(record)) => *record,
        Err(e) => return Some(Err(to_rpc(e))),
    };
    let waited = Waited {
        id: &record.id,
        caller: &caller,
        tool: &name,
        schema,
    };
    wait_out(server, link, &waited, deadline, events, asks).await
}

/// A plain call's task that a later call of the same client goes on waiting for (the
/// 2026-07-28 input-required round), and its tool.
pub(crate) struct Waited<'a> {
    /// The task.
    pub(crate) id: &'a TaskId,
    /// Who called.
    pub(crate) caller: &'a Caller,
    /// The tool's name (the handle's wording).
    pub(crate) tool: &'a str,
    /// Whether the tool has an output schema (the handle's shape).
    pub(crate) schema: bool,
}

/// What a plain call answers instead of the handle when its task waits for answers the
/// client can give in its next call (the 2026-07-28 input-required round): `None`
/// keeps the handle.
pub(crate) type AskInReply<'a> = dyn Fn(&TaskRecord) -> Option<Value> + Send + Sync + 'a;

/// Waits on a plain call's task `waited` under the sync budget (from now), as
/// [`run_with_budget`] does once the call became a task: for a later call that goes
/// on waiting for the same task after answering its questions.
pub(crate) async fn resume(
    server: &Shared,
    link: &CallLink,
    waited: &Waited<'_>,
    events: broadcast::Receiver<TaskEvent>,
    asks: Option<&AskInReply<'_>>,
) -> Option<Result<Value, RpcError>> {
    let deadline = Instant::now() + server.config().sync_budget;
    wait_out(server, link, waited, deadline, events, asks).await
}

/// The end of a plain call whose work became a task: its result, the handle, the
/// input-required round (`asks`), or, when the client cancelled, nothing.
async fn wait_out(
    server: &Shared,
    link: &CallLink,
    waited: &Waited<'_>,
    deadline: Instant,
    events: broadcast::Receiver<TaskEvent>,
    asks: Option<&AskInReply<'_>>,
) -> Option<Result<Value, RpcError>> {
    let engine = server.engine();
    let (caller, name, schema) = (waited.caller, waited.tool, waited.schema);
    let last = match follow(server, link, waited.id, caller, deadline, events).await {
        Followed::Ended(record) => {
            return Some(ordinary(record.outcome.map_or_else(no_outcome, |o| *o)))
        }
        Followed::Waiting(record, why) => {
            if why == Waiting::ForAnswer {
                if let Some(reply) = asks.and_then(|f| f(&record)) {
                    return Some(Ok(reply));
                }
            }
            return Some(Ok(handle(server, link, &record, name, schema, why)));
        }
        Followed::Cancelled(last) => last,
        Followed::Failed(e) => return Some(Err(to_rpc(e))),
    };
    if link.cancelled_by_timeout() {
        tracing::info!(task_id = %waited.id, tool = %name, "the client timed out a plain call that became a task; the task goes on (task_list finds it, task_cancel stops it)");
        return None;
    }
    tracing::info!(task_id = %waited.id, tool = %name, "the client cancelled a plain call that became a task; cancelling the task");
    match engine
        .cancel_saying(waited.id, caller, "cancelled by the client that called it")
        .await
    {
        Ok(_) => withdraw_questions(link, &last),
        Err(e) => {
            tracing::debug!(task_id = %waited.id, error = %e, "the task ended before it could be cancelled")
        }
    }
    None
}
