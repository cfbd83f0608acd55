//! The stderr log (`--log`, `--log-format`) and, when a collector is configured, trace
//! export over OTLP/HTTP (`--otlp-endpoint`, the standard `OTEL_*` variables).
//!
//! The spans meant for export live on one `tracing` target
//! ([`mcp_tasks_server::telemetry::TARGET`]): the OTLP layer takes only those, so
//! dependencies' spans and events are not exported, and the log leaves them out, so
//! log lines look the same whether or not traces are on.

use anyhow::{Context, Result};
use mcp_tasks_server::telemetry::TARGET;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::filter::{EnvFilter, LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

use super::ServeArgs;

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (colours on a terminal).
    Text,
    /// One JSON object per line.
    Json,
}

/// The service name when `OTEL_SERVICE_NAME` does not give one.
const SERVICE_NAME: &str = "mcp-tasks";

/// The target of the lines `serve` always prints, whatever `--log` filters out: where
/// it listens, where the board is, why it stopped. In JSON they are log records of
/// this target (the filter always lets it through); in text, plain `mcp-tasks: ...`
/// lines as before.
pub(crate) const ANNOUNCE: &str = "mcp_tasks::serve";

/// Prints one of `serve`'s announcements (see [`ANNOUNCE`]) in `format`: `message`,
/// and in JSON also `url` as a field of its own.
pub(crate) fn announce(format: LogFormat, message: &str, url: &str) {
    match format {
        LogFormat::Text => eprintln!("mcp-tasks: {message} {url}"),
        LogFormat::Json => tracing::info!(target: ANNOUNCE, url, "{message} {url}"),
    }
}

/// Says why `serve` stopped with an error, in `format`: in JSON one record (written by
/// hand when logging could not even be set up, e.g. a bad `--log`), so that the last
/// line is JSON too; in text nothing here (the caller prints `mcp-tasks: error: ...`).
pub(crate) fn fatal(format: LogFormat, logging_ready: bool, error: &str) {
    if format != LogFormat::Json {
        return;
    }
    if logging_ready {
        tracing::error!(target: ANNOUNCE, "{error}");
    } else {
        let line = serde_json::json!({
            "timestamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            "level": "ERROR",
            "fields": { "message": error },
            "target": ANNOUNCE,
        });
        eprintln!("{line}");
    }
}

/// In JSON mode, panics are logged as one ERROR record (target `mcp_tasks::panic`,
/// with the panic's location and thread as fields) instead of the default hook's
/// plain text, so that a log collector sees them as what they are.
fn log_panics() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(a panic without a message)");
        let location = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_default();
        let thread = std::thread::current();
        tracing::error!(
            target: "mcp_tasks::panic",
            location = location.as_str(),
            thread = thread.name().unwrap_or("unnamed"),
            "panic: {message}"
        );
    }));
}

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

/// Sets up the stderr log, filtered by `--log`, in `--log-format`, and trace export
/// when configured.
pub(crate) fn init(args: &ServeArgs) -> Result<Telemetry> {
    let off = format!("{TARGET}=off")
        .parse()
        .context("the directive that keeps trace spans out of the log")?;
    let announce = format!("{ANNOUNCE}=info")
        .parse()
        .context("the directive that keeps serve's announcements in the log")?;
    let filter = EnvFilter::try_new(&args.log)
        .context("parsing --log")?
        .add_directive(off)
        .add_directive(announce);
    let log = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let log = match args.log_format {
        LogFormat::Text => log
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .boxed(),
        LogFormat::Json => log
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .boxed(),
    };
    let provider = match endpoint(args.otlp_endpoint.as_deref()) {
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
    });
    tracing_subscriber::registry()
        .with(log.with_filter(filter))
        .with(traces)
        .try_init()
        .context("setting up logging")?;
    if args.log_format == LogFormat::Json {
        log_panics();
    }
    Ok(Telemetry { provider })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A log writer into a shared buffer.
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_panic_in_json_mode_is_one_json_record() {
        let written = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&written);
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_writer(move || Buffer(Arc::clone(&sink)))
            .finish();
        // The subscriber is this thread's only: the panic below happens on it.
        let caught = tracing::subscriber::with_default(subscriber, || {
            log_panics();
            let caught = std::panic::catch_unwind(|| panic!("boom {}", 42));
            // Back to the default hook for the other tests.
            let _ = std::panic::take_hook();
            caught
        });
        assert!(caught.is_err());
        let text = String::from_utf8(written.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{text}");
        let record: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(record["level"], "ERROR", "{record}");
        assert_eq!(record["target"], "mcp_tasks::panic", "{record}");
        assert_eq!(record["fields"]["message"], "panic: boom 42", "{record}");
        let location = record["fields"]["location"].as_str().unwrap_or_default();
        assert!(location.contains("logging.rs"), "{record}");
    }

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
