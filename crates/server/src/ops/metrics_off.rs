//! Built without the `metrics` feature: the calls the server makes to count its work
//! do nothing, `/metrics` answers 404 saying why, and `prometheus-client` is not built.
//! The same names as the real module, so the rest of the crate has no `cfg`s.

use mcp_tasks_engine::{Activity, Engine};
use std::time::Duration;

/// The server's metrics, left out of this build (feature `metrics`).
#[derive(Debug, Default)]
pub struct Metrics {
    pub(crate) store: StoreMetrics,
}

/// The store's and webhooks' metrics, left out of this build.
#[derive(Debug, Default)]
pub(crate) struct StoreMetrics;

impl Metrics {
    /// Counts nothing.
    pub(crate) fn observe_request(&self, _method: &str, _ok: bool, _took: Duration) {}

    /// An empty exposition.
    pub(crate) fn render(&self, _sessions: usize, _activity: Activity) -> String {
        String::new()
    }
}

impl StoreMetrics {
    /// Counts nothing.
    pub(crate) fn webhook_attempt(&self, _sink: &str, _result: &'static str) {}

    /// Counts nothing.
    pub(crate) fn upstream_error(&self, _upstream: &str) {}

    /// Counts nothing.
    pub(crate) async fn refresh_tasks(&self, _engine: &Engine) {}
}

/// The text unchanged (there is none without the feature).
pub fn to_prometheus_text(openmetrics: &str) -> String {
    openmetrics.to_string()
}
