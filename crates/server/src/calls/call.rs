//! The part of `tools/call` both wires share: finding the tool, turning its answer into
//! a task outcome, and running it inline with its panics caught and its cancellation
//! honoured. Each wire's `tools_call` keeps only what differs (how a task is asked for,
//! how the reply is shaped).
//!
//! Starting a tool as a task (below), the one way both wire generations do it: a running
//! future for ordinary tools, an external job for [`crate::tools::external`] tools, with
//! the tool's preflight questions answered either before (MRTR, extension wire) or inside
//! the task (2025-11-25, as input requests).

use futures::FutureExt;
use mcp_tasks_engine::context::plumbing;
use mcp_tasks_engine::{
    CreateParams, Engine, EngineError, Outcome, ProvisionalTask, Settled, TaskContext, TaskRecord,
    Work,
};
use mcp_tasks_protocol::error_code::INTERNAL_ERROR;
use mcp_tasks_protocol::RpcError;
use serde_json::{Map, Value};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use crate::tools::registry::{Tool, ToolResult};
use crate::tools::typed::to_outcome;

/// The work of a task running `tool`: its handler's future ending in the outcome, in
/// one box when the tool has it so (see [`Tool::from_fn`]).
pub(crate) fn work_of(tool: &Tool, args: Map<String, Value>, ctx: TaskContext) -> Work {
    match tool.work_handler() {
        Some(work) => work(args, ctx),
        None => tool.call(args, ctx).map(to_outcome).boxed(),
    }
}

/// Runs `tool` inline (not as a task) on its own tokio task, so that a panic becomes
/// an internal error instead of a crash. When `cancel` fires, the tool (which sees the
/// same token through `ctx`) gets `grace` to stop on its own before it is aborted, and
/// `None` is returned: a cancelled request gets no response. Dropping the returned
/// future (the client went away) aborts the tool.
pub(crate) async fn run_inline(
    tool: &Tool,
    args: Map<String, Value>,
    ctx: TaskContext,
    cancel: &CancellationToken,
    grace: Duration,
) -> Option<Result<Value, RpcError>> {
    let mut job = tokio::spawn(tool.call(args, ctx));
    let _abort_on_drop = AbortOnDrop(job.abort_handle());
    tokio::select! {
        r = &mut job => Some(match r {
            Ok(r) => r,
            Err(e) if e.is_panic() => {
                tracing::error!(tool = tool.name(), "tool panicked");
                Err(RpcError::new(INTERNAL_ERROR, format!("tool '{}' crashed; see the server log", tool.name())))
            }
            Err(_) => Err(RpcError::new(INTERNAL_ERROR, "the call was aborted")),
        }),
        _ = cancel.cancelled() => {
            // The tool sees the cancellation; it gets the grace period to stop on its
            // own (an external job's cancel runs then) before it is aborted.
            let _ = tokio::time::timeout(grace, &mut job).await;
            None
        }
    }
}

/// Aborts a tool's tokio task when the call that runs it ends, however it ends.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

// Starting a tool as a task.

/// Where the answers to a tool's preflight questions come from.
pub(crate) enum Answers {
    /// Already given (MRTR rounds on the extension wire).
    Given(Map<String, Value>),
    /// Ask them inside the task, as input requests (2025-11-25 has no MRTR).
    AskInTask,
}

/// Creates the task and starts the tool's work. The work starts while the creation is
/// being stored, so that work ending before the commit is committed with it (one
/// fsync on SQLite; the first `tasks/get` or `tasks/result` finds the result).
pub(crate) async fn create_task(
    engine: &Engine,
    tool: Tool,
    args: Map<String, Value>,
    params: CreateParams,
    answers: Answers,
) -> Result<TaskRecord, EngineError> {
    match tool.external_spec().cloned() {
        None => start(engine, tool, args, params, answers)?.commit().await,
        Some(spec) => {
            let kind = tool.name().to_string();
            let params = held_ttl(engine, &tool, params);
            engine
                .create_external(params, kind, move |ctx| {
                    Box::pin(async move {
                        let ctx = with_answers(&tool, ctx, answers)
                            .await
                            .map_err(|value| Outcome::Result { value })?;
                        (spec.start)(args, ctx).await
                    })
                })
                .await
        }
    }
}

