//! Starting a tool as a task, the one way both wire generations do it: a running
//! future for ordinary tools, an external job for [`crate::external`] tools, with the
//! tool's preflight questions answered either before (MRTR, extension wire) or inside
//! the task (2025-11-25, as input requests).

use futures::FutureExt;
use mcp_tasks_engine::{CreateParams, Engine, EngineError, Outcome, TaskContext, TaskRecord};
use serde_json::{Map, Value};

use crate::registry::{Tool, ToolResult};
use crate::tool_call::to_outcome;

/// Where the answers to a tool's preflight questions come from.
pub(crate) enum Answers {
    /// Already given (MRTR rounds on the extension wire).
    Given(Map<String, Value>),
    /// Ask them inside the task, as input requests (2025-11-25 has no MRTR).
    AskInTask,
}

/// Creates the task and starts the tool's work.
pub(crate) async fn create_task(
    engine: &Engine,
    tool: Tool,
    args: Map<String, Value>,
    params: CreateParams,
    answers: Answers,
) -> Result<TaskRecord, EngineError> {
    match tool.external_spec().cloned() {
        None => {
            engine
                .create(params, move |ctx| match answers {
                    // Nothing to ask: the tool's own future, and only it, runs as long
                    // as the task does.
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
