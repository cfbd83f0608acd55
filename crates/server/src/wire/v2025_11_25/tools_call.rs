//! `tools/call`: synchronously, or as a task when `params.task` is present and the
//! tool allows it.

use mcp_tasks_engine::{CreateParams, LogSink, ProgressSink, TaskContext};
use mcp_tasks_protocol::codec::v2025_11_25;
use mcp_tasks_protocol::error_code::METHOD_NOT_FOUND;
use mcp_tasks_protocol::methods::{parse_params, progress_token, CallToolParams, TOOLS_CALL};
use mcp_tasks_protocol::{RequestId, RpcError};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;

use crate::error_map::to_rpc;
use crate::notify::messages::{log_notification, progress_notification};
use crate::server::Server;
use crate::session::Session;
use crate::tools::registry::{TaskSupport, Tool};

pub(super) async fn handle(
    server: &Server,
    session: &Arc<Session>,
    id: &RequestId,
    params: Value,
    stream: Option<mpsc::Sender<Value>>,
) -> Option<Result<Value, RpcError>> {
    let prepared = match prepare(server, session, &params) {
        Ok(p) => p,
        Err(e) => return Some(Err(e)),
    };
    match prepared {
        Prepared::Task { tool, args, ttl } => {
            Some(start_task(server, session, tool, args, ttl, params).await)
        }
        Prepared::Sync { tool, args } => {
            run_sync(server, session, id, tool, args, &params, stream).await
        }
    }
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
    let progress: Option<ProgressSink> = match (progress_token(params), stream) {
        (Some(token), Some(tx)) => Some(Arc::new(move |p| {
            let _ = tx.try_send(progress_notification(&token, &p));
        })),
        _ => None,
    };
    let ctx = TaskContext::detached(cancel.clone(), progress)
        .with_client_requests(
            requester,
            session.client_capabilities(),
            std::sync::Arc::new(crate::mcp_reader::McpReader),
        )
        .with_log_sink(log);
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
