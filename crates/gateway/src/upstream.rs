//! [`Upstream`]: the connections to one upstream server. A call takes a free
//! connection or opens one (up to `max_connections`; beyond, it waits). A connection
//! whose server died is dropped; the next call opens a new one, after a backoff that
//! grows while opening keeps failing, so a crashing server is restarted without being
//! hammered.

use mcp_tasks_client::{ClientError, ToolInfo};
use mcp_tasks_engine::TaskContext;
use mcp_tasks_protocol::error_code::INTERNAL_ERROR;
use mcp_tasks_protocol::RpcError;
use parking_lot::Mutex;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

use crate::config::{Endpoint, UpstreamConfig};
use crate::connection::{Connection, Forward, ListChanged, SelfRef};

/// Longest wait for an upstream's answer to a request handed on to it (resources,
/// prompts, completions).
const PASSTHROUGH_TIMEOUT: Duration = Duration::from_secs(60);

/// First wait after a failed start; doubled per failure up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// How long a dead upstream's exit status is waited for, for the error message.
const EXIT_WAIT: Duration = Duration::from_secs(2);
/// Lines of a dead stdio upstream's stderr quoted in the error message.
const STDERR_LINES: usize = 3;
/// Longest wait between attempts to start an upstream.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// One upstream server and its connections.
pub struct Upstream {
    config: UpstreamConfig,
    endpoint: Endpoint,
    idle: Mutex<Vec<Arc<Connection>>>,
    slots: Semaphore,
    failures: Mutex<Failures>,
    list_changed: ListChanged,
    /// Why the last listing of its tools failed, if it did.
    listing_error: Mutex<Option<String>>,
    /// The capabilities the upstream declared on its newest connection.
    capabilities: Mutex<Value>,
    pub(crate) forward: Forward,
    /// The server whose metrics count this upstream's failed calls (set by
    /// [`crate::Gateway::attach`]).
    pub(crate) counted_by: std::sync::OnceLock<mcp_tasks_server::Server>,
}

#[derive(Default)]
struct Failures {
    count: u32,
    last: Option<(Instant, String)>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the config: its headers and env may hold credentials.
        f.debug_struct("Upstream")
            .field("name", &self.config.name)
            .finish()
    }
}

impl Upstream {
    /// An upstream not yet connected (the first call or listing connects).
    ///
    /// # Errors
    /// When the entry is invalid.
    pub fn new(config: UpstreamConfig) -> Result<Arc<Self>, crate::ConfigError> {
        let endpoint = config.endpoint()?;
        Ok(Arc::new(Upstream {
            slots: Semaphore::new(config.max_connections),
            config,
            endpoint,
            idle: Mutex::new(Vec::new()),
            failures: Mutex::new(Failures::default()),
            list_changed: ListChanged::default(),
            capabilities: Mutex::new(Value::Null),
            listing_error: Mutex::new(None),
            forward: Forward::default(),
            counted_by: std::sync::OnceLock::new(),
        }))
    }

    /// The entry this upstream was made from.
    pub fn config(&self) -> &UpstreamConfig {
        &self.config
    }

    /// Completes when the upstream said its tool list changed.
    pub async fn list_changed(&self) {
        self.list_changed.notify.notified().await;
    }

    /// Lists the upstream's tools (every page).
    ///
    /// # Errors
    /// When the upstream cannot be started or reached, or answers with an error.
    pub async fn list_tools(&self) -> Result<Vec<ToolInfo>, RpcError> {
        let changed = self
            .list_changed
            .from
            .lock()
            .take()
            .and_then(|w| w.upgrade())
            .filter(|c| !c.is_closed());
        if let Some(conn) = changed {
            // Listing does not use the call slot: fine on a busy connection.
            return conn
                .client
                .tools()
                .await
                .map_err(|e| self.error("listing its tools", &e));
        }
        let _permit = self.slots.acquire().await.map_err(|_| self.gone())?;
        let conn = self.take().await?;
        let listed = conn.client.tools().await;
        self.give_back(conn);
        listed.map_err(|e| self.error("listing its tools", &e))
    }

    /// Why the last listing of the upstream's tools failed (it could not be started or
    /// reached, or it answered with an error); `None` after a listing that worked.
    pub fn listing_error(&self) -> Option<String> {
        self.listing_error.lock().clone()
    }

