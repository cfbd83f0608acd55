//! The span a task's execution runs in, and how its end is recorded on it.
//!
//! The span is made when the task is created, inside the request that created it, and
//! traced as a child of that request's span even though it outlives it; work,
//! store calls and upstream calls made by the task nest under it. Its attributes follow
//! OpenTelemetry's `execute_tool` span for tool calls (`gen_ai.operation.name`,
//! `gen_ai.tool.name`); the task itself is described under our own namespace,
//! `mcp_tasks.task.id` and `mcp_tasks.task.status`, since the conventions have no task
//! attributes yet.
//!
//! In the `tracing` registry the span is a root, though: a child keeps its parent (and
//! the parent's ancestors) open for as long as it lives, and a task may run for days,
//! so every live task would hold its request's spans too (about 140 bytes each). The
//! trace parent is set instead by the hook the server registers with
//! [`set_task_span_parent`] (OpenTelemetry's context of the current span).

use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_store::{Outcome, TaskRecord, TRACE_TARGET};
use tracing::field::Empty;
use tracing::Span;

use crate::reader::ResultReading;

/// What makes a new task span a trace child of the current span; see the module docs.
static TASK_SPAN_PARENT: std::sync::OnceLock<fn(&Span)> = std::sync::OnceLock::new();

/// Registers how a task's span gets its trace parent from the current span (the
/// request creating the task): with OpenTelemetry, by setting the span's parent
/// context. Process-wide, as the tracing subscriber is; the first registration stays.
pub fn set_task_span_parent(link: fn(&Span)) {
    let _ = TASK_SPAN_PARENT.set(link);
}

/// The span of a task's execution: a root in the tracing registry, whose trace parent
/// is the current span (the request that creates the task; none for a task taken over
/// from another process) through the hook of [`set_task_span_parent`].
pub(crate) fn task_span(record: &TaskRecord) -> Span {
    let tool = (record.method == mcp_tasks_protocol::methods::TOOLS_CALL)
        .then(|| record.request.name())
        .flatten();
    let span = tracing::info_span!(
        target: TRACE_TARGET,
        parent: None,
        "task",
        otel.name = Empty,
        otel.kind = "internal",
        gen_ai.operation.name = Empty,
        gen_ai.tool.name = Empty,
        mcp_tasks.task.id = %record.id,
        mcp_tasks.task.status = Empty,
        error.type = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    );
    match tool {
        Some(tool) => {
            span.record("otel.name", format!("execute_tool {tool}"));
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("gen_ai.tool.name", tool.as_ref());
        }
        None => {
            span.record("otel.name", format!("task {}", record.method));
        }
    }
    if let Some(link) = TASK_SPAN_PARENT.get() {
        link(&span);
    }
    span
}

/// Records how the task ended on its span: the status, and for a failure a
/// low-cardinality `error.type` (`tool_error` for a tool result flagged `isError`, the
/// JSON-RPC code for a protocol error, the engine's failure kind otherwise).
pub(crate) fn record_end(span: &Span, record: &TaskRecord, reader: &dyn ResultReading) {
    span.record("mcp_tasks.task.status", record.status.as_str());
    let error_type = match record.outcome.as_deref() {
        Some(Outcome::Result { value }) if reader.result_reports_error(value) => {
            Some("tool_error".to_string())
        }
        Some(Outcome::Error { code, .. }) => Some(code.to_string()),
        Some(Outcome::Failed { failure, .. }) => Some(failure.as_str().to_string()),
        _ => None,
    };
    if record.status == TaskStatus::Cancelled {
        return;
    }
    if let Some(error_type) = error_type {
        span.record("error.type", error_type.as_str());
        span.record("otel.status_code", "error");
        if let Some(message) = record.status_message.as_deref() {
            span.record("otel.status_description", message);
        }
    }
}
