//! What a `bench replicas` run found: one row per replica count (the median of its
//! runs), as a table for people or one JSON object.

use serde::Serialize;
use std::fmt::Write as _;

use crate::load::LoadRun;
use crate::machine::Machine;
use crate::report::num;
use crate::stats::{median, Spread};
use crate::table::{machine_line, render, us};

/// One phase (the creations or the gets) of one run, per operation.
#[derive(Debug, Clone)]
pub(crate) struct Phase {
    /// Operations per second.
    pub(crate) rate: f64,
    /// Operations measured.
    pub(crate) ops: u64,
    /// Median latency, µs.
    pub(crate) p50_us: Option<f64>,
    /// 99th percentile latency, µs.
    pub(crate) p99_us: Option<f64>,
    /// Each replica's CPU µs per operation (of all replicas' operations), replica order.
    pub(crate) replica_cpu_us: Vec<Option<f64>>,
    /// All replicas' CPU µs per operation.
    pub(crate) replicas_cpu_us: Option<f64>,
    /// PostgreSQL's CPU µs per operation (all its processes), when it runs here.
    pub(crate) postgres_cpu_us: Option<f64>,
    /// Gets that reached another replica than the task's creator.
    pub(crate) cross_replica: u64,
}

impl Phase {
    /// The figures of a load run over the replicas.
    pub(crate) fn of(run: LoadRun) -> Self {
        let replica_cpu_us = run.servers_cpu_us();
        let replicas_cpu_us = run.server_cpu_us();
        let postgres_cpu_us = run.database_cpu_us();
        let (rate, ops, cross_replica) = (run.rate(), run.ops, run.cross_replica);
        let latency = run.latencies.summary();
        Phase {
            rate,
            ops,
            p50_us: latency.map(|l| l.p50_us),
            p99_us: latency.map(|l| l.p99_us),
            replica_cpu_us,
            replicas_cpu_us,
            postgres_cpu_us,
            cross_replica,
        }
    }

    /// The progress line part of this phase.
    pub(crate) fn line(&self, unit: &str) -> String {
        let db = self
            .postgres_cpu_us
            .map(|c| format!(" + PostgreSQL {}", us(Some(c))))
            .unwrap_or_default();
        format!(
            "{} {unit} (p50 {}, p99 {}), replicas {} CPU/op{db}",
            num(self.rate),
            us(self.p50_us),
            us(self.p99_us),
            us(self.replicas_cpu_us)
        )
    }
}

/// One run of one replica count: the creations, then the gets.
#[derive(Debug, Clone)]
pub(crate) struct RunFigures {
    /// Creating the live tasks.
    pub(crate) create: Phase,
    /// Reading them.
    pub(crate) get: Phase,
}

/// A phase over the runs of one replica count: the rate's median and spread, the
/// medians of the rest.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseFigures {
    /// Operations per second: median, smallest, largest, every run.
    pub rate: Spread,
    /// Median of the runs' median latencies, µs.
    pub p50_us: Option<f64>,
    /// Median of the runs' 99th percentiles, µs.
    pub p99_us: Option<f64>,
    /// Each replica's CPU µs per operation, in start order (operations of all
    /// replicas: the figures add up to `cpu_us_replicas`).
    pub cpu_us_per_replica: Vec<Option<f64>>,
    /// All replicas' CPU µs per operation.
    pub cpu_us_replicas: Option<f64>,
    /// PostgreSQL's CPU µs per operation, all its processes (`None` when it does not
    /// run on this machine).
    pub cpu_us_postgres: Option<f64>,
}

/// A count: exact below 100, with thousands separators above.
fn count(n: u64) -> String {
    if n < 100 {
        n.to_string()
    } else {
        num(n as f64)
    }
}

/// The median of the values that were measured, `None` when none was.
fn median_of(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    median(&values.flatten().collect::<Vec<_>>())
}

