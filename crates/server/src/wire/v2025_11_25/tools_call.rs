//! `tools/call`: carries out what `calls::plan` decided (synchronously, as a task when
//! `params.task` is present and the tool allows it, under the sync budget for a plain
//! call of an `optional` task tool, or a task tool for clients that speak no tasks) and
//! renders it in this wire's shapes.

use mcp_tasks_engine::context::plumbing::TaskContextParts;
use mcp_tasks_engine::{CreateParams, LogSink, ProgressSink};
use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::error_code::INTERNAL_ERROR;
use mcp_tasks_protocol::methods::TOOLS_CALL;
use mcp_tasks_protocol::{RequestId, RpcError};
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio::sync::mpsc;

use crate::calls::call::Answers;
use crate::calls::plain::{self, CallLink};
use crate::calls::plan::{plan, CallPlan, Wire};
use crate::calls::task_tools;
use crate::error_map::to_rpc;
use crate::messages::log_notification;
use crate::session::Session;
use crate::shared::Shared;
use crate::tools::registry::Tool;
use tokio_util::sync::CancellationToken;

pub(super) async fn handle(
    server: &Shared,
    session: &Arc<Session>,
    id: &RequestId,
    mut params: Value,
    stream: Option<mpsc::Sender<Value>>,
) -> Option<Result<Value, RpcError>> {
    let caller = session.caller();
    let planned = match plan(server, wire_of(session), &caller, &mut params) {
        Ok(p) => p,
        Err(e) => return Some(Err(e)),
    };
    match planned {
        CallPlan::TaskTool { name, args } => {
            call_task_tool(server, session, id, &name, args, &params, stream).await
        }
        CallPlan::Task { tool, args, ttl } => {
            Some(start_task(server, session, tool, args, ttl, params).await)
        }
        // A call that waits for approval becomes a task whatever the client asked
        // for: under the budget (a zero budget answers with the handle at once).
        CallPlan::SyncBudget {
            tool,
            args,
            answers,
            task_tools,
        } => {
            let budgeted = Budgeted {
                tool,
                args,
                answers,
                task_tools,
            };
            run_with_budget(server, session, id, budgeted, &params, stream).await
        }
        CallPlan::Inline { tool, args, .. } => {
            run_sync(server, session, id, tool, args, &params, stream).await
        }
        CallPlan::ResumeRound { .. }
        | CallPlan::InputRequired { .. }
        | CallPlan::TaskOrResult { .. } => Some(Err(RpcError::new(
            INTERNAL_ERROR,
            "an input round or a server-decided task is planned on the 2026-07-28 wire only",
        ))),
    }
}

/// What `session`'s client declared, as the call plan reads it.
pub(crate) fn wire_of(session: &Session) -> Wire {
    Wire::Session {
        speaks_tasks: session.speaks_tasks(),
        declares_tasks: session
            .client_capabilities()
            .get("tasks")
            .is_some_and(Value::is_object),
    }
}

/// Calls a task tool; cancellable like any plain call (a `task_wait` stops waiting).
async fn call_task_tool(
    server: &Shared,
    session: &Arc<Session>,
    id: &RequestId,
    name: &str,
    args: Map<String, Value>,
    params: &Value,
    stream: Option<mpsc::Sender<Value>>,
) -> Option<Result<Value, RpcError>> {
    let cancel = session.begin_request(id);
    let _ended = EndRequest { session, id };
    let link = CallLink::new(
        server,
        Some(Arc::clone(session)),
        stream,
        params,
        cancel,
        true,
    )
    .for_request(id);
    task_tools::call(server, &link, &session.caller(), name, &args).await
}

/// A plain call under the sync budget: run as a task from the start, answered with
/// its result when it ends in time, else with a handle (see `calls::plain`).
async fn run_with_budget(
    server: &Shared,
    session: &Arc<Session>,
    id: &RequestId,
    budgeted: Budgeted,
    params: &Value,
    stream: Option<mpsc::Sender<Value>>,
) -> Option<Result<Value, RpcError>> {
    let Budgeted {
        tool,
        args,
        answers,
        task_tools: offered,
    } = budgeted;
    let cancel = session.begin_request(id);
    let _ended = EndRequest { session, id };
    let link = CallLink::new(
        server,
        Some(Arc::clone(session)),
        stream,
        params,
        cancel,
        offered,
    )
    .for_request(id);
    let create = CreateParams {
        caller: session.caller(),
        method: TOOLS_CALL.to_string(),
        request: plain::stored_request(params.clone()),
        requested_ttl: tool.ttl(),
        client_capabilities: plain::task_capabilities(session.client_capabilities(), offered),
    };
    crate::calls::budget::run_with_budget(server, &link, tool, args, create, answers, None).await
}

