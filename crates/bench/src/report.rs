//! From per-run samples to figures (median and spread over runs), checks against the
//! project's targets, and the two outputs: a table for people, JSON lines for machines.

use serde::Serialize;
use std::collections::BTreeMap;

use crate::stats::{median, LatencySummary, Spread};

/// What a figure measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scenario {
    /// Tasks created per second until N are live.
    Create,
    /// Resident bytes per live task.
    Memory,
    /// `tasks/get` requests per second on random live tasks.
    Get,
    /// `ping` requests per second: the HTTP + JSON-RPC ceiling.
    Ping,
    /// One connection: an instant task created, then `tasks/get` until it is done (a
    /// plain result on the extension wire counts as done with zero polls).
    E2eTask,
    /// One connection: an instant task created and collected with `tasks/result`
    /// (2025-11-25 only).
    E2eTaskNoGet,
    /// One connection: the same tool called synchronously.
    E2eSync,
    /// One connection: the same synchronous call from an ordinary client, one that
    /// keeps default socket options (Nagle on, as `http.client` or a plain hyper
    /// client) and accepts SSE replies, as SDK clients do. A server that leaves Nagle on
    /// shows a ~40 ms delayed-ACK stall here that the tuned client never sees.
    E2eSyncOrdinary,
    /// The disk under the SQLite file: 4 KiB written and `fdatasync`ed per operation,
    /// the physical floor of a durable commit.
    Fsync,
    /// Server RSS growth per task after N instant tasks completed and retained.
    Retained,
    /// One connection: `pipeline` tasks of N instant journaled steps, one after the
    /// other; the value is steps per second, latencies are per step.
    Journal,
    /// `--connections` connections: the same pipelines at once (journal writes of
    /// concurrent tasks share group commits).
    JournalConcurrent,
}

impl Scenario {
    /// Table and JSON name.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Create => "create",
            Scenario::Memory => "memory",
            Scenario::Get => "get",
            Scenario::Ping => "ping",
            Scenario::E2eTask => "e2e task (create + get until done)",
            Scenario::E2eTaskNoGet => "e2e task (create + result)",
            Scenario::E2eSync => "e2e sync",
            Scenario::E2eSyncOrdinary => "e2e sync (ordinary client, SSE)",
            Scenario::Fsync => "fsync (4 KiB write + fdatasync)",
            Scenario::Retained => "retained completed",
            Scenario::Journal => "journal (1 pipeline at a time, per step)",
            Scenario::JournalConcurrent => "journal (concurrent pipelines, per step)",
        }
    }

    /// Unit of the figure's value.
    pub fn unit(self) -> &'static str {
        match self {
            Scenario::Create => "tasks/s",
            Scenario::Memory | Scenario::Retained => "bytes/task",
            Scenario::Fsync => "fsyncs/s",
            Scenario::Journal | Scenario::JournalConcurrent => "steps/s",
            Scenario::Get | Scenario::Ping => "req/s",
            Scenario::E2eTask
            | Scenario::E2eTaskNoGet
            | Scenario::E2eSync
            | Scenario::E2eSyncOrdinary => "calls/s",
        }
    }
}

/// One run of one figure.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Which server (`mcp-tasks/memory`, `rmcp`, …).
    pub target: String,
    /// Which task wire (empty for figures without one, like fsync).
    pub wire: String,
    /// What was measured.
    pub scenario: Scenario,
    /// Live tasks during the run (completed tasks for `retained`).
    pub live_tasks: usize,
    /// Connections used.
    pub connections: usize,
    /// The value, in the scenario's unit.
    pub value: f64,
    /// Latency percentiles.
    pub latency: Option<LatencySummary>,
    /// Mean `tasks/get` polls per operation (instant-task flows).
    pub polls_per_op: Option<f64>,
    /// Server CPU per operation, microseconds.
    pub server_cpu_us: Option<f64>,
    /// Bench CPU per operation, microseconds.
    pub client_cpu_us: Option<f64>,
    /// CPU per operation of the database server the server uses (PostgreSQL on this
    /// machine), microseconds.
    pub database_cpu_us: Option<f64>,
    /// Server resident memory at the end, bytes.
    pub rss_bytes: Option<u64>,
    /// Cores used by other processes during the run (noise on a shared machine).
    pub other_cores: Option<f64>,
}

/// A figure: the runs of one (target, scenario, live tasks) summarised.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// Record type in the JSON lines.
    pub kind: &'static str,
    /// Which server.
    pub target: String,
    /// Which task wire.
    pub wire: String,
    /// What was measured.
    pub scenario: Scenario,
    /// Unit of `value`.
    pub unit: &'static str,
    /// Live tasks during the runs.
    pub live_tasks: usize,
    /// Connections used.
    pub connections: usize,
    /// Median, min, max and spread over the runs.
    pub value: Spread,
    /// Median over runs of each run's p50, in microseconds.
    pub p50_us: Option<f64>,
    /// Median over runs of each run's p99.
    pub p99_us: Option<f64>,
    /// Median over runs of each run's p99.9.
    pub p999_us: Option<f64>,
    /// Median over runs of the mean `tasks/get` polls per operation (instant tasks).
    pub polls_per_op: Option<f64>,
    /// Median server CPU per operation, microseconds.
    pub server_cpu_us_per_op: Option<f64>,
    /// Median bench CPU per operation, microseconds.
    pub client_cpu_us_per_op: Option<f64>,
    /// Median CPU per operation of the server's database (PostgreSQL on this machine),
    /// microseconds.
    pub database_cpu_us_per_op: Option<f64>,
    /// Median server RSS at the end of the runs, bytes.
    pub rss_bytes: Option<f64>,
    /// Largest number of cores other processes used during a run: CPU the server and
    /// the bench did not get.
    pub other_cores_max: Option<f64>,
}

