//! `/healthz`, `/readyz` and `/metrics`: for load balancers, orchestrators, service
//! managers and Prometheus. None needs credentials or shows task data.
//!
//! - `/healthz`: the process answers (200).
//! - `/readyz`: the task store answers a bounded read, and every readiness check or
//!   probe registered on the server (a gateway pings each upstream) passes, each
//!   within its bound; otherwise 503 with a JSON body naming what is not ready and why
//!   (never a secret: store errors carry no URL, upstreams are named by their name).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use std::time::Duration;

use crate::shared::Shared;

/// Longest the store may take to answer the readiness read.
pub const STORE_CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// Longest a readiness probe (a gateway's ping of an upstream) may take; probes and the
/// store read run at once, so `/readyz` answers within about this long.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// `GET /healthz`.
pub(crate) async fn healthz() -> Response {
    (StatusCode::OK, Json(json!({ "status": "ok" }))).into_response()
}

/// `GET /metrics`: OpenMetrics when the scraper asks for it (Prometheus does), else the
/// classic Prometheus text format (0.0.4) that older tools, `promtool` included, read.
#[cfg(feature = "metrics")]
pub(crate) async fn metrics(
    State(server): State<Shared>,
    headers: axum::http::HeaderMap,
) -> Response {
    let openmetrics = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("application/openmetrics-text"));
    server.metrics().store.refresh_tasks(server.engine()).await;
    let text = server.metrics_text();
    let (content_type, body) = if openmetrics {
        (
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            text,
        )
    } else {
        (
            "text/plain; version=0.0.4; charset=utf-8",
            crate::ops::metrics::to_prometheus_text(&text),
        )
    };
    ([(axum::http::header::CONTENT_TYPE, content_type)], body).into_response()
}

/// `GET /metrics` in a build without the `metrics` feature: 404, saying why.
#[cfg(not(feature = "metrics"))]
pub(crate) async fn metrics() -> Response {
    (
        StatusCode::NOT_FOUND,
        "this server was built without the `metrics` feature of mcp-tasks-server\n",
    )
        .into_response()
}

/// `GET /readyz`.
pub(crate) async fn readyz(State(server): State<Shared>) -> Response {
    let (store, probes) = tokio::join!(
        server.engine().check_store(STORE_CHECK_TIMEOUT),
        server.readiness_problems(PROBE_TIMEOUT)
    );
    let mut problems = Vec::new();
    if server.engine().is_draining() {
        problems.push(json!({
            "check": "drain",
            "reason": "the server is draining before it shuts down: it starts no new task"
        }));
    }
    if let Err(e) = store {
        problems.push(json!({ "check": "store", "reason": e }));
    }
    for (name, problem) in probes {
        problems.push(json!({ "check": name, "reason": problem }));
    }
    if problems.is_empty() {
        (StatusCode::OK, Json(json!({ "status": "ready" }))).into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "not ready", "problems": problems })),
        )
            .into_response()
    }
}
