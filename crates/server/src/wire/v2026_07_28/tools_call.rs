//! `tools/call` on the stateless wire: MRTR rounds for a tool's preflight questions,
//! then a task (when the tool allows one and the request declares the extension) or a
//! synchronous call.

use mcp_tasks_engine::{CreateParams, Outcome, Settled};
use mcp_tasks_protocol::codec::v2026_07_28;
use mcp_tasks_protocol::error_code::INTERNAL_ERROR;
use mcp_tasks_protocol::methods::{self as m, parse_params, CallToolParams, TOOLS_CALL};
use mcp_tasks_protocol::RpcError;
use serde_json::{json, Map, Value};
use std::time::Duration;

use super::inline_rounds;
use super::input_rounds::{self, shutting_down, Round};
use super::{missing_extension, Request};
use crate::error_map::to_rpc;
use crate::tools::budget;
use crate::tools::plain::{self, CallLink};
use crate::tools::registry::TaskSupport;
use crate::tools::task_tools;

pub(super) async fn handle(req: &Request<'_>, params: &Value) -> Result<Value, RpcError> {
    let p: CallToolParams = parse_params(TOOLS_CALL, params)?;
    let task_tools = task_tools::offered(req.server.config().task_tools, req.extension);
    if task_tools && task_tools::is_task_tool(&p.name) {
        let link = CallLink::new(
            req.server,
            None,
            None,
            params,
            req.server.shutdown_token().child_token(),
            true,
        );
        let args = p.arguments.unwrap_or_default();
        return match task_tools::call(req.server, &link, &req.caller, &p.name, &args).await {
            Some(r) => r.map(v2026_07_28::complete),
            None => Err(shutting_down()),
        };
    }
    let tool = crate::tools::call::find(&req.server.tools(), &p.name)?;
    if tool.support() == TaskSupport::Required && !req.extension {
        return Err(missing_extension(&format!("tool '{}'", p.name)));
    }
    let args = p.arguments.unwrap_or_default();
    tool.validate(&Value::Object(args.clone()))?;
    let tool = req.server.config().approvals.gate(tool, &args);

    // The input-required round of a plain call whose tool asked mid-call: the call
    // comes back with the answers and the state naming its task (a call no task holds
    // carries its answers in the state instead: `inline_rounds`).
    if let Some(state) = params
        .get("requestState")
        .filter(|s| !s.is_null() && held_by_task(req, &tool))
    {
        return input_rounds::resume(req, params, &tool, &args, state, task_tools).await;
    }

    // MRTR: the preflight questions must all be answered (in `inputResponses`) before
    // anything runs; otherwise ask the ones still open and create nothing.
    let responses = params.get("inputResponses").and_then(Value::as_object);
    let mut answers = Map::new();
    let mut missing = Map::new();
    for q in tool.preflight() {
        match responses.and_then(|r| r.get(&q.key)) {
            Some(a) => {
                // Checked here, before anything runs: a wrong answer is the caller's
                // to fix, and nothing was created that it could leave behind.
                crate::mcp_reader::check_answer(m::ELICITATION_CREATE, &q.elicit_params(), a)
                    .map_err(|problem| {
                        RpcError::invalid_params(format!(
                            "the answer to '{}' in inputResponses was refused: {problem}; send the call again with a corrected answer",
                            q.key
                        ))
                    })?;
                answers.insert(q.key.clone(), a.clone());
            }
            None => {
                missing.insert(
                    q.key.clone(),
                    json!({ "method": m::ELICITATION_CREATE, "params": q.elicit_params() }),
                );
            }
        }
    }
    if !missing.is_empty() {
        return Ok(v2026_07_28::input_required_result(missing));
    }

    if server_decides(req, &tool) {
        // The server decides: a `required` tool always becomes a task; an `optional`
        // one only when it is still running after the configured window.
        // ... and no wait for a tool whose calls are known to run long.
        let window = match tool.support() {
            TaskSupport::Required => Duration::ZERO,
            _ => req.server.task_window(&tool, Duration::MAX),
        };
        let tool_ttl = tool.ttl();
        let name = tool.name().to_string();
        let settled = crate::tools::call::task_or_result(
            req.server.engine(),
            tool,
            args,
            CreateParams {
                caller: req.caller.clone(),
                method: TOOLS_CALL.to_string(),
                // Stored without the per-request protocol version and capabilities,
                // which are not the request's and cost every stored task their size.
                request: super::without_stateless_meta(params.clone()),
                // The extension wire carries no TTL request: the tool's own default.
                requested_ttl: tool_ttl,
                client_capabilities: req.capabilities.clone(),
            },
            crate::tools::call::Answers::Given(answers),
            window,
        )
        .await
        .map_err(to_rpc)?;
        req.server
            .observe_window(&name, window, matches!(settled, Settled::Done(_)));
        return match settled {
            Settled::Task(record) => Ok(v2026_07_28::create_task_result(
                &req.server.engine().view(&record),
            )),
            Settled::Done(Outcome::Result { value }) => Ok(v2026_07_28::complete(value)),
            Settled::Done(failed) => {
                Err(crate::error_map::outcome_error(&failed).unwrap_or_else(|| {
                    RpcError::new(INTERNAL_ERROR, "the tool ended without a result")
                }))
            }
        };
    }

    // No session to cancel through on this wire: the call ends when its HTTP request
    // does (dropping this future aborts the tool), or when the server shuts down.
    let cancel = req.server.shutdown_token().child_token();
    if runs_under_budget(req, &tool) {
        // A plain call under the sync budget (see `tools::plain`): no stream and no
        // session here, so its questions wait in the task for `task_answer`.
        let link = CallLink::new(req.server, None, None, params, cancel, task_tools);
        let create = CreateParams {
            caller: req.caller.clone(),
            method: TOOLS_CALL.to_string(),
            request: plain::stored_request(super::without_stateless_meta(params.clone())),
            requested_ttl: tool.ttl(),
            client_capabilities: plain::task_capabilities(req.capabilities.clone(), task_tools),
        };
        // A tool that asks mid-call: the input-required round, when the client declared
        // it can answer (otherwise the handle).
        let round = Round::new(req, tool.name(), &args);
        let hook = round.hook();
        return match budget::run_with_budget(
            req.server,
            &link,
            tool,
            args,
            create,
            crate::tools::call::Answers::Given(answers),
            Some(&hook),
        )
        .await
        {
            Some(r) => r.map(v2026_07_28::complete),
            None => Err(shutting_down()),
        };
    }
    // No task holds this call: a question the tool asks is a stateless round.
    inline_rounds::run(req, params, &tool, args, answers, cancel).await
}

/// Whether the server decides, for a client that declared the extension, to make the
/// call a task (see the branch in [`handle`]).
fn server_decides(req: &Request<'_>, tool: &crate::Tool) -> bool {
    req.extension && (tool.support() != TaskSupport::Forbidden || tool.needs_task())
}

/// Whether a plain call runs as a task of its caller's under the sync budget.
fn runs_under_budget(req: &Request<'_>, tool: &crate::Tool) -> bool {
    (tool.needs_task() && !tool.is_external())
        || (!req.server.config().sync_budget.is_zero()
            && tool.support() == TaskSupport::Optional
            && !tool.is_external())
}

/// Whether a task holds the call's work (so a `requestState` names it), rather than
/// the request alone.
fn held_by_task(req: &Request<'_>, tool: &crate::Tool) -> bool {
    server_decides(req, tool) || runs_under_budget(req, tool)
}
