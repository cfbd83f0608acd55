//! What a soak run found: the client's counts and latencies and PostgreSQL's table
//! statistics, at two moments and over time, as tables for people or one JSON object.

use serde::Serialize;

use super::over_time::{at_label, tables_of_interest, SizeVerdict, Snapshot};
use crate::pg_stats::TableStats;
use crate::report::num;
use crate::stats::LatencySummary;

/// The outcome of a soak run.
#[derive(Debug, Clone, Serialize)]
pub struct SoakReport {
    /// Always `soak` (the record's kind in JSON).
    pub kind: &'static str,
    /// Seconds tasks were created for.
    pub duration_s: f64,
    /// The rate asked for (tasks/s).
    pub target_rate: f64,
    /// Tasks created per second of the creation window.
    pub achieved_rate: f64,
    /// The retention of every task, seconds.
    pub ttl_s: f64,
    /// Tasks created.
    pub created: u64,
    /// Tasks whose question was answered and which then completed.
    pub answered: u64,
    /// Tasks left to expire with their question open.
    pub left_to_expire: u64,
    /// Of those, the ones found deleted (expired and swept) after their ttl.
    pub swept: u64,
    /// Of those, the ones still readable well after their ttl (the sweeper is behind
    /// or broken); counted as errors too.
    pub expiry_late: u64,
    /// Tasks left to expire that were neither seen swept nor late (their read failed).
    pub unchecked: u64,
    /// Failed requests and broken expectations.
    pub errors: u64,
    /// The first few error messages.
    pub first_errors: Vec<String>,
    /// Latency of a creation (`tools/call` until the task exists).
    pub create_latency: Option<LatencySummary>,
    /// Latency of an answer (`tasks/update` until `tasks/get` sees the task completed).
    pub answer_latency: Option<LatencySummary>,
    /// Server CPU seconds per created task (all its work: creation, answers,
    /// expiry, heartbeats), in microseconds; PostgreSQL's own CPU not included.
    pub server_cpu_us_per_task: Option<f64>,
    /// The server's resident memory at the end.
    pub server_rss_bytes: Option<u64>,
    /// PostgreSQL's statistics of every mcp-tasks table as the creation window closed
    /// (about rate x ttl tasks live, the churn at its steadiest).
    pub tables_under_load: Vec<TableStats>,
    /// The same at the end, once every task left has expired and been swept.
    pub tables: Vec<TableStats>,
    /// `--snapshot-every`, seconds.
    pub snapshot_every_s: f64,
    /// The readings during the creation window (every `--snapshot-every` and as it
    /// closed), each with the figures of the interval that ended at it.
    pub snapshots: Vec<Snapshot>,
    /// Whether the main tables' sizes levelled off; `None` without two snapshots to
    /// compare.
    pub size_verdict: Option<SizeVerdict>,
}

/// A count: exact below 100, with thousands separators above.
fn count(n: i64) -> String {
    if n.abs() < 100 {
        n.to_string()
    } else {
        num(n as f64)
    }
}

fn ms(us: f64) -> String {
    format!("{:.1} ms", us / 1000.0)
}

fn bytes(b: i64) -> String {
    let b = b as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else {
        format!("{:.0} KiB", b / 1024.0)
    }
}

impl SoakReport {
    /// The report for people: the run, then one row per table.
    pub fn table(&self) -> String {
        let lat = |l: &Option<LatencySummary>| match l {
            Some(l) => format!("{} / {}", ms(l.p50_us), ms(l.p99_us)),
            None => "-".into(),
        };
        let mut out = String::new();
        out.push_str("| run | |\n|---|--:|\n");
        let rows: Vec<(&str, String)> = vec![
            (
                "duration, ttl",
                format!("{:.0} s, {:.0} s", self.duration_s, self.ttl_s),
            ),
            (
                "rate asked / achieved",
                format!(
                    "{}/s / {}/s",
                    num(self.target_rate),
                    num(self.achieved_rate)
                ),
            ),
            ("tasks created", count(self.created as i64)),
            ("answered (completed)", count(self.answered as i64)),
            ("left to expire", count(self.left_to_expire as i64)),
            ("expired and swept", count(self.swept as i64)),
            (
                "still there after ttl + grace",
                count(self.expiry_late as i64),
            ),
            ("errors", count(self.errors as i64)),
            ("create p50 / p99", lat(&self.create_latency)),
            ("answer p50 / p99", lat(&self.answer_latency)),
            (
                "server CPU per task",
                self.server_cpu_us_per_task
                    .map_or("-".into(), |c| format!("{c:.0} µs")),
            ),
            (
                "server RSS at the end",
                self.server_rss_bytes
                    .map_or("-".into(), |b| bytes(b as i64)),
            ),
        ];
        for (k, v) in rows {
            out.push_str(&format!("| {k} | {v} |\n"));
        }
        for (when, tables) in [
            ("under load", &self.tables_under_load),
            ("at the end", &self.tables),
        ] {
            out.push('\n');
            out.push_str(&tables_table(when, tables));
        }
        out.push_str(&self.over_time());
        for e in &self.first_errors {
            out.push_str(&format!("\nerror: {e}"));
        }
        if !self.first_errors.is_empty() {
            out.push('\n');
        }
        out
    }
}

