//! The stderr log (`--log`, `--log-format`) and, when a collector is configured, trace
//! export over OTLP/HTTP (`--otlp-endpoint`, the standard `OTEL_*` variables; the
//! exporter is [`super::otlp`], feature `otel`).
//!
//! The spans meant for export live on one `tracing` target
//! ([`mcp_tasks_server::telemetry::TARGET`]): the OTLP layer takes only those, so
//! dependencies' spans and events are not exported, and the log leaves them out, so
//! log lines look the same whether or not traces are on.

use anyhow::{Context, Result};
use mcp_tasks_server::telemetry::TARGET;
use tracing_subscriber::filter::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

pub(crate) use super::otlp::Telemetry;
use super::ServeArgs;
use super::ANNOUNCE;

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (colours on a terminal).
    Text,
    /// One JSON object per line.
    Json,
}

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

/// Sets up the stderr log, filtered by `--log`, in `--log-format`, and trace export
/// when configured.
pub(crate) fn init(args: &ServeArgs) -> Result<Telemetry> {
    let (telemetry, subscriber) =
        subscriber(&args.log, args.log_format, args.otlp_endpoint.as_deref())?;
    subscriber.try_init().context("setting up logging")?;
    if args.log_format == LogFormat::Json {
        log_panics();
    }
    Ok(telemetry)
}

/// The subscriber of [`init`]: the log filtered by `log` in `format`, and the trace
/// exporter of `otlp_endpoint` (or of the `OTEL_*` variables) when there is one.
fn subscriber(
    log: &str,
    format: LogFormat,
    otlp_endpoint: Option<&str>,
) -> Result<(Telemetry, impl tracing::Subscriber + Send + Sync + 'static)> {
    let off = format!("{TARGET}=off")
        .parse()
        .context("the directive that keeps trace spans out of the log")?;
    let announce = format!("{ANNOUNCE}=info")
        .parse()
        .context("the directive that keeps serve's announcements in the log")?;
    let filter = EnvFilter::try_new(log)
        .context("parsing --log")?
        .add_directive(off)
        .add_directive(announce);
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let layer = match format {
        LogFormat::Text => layer
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .boxed(),
        LogFormat::Json => layer
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .boxed(),
    };
    let (telemetry, traces) = super::otlp::init(otlp_endpoint)?;
    // Without an exporter, a layer that declines every span under a filter of its own.
    // An absent layer (`Option::None`) says `Interest::always()` to every callsite, and
    // the registry then keeps every span for nobody: each request's, and each running
    // task's for as long as it runs (about 180 bytes per live task).
    let traces = traces.unwrap_or_else(|| {
        tracing_subscriber::layer::Identity::new()
            .with_filter(tracing_subscriber::filter::LevelFilter::OFF)
            .boxed()
    });
    let subscriber = tracing_subscriber::registry()
        .with(traces)
        .with(layer.with_filter(filter));
    Ok((telemetry, subscriber))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use parking_lot::Mutex;
    use std::sync::Arc;

    /// A log writer into a shared buffer.
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Without an exporter no span of the trace target exists (a running task's span
    /// among them, which would be kept for as long as the task runs), while the log's
    /// own spans still do.
    /// The tests that set a subscriber take turns: tracing caches each callsite's
    /// interest over every subscriber alive at the time, so another test's subscriber
    /// (which enables everything) could decide whether this test's span exists.
    static SUBSCRIBERS: Mutex<()> = Mutex::new(());

    fn one_subscriber_at_a_time() -> parking_lot::MutexGuard<'static, ()> {
        SUBSCRIBERS.lock()
    }

    #[test]
    fn without_an_exporter_trace_spans_are_not_kept() {
        let _turn = one_subscriber_at_a_time();
        let (_telemetry, subscriber) = subscriber("info", LogFormat::Text, None).unwrap();
        tracing::subscriber::with_default(subscriber, || {
            let task = tracing::info_span!(target: TARGET, "task");
            assert!(
                task.is_disabled(),
                "a trace span exists without an exporter"
            );
            let request = tracing::info_span!("request");
            assert!(!request.is_disabled(), "the log's spans are gone");
        });
    }

    #[test]
    fn a_panic_in_json_mode_is_one_json_record() {
        let _turn = one_subscriber_at_a_time();
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
        let text = String::from_utf8(written.lock().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{text}");
        let record: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(record["level"], "ERROR", "{record}");
        assert_eq!(record["target"], "mcp_tasks::panic", "{record}");
        assert_eq!(record["fields"]["message"], "panic: boom 42", "{record}");
        let location = record["fields"]["location"].as_str().unwrap_or_default();
        assert!(location.contains("logging.rs"), "{record}");
    }
}
