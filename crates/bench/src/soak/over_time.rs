//! The soak over time (issue #47): every `--snapshot-every` during the creation window,
//! and as it closes, PostgreSQL's statistics of every table are read
//! ([`read_over_time`]); with the interval's latency, rate and errors
//! ([`super::intervals`]) each reading makes one [`Snapshot`]. From them the report
//! prints the tables' live and dead tuples, autovacuum runs and sizes over time, and
//! [`size_verdict`] says whether the sizes level off or keep growing.

use serde::Serialize;
use std::time::{Duration, Instant};

use super::intervals::IntervalFigures;
use crate::pg_stats::{table_stats, TableStats};

/// The tables whose sizes the verdict adds up: one row per live task and one per
/// status change of a live task, the two that every task inserts into and the sweeper
/// deletes from. Their sizes should follow the live tasks, not the run's length.
pub const VERDICT_TABLES: [&str; 2] = ["tasks", "task_timeline"];

/// Growth of [`VERDICT_TABLES`]' total size, in percent, below which the sizes count
/// as levelled off, between the first snapshot at a third of the window or later and
/// the last one.
///
/// Why 10%: by a third of an hour, with the default 30 s ttl, the live set has turned
/// over some forty times and autovacuum has had many rounds (it starts once dead
/// tuples pass 50 + 20% of the live ones), so the tables hold the live rows plus the
/// free space that vacuum keeps for reuse, and that stays put. What still moves them
/// in a healthy run is small: the live count follows the achieved rate (a few
/// percent), and a table or index that needed one more extent at the last reading
/// than at the first. Sizes that grow with time instead, because freed space is not
/// reused, grow in proportion to the time elapsed: from a third of the window to its
/// end that is up to +200%, and even a tenth of that is well above 10%.
pub const LEVEL_GROWTH_PCT: f64 = 10.0;

/// Tables other than [`VERDICT_TABLES`] appear in the over-time tables once this many
/// of their rows were updated or deleted by the last snapshot: fewer row versions
/// than that (a few hundred KB at most) cannot bloat a table enough to matter, and
/// leaving such tables out keeps the report short.
pub const CHURN_ROWS: i64 = 1000;

/// How long one reading of the statistics may take before it counts as failed (a
/// reading that hangs must not hold the end of the run).
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// One reading of the statistics, at a planned time.
#[derive(Debug, Clone)]
pub struct Reading {
    /// When it was due, from the start of the creation window.
    pub at: Duration,
    /// Every table's statistics, or why they could not be read.
    pub tables: Result<Vec<TableStats>, String>,
}

/// Reads every table's statistics at `start + t` for each of `times` (ascending). A
/// reading that fails does not stop the others: its error is kept in its [`Reading`]
/// (the report counts it as an error), and the run goes on.
pub async fn read_over_time(url: String, start: Instant, times: Vec<Duration>) -> Vec<Reading> {
    let mut out = Vec::with_capacity(times.len());
    for at in times {
        tokio::time::sleep_until((start + at).into()).await;
        let tables = match tokio::time::timeout(READ_TIMEOUT, table_stats(&url)).await {
            Ok(Ok(t)) => Ok(t),
            Ok(Err(e)) => Err(format!(
                "reading PostgreSQL's statistics at {}: {e}",
                label(at)
            )),
            Err(_) => Err(format!(
                "reading PostgreSQL's statistics at {}: no answer within {} s",
                label(at),
                READ_TIMEOUT.as_secs()
            )),
        };
        out.push(Reading { at, tables });
    }
    out
}

/// One row of the report's "over time" section: the interval that ended at the
/// reading, and every table's statistics read then.
#[derive(Debug, Clone, Serialize)]
pub struct Snapshot {
    /// The interval's figures (`from_s`, `to_s`: the reading's time; rate, errors,
    /// latency of the requests that finished in it).
    #[serde(flatten)]
    pub interval: IntervalFigures,
    /// Every table's statistics at `to_s` (empty when the reading failed).
    pub tables: Vec<TableStats>,
    /// Why the reading failed, if it did.
    pub stats_error: Option<String>,
}

impl Snapshot {
    /// Pairs each reading with the interval that ends at it (the same times, in order).
    pub fn pair(readings: Vec<Reading>, intervals: Vec<IntervalFigures>) -> Vec<Snapshot> {
        readings
            .into_iter()
            .zip(intervals)
            .map(|(r, interval)| {
                let (tables, stats_error) = match r.tables {
                    Ok(t) => (t, None),
                    Err(e) => (Vec::new(), Some(e)),
                };
                Snapshot {
                    interval,
                    tables,
                    stats_error,
                }
            })
            .collect()
    }

