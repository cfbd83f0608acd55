//! The two task wire generations, one folder each. A method has the same file name on
//! both sides (`tools_call.rs`, `tasks_get.rs`, `tasks_cancel.rs`, `tools_list.rs`, ...),
//! as sqlx's backends do, so the difference between the wires for one method is two
//! files side by side. What both share lives below: the call pipeline (`calls`, whose
//! `plan` decides what a `tools/call` becomes; each wire's `tools_call.rs` only renders
//! the plan) and `error_map`.
//!
//! - `v2025_11_25`: sessions opened by `initialize`; `params.task`; `tasks/get`,
//!   `tasks/result`, `tasks/list`, `tasks/cancel`; input requests as server-to-client
//!   requests; `notifications/tasks/status`.
//! - [`v2026_07_28`]: stateless requests with `_meta`; the `io.modelcontextprotocol/tasks`
//!   extension: `DetailedTask`, `tasks/update`, `inputRequests`, MRTR,
//!   `subscriptions/listen`.

pub(crate) mod v2025_11_25;
pub mod v2026_07_28;

use mcp_tasks_protocol::RpcError;
use serde_json::Value;
use std::future::Future;
use tracing::{Instrument, Span};

use crate::ops::metrics::Metrics;
use crate::ops::telemetry::record_response;

/// Runs one request's `work` observed the same way on both wires: inside the
/// request's span (built by [`crate::ops::telemetry::request_span`], after
/// OpenTelemetry's MCP conventions), with the response recorded on that span and
/// counted in the request metrics under `method`. A request that gives no response
/// (cancelled on 2025-11-25) is neither recorded nor counted. The span is built by
/// the caller because building it borrows the parameters the work then takes.
pub(crate) async fn observe_request<T: Observed>(
    metrics: &Metrics,
    method: &str,
    span: Span,
    work: impl Future<Output = T>,
) -> T {
    let started = std::time::Instant::now();
    let outcome = work.instrument(span.clone()).await;
    if let Some(result) = outcome.response() {
        record_response(&span, result);
        metrics.observe_request(method, result.is_ok(), started.elapsed());
    }
    outcome
}

/// What a wire's request handler gives back, seen as the response to observe.
pub(crate) trait Observed {
    /// The response, or `None` when none is sent.
    fn response(&self) -> Option<&Result<Value, RpcError>>;
}

impl Observed for Result<Value, RpcError> {
    fn response(&self) -> Option<&Result<Value, RpcError>> {
        Some(self)
    }
}

impl Observed for Option<Result<Value, RpcError>> {
    fn response(&self) -> Option<&Result<Value, RpcError>> {
        self.as_ref()
    }
}

/// The `_meta` key (a draft of the MCP spec) under which a request names the tasks it
/// relates to; `tasks/get` gives it back for a task whose call named some (a call the
/// task board ran again names the task it ran again).
pub const RELATED_TASK_IDS_META: &str = "io.modelcontextprotocol/relatedTaskIds";

/// Adds to a `tasks/get` result what ties the task to others: the task ids its call
/// named as related ([`RELATED_TASK_IDS_META`]) and, for a call a person ran again,
/// who ([`crate::approvals::RAN_AGAIN_BY_META`]). So the agent whose call was run
/// again on the board learns, through MCP, which earlier task the new one repeats.
pub(crate) fn add_related_meta(result: &mut Value, record: &mcp_tasks_engine::TaskRecord) {
    let Some(meta) = record.request.field("_meta") else {
        return;
    };
    let related: Vec<&str> = meta
        .get(RELATED_TASK_IDS_META)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|id| (1..=128).contains(&id.len()))
        .take(20)
        .collect();
    let by = meta
        .get(crate::approvals::RAN_AGAIN_BY_META)
        .and_then(Value::as_str);
    if related.is_empty() && by.is_none() {
        return;
    }
    if !result.get("_meta").is_some_and(Value::is_object) {
        result["_meta"] = serde_json::json!({});
    }
    if !related.is_empty() {
        result["_meta"][RELATED_TASK_IDS_META] = serde_json::json!(related);
    }
    if let Some(by) = by {
        result["_meta"][crate::approvals::RAN_AGAIN_BY_META] = serde_json::json!(by);
    }
}
