//! One connection to an upstream, used by one call at a time. While a call runs, the
//! connection's slot holds that call's [`TaskContext`], so whatever the upstream sends
//! in the middle of it (progress, questions, log lines) belongs to exactly that call:
//! a question becomes the task's input request, progress its status, a log line ours.

use mcp_tasks_client::{Client, ClientError, RpcError, ServerLog, Target};
use mcp_tasks_engine::{InputError, TaskContext};
use mcp_tasks_protocol::error_code::INTERNAL_ERROR;
use mcp_tasks_protocol::methods as m;
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

use crate::config::{Endpoint, UpstreamConfig};

/// The call running on a connection: its context, and the progress token it asked the
/// upstream to report under (`None` for an upstream task, whose progress the client
/// routes to its handle).
#[derive(Clone)]
struct Call {
    ctx: TaskContext,
    progress_token: Option<String>,
    /// The status message the upstream's latest progress makes: written again when
    /// the call ends, so that the last one is stored before the result (the live
    /// updates are written on tasks of their own and may lose that race).
    last_status: Arc<Mutex<Option<String>>>,
}

/// The call running on a connection, if any.
type Slot = Arc<Mutex<Option<Call>>>;

/// Numbers the progress tokens of upstream calls: each call has its own, so progress an
/// upstream still sends for an earlier (cancelled) call on the same connection is not
/// taken for the current one's.
static NEXT_PROGRESS_TOKEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A connected upstream.
pub(crate) struct Connection {
    pub(crate) client: Client,
    slot: Slot,
    busy: AtomicBool,
}

/// Told when the upstream's tool list changed, with the connection that said so: the
/// list is read again on that one (its process is the one whose tools changed, and it
/// may still be busy with the call that changed them).
#[derive(Default)]
pub(crate) struct ToolsChanged {
    pub(crate) notify: Notify,
    pub(crate) from: Mutex<Option<std::sync::Weak<Connection>>>,
}

pub(crate) type ListChanged = Arc<ToolsChanged>;

/// Filled with the connection itself once it exists (its handlers are made before).
pub(crate) type SelfRef = Arc<std::sync::OnceLock<std::sync::Weak<Connection>>>;

/// Where the upstream's other notifications for our clients go (resource updates,
/// resource and prompt list changes): set once a server is attached.
pub(crate) type Forward = Arc<Mutex<Option<Arc<dyn Fn(&str, &Value) + Send + Sync>>>>;

/// Notifications of an upstream that our clients should see as ours.
const FORWARDED: &[&str] = &[
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/prompts/list_changed",
];