    fn table(&self, name: &str) -> Option<&TableStats> {
        self.tables.iter().find(|t| t.table == name)
    }

    /// Total bytes (tables, indexes, TOAST) of [`VERDICT_TABLES`]; `None` when one of
    /// them is missing (the reading failed).
    fn verdict_bytes(&self) -> Option<i64> {
        VERDICT_TABLES
            .iter()
            .map(|name| self.table(name).map(|t| t.total_bytes))
            .sum()
    }
}

/// Whether the sizes levelled off: [`VERDICT_TABLES`]' total size at the first
/// snapshot at a third of the window or later, against the last snapshot (the window's
/// end, load still on).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeVerdict {
    /// The tables added up.
    pub tables: Vec<&'static str>,
    /// The earlier snapshot's time, seconds.
    pub from_s: f64,
    /// The later snapshot's time, seconds.
    pub to_s: f64,
    /// Their total bytes at `from_s`.
    pub from_bytes: i64,
    /// Their total bytes at `to_s`.
    pub to_bytes: i64,
    /// `to_bytes` over `from_bytes`, as growth in percent (negative: shrank).
    pub growth_pct: f64,
    /// [`LEVEL_GROWTH_PCT`].
    pub threshold_pct: f64,
    /// Growth under the threshold.
    pub levels_off: bool,
}

/// The verdict on the sizes over a creation `window`; `None` without two distinct
/// snapshots to compare (a `--snapshot-every` of a third of the window or more, or
/// failed readings).
pub fn size_verdict(snapshots: &[Snapshot], window: Duration) -> Option<SizeVerdict> {
    let third = window.as_secs_f64() / 3.0;
    let (last_i, last) = snapshots
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, s)| s.verdict_bytes().map(|b| (i, (s, b))))?;
    let (first, from_bytes) = snapshots[..last_i]
        .iter()
        .filter(|s| s.interval.to_s >= third - 1e-9)
        .find_map(|s| s.verdict_bytes().map(|b| (s, b)))?;
    if from_bytes <= 0 {
        return None;
    }
    let (last, to_bytes) = last;
    let growth_pct = (to_bytes - from_bytes) as f64 / from_bytes as f64 * 100.0;
    Some(SizeVerdict {
        tables: VERDICT_TABLES.to_vec(),
        from_s: first.interval.to_s,
        to_s: last.interval.to_s,
        from_bytes,
        to_bytes,
        growth_pct,
        threshold_pct: LEVEL_GROWTH_PCT,
        levels_off: growth_pct < LEVEL_GROWTH_PCT,
    })
}

/// The tables the over-time section shows: [`VERDICT_TABLES`], then every other table
/// with at least [`CHURN_ROWS`] rows updated or deleted by the last reading, by name.
pub fn tables_of_interest(snapshots: &[Snapshot]) -> Vec<String> {
    let mut names: Vec<String> = VERDICT_TABLES.iter().map(|t| t.to_string()).collect();
    if let Some(last) = snapshots.iter().rev().find(|s| !s.tables.is_empty()) {
        for t in &last.tables {
            if !names.contains(&t.table) && t.updated + t.deleted >= CHURN_ROWS {
                names.push(t.table.clone());
            }
        }
    }
    names
}

/// A time from the start as the report prints it: `10m`, `1h`, `1h30m`, `45s`,
/// `1m30s`; `2.5s` when it is not whole seconds.
pub fn label(at: Duration) -> String {
    if at.subsec_millis() != 0 {
        return format!("{:.1}s", at.as_secs_f64());
    }
    let secs = at.as_secs();
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = String::new();
    for (n, unit) in [(h, "h"), (m, "m"), (s, "s")] {
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
        }
    }
    if out.is_empty() {
        out.push_str("0s");
    }
    out
}

