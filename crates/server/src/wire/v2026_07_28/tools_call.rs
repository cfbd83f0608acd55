//! `tools/call` on the stateless wire: carries out what `calls::plan` decided (MRTR
//! rounds for a tool's preflight questions, a task the server decides on, a plain call
//! under the sync budget, an inline round) and renders it in this wire's shapes.

use mcp_tasks_engine::{CreateParams, Outcome, Settled};
use mcp_tasks_protocol::codec::v2026_07_28;
use mcp_tasks_protocol::error_code::INTERNAL_ERROR;
use mcp_tasks_protocol::methods::TOOLS_CALL;
use mcp_tasks_protocol::RpcError;
use serde_json::Value;

use super::inline_rounds;
use super::input_rounds::{self, shutting_down, Round};
use super::Request;
use crate::calls::budget;
use crate::calls::call::Answers;
use crate::calls::plain::{self, CallLink};
use crate::calls::plan::{plan, CallPlan, Wire};
use crate::calls::task_tools;
use crate::error_map::to_rpc;

pub(super) async fn handle(req: &Request<'_>, params: &Value) -> Result<Value, RpcError> {
    let wire = Wire::Stateless {
        extension: req.extension,
    };
    // The plan may write into the params (the approval policy holding the call).
    let mut planned_params = params.clone();
    let planned = plan(req.server, wire, &req.caller, &mut planned_params)?;
    let params = &planned_params;
    match planned {
        CallPlan::TaskTool { name, args } => {
            let link = CallLink::new(
                req.server,
                None,
                None,
                params,
                req.server.shutdown_token().child_token(),
                true,
            );
            match task_tools::call(req.server, &link, &req.caller, &name, &args).await {
                Some(r) => r.map(v2026_07_28::complete),
                None => Err(shutting_down()),
            }
        }
        CallPlan::ResumeRound {
            tool,
            args,
            state,
            task_tools,
        } => input_rounds::resume(req, params, &tool, &args, &state, task_tools).await,
        CallPlan::InputRequired { missing } => Ok(v2026_07_28::input_required_result(missing)),
        CallPlan::TaskOrResult {
            tool,
            args,
            answers,
            window,
        } => {
            let tool_ttl = tool.ttl();
            let name = tool.name().to_string();
            let settled = crate::calls::call::task_or_result(
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
                Answers::Given(answers),
                window,
            )
            .await
            .map_err(to_rpc)?;
            req.server
                .observe_window(&name, window, matches!(settled, Settled::Done(_)));
            match settled {
                Settled::Task(record) => Ok(v2026_07_28::create_task_result(
                    &req.server.engine().view(&record),
                )),
                Settled::Done(Outcome::Result { value }) => Ok(v2026_07_28::complete(value)),
                Settled::Done(failed) => Err(crate::error_map::outcome_error(&failed)
                    .unwrap_or_else(|| {
                        RpcError::new(INTERNAL_ERROR, "the tool ended without a result")
                    })),
            }
        }
        CallPlan::SyncBudget {
            tool,
            args,
            answers,
            task_tools,
        } => {
            // No session to cancel through on this wire: the call ends when its HTTP
            // request does (dropping this future aborts the tool), or when the server
            // shuts down. No stream and no session here, so its questions wait in the
            // task for `task_answer`.
            let cancel = req.server.shutdown_token().child_token();
            let link = CallLink::new(req.server, None, None, params, cancel, task_tools);
            let create = CreateParams {
                caller: req.caller.clone(),
                method: TOOLS_CALL.to_string(),
                request: plain::stored_request(super::without_stateless_meta(params.clone())),
                requested_ttl: tool.ttl(),
                client_capabilities: plain::task_capabilities(req.capabilities.clone(), task_tools),
            };
            // A tool that asks mid-call: the input-required round, when the client
            // declared it can answer (otherwise the handle).
            let round = Round::new(req, tool.name(), &args);
            let hook = round.hook();
            match budget::run_with_budget(
                req.server,
                &link,
                tool,
                args,
                create,
                answers,
                Some(&hook),
            )
            .await
            {
                Some(r) => r.map(v2026_07_28::complete),
                None => Err(shutting_down()),
            }
        }
        CallPlan::Inline {
            tool,
            args,
            answers,
        } => {
            // No task holds this call: a question the tool asks is a stateless round.
            let cancel = req.server.shutdown_token().child_token();
            inline_rounds::run(req, params, &tool, args, answers, cancel).await
        }
        CallPlan::Task { .. } => Err(RpcError::new(
            INTERNAL_ERROR,
            "a client-requested task is planned on the 2025-11-25 wire only",
        )),
    }
}
