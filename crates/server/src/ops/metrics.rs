//! Prometheus metrics at `/metrics` (OpenMetrics text), with the `prometheus-client`
//! crate: the Prometheus project's own Rust client, typed label sets, no global state.
//! The store's (latency, group commits, tasks by status) and the gateway's upstream
//! errors are in `metrics/store.rs`.
//!
//! Labels stay bounded: `tool` is a registered tool's name (else `other`), `method` a
//! known MCP method (else `other`), `status` a task status; never task ids or principals.
//! Task counters count what this process did (it created the task, or its write won the
//! status change), so summing over replicas counts each task once.

use mcp_tasks_engine::{Activity, Outcome, ResultReading, TaskRecord};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use parking_lot::Mutex;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};
use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::mcp_results::McpResults;

mod store;

/// Methods named in the `method` label; any other is `other`.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "tools/list",
    "tools/call",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
    "tasks/update",
    "server/discover",
    "subscriptions/listen",
    "resources/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabel {
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolStatusLabels {
    tool: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabels {
    method: String,
    outcome: String,
}

fn seconds_histogram() -> Histogram {
    // 1 ms to ~4.6 h, ×4 per bucket.
    Histogram::new(exponential_buckets(0.001, 4.0, 13))
}

/// Most tasks whose time in `input_required` is being measured at once.
const MAX_WAITING: usize = 100_000;

/// The server's metrics. One per server; cheap to update from any thread.
pub struct Metrics {
    registry: Registry,
    created: Family<ToolLabel, Counter>,
    finished: Family<ToolStatusLabels, Counter>,
    duration: Family<ToolLabel, Histogram, fn() -> Histogram>,
    input_wait: Family<ToolLabel, Histogram, fn() -> Histogram>,
    requests: Family<MethodLabels, Counter>,
    request_duration: Family<MethodLabels, Histogram, fn() -> Histogram>,
    sessions: Gauge,
    quota_refusals: Counter,
    lease_takeovers: Counter,
    lease_losses: Counter,
    sweeps: Counter,
    /// Store, group commits, tasks by status, upstream errors (`metrics/store.rs`).
    pub(crate) store: store::StoreMetrics,
    /// Activity already turned into counter increments.
    counted: Mutex<Activity>,
    /// Tasks that entered `input_required` here, and when.
    waiting: Mutex<HashMap<TaskId, Instant>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("mcp_tasks");
        let created = Family::<ToolLabel, Counter>::default();
        registry.register(
            "tasks_created",
            "Tasks created by this process, by tool",
            created.clone(),
        );
        let finished = Family::<ToolStatusLabels, Counter>::default();
        registry.register(
            "tasks_finished",
            "Tasks this process ended, by tool and outcome (completed; failed, tool errors included; cancelled)",
            finished.clone(),
        );
        let duration: Family<ToolLabel, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(seconds_histogram);
        registry.register_with_unit(
            "task_duration",
            "Time from creation to the final status, by tool",
            Unit::Seconds,
            duration.clone(),
        );
        let input_wait: Family<ToolLabel, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(seconds_histogram);
        registry.register_with_unit(
            "input_required",
            "Time a task spent in input_required (waiting for a person or a client), by tool",
            Unit::Seconds,
            input_wait.clone(),
        );
        let requests = Family::<MethodLabels, Counter>::default();
        registry.register(
            "requests",
            "MCP requests answered, by method and outcome (ok, error)",
            requests.clone(),
        );
        let request_duration: Family<MethodLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(seconds_histogram);
        registry.register_with_unit(
            "request_duration",
            "Time to answer an MCP request, by method and outcome",
            Unit::Seconds,
            request_duration.clone(),
        );
        let sessions = Gauge::default();
        registry.register("sessions", "Open 2025-11-25 sessions", sessions.clone());
        let quota_refusals = Counter::default();
        registry.register(
            "quota_refusals",
            "Tasks refused because a quota was full",
            quota_refusals.clone(),
        );
        let lease_takeovers = Counter::default();
        registry.register(
            "lease_takeovers",
            "Tasks taken over from a process whose lease expired",
            lease_takeovers.clone(),
        );
        let lease_losses = Counter::default();
        registry.register(
            "lease_losses",
            "Tasks this process was running when another process took their lease over (the work here stopped)",
            lease_losses.clone(),
        );
        let sweeps = Counter::default();
        registry.register("expiry_sweeps", "Expiry sweeps run", sweeps.clone());
        let store = store::StoreMetrics::register(&mut registry);
        Metrics {
            registry,
            created,
            finished,
            duration,
            input_wait,
            requests,
            request_duration,
            sessions,
            quota_refusals,
            lease_takeovers,
            lease_losses,
            sweeps,
            store,
            counted: Mutex::new(Activity::default()),
            waiting: Mutex::new(HashMap::new()),
        }
    }
}

