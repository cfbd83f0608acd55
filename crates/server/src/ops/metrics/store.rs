//! The metrics of the store and of what surrounds the engine: store operation latency
//! by operation and backend, SQLite group-commit batch sizes, PostgreSQL read batch
//! sizes (how many concurrent gets share a statement), tasks by status (read
//! from the store at scrape time, cached), and upstream errors of a gateway.
//!
//! Labels stay bounded: `operation` is a method of the store trait, `backend` one of
//! `memory`, `sqlite`, `postgresql`, `custom`; `kind` of a read batch `check` or
//! `read`; `status` a task status; `upstream` the name of a configured upstream.

use mcp_tasks_engine::{Engine, StoreObserver};
use mcp_tasks_protocol::TaskStatus;
use parking_lot::Mutex;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};
use std::time::{Duration, Instant};

/// How long a count of tasks by status is reused: counting reads an index of every
/// task, so one scrape every few seconds (or several Prometheus servers) must not
/// count each time.
pub(crate) const STATUS_COUNT_TTL: Duration = Duration::from_secs(5);

/// How long a scrape waits for the count before it shows the previous one.
const STATUS_COUNT_TIMEOUT: Duration = Duration::from_secs(2);

/// Every status, so that a status whose tasks all went away reads 0, not its last value.
const STATUSES: [TaskStatus; 5] = [
    TaskStatus::Working,
    TaskStatus::InputRequired,
    TaskStatus::Completed,
    TaskStatus::Failed,
    TaskStatus::Cancelled,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StoreLabels {
    // Static strings: the store's hot path allocates nothing to count.
    operation: &'static str,
    backend: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabel {
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UpstreamLabel {
    upstream: String,
}

/// The kind of a batch of PostgreSQL reads: `check` (cached records checked) or `read`
/// (whole rows). Static: the read path allocates nothing to count.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReadBatchLabels {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookLabels {
    sink: String,
    result: &'static str,
}

fn store_seconds() -> Histogram {
    // 100 µs to ~26 s, ×4 per bucket: an in-memory get to a stalled database.
    Histogram::new(exponential_buckets(0.0001, 4.0, 10))
}

fn batch_sizes() -> Histogram {
    // 1 to 256 (the most a batch holds), ×2 per bucket.
    Histogram::new(exponential_buckets(1.0, 2.0, 9))
}

/// See the module documentation.
pub(crate) struct StoreMetrics {
    duration: Family<StoreLabels, Histogram, fn() -> Histogram>,
    errors: Family<StoreLabels, Counter>,
    batches: Histogram,
    read_batches: Family<ReadBatchLabels, Histogram, fn() -> Histogram>,
    tasks: Family<StatusLabel, Gauge>,
    upstream_errors: Family<UpstreamLabel, Counter>,
    webhooks: Family<WebhookLabels, Counter>,
    /// When the task counts were last taken (or a count started).
    counted_at: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for StoreMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreMetrics").finish_non_exhaustive()
    }
}

impl StoreMetrics {
    /// The families, registered in `registry`.
    pub(crate) fn register(registry: &mut Registry) -> Self {
        let duration: Family<StoreLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(store_seconds);
        registry.register_with_unit(
            "store_operation_duration",
            "Time of one task store operation, by operation and backend",
            Unit::Seconds,
            duration.clone(),
        );
        let errors = Family::<StoreLabels, Counter>::default();
        registry.register(
            "store_operation_errors",
            "Task store operations that failed (I/O, database unreachable), by operation and backend",
            errors.clone(),
        );
        let batches = batch_sizes();
        registry.register(
            "sqlite_group_commit_batch_size",
            "Tasks created per SQLite group commit (one transaction and fsync each)",
            batches.clone(),
        );
        let read_batches: Family<ReadBatchLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(batch_sizes);
        registry.register(
            "postgresql_read_batch_size",
            "Concurrent tasks/get answered by one PostgreSQL statement, by kind (check: cached records checked, read: whole rows)",
            read_batches.clone(),
        );
        let tasks = Family::<StatusLabel, Gauge>::default();
        registry.register(
            "tasks",
            "Visible tasks in the store by status, all processes sharing it included (counted at most every 5 s)",
            tasks.clone(),
        );
        let upstream_errors = Family::<UpstreamLabel, Counter>::default();
        registry.register(
            "upstream_errors",
            "Upstream calls of the gateway that failed (an error answer, a lost connection), by upstream",
            upstream_errors.clone(),
        );
        let webhooks = Family::<WebhookLabels, Counter>::default();
        registry.register(
            "webhook_attempts",
            "Webhook delivery attempts, by [[notify]] entry and result (delivered, retry, gave_up)",
            webhooks.clone(),
        );
        StoreMetrics {
            duration,
            errors,
            batches,
            read_batches,
            tasks,
            upstream_errors,
            webhooks,
            counted_at: Mutex::new(None),
        }
    }

    /// Counts one webhook delivery attempt of `sink` with its `result`.
    pub(crate) fn webhook_attempt(&self, sink: &str, result: &'static str) {
        self.webhooks
            .get_or_create(&WebhookLabels {
                sink: sink.to_string(),
                result,
            })
            .inc();
    }

    /// Counts one failed upstream call of `upstream`.
    pub(crate) fn upstream_error(&self, upstream: &str) {
        self.upstream_errors
            .get_or_create(&UpstreamLabel {
                upstream: upstream.to_string(),
            })
            .inc();
    }

    /// Brings the tasks-by-status gauge up to date, unless it was counted less than
    /// [`STATUS_COUNT_TTL`] ago. A store that does not answer in time leaves the last
    /// values (and a warning).
    pub(crate) async fn refresh_tasks(&self, engine: &Engine) {
        {
            let mut at = self.counted_at.lock();
            if at.is_some_and(|t| t.elapsed() < STATUS_COUNT_TTL) {
                return;
            }
            // Claimed before counting: concurrent scrapes do not all count.
            *at = Some(Instant::now());
        }
        match tokio::time::timeout(STATUS_COUNT_TIMEOUT, engine.count_by_status()).await {
            Ok(Ok(Some(counts))) => {
                for status in STATUSES {
                    let n = counts
                        .iter()
                        .filter(|(s, _)| *s == status)
                        .map(|(_, n)| *n)
                        .sum::<u64>();
                    self.tasks
                        .get_or_create(&StatusLabel {
                            status: status.as_str().to_string(),
                        })
                        .set(i64::try_from(n).unwrap_or(i64::MAX));
                }
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "could not count tasks by status"),
            Err(_) => tracing::warn!(
                "counting tasks by status took longer than {STATUS_COUNT_TIMEOUT:?}; showing the previous count"
            ),
        }
    }
}

impl StoreObserver for super::Metrics {
    fn observe(&self, operation: &'static str, backend: &'static str, took: Duration, ok: bool) {
        let labels = StoreLabels { operation, backend };
        self.store
            .duration
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
        if !ok {
            self.store.errors.get_or_create(&labels).inc();
        }
    }

    fn observe_batch(&self, _backend: &'static str, size: usize) {
        // usize to f64: batch sizes are at most a few hundred.
        #[allow(clippy::cast_precision_loss)]
        self.store.batches.observe(size as f64);
    }

    fn observe_read_batch(&self, _backend: &'static str, kind: &'static str, size: usize) {
        // usize to f64: batch sizes are at most a few hundred.
        #[allow(clippy::cast_precision_loss)]
        self.store
            .read_batches
            .get_or_create(&ReadBatchLabels { kind })
            .observe(size as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Metrics;
    use mcp_tasks_engine::{Activity, StoreObserver};
    use std::time::Duration;

    /// The error counters, which a healthy run never moves, have samples once counted.
    #[test]
    fn store_and_upstream_errors_are_counted_by_bounded_labels() {
        let metrics = Metrics::default();
        metrics.observe("get", "sqlite", Duration::from_millis(2), false);
        metrics.observe("get", "sqlite", Duration::from_millis(1), true);
        metrics.observe_batch("sqlite", 5);
        metrics.observe_read_batch("postgresql", "check", 7);
        metrics.store.upstream_error("docs");
        let text = metrics.render(0, Activity::default());
        for line in [
            "mcp_tasks_store_operation_errors_total{operation=\"get\",backend=\"sqlite\"} 1",
            "mcp_tasks_store_operation_duration_seconds_count{operation=\"get\",backend=\"sqlite\"} 2",
            "mcp_tasks_upstream_errors_total{upstream=\"docs\"} 1",
            "mcp_tasks_sqlite_group_commit_batch_size_sum 5.0",
            "mcp_tasks_postgresql_read_batch_size_sum{kind=\"check\"} 7.0",
        ] {
            assert!(text.contains(line), "missing {line}:\n{text}");
        }
    }
}
