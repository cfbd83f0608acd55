//! `/healthz` and `/readyz`: for load balancers, orchestrators and service managers.
//! Neither needs credentials nor shows task data.
//!
//! - `/healthz`: the process answers (200).
//! - `/readyz`: the task store answers a bounded read, and every readiness check
//!   registered on the server (a gateway's upstreams) passes; otherwise 503 with a JSON
//!   body naming what is not ready.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use std::time::Duration;

use crate::server::Server;

/// Longest the store may take to answer the readiness read.
pub const STORE_CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// `GET /healthz`.
pub(crate) async fn healthz() -> Response {
    (StatusCode::OK, Json(json!({ "status": "ok" }))).into_response()
}

/// `GET /readyz`.
pub(crate) async fn readyz(State(server): State<Server>) -> Response {
    let mut problems = Vec::new();
    if let Err(e) = server.engine().check_store(STORE_CHECK_TIMEOUT).await {
        problems.push(json!({ "check": "store", "reason": e }));
    }
    for (name, problem) in server.readiness_problems() {
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
