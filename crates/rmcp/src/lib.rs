//! # mcp-tasks-rmcp
//!
//! Durable MCP Tasks for servers written with [rmcp](https://docs.rs/rmcp), the
//! official Rust SDK. Keep your rmcp server whole (transport, resources, prompts,
//! completions, logging, its own tools and `serverInfo`) and add tools that run on the
//! mcp-tasks engine and store: tasks kept in SQLite or PostgreSQL (they outlive the
//! process and its sessions), a `TaskContext` inside every tool (status messages,
//! progress, typed questions, journaled steps, cancellation), and the task board and
//! webhooks reading the same records.
//!
//! ```no_run
//! # use std::sync::Arc;
//! use mcp_tasks::prelude::*;
//! use mcp_tasks_rmcp::DurableTasks;
//! use rmcp::transport::streamable_http_server::{
//!     session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
//! };
//!
//! async fn hello(_: NoArgs, ctx: TaskContext) -> String {
//!     ctx.set_status_message("saying hello").await;
//!     "hello".to_string()
//! }
//!
//! /// The rmcp server you already have (resources, prompts, ...).
//! #[derive(Clone)]
//! struct Mine;
//! impl rmcp::ServerHandler for Mine {}
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder()
//!     .store_url("sqlite://./tasks.db")
//!     .tool(
//!         Tool::from_fn("hello", "Says hello.", hello)
//!             .task_support(TaskSupport::Optional)
//!             // Run again after a restart instead of failing (safe to repeat).
//!             .resumable(),
//!     )
//!     .build()
//!     .await?;
//! let handler = DurableTasks::new(server).wrap(Mine);
//! let mcp = StreamableHttpService::new(
//!     move || Ok(handler.clone()),
//!     Arc::new(LocalSessionManager::default()),
//!     StreamableHttpServerConfig::default(),
//! );
//! let app = axum::Router::new().nest_service("/mcp", mcp);
//! axum::serve(tokio::net::TcpListener::bind("127.0.0.1:8080").await?, app).await?;
//! # Ok(()) }
//! ```
//!
//! A *resumable* tool's task, cut off by a restart or a crash, runs again as its next
//! attempt when a server on the same store starts (and a question it waited on can be
//! answered then); without it such a task fails, since the engine cannot know whether
//! the tool is safe to repeat.
//!
//! ## What goes where
//!
//! rmcp decodes each request, checks the client's capabilities and the Tasks
//! extension, and calls its [`ServerHandler`]. [`DurableTasks`] implements that trait
//! for tools and tasks; [`Durable`] (from [`DurableTasks::wrap`]) hands everything else
//! to your handler and merges the tool lists.
//!
//! | rmcp request | answered by |
//! |---|---|
//! | `tools/list` | the tools of the `Server` (its `ToolRegistry`), then the wrapped handler's |
//! | `tools/call` | for one of ours, the server's `tools/call`: on 2026-07-28 a `CreateTaskResult` when the client declared `io.modelcontextprotocol/tasks` and the server makes the call a task, else the result (or an `InputRequiredResult` round); before 2026-07-28 a plain call whose questions go out as `elicitation/create` |
//! | `tasks/get` | `Engine::get`, as a `DetailedTask` (status message, outstanding `inputRequests`, the inlined result or error) |
//! | `tasks/update` | `Engine::answer_input`: the answers wake the questions the tool is waiting on |
//! | `tasks/cancel` | `Engine::cancel` |
//!
//! A request of a 2026-07-28 client goes through
//! `mcp_tasks_server::wire::v2026_07_28::handle`, and one of an older session through
//! our 2025-11-25 wire (`Server::handle`, in an mcp-tasks session mirroring the rmcp
//! session): the code our own transports run, so an rmcp server and an mcp-tasks server
//! answer a request identically: same records, same principal checks, same errors, same
//! metrics and request spans. rmcp's own
//! [`TaskManager`](rmcp::task_manager::TaskManager) is not used.
//!
//! ## What rmcp's wire does not carry
//!
//! rmcp 3.11 speaks tasks only as the 2026-07-28 Tasks extension (SEP-2663). A task
//! asked for on a 2025-11-25 session (`params.task`) is not possible: rmcp's model has
//! no 2025-11-25 `tasks` capability on either side and no `task` field in
//! `CallToolRequestParams`, so such a call runs as a plain call under the server's
//! sync budget, and a task it becomes is followed with the task tools (`task_wait`,
//! ...), listed to such clients. Status notifications (`notifications/tasks`) cannot
//! be pushed: rmcp's `subscriptions/listen` sink refuses them, so clients poll
//! `tasks/get` (status message included). The crate's README gives rmcp's file and
//! line for each.
//!
//! ## The board and webhooks
//!
//! Both read the engine, not a transport, so they see the tasks rmcp's clients create:
//! merge `mcp_tasks_board::Board::new(tasks.server().clone(), config).router()` into
//! the same axum app, and give the webhook notifier's observer to the server when it
//! starts (`Server::start(store, engine_config, tools, server_config, observers)`, then
//! `PreparedNotifier::start(&server)`). The crate's `tests/board.rs` does both: the
//! webhook tells of the question and of the end, the board lists the task and a
//! person answers the question there.
//!
//! ## Who owns a task
//!
//! A task belongs to the principal that created it. rmcp authenticates nothing by
//! itself, so by default every caller is anonymous (as on our own server without
//! authentication). Put your authentication in front of rmcp's service and name the
//! principal with [`DurableTasks::with_principal`] (for instance from a header in the
//! request's `http::request::Parts`, which rmcp's HTTP transport puts in
//! [`RequestContext::extensions`]).
#![deny(missing_docs)]

