//! Spans for traces: one per MCP request, named and attributed after OpenTelemetry's
//! MCP semantic conventions, on the [`TARGET`] target (exported over OTLP by
//! `mcp-tasks serve --otlp-endpoint`, left out of the stderr log).
//!
//! | attribute | value |
//! |---|---|
//! | span name | `{mcp.method.name} {target}`: `tools/call add`, `prompts/get greet`, else the method |
//! | `mcp.method.name` | the JSON-RPC method |
//! | `mcp.protocol.version` | the session's negotiated version, or the stateless request's `_meta` one |
//! | `mcp.session.id` | 2025-11-25 sessions only: the 2026-07-28 wire has no sessions |
//! | `jsonrpc.request.id` | the request id |
//! | `gen_ai.tool.name`, `gen_ai.operation.name` | `tools/call`: the tool, and `execute_tool` |
//! | `gen_ai.prompt.name` | `prompts/get`: the prompt |
//! | `rpc.response.status_code` | the JSON-RPC error code of an error response |
//! | `error.type` | the code, for codes the conventions count as server errors; `tool_error` for a tool result with `isError` |
//! | `mcp_tasks.task.id` | our namespace (the conventions have no task attributes yet): the task a request creates or names |
//!
//! The remote parent is read from `params._meta.traceparent` (and `tracestate`),
//! W3C Trace Context, as the conventions recommend; that needs the `otel` feature,
//! which also lets [`current_traceparent`] hand the current context on to an
//! upstream server.

use mcp_tasks_protocol::jsonrpc::RequestId;
use mcp_tasks_protocol::{error_code, methods as m, RpcError};
use serde_json::Value;
use tracing::field::Empty;
use tracing::Span;

/// The `tracing` target of spans meant for export (see
/// [`mcp_tasks_store::TRACE_TARGET`]).
pub const TARGET: &str = mcp_tasks_engine::TRACE_TARGET;

/// What a request span is made of.
pub(crate) struct RequestInfo<'a> {
    pub(crate) method: &'a str,
    pub(crate) params: &'a Value,
    pub(crate) id: &'a RequestId,
    pub(crate) protocol_version: Option<&'a str>,
    /// The 2025-11-25 session, if any.
    pub(crate) session: Option<&'a str>,
    /// Whether `tools/call` names a tool registered here: only those name the span
    /// (an unknown name would let a client mint span names at will).
    pub(crate) known_tool: bool,
}

/// The span of one request, with its remote parent when `_meta` carries one.
pub(crate) fn request_span(info: &RequestInfo<'_>) -> Span {
    let name = |key: &str| info.params.get(key).and_then(Value::as_str);
    let span = tracing::info_span!(
        target: TARGET,
        "mcp.request",
        otel.name = Empty,
        otel.kind = "server",
        mcp.method.name = info.method,
        mcp.protocol.version = Empty,
        mcp.session.id = Empty,
        jsonrpc.request.id = Empty,
        gen_ai.operation.name = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        mcp_tasks.task.id = Empty,
        rpc.response.status_code = Empty,
        error.type = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    );
    let target = match info.method {
        m::TOOLS_CALL => {
            let tool = name("name");
            if let Some(tool) = tool {
                span.record("gen_ai.tool.name", tool);
            }
            span.record("gen_ai.operation.name", "execute_tool");
            tool.filter(|_| info.known_tool)
        }
        "prompts/get" => {
            let prompt = name("name");
            if let Some(prompt) = prompt {
                span.record("gen_ai.prompt.name", prompt);
            }
            prompt
        }
        _ => None,
    };
    match target {
        Some(t) => span.record("otel.name", format!("{} {t}", info.method)),
        None => span.record("otel.name", info.method),
    };
    if let Some(v) = info.protocol_version {
        span.record("mcp.protocol.version", v);
    }
    if let Some(s) = info.session {
        span.record("mcp.session.id", s);
    }
    match info.id {
        RequestId::Number(n) => span.record("jsonrpc.request.id", n.to_string()),
        RequestId::String(s) => span.record("jsonrpc.request.id", s.as_str()),
    };
    if let Some(task) = name("taskId") {
        span.record("mcp_tasks.task.id", task);
    }
    set_remote_parent(&span, info.params);
    span
}