fn median_of(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = values.flatten().collect();
    median(&v)
}

/// Groups samples by target, wire, scenario and size into figures, keeping the order
/// in which figures first appeared.
pub fn aggregate(samples: &[Sample]) -> Vec<Figure> {
    type Key = (String, String, Scenario, usize);
    let mut order: Vec<Key> = Vec::new();
    let mut groups: BTreeMap<Key, Vec<&Sample>> = BTreeMap::new();
    for s in samples {
        let key = (s.target.clone(), s.wire.clone(), s.scenario, s.live_tasks);
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(s);
    }
    let mut figures = Vec::new();
    for key in order {
        let runs = &groups[&key];
        let values: Vec<f64> = runs.iter().map(|s| s.value).collect();
        let Some(value) = Spread::of(&values) else {
            continue;
        };
        let (target, wire, scenario, live_tasks) = key;
        figures.push(Figure {
            kind: "figure",
            wire,
            target,
            scenario,
            unit: scenario.unit(),
            live_tasks,
            connections: runs[0].connections,
            value,
            p50_us: median_of(runs.iter().map(|s| s.latency.map(|l| l.p50_us))),
            p99_us: median_of(runs.iter().map(|s| s.latency.map(|l| l.p99_us))),
            p999_us: median_of(runs.iter().map(|s| s.latency.map(|l| l.p999_us))),
            polls_per_op: median_of(runs.iter().map(|s| s.polls_per_op)),
            server_cpu_us_per_op: median_of(runs.iter().map(|s| s.server_cpu_us)),
            client_cpu_us_per_op: median_of(runs.iter().map(|s| s.client_cpu_us)),
            database_cpu_us_per_op: median_of(runs.iter().map(|s| s.database_cpu_us)),
            rss_bytes: median_of(runs.iter().map(|s| s.rss_bytes.map(|b| b as f64))),
            other_cores_max: runs
                .iter()
                .filter_map(|s| s.other_cores)
                .max_by(f64::total_cmp),
        });
    }
    figures
}

/// A target of the project, checked against the figures.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Record type in the JSON lines.
    pub kind: &'static str,
    /// What is checked.
    pub name: String,
    /// The server it was evaluated on.
    pub target: String,
    /// The task wire of the figures it used (empty when it does not depend on one).
    pub wire: String,
    /// The goal, in words.
    pub goal: String,
    /// The measured value the goal applies to.
    pub value: f64,
    /// The measured value with its unit, as printed.
    pub measured: String,
    /// Whether the goal is met.
    pub met: bool,
    /// How far the value is from the goal when missed, as a percentage of the goal
    /// (`None` when met).
    pub missed_by_pct: Option<f64>,
    /// How the value was obtained.
    pub detail: String,
}

/// A number with thousands separators (no decimals at or above 100).
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v.abs() < 100.0 {
        return format!("{v:.1}");
    }
    let s = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        out.insert(0, '-');
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A sample for tests: p50 is value/1000 µs, server CPU 10 µs/op.
    pub(crate) fn sample(
        target: &str,
        wire: &str,
        scenario: Scenario,
        n: usize,
        value: f64,
    ) -> Sample {
        Sample {
            target: target.into(),
            wire: wire.into(),
            scenario,
            live_tasks: n,
            connections: 16,
            value,
            latency: Some(LatencySummary {
                p50_us: value / 1000.0,
                p99_us: 2.0,
                p999_us: 3.0,
            }),
            polls_per_op: None,
            server_cpu_us: Some(10.0),
            client_cpu_us: None,
            database_cpu_us: None,
            rss_bytes: Some(1 << 20),
            other_cores: Some(0.1),
        }
    }

    #[test]
    fn aggregate_groups_runs_and_keeps_first_seen_order() {
        let w = "2025-11-25";
        let s = vec![
            sample("a", w, Scenario::Get, 10, 100.0),
            sample("a", w, Scenario::Create, 10, 5.0),
            sample("a", w, Scenario::Get, 10, 300.0),
            sample("a", w, Scenario::Get, 10, 200.0),
        ];
        let f = aggregate(&s);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].scenario, Scenario::Get);
        assert_eq!(f[0].value.median, 200.0);
        assert_eq!(f[0].value.runs, vec![100.0, 300.0, 200.0]);
        assert_eq!(f[0].p50_us, Some(0.2));
        assert_eq!(f[1].scenario, Scenario::Create);
    }

    #[test]
    fn aggregate_keeps_wires_apart() {
        let s = vec![
            sample("a", "2025-11-25", Scenario::Get, 10, 100.0),
            sample("a", "2026-07-28", Scenario::Get, 10, 300.0),
        ];
        let f = aggregate(&s);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].wire, "2025-11-25");
        assert_eq!(f[1].wire, "2026-07-28");
        assert_eq!(f[1].value.median, 300.0);
    }

    #[test]
    fn numbers_get_separators() {
        assert_eq!(num(1234567.0), "1,234,567");
        assert_eq!(num(999.4), "999");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(-1000.0), "-1,000");
    }
}
