//! From per-run samples to figures (median and spread over runs), checks against the
//! project's targets, and the two outputs: a table for people, JSON lines for machines.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::machine::Machine;
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
    /// One connection: instant task created, read once, collected.
    E2eTask,
    /// One connection: instant task created and collected (2025-11-25 only).
    E2eTaskNoGet,
    /// One connection: the same tool called synchronously.
    E2eSync,
    /// One connection: the same synchronous call from an ordinary client, one that
    /// keeps default socket options (Nagle on, as `http.client` or a plain hyper
    /// client) and accepts SSE replies, as SDK clients do. A server that leaves Nagle on
    /// shows a ~40 ms delayed-ACK stall here that the tuned client never sees.
    E2eSyncOrdinary,
}

impl Scenario {
    /// Table and JSON name.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Create => "create",
            Scenario::Memory => "memory",
            Scenario::Get => "get",
            Scenario::Ping => "ping",
            Scenario::E2eTask => "e2e task",
            Scenario::E2eTaskNoGet => "e2e task (no get)",
            Scenario::E2eSync => "e2e sync",
            Scenario::E2eSyncOrdinary => "e2e sync (ordinary client, SSE)",
        }
    }

    /// Unit of the figure's value.
    pub fn unit(self) -> &'static str {
        match self {
            Scenario::Create => "tasks/s",
            Scenario::Memory => "bytes/task",
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
    /// What was measured.
    pub scenario: Scenario,
    /// Live tasks during the run.
    pub live_tasks: usize,
    /// Connections used.
    pub connections: usize,
    /// The value, in the scenario's unit.
    pub value: f64,
    /// Latency percentiles.
    pub latency: Option<LatencySummary>,
    /// Server CPU per operation, microseconds.
    pub server_cpu_us: Option<f64>,
    /// Bench CPU per operation, microseconds.
    pub client_cpu_us: Option<f64>,
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
    /// Median server CPU per operation, microseconds.
    pub server_cpu_us_per_op: Option<f64>,
    /// Median bench CPU per operation, microseconds.
    pub client_cpu_us_per_op: Option<f64>,
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

/// Groups samples into figures, keeping the order in which figures first appeared.
pub fn aggregate(samples: &[Sample], wire_of: impl Fn(&str) -> String) -> Vec<Figure> {
    let mut order: Vec<(String, Scenario, usize)> = Vec::new();
    let mut groups: BTreeMap<(String, Scenario, usize), Vec<&Sample>> = BTreeMap::new();
    for s in samples {
        let key = (s.target.clone(), s.scenario, s.live_tasks);
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
        let (target, scenario, live_tasks) = key;
        figures.push(Figure {
            kind: "figure",
            wire: wire_of(&target),
            target,
            scenario,
            unit: scenario.unit(),
            live_tasks,
            connections: runs[0].connections,
            value,
            p50_us: median_of(runs.iter().map(|s| s.latency.map(|l| l.p50_us))),
            p99_us: median_of(runs.iter().map(|s| s.latency.map(|l| l.p99_us))),
            p999_us: median_of(runs.iter().map(|s| s.latency.map(|l| l.p999_us))),
            server_cpu_us_per_op: median_of(runs.iter().map(|s| s.server_cpu_us)),
            client_cpu_us_per_op: median_of(runs.iter().map(|s| s.client_cpu_us)),
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
    /// The goal, in words.
    pub goal: String,
    /// The measured value the goal applies to.
    pub value: f64,
    /// Whether the goal is met.
    pub met: bool,
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

fn us(v: Option<f64>) -> String {
    match v {
        Some(x) if x >= 1000.0 => format!("{:.2} ms", x / 1000.0),
        Some(x) => format!("{x:.0} µs"),
        None => "-".into(),
    }
}

fn bytes(v: Option<f64>) -> String {
    match v {
        Some(b) => format!("{:.0} MiB", b / 1048576.0),
        None => "-".into(),
    }
}

/// The table for people.
pub fn table(machine: &Machine, setup: &str, figures: &[Figure], checks: &[Check]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "machine: {} cores, {}, Linux {}, load average {} at start; bench {}{}",
        machine.cores,
        machine.cpu_model,
        machine.kernel,
        machine
            .load_average_at_start
            .map_or_else(|| "?".into(), |l| format!("{l:.2}")),
        machine.bench_version,
        if machine.optimized_build {
            ""
        } else {
            " (DEBUG BUILD: figures are not representative)"
        }
    );
    let _ = writeln!(out, "{setup}");
    let _ = writeln!(out);
    let header = [
        "target",
        "figure",
        "live",
        "conns",
        "value",
        "±",
        "p50",
        "p99",
        "p99.9",
        "srv CPU/op",
        "gen CPU/op",
        "other",
        "RSS",
    ];
    let mut rows: Vec<[String; 13]> = Vec::new();
    for f in figures {
        let value = match f.scenario {
            Scenario::Memory => format!("{} B/task", num(f.value.median)),
            _ => format!("{} {}", num(f.value.median), f.unit),
        };
        rows.push([
            f.target.clone(),
            f.scenario.name().to_string(),
            num(f.live_tasks as f64),
            f.connections.to_string(),
            value,
            format!("{:.0}%", f.value.spread_pct),
            us(f.p50_us),
            us(f.p99_us),
            us(f.p999_us),
            us(f.server_cpu_us_per_op),
            us(f.client_cpu_us_per_op),
            f.other_cores_max
                .map_or_else(|| "-".into(), |c| format!("{c:.2}")),
            bytes(f.rss_bytes),
        ]);
    }
    let mut widths = header.map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>, out: &mut String| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(widths.iter()).enumerate() {
            let pad = w - c.chars().count();
            if i < 2 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
            s.push_str("  ");
        }
        let _ = writeln!(out, "{}", s.trim_end());
    };
    line(header.to_vec(), &mut out);
    for r in &rows {
        line(r.iter().map(String::as_str).collect(), &mut out);
    }
    if !checks.is_empty() {
        let _ = writeln!(out, "\ntargets:");
        for c in checks {
            let v = if c.value < 100.0 {
                format!("{:.2}", c.value)
            } else {
                num(c.value)
            };
            let _ = writeln!(
                out,
                "  [{}] {}: {} (goal {}; {})",
                if c.met { "met " } else { "MISS" },
                c.name,
                v,
                c.goal,
                c.detail
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::{check, checks};

    fn sample(target: &str, scenario: Scenario, n: usize, value: f64) -> Sample {
        Sample {
            target: target.into(),
            scenario,
            live_tasks: n,
            connections: 16,
            value,
            latency: Some(LatencySummary {
                p50_us: value / 1000.0,
                p99_us: 2.0,
                p999_us: 3.0,
            }),
            server_cpu_us: Some(10.0),
            client_cpu_us: None,
            rss_bytes: Some(1 << 20),
            other_cores: Some(0.1),
        }
    }

    #[test]
    fn aggregate_groups_runs_and_keeps_first_seen_order() {
        let s = vec![
            sample("a", Scenario::Get, 10, 100.0),
            sample("a", Scenario::Create, 10, 5.0),
            sample("a", Scenario::Get, 10, 300.0),
            sample("a", Scenario::Get, 10, 200.0),
        ];
        let f = aggregate(&s, |_| "2025-11-25".into());
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].scenario, Scenario::Get);
        assert_eq!(f[0].value.median, 200.0);
        assert_eq!(f[0].value.runs, vec![100.0, 300.0, 200.0]);
        assert_eq!(f[0].p50_us, Some(0.2));
        assert_eq!(f[1].scenario, Scenario::Create);
    }

    #[test]
    fn checks_compare_sizes_and_servers() {
        let s = vec![
            sample("ours", Scenario::Get, 1000, 1000.0),
            sample("ours", Scenario::Get, 10000, 900.0),
            sample("rmcp", Scenario::Get, 10000, 100.0),
            sample("ours", Scenario::Ping, 1000, 1100.0),
        ];
        let f = aggregate(&s, |_| String::new());
        let c = checks(&f, "ours", "sqlite", "rmcp");
        let by = |n: &str| {
            c.iter()
                .find(|c| c.name == format!("{n} (ours)"))
                .expect(n)
                .clone()
        };
        assert!(by("tasks/get flat in N").met);
        assert!((by("tasks/get vs rmcp").value - 9.0).abs() < 1e-9);
        assert!(by("tasks/get vs ping ceiling").met);
        assert!(by("server CPU per tasks/get").met);
        assert!(checks(&f, "", "sqlite", "rmcp").is_empty());
    }

    #[test]
    fn numbers_get_separators() {
        assert_eq!(num(1234567.0), "1,234,567");
        assert_eq!(num(999.4), "999");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(-1000.0), "-1,000");
    }

    #[test]
    fn table_lists_every_figure_and_check() {
        let s = vec![sample("ours", Scenario::Get, 1000, 1000.0)];
        let f = aggregate(&s, |_| String::new());
        let c = vec![check("x", "y", 1.0, true, "z".into())];
        let t = table(&Machine::detect(), "setup", &f, &c);
        assert!(t.contains("1,000 req/s"));
        assert!(t.contains("[met ] x"));
    }
}