/// A plain call planned under the sync budget ([`CallPlan::SyncBudget`]).
struct Budgeted {
    tool: Tool,
    args: Map<String, Value>,
    answers: Answers,
    task_tools: bool,
}

async fn start_task(
    server: &Shared,
    session: &Arc<Session>,
    tool: Tool,
    args: Map<String, Value>,
    ttl: Option<std::time::Duration>,
    params: Value,
) -> Result<Value, RpcError> {
    let tool_name = tool.name().to_string();
    let tool_ttl = tool.ttl();
    let record = crate::calls::call::create_task(
        server.engine(),
        tool,
        args,
        CreateParams {
            caller: session.caller(),
            method: TOOLS_CALL.to_string(),
            request: params,
            // The client's TTL, else the tool's own default (the server clamps both).
            requested_ttl: ttl.or(tool_ttl),
            client_capabilities: session.client_capabilities(),
        },
        Answers::AskInTask,
    )
    .await
    .map_err(to_rpc)?;
    let immediate = format!(
        "Tool '{tool_name}' is running as task {}; its result will be available when it finishes.",
        record.id
    );
    Ok(v2025_11_25::create_task_result(
        &server.engine().view(&record),
        Some(&immediate),
    ))
}

/// Runs a tool inline. Cancelled by `notifications/cancelled` (no response is sent then,
/// as the spec asks). A panicking tool becomes an internal error, never a crash.
async fn run_sync(
    server: &Shared,
    session: &Arc<Session>,
    id: &RequestId,
    tool: Tool,
    args: Map<String, Value>,
    params: &Value,
    stream: Option<mpsc::Sender<Value>>,
) -> Option<Result<Value, RpcError>> {
    let cancel = session.begin_request(id);
    let requester =
        crate::questions::in_call::requester(server.questions(), session, stream.clone());
    let log = log_sink(session, stream.clone());
    // The tool's progress, and a heartbeat whenever it is quiet for an interval.
    let beat = crate::calls::heartbeat::Heartbeat::for_call(
        params,
        stream.as_ref(),
        server.config().progress_interval,
    );
    let _stop_beats = beat.as_ref().map(|beat| {
        let stop = CancellationToken::new();
        tokio::spawn(Arc::clone(beat).run(stop.clone()));
        stop.drop_guard()
    });
    let progress: Option<ProgressSink> = beat.map(|beat| {
        let sink: ProgressSink = Arc::new(move |p| beat.forward(&p));
        sink
    });
    let ctx = TaskContextParts::detached(cancel.clone(), progress)
        .client_requests(
            requester,
            session.client_capabilities(),
            std::sync::Arc::new(crate::mcp_results::McpResults),
        )
        .log_sink(log)
        .build();
    // However this ends (answered, cancelled, or the client went away and this future
    // was dropped), the request is no longer in flight.
    let _ended = EndRequest { session, id };
    let grace = server.engine().config().cancel_grace;
    let answer = crate::calls::call::run_inline(&tool, args, ctx, &cancel, grace).await;
    if answer.is_none() {
        tracing::info!(%id, "synchronous call cancelled by the client");
    }
    answer
}

/// Ends a synchronous call's bookkeeping when its handler stops, however it stops.
struct EndRequest<'a> {
    session: &'a Session,
    id: &'a RequestId,
}

impl Drop for EndRequest<'_> {
    fn drop(&mut self) {
        self.session.end_request(self.id);
    }
}

/// Log messages of a synchronous call: on its stream, at or above the session's level.
/// A call without a stream (a POST accepting only JSON) has nowhere to put them: the
/// GET stream is for messages unrelated to running requests.
fn log_sink(session: &Arc<Session>, stream: Option<mpsc::Sender<Value>>) -> LogSink {
    let session = Arc::clone(session);
    Arc::new(move |message| {
        if !session.wants_log(message.level) {
            return;
        }
        if let Some(tx) = &stream {
            let _ = tx.try_send(log_notification(&message, None));
        }
    })
}