mod convert;
mod legacy;
mod wrap;

pub use wrap::Durable;

use mcp_tasks_protocol::codec::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use mcp_tasks_protocol::jsonrpc::RequestId;
use mcp_tasks_protocol::{methods as m, version};
use mcp_tasks_server::wire::v2026_07_28::{self as wire, RoutingHeaders};
use mcp_tasks_server::{task_tools, Server};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelledNotificationParam,
    CustomRequest, CustomResult, ErrorCode, GetTaskParams, GetTaskResult, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Names the principal a request acts for (the owner of the tasks it creates and the
/// only one who may read, answer or cancel them), or `None` for the anonymous one.
pub type Principal = Arc<dyn Fn(&RequestContext<RoleServer>) -> Option<String> + Send + Sync>;

/// An rmcp [`ServerHandler`] whose tools and task requests are answered by an
/// mcp-tasks [`Server`]: its engine, store and tools. Cheap to clone: clones share
/// the server, and each clone is the handler of one rmcp session (rmcp's HTTP service
/// asks its factory for one per session), so a clone starts with no session state of
/// its own (the mirror of a session before 2026-07-28, see the crate's docs).
pub struct DurableTasks {
    server: Server,
    info: ServerConfig,
    principal: Option<Principal>,
    /// The mcp-tasks session mirroring this rmcp session, once a request on a
    /// version before 2026-07-28 came.
    legacy: Arc<legacy::Slot>,
}

impl Clone for DurableTasks {
    fn clone(&self) -> Self {
        DurableTasks {
            server: self.server.clone(),
            info: self.info.clone(),
            principal: self.principal.clone(),
            legacy: Arc::default(),
        }
    }
}

impl std::fmt::Debug for DurableTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableTasks")
            .field("server", &self.server)
            .field("principal", &self.principal.is_some())
            .finish()
    }
}