impl Metrics {
    /// Counts a task this process created or changed; `tool` is its label.
    pub(crate) fn observe_task(&self, record: &TaskRecord, tool: String) {
        if record.version == 0 {
            self.created.get_or_create(&ToolLabel { tool }).inc();
            return;
        }
        let mut waiting = self.waiting.lock();
        if record.status == TaskStatus::InputRequired {
            if waiting.len() >= MAX_WAITING {
                // Tasks that expired while waiting never leave the state here: keep
                // the map bounded (their wait is simply not measured).
                waiting.clear();
            }
            waiting
                .entry(record.id.clone())
                .or_insert_with(Instant::now);
            return;
        }
        if let Some(since) = waiting.remove(&record.id) {
            self.input_wait
                .get_or_create(&ToolLabel { tool: tool.clone() })
                .observe(since.elapsed().as_secs_f64());
        }
        drop(waiting);
        if record.status.is_terminal() {
            // A tool error (`isError: true`) is a failure to whoever watches the
            // service, whatever each wire calls the task.
            let tool_error = matches!(
                record.outcome.as_deref(),
                Some(Outcome::Result { value }) if McpResults.result_reports_error(value)
            );
            let status = match record.status {
                TaskStatus::Completed if tool_error => "failed",
                TaskStatus::Completed => "completed",
                TaskStatus::Failed => "failed",
                _ => "cancelled",
            };
            self.finished
                .get_or_create(&ToolStatusLabels {
                    tool: tool.clone(),
                    status: status.into(),
                })
                .inc();
            let took = (record.last_updated_at - record.created_at)
                .to_std()
                .unwrap_or(Duration::ZERO);
            self.duration
                .get_or_create(&ToolLabel { tool })
                .observe(took.as_secs_f64());
        }
    }

    /// Counts one answered request.
    pub(crate) fn observe_request(&self, method: &str, ok: bool, took: Duration) {
        let labels = MethodLabels {
            method: if KNOWN_METHODS.contains(&method) {
                method.to_string()
            } else {
                "other".to_string()
            },
            outcome: if ok { "ok" } else { "error" }.to_string(),
        };
        self.requests.get_or_create(&labels).inc();
        self.request_duration
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
    }

    /// The text exposition, with the gauges and engine counters brought up to date.
    pub(crate) fn render(&self, sessions: usize, activity: Activity) -> String {
        self.sessions
            .set(i64::try_from(sessions).unwrap_or(i64::MAX));
        {
            let mut counted = self.counted.lock();
            self.quota_refusals.inc_by(
                activity
                    .quota_refusals
                    .saturating_sub(counted.quota_refusals),
            );
            self.lease_takeovers.inc_by(
                activity
                    .lease_takeovers
                    .saturating_sub(counted.lease_takeovers),
            );
            self.lease_losses
                .inc_by(activity.lease_losses.saturating_sub(counted.lease_losses));
            self.sweeps
                .inc_by(activity.sweeps.saturating_sub(counted.sweeps));
            *counted = activity;
        }
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::warn!(error = %e, "could not encode the metrics");
        }
        out
    }
}

/// The OpenMetrics exposition rewritten in the classic Prometheus text format (0.0.4):
/// a counter's HELP and TYPE lines name its `_total` samples, and the `# UNIT` and
/// `# EOF` lines (which that format lacks) are left out.
pub fn to_prometheus_text(openmetrics: &str) -> String {
    let counters: std::collections::HashSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line.starts_with("# UNIT ") || line == "# EOF" {
            continue;
        }
        let meta = ["# HELP ", "# TYPE "]
            .into_iter()
            .find_map(|p| line.strip_prefix(p).map(|rest| (p, rest)));
        match meta {
            Some((prefix, rest)) => {
                let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                if counters.contains(name) {
                    out.push_str(&format!("{prefix}{name}_total {tail}"));
                } else {
                    out.push_str(line);
                }
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_by_their_samples_in_the_classic_format() {
        let om = "# HELP a_requests Requests.\n# TYPE a_requests counter\na_requests_total 3\n# HELP a_t Time.\n# TYPE a_t histogram\n# UNIT a_t seconds\na_t_count 1\n# EOF\n";
        assert_eq!(
            to_prometheus_text(om),
            "# HELP a_requests_total Requests.\n# TYPE a_requests_total counter\na_requests_total 3\n# HELP a_t Time.\n# TYPE a_t histogram\na_t_count 1\n"
        );
    }
}