    /// Why the upstream is not ready now, or `None`: its tools were not listed, its
    /// last start failed and the backoff before the next has not passed, or it does not
    /// answer a `ping` (on an idle connection, or a new one: a dead stdio server is
    /// started again, a down HTTP server fails to connect). An upstream whose every
    /// connection is busy with a call is taken as ready. For `/readyz`, which bounds
    /// the wait.
    pub async fn readiness(&self) -> Option<String> {
        if let Some(e) = self.listing_error() {
            return Some(e);
        }
        {
            let f = self.failures.lock();
            if let Some((at, why)) = &f.last {
                if f.count > 0 && at.elapsed() < self.backoff(f.count) {
                    return Some(format!(
                        "upstream '{}' could not be started: {why}",
                        self.config.name
                    ));
                }
            }
        }
        let Ok(_permit) = self.slots.try_acquire() else {
            return None;
        };
        let conn = match self.take().await {
            Ok(conn) => conn,
            Err(e) => return Some(e.message),
        };
        let pinged = conn.client.request("ping", serde_json::json!({})).await;
        self.give_back(conn);
        match pinged {
            Ok(_) => None,
            Err(e) => Some(self.error("answering a ping", &e).message),
        }
    }

    pub(crate) fn set_listing_error(&self, error: Option<String>) {
        *self.listing_error.lock() = error;
    }

    /// The capabilities the upstream declared (`null` before it was reached).
    pub fn capabilities(&self) -> Value {
        self.capabilities.lock().clone()
    }