impl PhaseFigures {
    fn of(runs: &[&Phase], replicas: usize) -> Self {
        let rates: Vec<f64> = runs.iter().map(|p| p.rate).collect();
        PhaseFigures {
            rate: Spread::of(&rates).unwrap_or(Spread {
                median: 0.0,
                min: 0.0,
                max: 0.0,
                spread_pct: 0.0,
                runs: Vec::new(),
            }),
            p50_us: median_of(runs.iter().map(|p| p.p50_us)),
            p99_us: median_of(runs.iter().map(|p| p.p99_us)),
            cpu_us_per_replica: (0..replicas)
                .map(|i| {
                    median_of(
                        runs.iter()
                            .map(|p| p.replica_cpu_us.get(i).copied().flatten()),
                    )
                })
                .collect(),
            cpu_us_replicas: median_of(runs.iter().map(|p| p.replicas_cpu_us)),
            cpu_us_postgres: median_of(runs.iter().map(|p| p.postgres_cpu_us)),
        }
    }
}

/// One replica count over its runs.
#[derive(Debug, Clone, Serialize)]
pub struct ReplicasRow {
    /// How many replicas shared the database.
    pub replicas: usize,
    /// Creating the live tasks through them.
    pub create: PhaseFigures,
    /// `tasks/get` of random live tasks through them.
    pub get: PhaseFigures,
    /// Gets that read a task through another replica than the one that created it
    /// (median of the runs; 0 with one replica).
    pub cross_replica_reads: u64,
    /// Their share of the measured gets (median of the runs): about (N-1)/N when
    /// reads go round-robin regardless of the creator.
    pub cross_replica_share: f64,
}

impl ReplicasRow {
    /// The row of `replicas` from its runs.
    pub(crate) fn of(replicas: usize, runs: &[RunFigures]) -> Self {
        let creates: Vec<&Phase> = runs.iter().map(|r| &r.create).collect();
        let gets: Vec<&Phase> = runs.iter().map(|r| &r.get).collect();
        let cross = median(
            &gets
                .iter()
                .map(|p| p.cross_replica as f64)
                .collect::<Vec<_>>(),
        );
        let share = median(
            &gets
                .iter()
                .filter(|p| p.ops > 0)
                .map(|p| p.cross_replica as f64 / p.ops as f64)
                .collect::<Vec<_>>(),
        );
        ReplicasRow {
            replicas,
            create: PhaseFigures::of(&creates, replicas),
            get: PhaseFigures::of(&gets, replicas),
            cross_replica_reads: cross.map_or(0, |c| c.round() as u64),
            cross_replica_share: share.unwrap_or(0.0),
        }
    }
}

/// The outcome of `bench replicas`.
#[derive(Debug, Clone, Serialize)]
pub struct ReplicasReport {
    /// Always `replicas` (the record's kind in JSON).
    pub kind: &'static str,
    /// The machine measured on.
    pub machine: Machine,
    /// Connections (sessions), spread round-robin over the replicas.
    pub connections: usize,
    /// Tasks created, then read, in every run.
    pub live_tasks: usize,
    /// The tool of those tasks.
    pub tool: String,
    /// Measured seconds of the get figure (after its warm-up).
    pub get_duration_s: f64,
    /// Runs of every replica count.
    pub repeat: usize,
    /// Whether PostgreSQL's CPU was counted (it runs on this machine).
    pub postgres_cpu_counted: bool,
    /// One row per replica count.
    pub rows: Vec<ReplicasRow>,
}

