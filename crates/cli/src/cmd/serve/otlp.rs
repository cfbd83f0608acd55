//! Trace export over OTLP/HTTP (feature `otel`): `--otlp-endpoint`, or the standard
//! `OTEL_*` variables. Only the spans of [`TARGET`] are exported (see [`super::logging`]).

use anyhow::{Context, Result};
use mcp_tasks_server::telemetry::TARGET;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::{Layer, Registry};

use super::ANNOUNCE;

/// The layer that exports spans, when tracing is on.
pub(crate) type TraceLayer = Option<Box<dyn Layer<Registry> + Send + Sync>>;

/// The service name when `OTEL_SERVICE_NAME` does not give one.
const SERVICE_NAME: &str = "mcp-tasks";

/// What must outlive serving: the trace pipeline, flushed by [`Telemetry::shutdown`].
#[derive(Debug)]
pub(crate) struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Exports the spans still buffered and stops the exporter. The SDK's exporter
    /// thread blocks on HTTP, so the wait happens off the async runtime.
    pub(crate) async fn shutdown(self) {
        let Some(provider) = self.provider else {
            return;
        };
        let flushed = tokio::task::spawn_blocking(move || provider.shutdown()).await;
        match flushed {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(target: ANNOUNCE, "could not export the last traces: {e}"),
            Err(e) => tracing::warn!(target: ANNOUNCE, "could not export the last traces: {e}"),
        }
    }
}

/// The OTLP traces URL: `--otlp-endpoint` with `/v1/traces` appended, or `None` to let
/// the exporter read the standard variables; `None` when tracing is off.
fn endpoint(flag: Option<&str>) -> Option<Option<String>> {
    if let Some(base) = flag.filter(|s| !s.trim().is_empty()) {
        return Some(Some(format!("{}/v1/traces", base.trim_end_matches('/'))));
    }
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
    let disabled = std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
        || std::env::var("OTEL_TRACES_EXPORTER").is_ok_and(|v| v.eq_ignore_ascii_case("none"));
    let configured =
        set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") || set("OTEL_EXPORTER_OTLP_ENDPOINT");
    (configured && !disabled).then_some(None)
}

/// The batch exporter of spans to the collector.
fn tracer_provider(url: Option<String>) -> Result<SdkTracerProvider> {
    let mut exporter = opentelemetry_otlp::SpanExporter::builder().with_http();
    if let Some(url) = &url {
        exporter = exporter.with_endpoint(url);
    }
    let exporter = exporter
        .build()
        .context("setting up the OTLP trace exporter")?;
    let mut resource = Resource::builder();
    if std::env::var("OTEL_SERVICE_NAME").is_err() {
        resource = resource.with_service_name(SERVICE_NAME);
    }
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build())
}

/// The exporter and its layer when a collector is configured (`flag` is
/// `--otlp-endpoint`), else nothing.
///
/// # Errors
/// When the exporter cannot be set up.
pub(crate) fn init(flag: Option<&str>) -> Result<(Telemetry, TraceLayer)> {
    let provider = match endpoint(flag) {
        Some(url) => Some(tracer_provider(url)?),
        None => None,
    };
    let traces = provider.as_ref().map(|p| {
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer(SERVICE_NAME))
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
            .with_filter(Targets::new().with_target(TARGET, LevelFilter::TRACE))
            .boxed()
    });
    Ok((Telemetry { provider }, traces))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_a_base_url() {
        assert_eq!(
            endpoint(Some("http://127.0.0.1:4318/")),
            Some(Some("http://127.0.0.1:4318/v1/traces".to_string()))
        );
        assert_eq!(
            endpoint(Some("http://collector:4318")),
            Some(Some("http://collector:4318/v1/traces".to_string()))
        );
    }
}
