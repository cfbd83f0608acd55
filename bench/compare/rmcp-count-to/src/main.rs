//! `count_to {n, delay_ms}` counts to n, a status line each step, and asks whether to
//! go on half-way; `echo` answers at once. Streamable HTTP at `/mcp`; the address is
//! the first argument (default 127.0.0.1:8080).
//!
//! Written with rmcp 3.11 the way its examples show (`servers_task_stdio` for tasks,
//! `servers_mrtr` for a plain call that asks, `servers_progress_demo` for progress):
//! a client that declares the Tasks extension gets `count_to` as a task, anyone else
//! a plain call through the tool router.
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{InputResponses, RequestState, ToolCallContext};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::*;
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_router, ErrorData, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct CountTo {
    /// Count up to this number.
    n: u64,
    /// Pause between steps, in milliseconds.
    #[serde(default)]
    delay_ms: u64,
}

#[derive(Deserialize, JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

/// The half-way question, as an elicitation form with one boolean.
fn go_on_question() -> Result<ElicitRequestParams, ErrorData> {
    let schema = ElicitationSchema::builder()
        .required_bool("go_on")
        .build()
        .map_err(|e| ErrorData::internal_error(e, None))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: "Half-way there. Go on?".into(),
        requested_schema: schema,
    })
}

/// True when the client accepted the question with `go_on: true`.
fn goes_on(answer: Option<&serde_json::Value>) -> bool {
    let answer = answer.and_then(|a| ElicitResult::deserialize(a).ok());
    answer.is_some_and(|a| {
        a.action == ElicitationAction::Accept && a.content.is_some_and(|c| c["go_on"] == true)
    })
}

fn text(s: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s)])
}

/// `count_to` as a task: the status message is the status line, the question an
/// input request that the client answers with `tasks/update`.
async fn count_in_task(ctx: TaskContext, args: CountTo) -> Result<CallToolResult, TaskExit> {
    for i in 1..=args.n {
        ctx.set_status_message(format!("counted {i} of {}", args.n));
        tokio::select! {
            _ = ctx.cancelled() => return Err(TaskExit::Cancelled),
            _ = tokio::time::sleep(Duration::from_millis(args.delay_ms)) => {}
        }
        if i == args.n / 2 {
            let question = InputRequest::Elicitation(ElicitRequest::new(go_on_question()?));
            let answer = ctx.request_input("go_on", question).await?;
            if !goes_on(Some(&answer)) {
                return Ok(text(format!("stopped at {i}")));
            }
        }
    }
    Ok(text(format!("counted to {}", args.n)))
}

#[derive(Clone)]
struct Counter {
    tool_router: ToolRouter<Self>,
    tasks: TaskManager,
    /// Seals the plain call's `requestState` (where counting resumes).
    sealer: RequestStateCodec,
}

#[tool_router]
impl Counter {
    fn new() -> Result<Self, ErrorData> {
        let sealer = RequestStateCodec::try_new(rand::random::<[u8; 32]>())
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(Self {
            tool_router: Self::tool_router(),
            tasks: TaskManager::new(),
            sealer,
        })
    }

    /// `count_to` as a plain call: progress notifications are the status lines; on
    /// 2026-07-28 the question is an input-required round whose sealed `requestState`
    /// holds the step to resume after; older protocols get a tool error.
    #[tool(description = "Counts to n.")]
    async fn count_to(
        &self,
        Parameters(args): Parameters<CountTo>,
        RequestState(state): RequestState,
        InputResponses(answers): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut start = 1;
        if let Some(sealed) = state {
            let at: u64 = self
                .sealer
                .open_json(&sealed)
                .map_err(|_| ErrorData::invalid_params("tampered or unknown requestState", None))?;
            if !goes_on(answers.as_ref().and_then(|a| a.get("go_on"))) {
                return Ok(text(format!("stopped at {at}")).into());
            }
            start = at + 1;
        }
        let progress_token = context.meta.get_progress_token();
        for i in start..=args.n {
            if let Some(token) = &progress_token {
                let step = ProgressNotificationParam::new(token.clone(), i as f64)
                    .with_total(args.n as f64)
                    .with_message(format!("counted {i} of {}", args.n));
                let _ = context.peer.notify_progress(step).await;
            }
            tokio::time::sleep(Duration::from_millis(args.delay_ms)).await;
            if i == args.n / 2 {
                if context.protocol_version() == Some(ProtocolVersion::V_2026_07_28) {
                    let sealed = self
                        .sealer
                        .seal_json(&i)
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                    let question = InputRequest::Elicitation(ElicitRequest::new(go_on_question()?));
                    let questions = [("go_on".to_string(), question)].into();
                    return Ok(InputRequiredResult::new(Some(questions), Some(sealed)).into());
                }
                // Asking with `elicitation/create` would need rmcp's `elicitation`
                // feature (and the `url` crate with it) for this one older-protocol path.
                let refusal = "count_to asks half-way: call it as a task or on protocol 2026-07-28";
                return Ok(CallToolResult::error(vec![ContentBlock::text(refusal)]).into());
            }
        }
        Ok(text(format!("counted to {}", args.n)).into())
    }

    #[tool(description = "Sends the text back.")]
    fn echo(&self, Parameters(Echo { text }): Parameters<Echo>) -> String {
        text
    }
}

impl ServerHandler for Counter {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A task only for a client that declared the Tasks extension (SEP-2663).
        let as_task = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        if request.name == "count_to" && as_task {
            let args: CountTo =
                serde_json::from_value(request.arguments.unwrap_or_default().into())
                    .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
            let task = self.tasks.spawn(TaskOptions::default(), move |ctx| {
                Box::pin(count_in_task(ctx, args))
            });
            return Ok(CallToolResponse::Task(CreateTaskResult::new(task)));
        }
        self.tool_router
            .call(ToolCallContext::new(self, request, context))
            .await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tool_router.list_all()))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args().nth(1).unwrap_or("127.0.0.1:8080".into());
    let counter = Counter::new()?;
    let ct = tokio_util::sync::CancellationToken::new();
    let service = StreamableHttpService::new(
        move || Ok(counter.clone()),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token()),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            ct.cancel();
        })
        .await?;
    Ok(())
}