impl ReplicasReport {
    /// The report for people: the setup, then one row per replica count.
    pub fn table(&self) -> String {
        let mut out = String::new();
        machine_line(&self.machine, &mut out);
        let _ = writeln!(
            out,
            "setup: `mcp-tasks serve --demo` replicas on one PostgreSQL (2026-07-28 wire), {} connections round-robin; \
             {} tasks of {} created, then read for {:.1} s; median of {} run(s)",
            self.connections,
            num(self.live_tasks as f64),
            self.tool,
            self.get_duration_s,
            self.repeat
        );
        let _ = writeln!(
            out,
            "CPU/op: CPU time per operation (of all replicas' operations): each replica's (in start order), their sum, PostgreSQL's{}",
            if self.postgres_cpu_counted {
                ""
            } else {
                " (not counted: it does not run on this machine)"
            }
        );
        let _ = writeln!(out);
        let header = [
            "replicas",
            "creations/s",
            "±",
            "create p50",
            "create p99",
            "gets/s",
            "±",
            "get p50",
            "get p99",
            "create CPU/op each",
            "sum",
            "PostgreSQL",
            "get CPU/op each",
            "sum",
            "PostgreSQL",
            "cross-replica reads",
        ];
        let each = |v: &[Option<f64>]| v.iter().map(|c| us(*c)).collect::<Vec<_>>().join(" / ");
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.replicas.to_string(),
                    num(r.create.rate.median),
                    format!("{:.0}%", r.create.rate.spread_pct),
                    us(r.create.p50_us),
                    us(r.create.p99_us),
                    num(r.get.rate.median),
                    format!("{:.0}%", r.get.rate.spread_pct),
                    us(r.get.p50_us),
                    us(r.get.p99_us),
                    each(&r.create.cpu_us_per_replica),
                    us(r.create.cpu_us_replicas),
                    us(r.create.cpu_us_postgres),
                    each(&r.get.cpu_us_per_replica),
                    us(r.get.cpu_us_replicas),
                    us(r.get.cpu_us_postgres),
                    format!(
                        "{} ({:.0}%)",
                        count(r.cross_replica_reads),
                        r.cross_replica_share * 100.0
                    ),
                ]
            })
            .collect();
        render(&header, &rows, "", |_| false, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(rate: f64, cross: u64) -> Phase {
        Phase {
            rate,
            ops: 100,
            p50_us: Some(rate / 10.0),
            p99_us: Some(rate),
            replica_cpu_us: vec![Some(10.0), None],
            replicas_cpu_us: None,
            postgres_cpu_us: Some(30.0),
            cross_replica: cross,
        }
    }

    #[test]
    fn a_row_takes_the_medians_of_its_runs() {
        let runs: Vec<RunFigures> = [100.0, 300.0, 200.0]
            .iter()
            .map(|&r| RunFigures {
                create: phase(r, 0),
                get: phase(r * 10.0, (r / 4.0) as u64),
            })
            .collect();
        let row = ReplicasRow::of(2, &runs);
        assert_eq!(row.create.rate.median, 200.0);
        assert_eq!(row.create.rate.spread_pct, 50.0);
        assert_eq!(row.get.p50_us, Some(200.0));
        assert_eq!(row.create.cpu_us_per_replica, vec![Some(10.0), None]);
        assert_eq!(row.create.cpu_us_postgres, Some(30.0));
        assert_eq!(row.cross_replica_reads, 50);
        assert_eq!(row.cross_replica_share, 0.5);
    }

    #[test]
    fn the_table_has_a_row_per_replica_count_and_every_column() {
        let runs = [RunFigures {
            create: phase(800.0, 0),
            get: phase(5000.0, 60),
        }];
        let report = ReplicasReport {
            kind: "replicas",
            machine: Machine::detect(),
            connections: 4,
            live_tasks: 100,
            tool: "slow_compute".into(),
            get_duration_s: 1.0,
            repeat: 1,
            postgres_cpu_counted: true,
            rows: vec![ReplicasRow::of(1, &runs), ReplicasRow::of(2, &runs)],
        };
        let text = report.table();
        let header = text
            .lines()
            .find(|l| l.starts_with("replicas "))
            .expect("a header");
        for col in [
            "creations/s",
            "gets/s",
            "create CPU/op each",
            "get CPU/op each",
            "cross-replica reads",
        ] {
            assert!(header.contains(col), "{header}");
        }
        let rows: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("replicas "))
            .skip(1)
            .collect();
        assert_eq!(rows.len(), 2, "{text}");
        assert!(rows[1].contains("60 (60%)"), "{text}");
        assert!(rows[1].contains("10 µs / -"), "{text}");
    }
}
