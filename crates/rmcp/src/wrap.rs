//! [`Durable`]: an rmcp server of your own, kept whole, with durable tasks added.
// Logging (`logging/setLevel`) is deprecated by SEP-2577 but still part of the
// 2025-11-25 wire: the wrapped handler keeps it.
#![allow(deprecated)]

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelledNotificationParam,
    CompleteRequestParams, CompleteResult, CustomNotification, CustomRequest, CustomResult,
    DiscoverResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams,
    GetSkillResult, GetTaskParams, GetTaskResult, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, Tool, ToolsCapability, UnsubscribeRequestParams,
    UpdateTaskParams, TASKS_EXTENSION_ID,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};
use std::borrow::Cow;

use crate::DurableTasks;

/// An rmcp [`ServerHandler`] of your own (`H`) with durable tasks added: made by
/// [`DurableTasks::wrap`].
///
/// `H` keeps everything that is not a tool or a task: `initialize` and `server/discover`
/// (its `serverInfo`, instructions and protocol versions; the capabilities it
/// announces gain `tools` and the Tasks extension), resources and their templates and
/// subscriptions, prompts, completions, `logging/setLevel`, `subscriptions/listen`,
/// skills, its own notifications, and requests rmcp has no type for.
///
/// Tools: `tools/list` lists the mcp-tasks server's tools first, then `H`'s (one of
/// `H`'s whose name the server's tools already take is left out, with a warning in
/// the log); `tools/call` of one of the server's tools (or a task tool) runs on the
/// engine, any other goes to `H`. Tasks: `tasks/get`, `tasks/update` and
/// `tasks/cancel` are answered by the engine; on a session before 2026-07-28 also
/// `tasks/result` and `tasks/list` (see [`DurableTasks::custom`]).
///
/// Clones are the handlers of separate rmcp sessions (see [`DurableTasks`]); `H` is
/// cloned with them.
#[derive(Clone, Debug)]
pub struct Durable<H> {
    tasks: DurableTasks,
    inner: H,
}

impl<H: ServerHandler> Durable<H> {
    /// `inner` with `tasks` added (see [`DurableTasks::wrap`]).
    pub fn new(tasks: DurableTasks, inner: H) -> Self {
        Durable { tasks, inner }
    }

    /// The tasks' part: the mcp-tasks server (for the board, shutdown), the principal.
    pub fn tasks(&self) -> &DurableTasks {
        &self.tasks
    }

    /// The wrapped handler.
    pub fn inner(&self) -> &H {
        &self.inner
    }

    /// `capabilities` with tools and the Tasks extension announced (rmcp refuses
    /// `tasks/*` before they reach a handler whose server did not announce it).
    fn with_ours(mut capabilities: ServerCapabilities) -> ServerCapabilities {
        if capabilities.tools.is_none() {
            capabilities.tools = Some(ToolsCapability::default());
        }
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .entry(TASKS_EXTENSION_ID.to_string())
            .or_default();
        capabilities
    }
}

impl<H: ServerHandler + Send + Sync> ServerHandler for Durable<H> {
    fn get_info(&self) -> ServerConfig {
        let mut info = self.inner.get_info();
        info.capabilities = Self::with_ours(info.capabilities);
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let mut result = self.inner.initialize(request, context).await?;
        result.capabilities = Self::with_ours(result.capabilities);
        Ok(result)
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        let mut result = self.inner.negotiate_initialize(request)?;
        result.capabilities = Self::with_ours(result.capabilities);
        Ok(result)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let mut result = self.inner.discover(context).await?;
        result.capabilities = Self::with_ours(result.capabilities);
        Ok(result)
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.inner.ping(context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.inner.complete(request, context).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.set_level(request, context).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.inner.get_prompt(request, context).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.inner.list_prompts(request, context).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.inner.list_resources(request, context).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.inner.list_resource_templates(request, context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.inner.read_resource(request, context).await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.inner.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.inner.listen(context).await
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.subscribe(request, context).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.unsubscribe(request, context).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = self.tasks.tools(&context).await?;
        // A handler without tools of its own answers -32601 (rmcp's default when its
        // capabilities have no `tools`): it adds none.
        let theirs = match self.inner.list_tools(request, context).await {
            Err(e) if e.code == ErrorCode::METHOD_NOT_FOUND => ListToolsResult::default(),
            other => other?,
        };
        for tool in theirs.tools {
            if self.tasks.knows_tool(&tool.name) {
                tracing::warn!(tool = %tool.name, "the wrapped handler's tool has the name of a durable tool; only the durable one is listed and called");
            } else {
                tools.push(tool);
            }
        }
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = theirs.next_cursor;
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        if self.tasks.knows_tool(name) {
            None
        } else {
            self.inner.get_tool(name)
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.tasks.knows_tool(&request.name) {
            self.tasks.call(request, &context).await
        } else {
            self.inner.call_tool(request, context).await
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.tasks.get(request, &context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.update(request, &context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel(request, &context).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        match self.tasks.custom(&request, &context).await {
            Some(answer) => answer,
            None => self.inner.on_custom_request(request, context).await,
        }
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        self.tasks.cancelled(&notification);
        self.inner.on_cancelled(notification, context).await;
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        self.inner.on_progress(notification, context).await;
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.inner.on_initialized(context).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.inner.on_roots_list_changed(context).await;
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) {
        self.inner
            .on_custom_notification(notification, context)
            .await;
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        self.inner.list_skills(request, context).await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.inner.get_skill(request, context).await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.inner.read_resource_directory(request, context).await
    }
}