    /// Sends any request upstream and returns its answer (resources, prompts,
    /// completions handed on by the gateway), within a minute.
    ///
    /// # Errors
    /// The upstream's JSON-RPC error, or an internal error naming the upstream.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let _permit = self.slots.acquire().await.map_err(|_| self.gone())?;
        let conn = self.take().await?;
        let answer =
            tokio::time::timeout(PASSTHROUGH_TIMEOUT, conn.client.request(method, params)).await;
        self.give_back(conn);
        match answer {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(ClientError::Rpc(e))) => Err(e),
            Ok(Err(e)) => Err(self.error(&format!("answering {method}"), &e)),
            Err(_) => Err(RpcError::new(
                INTERNAL_ERROR,
                format!(
                    "upstream '{}' did not answer {method} within {PASSTHROUGH_TIMEOUT:?}",
                    self.config.name
                ),
            )),
        }
    }

    /// Calls `tool` upstream for the call `ctx` belongs to.
    ///
    /// # Errors
    /// The upstream's JSON-RPC error; when it cannot be reached, or dies during the
    /// call, an internal error naming the upstream and how it ended.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Value,
        as_upstream_task: bool,
        ctx: &TaskContext,
    ) -> Result<Value, RpcError> {
        use tracing::Instrument;
        // A client span after OpenTelemetry's MCP conventions, inside the task's span;
        // its context travels upstream in `_meta.traceparent` (see `Connection::call`).
        let span = tracing::info_span!(
            target: mcp_tasks_server::telemetry::TARGET,
            "mcp.upstream",
            otel.name = %format_args!("tools/call {tool}"),
            otel.kind = "client",
            mcp.method.name = "tools/call",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = tool,
            mcp_tasks.upstream.name = %self.config.name,
            rpc.response.status_code = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        let answer = self
            .call_traced(tool, arguments, as_upstream_task, ctx)
            .instrument(span.clone())
            .await;
        match &answer {
            Err(e) => {
                if !ctx.is_cancelled() {
                    if let Some(server) = self.counted_by.get() {
                        server.count_upstream_error(&self.config.name);
                    }
                }
                span.record("rpc.response.status_code", e.code.to_string());
                span.record("error.type", e.code.to_string());
                span.record("otel.status_code", "error");
            }
            Ok(result) if result.get("isError") == Some(&Value::Bool(true)) => {
                span.record("error.type", "tool_error");
                span.record("otel.status_code", "error");
            }
            Ok(_) => {}
        }
        answer
    }

    /// [`Upstream::call`] inside its span.
    async fn call_traced(
        &self,
        tool: &str,
        arguments: Value,
        as_upstream_task: bool,
        ctx: &TaskContext,
    ) -> Result<Value, RpcError> {
        let _permit = self.slots.acquire().await.map_err(|_| self.gone())?;
        let conn = self.take().await?;
        let answer = if as_upstream_task {
            conn.call_as_task(tool, arguments, ctx).await
        } else {
            conn.call(tool, arguments, ctx).await
        };
        let closed = conn.is_closed();
        let (exit, stderr) = if closed {
            // The output closed; the exit status follows a moment later.
            let exit = conn.client.server_exit_status(EXIT_WAIT).await;
            (exit, conn.client.server_stderr_tail())
        } else {
            (None, None)
        };
        self.give_back(conn);
        match answer {
            Ok(result) => Ok(result),
            Err(ClientError::Rpc(e)) => Err(e),
            Err(ClientError::Cancelled) => Err(RpcError::new(
                INTERNAL_ERROR,
                format!("the call to upstream '{}' was cancelled", self.config.name),
            )),
            Err(e) if closed => {
                let how = exit.unwrap_or_else(|| "closed the connection".into());
                let mut message = format!(
                    "upstream '{}' {how} while '{tool}' was running; the call was lost (it runs again only for upstreams marked resumable)",
                    self.config.name
                );
                if let Some(tail) = stderr.filter(|t| !t.is_empty()) {
                    let lines: Vec<&str> = tail.lines().collect();
                    let last = lines[lines.len().saturating_sub(STDERR_LINES)..].join(" | ");
                    message.push_str(&format!("; its last stderr lines: {last}"));
                }
                tracing::warn!(upstream = %self.config.name, error = %e, "{message}");
                Err(RpcError::new(INTERNAL_ERROR, message))
            }
            Err(e) => Err(self.error(&format!("calling '{tool}'"), &e)),
        }
    }

    /// A free live connection, or a new one.
    async fn take(&self) -> Result<Arc<Connection>, RpcError> {
        loop {
            let candidate = self.idle.lock().pop();
            match candidate {
                Some(conn) if conn.is_closed() => continue,
                Some(conn) if conn.try_take() => return Ok(conn),
                Some(_) => continue,
                None => break,
            }
        }
        self.wait_out_backoff().await;
        let self_ref = SelfRef::default();
        match Connection::open(
            &self.config,
            &self.endpoint,
            Arc::clone(&self.list_changed),
            Arc::clone(&self.forward),
            Arc::clone(&self_ref),
        )
        .await
        {
            Ok(conn) => {
                *self.capabilities.lock() = conn.client.server().capabilities.clone();
                *self.failures.lock() = Failures::default();
                let conn = Arc::new(conn);
                let _ = self_ref.set(Arc::downgrade(&conn));
                conn.try_take();
                tracing::info!(upstream = %self.config.name, "connected to upstream");
                Ok(conn)
            }
            Err(e) => {
                let mut f = self.failures.lock();
                f.count = f.count.saturating_add(1);
                f.last = Some((Instant::now(), e.to_string()));
                drop(f);
                Err(self.error("starting it", &e))
            }
        }
    }

    /// After failed starts, waits until the backoff since the last one has passed.
    async fn wait_out_backoff(&self) {
        let wait = {
            let f = self.failures.lock();
            match &f.last {
                Some((at, _)) if f.count > 0 => self.backoff(f.count).saturating_sub(at.elapsed()),
                _ => Duration::ZERO,
            }
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }

    /// The wait after `failures` failed starts in a row.
    fn backoff(&self, failures: u32) -> Duration {
        FIRST_BACKOFF
            .saturating_mul(1 << failures.min(8).saturating_sub(1))
            .min(MAX_BACKOFF)
    }

    fn give_back(&self, conn: Arc<Connection>) {
        conn.release();
        if !conn.is_closed() {
            self.idle.lock().push(conn);
        }
    }

    fn gone(&self) -> RpcError {
        RpcError::new(
            INTERNAL_ERROR,
            format!("upstream '{}' is shutting down", self.config.name),
        )
    }

    /// An error about this upstream. Only the client error's text is used: it never
    /// holds the configured headers or environment.
    fn error(&self, doing: &str, e: &ClientError) -> RpcError {
        RpcError::new(
            INTERNAL_ERROR,
            format!("upstream '{}' failed while {doing}: {e}", self.config.name),
        )
    }
}