/// Records the answer on the request's span: error code and type, or `tool_error`,
/// and the id of a task the request created.
pub(crate) fn record_response(span: &Span, result: &Result<Value, RpcError>) {
    match result {
        Ok(value) => {
            let created = value
                .get("task")
                .and_then(|t| t.get("taskId"))
                .or_else(|| value.get("taskId"))
                .and_then(Value::as_str);
            if let Some(task) = created {
                span.record("mcp_tasks.task.id", task);
            }
            if value.get("isError") == Some(&Value::Bool(true)) {
                span.record("error.type", "tool_error");
                span.record("otel.status_code", "error");
            }
        }
        Err(e) => {
            span.record("rpc.response.status_code", e.code.to_string());
            if is_server_error(e.code) {
                span.record("error.type", e.code.to_string());
                span.record("otel.status_code", "error");
                span.record("otel.status_description", e.message.as_str());
            }
        }
    }
}

/// Whether a server counts an error code as its own failure: every code but those
/// saying the caller sent something the server could not serve.
fn is_server_error(code: i64) -> bool {
    ![
        error_code::PARSE_ERROR,
        error_code::INVALID_REQUEST,
        error_code::METHOD_NOT_FOUND,
        error_code::INVALID_PARAMS,
        RESOURCE_NOT_FOUND,
    ]
    .contains(&code)
}

/// MCP's "resource not found", which the conventions list among the caller's errors.
const RESOURCE_NOT_FOUND: i64 = -32002;

/// A W3C `traceparent` (version 00) as its parts: trace id, parent span id, flags.
/// `None` for anything malformed, all-zero ids, or the forbidden version `ff`.
pub fn parse_traceparent(value: &str) -> Option<(String, String, u8)> {
    let parts: Vec<&str> = value.trim().split('-').collect();
    let hex = |s: &str, len: usize| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let [version, trace, span, flags, rest @ ..] = parts.as_slice() else {
        return None;
    };
    let valid = hex(version, 2)
        && *version != "ff"
        && (*version != "00" || rest.is_empty())
        && hex(trace, 32)
        && trace.bytes().any(|b| b != b'0')
        && hex(span, 16)
        && span.bytes().any(|b| b != b'0')
        && hex(flags, 2);
    if !valid {
        return None;
    }
    let flags = u8::from_str_radix(flags, 16).ok()?;
    Some((trace.to_string(), span.to_string(), flags))
}

#[cfg(feature = "otel")]
fn set_remote_parent(span: &Span, params: &Value) {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let Some(meta) = params.get("_meta") else {
        return;
    };
    let Some((trace, parent, flags)) = meta
        .get("traceparent")
        .and_then(Value::as_str)
        .and_then(parse_traceparent)
    else {
        return;
    };
    let (Ok(trace), Ok(parent)) = (TraceId::from_hex(&trace), SpanId::from_hex(&parent)) else {
        return;
    };
    let state = meta
        .get("tracestate")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<TraceState>().ok())
        .unwrap_or_default();
    let remote = SpanContext::new(trace, parent, TraceFlags::new(flags), true, state);
    let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(remote));
}

#[cfg(not(feature = "otel"))]
fn set_remote_parent(_span: &Span, _params: &Value) {}

/// Makes each task's span a trace child of the request that created it (see
/// `mcp_tasks_engine::set_task_span_parent`): with the `otel` feature, the span's
/// OpenTelemetry parent is the current span's context. Without it, nothing to link.
pub(crate) fn link_task_spans() {
    #[cfg(feature = "otel")]
    mcp_tasks_engine::set_task_span_parent(|span| {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let _ = span.set_parent(Span::current().context());
    });
}

/// The current span's context as a W3C `traceparent`, to put in the `_meta` of a
/// request this process sends on (a gateway's upstream call), so the upstream's spans
/// join the same trace. `None` without the `otel` feature or when nothing is traced.
pub fn current_traceparent() -> Option<String> {
    #[cfg(feature = "otel")]
    {
        use opentelemetry::trace::TraceContextExt;
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let context = Span::current().context();
        let span = context.span();
        let sc = span.span_context();
        if sc.is_valid() {
            return Some(format!(
                "00-{}-{}-{:02x}",
                sc.trace_id(),
                sc.span_id(),
                sc.trace_flags().to_u8()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparents_are_read_only_when_well_formed() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(
            parse_traceparent(good),
            Some((
                "4bf92f3577b34da6a3ce929d0e0e4736".into(),
                "00f067aa0ba902b7".into(),
                1
            ))
        );
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            assert_eq!(parse_traceparent(bad), None, "{bad}");
        }
        // A later version may carry more fields.
        assert!(
            parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more")
                .is_some()
        );
    }

    #[test]
    fn caller_mistakes_are_not_server_errors() {
        assert!(!is_server_error(error_code::INVALID_PARAMS));
        assert!(!is_server_error(error_code::METHOD_NOT_FOUND));
        assert!(is_server_error(error_code::INTERNAL_ERROR));
        assert!(is_server_error(-32001));
    }
}