/// Runs the tool, and makes the call a task only when it is still running after
/// `window` (or asks for input before): the extension wire's server-side decision.
/// External job tools always become tasks (their job outlives the call by design).
pub(crate) async fn task_or_result(
    engine: &Engine,
    tool: Tool,
    args: Map<String, Value>,
    params: CreateParams,
    answers: Answers,
    window: Duration,
) -> Result<Settled, EngineError> {
    if tool.external_spec().is_some() || window.is_zero() {
        return create_task(engine, tool, args, params, answers)
            .await
            .map(|r| Settled::Task(Box::new(r)));
    }
    start(engine, tool, args, params, answers)?
        .settle(window)
        .await
}

/// Starts an ordinary tool's work as a task-to-be.
pub(crate) fn start(
    engine: &Engine,
    tool: Tool,
    args: Map<String, Value>,
    params: CreateParams,
    answers: Answers,
) -> Result<ProvisionalTask, EngineError> {
    let params = held_ttl(engine, &tool, params);
    Ok(engine.begin(params)?.start(move |ctx| match answers {
        // Nothing to ask: the tool's own future, and only it, runs as long as the task
        // does.
        Answers::Given(map) => work_of(&tool, args, plumbing::with_answers(ctx, map)),
        Answers::AskInTask if tool.preflight().is_empty() => work_of(&tool, args, ctx),
        answers => Box::pin(async move {
            let ctx = match Box::pin(with_answers(&tool, ctx, answers)).await {
                Ok(ctx) => ctx,
                Err(tool_error) => return Outcome::Result { value: tool_error },
            };
            to_outcome(tool.call(args, ctx).await)
        }),
    }))
}

/// `params` with the TTL a call held for people needs (see [`Tool::held_for`]): the
/// longest wait, plus the time its client asked to have for the result, plus the time
/// an unanswered question's task stays readable before it expires (so that the
/// approval's own deadline comes first), never more than the server's maximum. The
/// server refuses to start with a rule whose wait exceeds that maximum
/// (`Approvals::check_max_ttl`); a rule without a deadline waits the maximum.
fn held_ttl(engine: &Engine, tool: &Tool, mut params: CreateParams) -> CreateParams {
    let Some(wait) = tool.held() else {
        return params;
    };
    let config = engine.config();
    let asked = config.effective_ttl(params.requested_ttl);
    let held = wait
        .saturating_add(asked)
        .saturating_add(mcp_tasks_engine::config::MAX_SETTLE_BEFORE_EXPIRY)
        .min(config.max_ttl);
    params.requested_ttl = Some(held.max(asked));
    params
}

/// The context with the preflight answers, asking them first when needed. A question
/// that cannot be asked (no elicitation capability, cancelled) becomes a tool error.
async fn with_answers(
    tool: &Tool,
    ctx: TaskContext,
    answers: Answers,
) -> Result<TaskContext, Value> {
    let answers = match answers {
        Answers::Given(map) => map,
        Answers::AskInTask => {
            let mut map = Map::new();
            for q in tool.preflight() {
                match ctx
                    .request_input(
                        mcp_tasks_protocol::methods::ELICITATION_CREATE,
                        q.elicit_params(),
                    )
                    .await
                {
                    Ok(a) => {
                        map.insert(q.key.clone(), a);
                    }
                    Err(e) => return Err(ToolResult::error(format!("{}: {e}", tool.name())).into()),
                }
            }
            map
        }
    };
    Ok(plumbing::with_answers(ctx, answers))
}
