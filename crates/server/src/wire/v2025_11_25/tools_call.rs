//! `tools/call`: synchronously, or as a task when `params.task` is present and the
//! tool allows it. A plain call of an `optional` task tool runs under the sync budget
//! (`tools::plain`); the task tools answer clients that speak no tasks.

use mcp_tasks_engine::context::plumbing::TaskContextParts;
use mcp_tasks_engine::{CreateParams, LogSink, ProgressSink};
use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::error_code::METHOD_NOT_FOUND;
use mcp_tasks_protocol::methods::{parse_params, CallToolParams, TOOLS_CALL};
use mcp_tasks_protocol::{RequestId, RpcError};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;

use crate::error_map::to_rpc;
use crate::notify::messages::log_notification;
use crate::server::Server;
use crate::session::Session;
use crate::tools::plain::{self, CallLink};
use crate::tools::registry::{TaskSupport, Tool};
use crate::tools::task_tools;
use tokio_util::sync::CancellationToken;

pub(super) async fn handle(
    server: &Server,
    session: &Arc<Session>,
    id: &RequestId,
    params: Value,
    stream: Option<mpsc::Sender<Value>>,
) -> Option<Result<Value, RpcError>> {
    if let Some(name) = params
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| task_tools::is_task_tool(n))
    {
        if task_tools_offered(server, session) {
            return call_task_tool(server, session, id, name, &params, stream).await;
        }
    }
    let prepared = match prepare(server, session, &params) {
        Ok(p) => p,
        Err(e) => return Some(Err(e)),
    };
    match prepared {
        Prepared::Task { tool, args, ttl } => {
            let tool = server.config().approvals.gate(tool, &args);
            Some(start_task(server, session, tool, args, ttl, params).await)
        }
        // A call that waits for approval becomes a task whatever the client asked
        // for: under the budget (a zero budget answers with the handle at once).
        Prepared::Sync { tool, args }
            if (tool.needs_task() && !tool.is_external())
                || (!server.config().sync_budget.is_zero()
                    && tool.support() == TaskSupport::Optional
                    && !tool.is_external()) =>
        {
            run_with_budget(server, session, id, tool, args, &params, stream).await
        }
        Prepared::Sync { tool, args } => {
            run_sync(server, session, id, tool, args, &params, stream).await
        }
    }
}

/// Whether `session`'s client is offered the task tools: under `auto`, when it
/// declared no task support (no `capabilities.tasks`, or a protocol version before
/// tasks).
pub(crate) fn task_tools_offered(server: &Server, session: &Session) -> bool {
    let speaks = session.speaks_tasks()
        && session
            .client_capabilities()
            .get("tasks")
            .is_some_and(Value::is_object);
    task_tools::offered(server.config().task_tools, speaks)
}

/// Calls a task tool; cancellable like any plain call (a `task_wait` stops waiting).
async fn call_task_tool(
    server: &Server,
    session: &Arc<Session>,
    id: &RequestId,
    name: &str,
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
    let args = params
        .get("arguments")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    task_tools::call(server, &link, &session.caller(), name, &args).await
}

/// A plain call under the sync budget: run as a task from the start, answered with
/// its result when it ends in time, else with a handle (see `tools::plain`).
async fn run_with_budget(
    server: &Server,
    session: &Arc<Session>,
    id: &RequestId,
    tool: Tool,
    args: serde_json::Map<String, Value>,
    params: &Value,
    stream: Option<mpsc::Sender<Value>>,
) -> Option<Result<Value, RpcError>> {
    let cancel = session.begin_request(id);
    let _ended = EndRequest { session, id };
    let offered = task_tools_offered(server, session);
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
    crate::tools::budget::run_with_budget(
        server,
        &link,
        tool,
        args,
        create,
        crate::tools::call::Answers::AskInTask,
        None,
    )
    .await
}

enum Prepared {
    Task {
        tool: Tool,
        args: serde_json::Map<String, Value>,
        ttl: Option<std::time::Duration>,
    },
    Sync {
        tool: Tool,
        args: serde_json::Map<String, Value>,
    },
}

/// Checks name, task support and arguments before anything runs.
fn prepare(server: &Server, session: &Arc<Session>, params: &Value) -> Result<Prepared, RpcError> {
    let p: CallToolParams = parse_params(TOOLS_CALL, params)?;
    let tool = crate::tools::call::find(&server.tools(), &p.name)?;
    let task = if session.speaks_tasks() {
        v2025_11_25::task_metadata(params)?
    } else {
        None
    };
    match (tool.support(), &task) {
        (TaskSupport::Required, None) => {
            let how = if session.speaks_tasks() {
                "add \"task\": {} to the tools/call params"
            } else {
                "it needs protocol version 2025-11-25 or later"
            };
            return Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("tool '{}' can only run as a task (execution.taskSupport is \"required\"): {how}", p.name),
            ));
        }
        (TaskSupport::Forbidden, Some(_)) => {
            return Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!(
                    "tool '{}' cannot run as a task (execution.taskSupport is \"forbidden\"): call it without \"task\"",
                    p.name
                ),
            ))
        }
        _ => {}
    }
    let args = p.arguments.unwrap_or_default();
    tool.validate(&Value::Object(args.clone()))?;
    let tool = match task {
        Some(_) => tool,
        None => server.config().approvals.gate(tool, &args),
    };
    Ok(match task {
        Some(meta) => Prepared::Task {
            tool,
            args,
            ttl: meta.ttl(),
        },
        None => Prepared::Sync { tool, args },
    })
}

async fn start_task(
    server: &Server,
    session: &Arc<Session>,
    tool: Tool,
    args: serde_json::Map<String, Value>,
    ttl: Option<std::time::Duration>,
    params: Value,
) -> Result<Value, RpcError> {
    let tool_name = tool.name().to_string();
    let tool_ttl = tool.ttl();
    let record = crate::tools::call::create_task(
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
        crate::tools::call::Answers::AskInTask,
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
    server: &Server,
    session: &Arc<Session>,
    id: &RequestId,
    tool: Tool,
    args: serde_json::Map<String, Value>,
    params: &Value,
    stream: Option<mpsc::Sender<Value>>,
) -> Option<Result<Value, RpcError>> {
    let cancel = session.begin_request(id);
    let requester = crate::questions::in_call::requester(server, session, stream.clone());
    let log = log_sink(session, stream.clone());
    // The tool's progress, and a heartbeat whenever it is quiet for an interval.
    let beat = crate::tools::heartbeat::Heartbeat::for_call(
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
            std::sync::Arc::new(crate::mcp_reader::McpReader),
        )
        .log_sink(log)
        .build();
    // However this ends (answered, cancelled, or the client went away and this future
    // was dropped), the request is no longer in flight.
    let _ended = EndRequest { session, id };
    let grace = server.engine().config().cancel_grace;
    let answer = crate::tools::call::run_inline(&tool, args, ctx, &cancel, grace).await;
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