/// The snapshot's time as a label.
pub fn at_label(s: &Snapshot) -> String {
    label(Duration::from_secs_f64(s.interval.to_s.max(0.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(name: &str, total: i64) -> TableStats {
        TableStats {
            table: name.into(),
            live_tuples: 0,
            dead_tuples: 0,
            inserted: 0,
            updated: 0,
            deleted: 0,
            autovacuum_count: 0,
            last_autovacuum: None,
            table_bytes: total / 2,
            index_bytes: total / 2,
            total_bytes: total,
        }
    }

    /// A snapshot at `to` seconds whose tasks and task_timeline total `bytes`.
    fn at(to: f64, bytes: Option<i64>) -> Snapshot {
        let tables = match bytes {
            Some(b) => vec![table("tasks", b / 4), table("task_timeline", b - b / 4)],
            None => Vec::new(),
        };
        Snapshot {
            interval: IntervalFigures {
                from_s: 0.0,
                to_s: to,
                created: 0,
                rate: 0.0,
                answered: 0,
                errors: 0,
                create_latency: None,
                answer_latency: None,
            },
            tables,
            stats_error: bytes.is_none().then(|| "failed".into()),
        }
    }

    const HOUR: Duration = Duration::from_secs(3600);

    #[test]
    fn sizes_that_level_off_grow_under_the_threshold() {
        let snaps: Vec<Snapshot> = [
            (600.0, 1000),
            (1200.0, 2000),
            (1800.0, 2050),
            (3600.0, 2100),
        ]
        .into_iter()
        .map(|(t, b)| at(t, Some(b)))
        .collect();
        let v = size_verdict(&snaps, HOUR).expect("two snapshots");
        // Compared from the first third (20m), not from the first snapshot (10m),
        // when the tables were still filling.
        assert_eq!((v.from_s, v.to_s), (1200.0, 3600.0));
        assert_eq!((v.from_bytes, v.to_bytes), (2000, 2100));
        assert!((v.growth_pct - 5.0).abs() < 1e-9);
        assert!(v.levels_off);
        assert_eq!(v.threshold_pct, LEVEL_GROWTH_PCT);
    }

    #[test]
    fn sizes_that_grow_with_time_are_still_growing() {
        let snaps: Vec<Snapshot> = (1..=6)
            .map(|i| at(600.0 * f64::from(i), Some(1000 * i64::from(i))))
            .collect();
        let v = size_verdict(&snaps, HOUR).expect("two snapshots");
        assert!((v.growth_pct - 200.0).abs() < 1e-9);
        assert!(!v.levels_off);
        // Right at the threshold is growth, not level.
        let edge = [at(1200.0, Some(1000)), at(3600.0, Some(1100))];
        assert!(!size_verdict(&edge, HOUR).expect("two").levels_off);
    }

    #[test]
    fn failed_readings_are_skipped_and_too_few_give_no_verdict() {
        let snaps = [
            at(1200.0, None),
            at(1800.0, Some(1000)),
            at(3000.0, Some(1050)),
            at(3600.0, None),
        ];
        let v = size_verdict(&snaps, HOUR).expect("two good ones");
        assert_eq!((v.from_s, v.to_s), (1800.0, 3000.0));
        // One snapshot only, or none at a third of the window before the last.
        assert!(size_verdict(&[at(3600.0, Some(1))], HOUR).is_none());
        assert!(size_verdict(&[at(600.0, Some(1)), at(3600.0, Some(2))], HOUR).is_none());
        assert!(size_verdict(&[], HOUR).is_none());
        // A snapshot missing one of the tables does not count.
        let mut partial = at(1200.0, Some(1000));
        partial.tables.retain(|t| t.table == "tasks");
        assert!(size_verdict(&[partial, at(3600.0, Some(1000))], HOUR).is_none());
    }

    #[test]
    fn tables_with_churn_join_the_main_ones() {
        let mut s = at(10.0, Some(100));
        let mut churned = table("runners", 8192);
        churned.updated = CHURN_ROWS;
        let mut quiet = table("sessions", 8192);
        quiet.updated = CHURN_ROWS - 1;
        s.tables.push(churned);
        s.tables.push(quiet);
        assert_eq!(
            tables_of_interest(&[s, at(20.0, None)]),
            ["tasks", "task_timeline", "runners"]
        );
    }

    #[test]
    fn labels_read_as_times() {
        let l = |s: u64| label(Duration::from_secs(s));
        assert_eq!(l(600), "10m");
        assert_eq!(l(3600), "1h");
        assert_eq!(l(5400), "1h30m");
        assert_eq!(l(90), "1m30s");
        assert_eq!(l(5), "5s");
        assert_eq!(l(0), "0s");
        assert_eq!(label(Duration::from_millis(2500)), "2.5s");
    }
}
