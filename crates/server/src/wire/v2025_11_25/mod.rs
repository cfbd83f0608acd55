//! The 2025-11-25 wire: [`handle`] (behind [`crate::Server::handle`]) takes one parsed
//! message in and gives the response out. Requests and notifications go to the handlers of this wire; responses
//! answer the server's own requests to the client (input for tasks and synchronous
//! calls). Method dispatch: one file per MCP method, chosen by [`Method`]. Unknown
//! methods get `-32601` and the session stays up (the mini-redis `Unknown` command
//! pattern).

mod initialize;
mod logging;
mod notifications;
mod tasks_cancel;
mod tasks_get;
mod tasks_list;
mod tasks_result;
pub(crate) mod tools_call;
mod tools_list;

use mcp_tasks_engine::Outcome;
use mcp_tasks_protocol::jsonrpc::{self, Incoming};
use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::{RequestId, RpcError};
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::sync::mpsc;

use crate::session::Session;
use crate::shared::Shared;

/// Handles one parsed message (see [`crate::Server::handle`]). Returns the response to
/// send, if any (requests get one unless they were cancelled; notifications and
/// responses get none). `request_stream` receives notifications tied to this request
/// (progress of a synchronous call) when the transport can carry them.
pub(crate) async fn handle(
    server: &Shared,
    session: &Arc<Session>,
    message: Incoming,
    request_stream: Option<mpsc::Sender<Value>>,
) -> Option<Value> {
    match message {
        Incoming::Request { id, method, params } => {
            let _busy = session.busy();
            let version = session.protocol_version();
            let version = version.as_deref().or_else(|| {
                // initialize: the version the client asks for.
                params.get("protocolVersion").and_then(Value::as_str)
            });
            let span = crate::ops::telemetry::request_span(&crate::ops::telemetry::RequestInfo {
                method: &method,
                params: &params,
                id: &id,
                protocol_version: version,
                session: Some(session.id()),
                known_tool: server.knows_tool(&params),
            });
            let work = request(server, session, &id, &method, params, request_stream);
            let outcome = crate::wire::observe_request(server.metrics(), &method, span, work).await;
            outcome.map(|r| reply(&id, r))
        }
        Incoming::Notification { method, params } => {
            notification(server, session, &method, params);
            None
        }
        Incoming::Response { id, result } => {
            let outcome = Outcome::Result { value: result };
            if let Some(outcome) = server.questions().outgoing.complete(session, &id, outcome) {
                crate::questions::in_task::answer(server.questions(), session, &id, outcome).await;
            }
            None
        }
        Incoming::ErrorResponse {
            id: Some(id),
            error,
        } => {
            let outcome = Outcome::Error {
                code: error.code,
                message: error.message,
                data: error.data,
            };
            if let Some(outcome) = server.questions().outgoing.complete(session, &id, outcome) {
                crate::questions::in_task::answer(server.questions(), session, &id, outcome).await;
            }
            None
        }
        Incoming::ErrorResponse { id: None, error } => {
            tracing::warn!(code = error.code, message = %error.message, "client reported an error");
            None
        }
    }
}

fn reply(id: &RequestId, result: Result<Value, RpcError>) -> Value {
    match result {
        Ok(v) => jsonrpc::response(id, v),
        Err(e) => jsonrpc::error_response(Some(id), &e),
    }
}

/// The requests this server answers.
enum Method {
    Initialize,
    Ping,
    SetLogLevel,
    ToolsList,
    ToolsCall,
    TasksGet,
    TasksResult,
    TasksList,
    TasksCancel,
    Unknown,
}

impl Method {
    fn from_name(name: &str) -> Self {
        match name {
            m::INITIALIZE => Method::Initialize,
            m::PING => Method::Ping,
            m::LOGGING_SET_LEVEL => Method::SetLogLevel,
            m::TOOLS_LIST => Method::ToolsList,
            m::TOOLS_CALL => Method::ToolsCall,
            m::TASKS_GET => Method::TasksGet,
            m::TASKS_RESULT => Method::TasksResult,
            m::TASKS_LIST => Method::TasksList,
            m::TASKS_CANCEL => Method::TasksCancel,
            _ => Method::Unknown,
        }
    }

    fn is_task_method(&self) -> bool {
        matches!(
            self,
            Method::TasksGet | Method::TasksResult | Method::TasksList | Method::TasksCancel
        )
    }
}

/// Handles a request. `None` means no response is sent (the request was cancelled).
#[tracing::instrument(skip_all, fields(method = %method, session = %session.id()))]
pub(crate) async fn request(
    server: &Shared,
    session: &Arc<Session>,
    id: &RequestId,
    method: &str,
    params: Value,
    stream: Option<mpsc::Sender<Value>>,
) -> Option<Result<Value, RpcError>> {
    let which = Method::from_name(method);
    if !matches!(which, Method::Initialize | Method::Ping) && session.protocol_version().is_none() {
        return Some(Err(RpcError::invalid_request(format!(
            "'{method}' before initialize: send 'initialize' first to open the session"
        ))));
    }
    if which.is_task_method() && !session.speaks_tasks() {
        return Some(Err(RpcError::method_not_found(method).with_data(json!({
            "reason": "tasks need protocol version 2025-11-25; this session negotiated an older one"
        }))));
    }
    let result = match which {
        Method::Initialize => initialize::handle(server, session, &params),
        Method::Ping => Ok(json!({})),
        Method::SetLogLevel => logging::set_level(session, &params),
        Method::ToolsList => tools_list::handle(server, session),
        Method::ToolsCall => return tools_call::handle(server, session, id, params, stream).await,
        Method::TasksGet => tasks_get::handle(server, session, &params).await,
        Method::TasksResult => tasks_result::handle(server, session, &params, stream).await,
        Method::TasksList => tasks_list::handle(server, session, &params).await,
        Method::TasksCancel => tasks_cancel::handle(server, session, &params).await,
        Method::Unknown => match server.passthrough_for(method) {
            Some(p) => p.request(method, params).await,
            None => Err(RpcError::method_not_found(method)),
        },
    };
    Some(result)
}

/// Handles a notification from the client.
pub(crate) fn notification(server: &Shared, session: &Arc<Session>, method: &str, params: Value) {
    notifications::handle(server, session, method, params);
}