impl SoakReport {
    /// The "over time" section: one row per snapshot with the interval's rate, errors
    /// and latency; then, for each table of interest, its rows and sizes per snapshot;
    /// then the verdict on the sizes.
    fn over_time(&self) -> String {
        let lat = |l: &Option<LatencySummary>| match l {
            Some(l) => format!("{} / {}", ms(l.p50_us), ms(l.p99_us)),
            None => "-".into(),
        };
        let mut out = String::new();
        if self.snapshots.is_empty() {
            return out;
        }
        out.push_str(
            "\n| over time (interval up to) | created | rate | errors | create p50 / p99 | answer p50 / p99 |\n\
             |---|--:|--:|--:|--:|--:|\n",
        );
        for s in &self.snapshots {
            let i = &s.interval;
            out.push_str(&format!(
                "| {} | {} | {}/s | {} | {} | {} |\n",
                at_label(s),
                count(i.created as i64),
                num(i.rate),
                count(i.errors as i64),
                lat(&i.create_latency),
                lat(&i.answer_latency),
            ));
        }
        for name in tables_of_interest(&self.snapshots) {
            out.push_str(&format!(
                "\n| {name} over time | live | dead | autovacuums | table | indexes | total |\n\
                 |---|--:|--:|--:|--:|--:|--:|\n"
            ));
            for s in &self.snapshots {
                match s.tables.iter().find(|t| t.table == name) {
                    Some(t) => out.push_str(&format!(
                        "| {} | {} | {} | {} | {} | {} | {} |\n",
                        at_label(s),
                        count(t.live_tuples),
                        count(t.dead_tuples),
                        t.autovacuum_count,
                        bytes(t.table_bytes),
                        bytes(t.index_bytes),
                        bytes(t.total_bytes),
                    )),
                    None => out.push_str(&format!("| {} | - | - | - | - | - | - |\n", at_label(s))),
                }
            }
        }
        out.push('\n');
        out.push_str(&verdict_line(self.size_verdict.as_ref()));
        out.push('\n');
        out
    }
}

/// The verdict as one line: the sizes compared, the growth and what it means.
fn verdict_line(v: Option<&SizeVerdict>) -> String {
    let Some(v) = v else {
        return "sizes over time: too few snapshots to judge (it takes one at a third of the \
                window or later and a later one: a shorter --snapshot-every)"
            .into();
    };
    let at = |s: f64| super::over_time::label(std::time::Duration::from_secs_f64(s.max(0.0)));
    format!(
        "sizes over time: {} total size (tables, indexes, TOAST) {} at {}, {} at {}: \
         {:+.1}%, {} (level: under {:.0}% growth from a third of the window to its end)",
        v.tables.join(" + "),
        bytes(v.from_bytes),
        at(v.from_s),
        bytes(v.to_bytes),
        at(v.to_s),
        v.growth_pct,
        if v.levels_off {
            "levels off"
        } else {
            "still growing"
        },
        v.threshold_pct,
    )
}

/// One row per table; `when` heads the first column.
fn tables_table(when: &str, tables: &[TableStats]) -> String {
    let mut out = String::new();
    out.push_str(&format!(
            "| table ({when}) | live | dead | inserted | updated | deleted | autovacuums | last autovacuum | table | indexes | total |\n\
             |---|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|\n"
        ));
    let now = chrono::Utc::now();
    for t in tables {
        let last = t.last_autovacuum.map_or("never".into(), |at| {
            format!("{} s ago", (now - at).num_seconds().max(0))
        });
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            t.table,
            count(t.live_tuples),
            count(t.dead_tuples),
            count(t.inserted),
            count(t.updated),
            count(t.deleted),
            t.autovacuum_count,
            last,
            bytes(t.table_bytes),
            bytes(t.index_bytes),
            bytes(t.total_bytes),
        ));
    }
    out
}
