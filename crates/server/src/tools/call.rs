//! The part of `tools/call` both wires share: finding the tool, turning its answer into
//! a task outcome, and running it inline with its panics caught and its cancellation
//! honoured. Each wire's `tools_call` keeps only what differs (how a task is asked for,
//! how the reply is shaped); starting a tool as a task is `task_start`.

use mcp_tasks_engine::{Outcome, TaskContext};
use mcp_tasks_protocol::error_code::INTERNAL_ERROR;
use mcp_tasks_protocol::RpcError;
use serde_json::{Map, Value};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use crate::tools::registry::{Tool, ToolRegistry};

/// The tool called `name`, or the error every wire answers for an unknown one.
///
/// # Errors
/// `-32602` naming the tool and saying where the list of tools is.
pub(crate) fn find(tools: &ToolRegistry, name: &str) -> Result<Tool, RpcError> {
    tools.get(name).cloned().ok_or_else(|| {
        RpcError::invalid_params(format!(
            "unknown tool '{name}': call tools/list to see the tools this server offers"
        ))
    })
}

/// A tool's answer as a task outcome: its result, or the protocol error it returned.
pub(crate) fn to_outcome(result: Result<Value, RpcError>) -> Outcome {
    match result {
        Ok(value) => Outcome::Result { value },
        Err(e) => Outcome::Error {
            code: e.code,
            message: e.message,
            data: e.data,
        },
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
