//! The report for people: the machine, one row per figure (target and wire side by
//! side), and the targets as a pass/miss table with how far each miss is from its goal.

use std::fmt::Write as _;

use crate::machine::Machine;
use crate::report::{num, Check, Figure, Scenario};

/// Microseconds, switching to milliseconds from 1 ms.
pub(crate) fn us(v: Option<f64>) -> String {
    match v {
        Some(x) if x >= 1000.0 => format!("{:.2} ms", x / 1000.0),
        Some(x) => format!("{x:.0} µs"),
        None => "-".into(),
    }
}

/// Bytes as MiB.
pub(crate) fn mib(v: Option<f64>) -> String {
    match v {
        Some(b) => format!("{} MiB", num(b / 1048576.0)),
        None => "-".into(),
    }
}

/// Renders columns two spaces apart, each line starting with `indent`: text columns
/// (`is_text(i)`) left-aligned, numbers right-aligned.
pub(crate) fn render(
    header: &[&str],
    rows: &[Vec<String>],
    indent: &str,
    is_text: impl Fn(usize) -> bool,
    out: &mut String,
) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut line = |cells: Vec<&str>| {
        let mut s = String::from(indent);
        for (i, (c, w)) in cells.iter().zip(widths.iter()).enumerate() {
            let pad = " ".repeat(w - c.chars().count());
            if is_text(i) {
                s.push_str(c);
                s.push_str(&pad);
            } else {
                s.push_str(&pad);
                s.push_str(c);
            }
            s.push_str("  ");
        }
        let _ = writeln!(out, "{}", s.trim_end());
    };
    line(header.to_vec());
    for r in rows {
        line(r.iter().map(String::as_str).collect());
    }
}

/// The first line of every report for people: the machine, and a warning for a debug
/// build.
pub(crate) fn machine_line(machine: &Machine, out: &mut String) {
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
}

/// The table for people.
pub fn table(machine: &Machine, setup: &str, figures: &[Figure], checks: &[Check]) -> String {
    let mut out = String::new();
    machine_line(machine, &mut out);
    let _ = writeln!(out, "{setup}");
    let _ = writeln!(out);
    let header = [
        "target",
        "wire",
        "figure",
        "tasks",
        "conns",
        "value",
        "±",
        "p50",
        "p99",
        "p99.9",
        "polls/op",
        "srv CPU/op",
        "gen CPU/op",
        "other",
        "RSS",
    ];
    let rows: Vec<Vec<String>> = figures
        .iter()
        .map(|f| {
            let value = match f.scenario {
                Scenario::Memory | Scenario::Retained => {
                    format!("{} B/task", num(f.value.median))
                }
                _ => format!("{} {}", num(f.value.median), f.unit),
            };
            vec![
                f.target.clone(),
                if f.wire.is_empty() {
                    "-".into()
                } else {
                    f.wire.clone()
                },
                f.scenario.name().to_string(),
                if f.scenario == Scenario::Fsync {
                    "-".into()
                } else {
                    num(f.live_tasks as f64)
                },
                f.connections.to_string(),
                value,
                format!("{:.0}%", f.value.spread_pct),
                us(f.p50_us),
                us(f.p99_us),
                us(f.p999_us),
                f.polls_per_op
                    .map_or_else(|| "-".into(), |p| format!("{p:.2}")),
                match f.database_cpu_us_per_op {
                    // The server's CPU + its database's (PostgreSQL on this machine).
                    Some(db) => format!("{} + {}", us(f.server_cpu_us_per_op), us(Some(db))),
                    None => us(f.server_cpu_us_per_op),
                },
                us(f.client_cpu_us_per_op),
                f.other_cores_max
                    .map_or_else(|| "-".into(), |c| format!("{c:.2}")),
                mib(f.rss_bytes),
            ]
        })
        .collect();
    render(&header, &rows, "", |i| i < 3, &mut out);
    if !checks.is_empty() {
        let _ = writeln!(out, "\ntargets:");
        checks_table(checks, &mut out);
    }
    out
}

/// The targets: result, what, where, measured, goal, how far off, how measured.
fn checks_table(checks: &[Check], out: &mut String) {
    let header = [
        "result",
        "check",
        "target",
        "wire",
        "measured",
        "goal",
        "missed by",
        "how",
    ];
    let rows: Vec<Vec<String>> = checks
        .iter()
        .map(|c| {
            vec![
                if c.met { "pass" } else { "MISS" }.to_string(),
                c.name.clone(),
                c.target.clone(),
                if c.wire.is_empty() {
                    "-".into()
                } else {
                    c.wire.clone()
                },
                c.measured.clone(),
                c.goal.clone(),
                c.missed_by_pct
                    .map_or_else(|| "-".into(), |p| format!("{p:.0}%")),
                c.detail.clone(),
            ]
        })
        .collect();
    let last = header.len() - 1;
    render(&header, &rows, "  ", |i| i < 4 || i == last, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::aggregate;
    use crate::report::tests::sample;
    use crate::targets::Goal;

    #[test]
    fn table_lists_every_figure_and_check() {
        let s = vec![sample("ours", "2025-11-25", Scenario::Get, 1000, 1000.0)];
        let f = aggregate(&s);
        let c = vec![
            Goal::AtLeast(2.0).check("x", "ours", "2025-11-25", 1.0, "1.00×".into(), "z".into()),
            Goal::AtMost(2.0).check("y", "ours", "", 1.0, "1.00×".into(), "w".into()),
        ];
        let t = table(&Machine::detect(), "setup", &f, &c);
        assert!(t.contains("1,000 req/s"), "{t}");
        assert!(t.contains("2025-11-25"), "{t}");
        let row = |first: &str, name: &str| {
            t.lines().any(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                cells.first() == Some(&first) && cells.get(1) == Some(&name)
            })
        };
        assert!(row("MISS", "x"), "{t}");
        assert!(t.contains("50%"), "{t}");
        assert!(row("pass", "y"), "{t}");
    }
}
