//! Trace export in a build without the `otel` feature: none. `--otlp-endpoint` (or
//! `MCP_TASKS_OTLP_ENDPOINT`) is refused, naming the feature; the standard `OTEL_*`
//! variables, which other programs of the environment may share, are left alone.

use anyhow::Result;
use tracing_subscriber::{Layer, Registry};

/// The layer that exports spans: never one here.
pub(crate) type TraceLayer = Option<Box<dyn Layer<Registry> + Send + Sync>>;

/// Nothing to flush.
#[derive(Debug)]
pub(crate) struct Telemetry;

impl Telemetry {
    /// Nothing to do: no exporter.
    pub(crate) async fn shutdown(self) {}
}

/// No exporter; refuses `--otlp-endpoint`.
///
/// # Errors
/// When `flag` (`--otlp-endpoint`) names a collector.
pub(crate) fn init(flag: Option<&str>) -> Result<(Telemetry, TraceLayer)> {
    if flag.is_some_and(|f| !f.trim().is_empty()) {
        return Err(crate::features::missing("--otlp-endpoint", "otel"));
    }
    Ok((Telemetry, None))
}