impl DurableTasks {
    /// A handler over `server` (built with `Server::builder()` or `Server::start`; its
    /// engine is already running). It announces tools and the Tasks extension, and
    /// the server's own name, version and instructions (`Server::builder().name(..)`);
    /// change what it says of itself with [`DurableTasks::with_info`], or keep a
    /// handler of your own and its `serverInfo` with [`DurableTasks::wrap`].
    pub fn new(server: Server) -> Self {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tasks()
            .build();
        let config = server.config();
        let mut info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(&config.name, &config.version));
        info.instructions.clone_from(&config.instructions);
        DurableTasks {
            server,
            info,
            principal: None,
            legacy: Arc::default(),
        }
    }

    /// Keeps `handler`, an rmcp server of your own, whole: its resources, prompts,
    /// completions, logging, subscriptions, its own tools, `initialize` and
    /// `serverInfo` stay its, and this handler adds its tools and the tasks (see
    /// [`Durable`]). Serve the result as you served `handler`.
    pub fn wrap<H: ServerHandler>(self, handler: H) -> Durable<H> {
        Durable::new(self, handler)
    }

    /// What `initialize` and `server/discover` answer (name, version, instructions,
    /// capabilities). Keep tools and the Tasks extension enabled in it: without the
    /// extension rmcp refuses `tasks/*` before they reach this handler.
    pub fn with_info(mut self, info: ServerConfig) -> Self {
        self.info = info;
        self
    }

    /// Names the principal of each request (see [`Principal`]): tasks are then
    /// private to it. Without this every caller is the same anonymous principal.
    pub fn with_principal(
        mut self,
        principal: impl Fn(&RequestContext<RoleServer>) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.principal = Some(Arc::new(principal));
        self
    }

    /// The mcp-tasks server behind this handler: mount its task board
    /// (`mcp_tasks_board::Board::new(tasks.server().clone(), ..)`), read its engine,
    /// shut it down.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Whether `name` is one of this handler's tools (the server's, or a task tool:
    /// `task_wait`, `task_status`, `task_answer`, `task_cancel`, `task_list`): a
    /// handler of your own forwards those calls to [`DurableTasks::call`] and answers
    /// the rest itself ([`Durable`] does so).
    pub fn knows_tool(&self, name: &str) -> bool {
        self.server.tools().get(name).is_some() || task_tools::is_task_tool(name)
    }

    /// `tools/list`: the server's tools as rmcp [`Tool`]s.
    ///
    /// # Errors
    /// When the server's answer cannot be read as rmcp's types (a tool definition
    /// rmcp refuses).
    pub async fn tools(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Vec<Tool>, ErrorData> {
        let result = if legacy::is_legacy(context) {
            self.legacy(m::TOOLS_LIST, json!({}), context).await?
        } else {
            self.dispatch(m::TOOLS_LIST, None, json!({}), context)
                .await?
        };
        let tools = result.get("tools").cloned().unwrap_or(json!([]));
        convert::read(tools, "the tool list")
    }

    /// `tools/call`: runs the tool on the engine, as a task when the client declared
    /// the Tasks extension and the tool allows one. A plain call stops when rmcp
    /// cancels the request. On a session before 2026-07-28 the call runs through our
    /// 2025-11-25 wire: the tool's questions go to the client as `elicitation/create`
    /// (or `sampling/createMessage`) through rmcp's peer, and an `optional` task tool
    /// runs under the server's sync budget (its result, or a handle for the task tools).
    ///
    /// # Errors
    /// As our server's `tools/call`: unknown tool or invalid arguments (`-32602`), a
    /// `required` tool called without the extension (`-32021`), a failed call.
    pub async fn call(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let params = convert::params(&request)?;
        if legacy::is_legacy(context) {
            let result = self.legacy(m::TOOLS_CALL, params, context).await?;
            return convert::call_response(result);
        }
        let result = tokio::select! {
            r = self.dispatch(m::TOOLS_CALL, Some(&name), params, context) => r?,
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error(
                    format!("the call of '{name}' was cancelled by the client"),
                    None,
                ))
            }
        };
        convert::call_response(result)
    }

    /// `tasks/get`: the task as a `DetailedTask` (its status message, outstanding
    /// input requests, or inlined result or error).
    ///
    /// # Errors
    /// `-32602` for a task that does not exist or is not the caller's.
    pub async fn get(
        &self,
        request: GetTaskParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let params = convert::params(&request)?;
        let result = self
            .dispatch(m::TASKS_GET, Some(&request.task_id), params, context)
            .await?;
        convert::read(result, "the task")
    }

    /// `tasks/update`: hands the client's answers to the questions the task's tool
    /// waits on (unknown or already answered keys are ignored).
    ///
    /// # Errors
    /// `-32602` for a task that does not exist or is not the caller's; an answer that
    /// does not fit its question.
    pub async fn update(
        &self,
        request: UpdateTaskParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let params = convert::params(&request)?;
        self.dispatch(m::TASKS_UPDATE, Some(&request.task_id), params, context)
            .await
            .map(drop)
    }

    /// `tasks/cancel`: asks the task to stop (an acknowledgement, also for a task
    /// that already ended; the status follows on `tasks/get`).
    ///
    /// # Errors
    /// `-32602` for a task that does not exist or is not the caller's.
    pub async fn cancel(
        &self,
        request: CancelTaskParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let params = convert::params(&request)?;
        self.dispatch(m::TASKS_CANCEL, Some(&request.task_id), params, context)
            .await
            .map(drop)
    }

    /// A request rmcp has no type for (`on_custom_request`). On a session before
    /// 2026-07-28, `tasks/result` and `tasks/list` of the 2025-11-25 wire are answered
    /// (for the tasks that plain calls became under the sync budget; rmcp cannot
    /// carry `params.task`, so a client cannot ask for a task itself). `None`: not
    /// one of ours (a [`Durable`] hands it to the wrapped handler).
    ///
    /// # Errors
    /// As our server's `tasks/result` and `tasks/list`.
    pub async fn custom(
        &self,
        request: &CustomRequest,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CustomResult, ErrorData>> {
        if !legacy::is_legacy(context)
            || !matches!(request.method.as_str(), m::TASKS_RESULT | m::TASKS_LIST)
        {
            return None;
        }
        let params = request.params.clone().unwrap_or_else(|| json!({}));
        Some(
            self.legacy(&request.method, params, context)
                .await
                .map(CustomResult),
        )
    }

    /// Hands the client's `notifications/cancelled` (with its reason) to the request
    /// it names, on a session before 2026-07-28 (on 2026-07-28 rmcp's cancellation
    /// token of the request is enough).
    pub fn cancelled(&self, notification: &CancelledNotificationParam) {
        if let Some(id) = notification
            .request_id
            .as_ref()
            .and_then(|id| serde_json::to_value(id).ok())
            .and_then(|v| serde_json::from_value::<RequestId>(v).ok())
        {
            self.legacy.cancel(&id, notification.reason.as_deref());
        }
    }

    /// Runs one request of a session before 2026-07-28 through our 2025-11-25 wire
    /// (see the `legacy` module).
    async fn legacy(
        &self,
        method: &str,
        params: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let params = legacy::with_meta(params, context);
        let subject = self.principal.as_ref().and_then(|p| p(context));
        legacy::request(&self.server, &self.legacy, subject, method, params, context).await
    }

    /// Runs one request through our 2026-07-28 wire: `params` with the protocol
    /// version and the client's capabilities (as rmcp read them, from the request's
    /// `_meta` or the session's `initialize`) in its `_meta`, routing headers that
    /// agree with the body, the request's id and principal.
    async fn dispatch(
        &self,
        method: &str,
        name: Option<&str>,
        mut params: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let capabilities = context
            .client_capabilities()
            .and_then(|c| serde_json::to_value(c).ok())
            .unwrap_or_else(|| json!({}));
        let mut meta = match serde_json::to_value(&context.meta) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        if let Some(Value::Object(own)) = params.get("_meta") {
            meta.extend(own.clone());
        }
        meta.insert(META_PROTOCOL_VERSION.into(), json!(version::V2026_07_28));
        meta.insert(META_CLIENT_CAPABILITIES.into(), capabilities);
        if let Some(o) = params.as_object_mut() {
            o.insert("_meta".into(), Value::Object(meta));
        }
        let headers = RoutingHeaders {
            method: Some(method.to_string()),
            name: name.map(str::to_string),
            protocol_version: None,
        };
        let id = request_id(context);
        let subject = self.principal.as_ref().and_then(|p| p(context));
        let (_, response) =
            wire::handle(&self.server, subject, &headers, &id, method, params).await;
        convert::response(response)
    }
}

/// The request's JSON-RPC id, as our wire types it.
pub(crate) fn request_id(context: &RequestContext<RoleServer>) -> RequestId {
    serde_json::to_value(&context.id)
        .ok()
        .and_then(|v| serde_json::from_value::<RequestId>(v).ok())
        .unwrap_or(RequestId::Number(0))
}

impl ServerHandler for DurableTasks {
    fn get_info(&self) -> ServerConfig {
        self.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools(&context).await?))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, &context).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.get(request, &context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.update(request, &context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.cancel(request, &context).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        match self.custom(&request, &context).await {
            Some(answer) => answer,
            None => Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: {}", request.method),
                None,
            )),
        }
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        self.cancelled(&notification);
    }
}