impl Connection {
    /// Connects (spawning a stdio server, or opening an HTTP session) with handlers that
    /// hand everything the upstream sends to the call in the slot.
    pub(crate) async fn open(
        config: &UpstreamConfig,
        endpoint: &Endpoint,
        list_changed: ListChanged,
        forward: Forward,
        self_ref: SelfRef,
    ) -> Result<Connection, ClientError> {
        let slot: Slot = Arc::default();
        let mut builder = Client::builder()
            .client_info("mcp-tasks-gateway", env!("CARGO_PKG_VERSION"))
            .wire(mcp_tasks_client::WirePreference::V2025_11_25)
            // A call's own cancellation is its limit; no per-request timeout.
            .request_timeout(None);
        for (method, field) in [
            (m::ELICITATION_CREATE, 0),
            (m::SAMPLING_CREATE_MESSAGE, 1),
            (m::ROOTS_LIST, 2),
        ] {
            let slot = Arc::clone(&slot);
            let relay = move |request: mcp_tasks_client::InputRequest| {
                let ctx = current(&slot);
                async move { relay_question(ctx, method, request.params).await }
            };
            builder = match field {
                0 => builder.on_elicitation(relay),
                1 => builder.on_sampling(relay),
                _ => builder.on_roots(relay),
            };
        }
        let log_slot = Arc::clone(&slot);
        let upstream = config.name.clone();
        builder = builder.on_log(move |log: ServerLog| match current(&log_slot) {
            // During a call: the task's (or plain call's) log, for our client.
            Some(ctx) => ctx.log_as(log.level, log.logger.as_deref(), log.data),
            // Between calls nobody asked: our own log, naming the upstream.
            None => tracing::info!(
                target: "mcp_tasks_gateway::upstream_log",
                upstream = %upstream,
                level = %log.level,
                "{}",
                log.text()
            ),
        });
        let note_slot = Arc::clone(&slot);
        builder = builder.on_notification(move |method, params| match method {
            m::NOTIF_PROGRESS => {
                if let Some(call) = current_with_token(&note_slot, &params["progressToken"]) {
                    relay_progress(&call, params);
                }
            }
            m::NOTIF_TOOLS_LIST_CHANGED => {
                *list_changed.from.lock() = self_ref.get().cloned();
                list_changed.notify.notify_one();
            }
            other if FORWARDED.contains(&other) => {
                let sink = forward.lock().clone();
                if let Some(sink) = sink {
                    sink(other, params);
                }
            }
            _ => {}
        });
        let target = match endpoint {
            Endpoint::Stdio { program, args } => {
                for (k, v) in &config.env {
                    builder = builder.env(k, v.expose());
                }
                if let Some(dir) = &config.cwd {
                    builder = builder.current_dir(dir);
                }
                Target::Stdio {
                    program: program.clone(),
                    args: args.clone(),
                }
            }
            Endpoint::Http(url) => {
                for (k, v) in &config.headers {
                    builder = builder.header(k, v.expose());
                }
                Target::Http(url.clone())
            }
        };
        let client = builder.connect(&target).await?;
        Ok(Connection {
            client,
            slot,
            busy: AtomicBool::new(false),
        })
    }

    /// Takes the connection for one call; `false` when another call has it.
    pub(crate) fn try_take(&self) -> bool {
        !self.busy.swap(true, Ordering::AcqRel)
    }

    /// Gives the connection back after a call.
    pub(crate) fn release(&self) {
        *self.slot.lock() = None;
        self.busy.store(false, Ordering::Release);
    }

    /// Runs `tools/call` for `ctx`'s call: progress asked under a token of ours, the
    /// call cancelled upstream (`notifications/cancelled`) when `ctx` is.
    pub(crate) async fn call(
        &self,
        name: &str,
        arguments: Value,
        ctx: &TaskContext,
    ) -> Result<Value, ClientError> {
        let token = format!(
            "mcp-tasks-gateway-{}",
            NEXT_PROGRESS_TOKEN.fetch_add(1, Ordering::Relaxed)
        );
        let last_status = Arc::new(Mutex::new(None));
        *self.slot.lock() = Some(Call {
            ctx: ctx.clone(),
            progress_token: Some(token.clone()),
            last_status: Arc::clone(&last_status),
        });
        let mut params = json!({
            "name": name,
            "arguments": arguments,
            "_meta": { "progressToken": token },
        });
        // The trace goes on upstream (W3C Trace Context in `_meta`, as OpenTelemetry's
        // MCP conventions propagate it).
        if let Some(traceparent) = mcp_tasks_server::telemetry::current_traceparent() {
            params["_meta"]["traceparent"] = Value::String(traceparent);
        }
        let result = self
            .client
            .request_cancellable(
                m::TOOLS_CALL,
                params,
                ctx.cancelled(),
                "the task was cancelled",
            )
            .await;
        // Progress notifications are handled before the response that follows them:
        // the last status is known, and stored before the call's end is.
        let last = last_status.lock().take();
        if let (Some(status), Some(_)) = (last, ctx.task_id()) {
            ctx.set_status_message(status).await;
        }
        result
    }

