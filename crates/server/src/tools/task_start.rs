//! Starting a tool as a task, the one way both wire generations do it: a running
//! future for ordinary tools, an external job for [`crate::tools::external`] tools, with the
//! tool's preflight questions answered either before (MRTR, extension wire) or inside
//! the task (2025-11-25, as input requests).

use futures::FutureExt;
use mcp_tasks_engine::{
    CreateParams, DeferredTask, Engine, EngineError, Outcome, Settled, TaskContext, TaskRecord,
};
use serde_json::{Map, Value};
use std::time::Duration;

use crate::tools::call::to_outcome;
use crate::tools::registry::{Tool, ToolResult};

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
        None => {
            start(engine, tool, args, params, answers)?
                .into_task()
                .await
        }
        Some(spec) => {
            let kind = tool.name().to_string();
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
fn start(
    engine: &Engine,
    tool: Tool,
    args: Map<String, Value>,
    params: CreateParams,
    answers: Answers,
) -> Result<DeferredTask, EngineError> {
    engine.start_deferred(params, move |ctx| match answers {
        // Nothing to ask: the tool's own future, and only it, runs as long as the task
        // does.
        Answers::Given(map) => tool
            .call(args, ctx.with_answers(map))
            .map(to_outcome)
            .boxed(),
        Answers::AskInTask if tool.preflight().is_empty() => {
            tool.call(args, ctx).map(to_outcome).boxed()
        }
        answers => Box::pin(async move {
            let ctx = match Box::pin(with_answers(&tool, ctx, answers)).await {
                Ok(ctx) => ctx,
                Err(tool_error) => return Outcome::Result { value: tool_error },
            };
            to_outcome(tool.call(args, ctx).await)
        }),
    })
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
                    Err(e) => return Err(ToolResult::error(format!("{}: {e}", tool.name()))),
                }
            }
            map
        }
    };
    Ok(ctx.with_answers(answers))
}
