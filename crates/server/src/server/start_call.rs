//! A `tools/call` started as a task by the server itself, on someone's behalf: the task
//! board's "run again" (a failed or cancelled task's call, made anew for its owner).
//! It takes the path a client's call takes (find the tool, check its arguments, create
//! the task with its preflight questions asked inside it), so the new task runs, is
//! stored and is answered like any other.

use mcp_tasks_engine::{Caller, CreateParams, TaskRecord};
use mcp_tasks_protocol::error_code::METHOD_NOT_FOUND;
use mcp_tasks_protocol::methods::TOOLS_CALL;
use mcp_tasks_protocol::RpcError;
use serde_json::{json, Value};

use super::Server;
use crate::calls::call::{create_task, Answers};
use crate::calls::plan::find;
use crate::error_map::to_rpc;
use crate::tools::registry::TaskSupport;

impl Server {
    /// Starts `params` (the params of a `tools/call`: `name`, `arguments`, `_meta`) as a
    /// task owned by `caller`, with the tool's default TTL. Questions the tool asks wait
    /// in the task (for a person on the board, or a client with the task tools), as
    /// they do for a plain call offered them.
    ///
    /// Why: a person re-running a failed task from the board must get a task that runs
    /// exactly like one a client started (same checks, same durable work), owned by the
    /// task's owner so that the owner's client finds it.
    ///
    /// # Errors
    /// `-32602` for an unknown tool or arguments its schema refuses; `-32601` for a tool
    /// that cannot run as a task; the engine's errors (at capacity, store failures) as
    /// every wire maps them.
    pub async fn start_tool_task(
        &self,
        caller: Caller,
        params: Value,
    ) -> Result<TaskRecord, RpcError> {
        self.start_tool_task_again(caller, params, None).await
    }

    /// [`Server::start_tool_task`] for a call a person runs again (`ran_by`, the task
    /// board's "Run again"): the call meets its approval rule from the start, as a new
    /// call, and `ran_by` is not among those who may approve it.
    ///
    /// Why: approvals are a separation of duties. Whoever starts a call must not also
    /// decide it, or one person could revive a call that was rejected and approve it
    /// alone; no vote of the first call carries over to the new one.
    ///
    /// # Errors
    /// As [`Server::start_tool_task`].
    pub async fn start_tool_task_again(
        &self,
        caller: Caller,
        params: Value,
        ran_by: Option<&str>,
    ) -> Result<TaskRecord, RpcError> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params("a tools/call needs the tool's 'name'"))?;
        let tool = find(&self.tools(), name)?;
        if tool.support() == TaskSupport::Forbidden {
            return Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!(
                    "tool '{name}' cannot run as a task (execution.taskSupport is \"forbidden\")"
                ),
            ));
        }
        let args = match params.get("arguments") {
            None | Some(Value::Null) => serde_json::Map::new(),
            Some(Value::Object(args)) => args.clone(),
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "a tools/call's 'arguments' must be an object",
                ))
            }
        };
        tool.validate(&Value::Object(args.clone()))?;
        // Run again is a call like any other: an approval rule applies to it too.
        let mut params = params;
        if let Some(by) = ran_by {
            if !params.get("_meta").is_some_and(Value::is_object) {
                params["_meta"] = json!({});
            }
            params["_meta"][crate::approvals::RAN_AGAIN_BY_META] = json!(by);
        }
        let tool = self
            .config()
            .approvals
            .admit(tool, &args, &caller, &mut params)?;
        let requested_ttl = tool.ttl();
        create_task(
            self.engine(),
            tool,
            args,
            CreateParams {
                caller,
                method: TOOLS_CALL.to_string(),
                request: params,
                requested_ttl,
                // Nobody is connected to answer: its questions wait in the task.
                client_capabilities: json!({
                    "elicitation": { "form": {}, "url": {} },
                    "sampling": {},
                }),
            },
            Answers::AskInTask,
        )
        .await
        .map_err(to_rpc)
    }
}