    /// Runs `tools/call` as an upstream task (2025-11-25), for tools the upstream
    /// only runs as tasks: its status messages and progress become ours, its questions
    /// reach our client through the slot, cancelling ours cancels it, and its result
    /// (or error) is the call's.
    pub(crate) async fn call_as_task(
        &self,
        name: &str,
        arguments: Value,
        ctx: &TaskContext,
    ) -> Result<Value, ClientError> {
        use futures::StreamExt;
        *self.slot.lock() = Some(Call {
            ctx: ctx.clone(),
            progress_token: None,
            last_status: Arc::default(),
        });
        let mut handle = self
            .client
            .call_tool_as_task(name, arguments, mcp_tasks_client::TaskOptions::default())
            .await?;
        let mut updates = handle.updates();
        let mirror_ctx = ctx.clone();
        let mirror = async move {
            while let Some(update) = updates.next().await {
                match update {
                    mcp_tasks_client::TaskUpdate::Status(view) => {
                        if let Some(message) = view.status_message {
                            if mirror_ctx.task_id().is_some() {
                                mirror_ctx.set_status_message(message).await;
                            }
                        }
                    }
                    mcp_tasks_client::TaskUpdate::Progress(p) => {
                        mirror_ctx.report_progress(p.progress, p.total, p.message);
                    }
                    _ => {}
                }
            }
            std::future::pending::<()>().await;
        };
        let upstream_task = handle.task_id().cloned();
        tokio::select! {
            outcome = handle.result() => {
                let outcome = outcome?;
                match (outcome.result, outcome.error) {
                    (Some(result), _) => Ok(result),
                    (None, Some(e)) => Err(ClientError::Rpc(e)),
                    (None, None) => Err(ClientError::Protocol(
                        "the upstream task ended without a result".into(),
                    )),
                }
            }
            () = mirror => Err(ClientError::Closed),
            () = ctx.cancelled() => {
                if let Some(id) = upstream_task {
                    if let Err(e) = self.client.cancel(&id).await {
                        tracing::debug!(error = %e, "could not cancel the upstream task");
                    }
                }
                Err(ClientError::Cancelled)
            }
        }
    }

    /// Whether the upstream is gone.
    pub(crate) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

fn current(slot: &Slot) -> Option<TaskContext> {
    slot.lock().as_ref().map(|c| c.ctx.clone())
}

/// The running call, if `token` is the progress token it asked for.
fn current_with_token(slot: &Slot, token: &Value) -> Option<Call> {
    slot.lock()
        .as_ref()
        .filter(|c| c.progress_token.is_some() && c.progress_token.as_deref() == token.as_str())
        .cloned()
}

/// An upstream question, asked of our client through the running call's task (or on
/// the plain call's own stream); the answer, or the reason there is none, goes back.
async fn relay_question(
    ctx: Option<TaskContext>,
    method: &'static str,
    params: Value,
) -> Result<Value, RpcError> {
    let Some(ctx) = ctx else {
        return Err(RpcError::new(
            INTERNAL_ERROR,
            format!("{method} arrived while no call was running on this connection; the gateway relays questions only during a tool call"),
        ));
    };
    // `_meta` of the upstream (its related-task, its progress token) means nothing to
    // our client.
    let mut params = params;
    if let Some(o) = params.as_object_mut() {
        o.remove("_meta");
    }
    ctx.request_input(method, params)
        .await
        .map_err(|e| match e {
            InputError::Rejected { code, message } => RpcError::new(code, message),
            other => RpcError::new(INTERNAL_ERROR, other.to_string()),
        })
}

/// Upstream progress as the task's progress, and as its status message ("3/5: ...").
fn relay_progress(call: &Call, params: &Value) {
    let ctx = &call.ctx;
    let Some(progress) = params.get("progress").and_then(Value::as_f64) else {
        return;
    };
    let total = params.get("total").and_then(Value::as_f64);
    let message = params
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut status = match total {
        Some(t) => format!("{progress}/{t}"),
        None => format!("{progress}"),
    };
    if let Some(text) = &message {
        status = format!("{status}: {text}");
    }
    ctx.report_progress(progress, total, message);
    if ctx.task_id().is_some() {
        *call.last_status.lock() = Some(status.clone());
        let ctx = ctx.clone();
        tokio::spawn(async move { ctx.set_status_message(status).await });
    }
}
