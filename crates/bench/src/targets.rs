//! The project's performance targets, checked against the figures of a run: each
//! check says its goal, the value measured and how it was obtained.

use std::fmt::Write as _;

use crate::report::{num, Check, Figure, Scenario};

/// Figure lookup for the checks.
fn find<'a>(figures: &'a [Figure], target: &str, scenario: Scenario) -> Vec<&'a Figure> {
    let mut v: Vec<&Figure> = figures
        .iter()
        .filter(|f| f.target == target && f.scenario == scenario)
        .collect();
    v.sort_by_key(|f| f.live_tasks);
    v
}

/// A check record.
pub(crate) fn check(name: &str, goal: &str, value: f64, met: bool, detail: String) -> Check {
    Check {
        kind: "check",
        name: name.to_string(),
        goal: goal.into(),
        value,
        met,
        detail,
    }
}

/// Evaluates the project's performance targets on whatever figures exist. `primary`
/// is our main target (the in-memory store, or a --url server; empty for none),
/// `durable` our SQLite one, `rmcp` the comparison server. Each check names the
/// target it was evaluated on.
pub fn checks(figures: &[Figure], primary: &str, durable: &str, rmcp: &str) -> Vec<Check> {
    let mut out = Vec::new();
    get_checks(figures, primary, rmcp, &mut out);
    store_checks(figures, primary, durable, &mut out);
    e2e_checks(figures, primary, &mut out);
    out
}

/// A check's name with the target it was evaluated on.
fn on(name: &str, target: &str) -> String {
    format!("{name} ({target})")
}

/// `tasks/get`: flat in N, against rmcp, CPU per get, against the ping ceiling.
fn get_checks(figures: &[Figure], primary: &str, rmcp: &str, out: &mut Vec<Check>) {
    let gets = find(figures, primary, Scenario::Get);
    if let (Some(lo), Some(hi)) = (gets.first(), gets.last()) {
        if hi.live_tasks > lo.live_tasks {
            let r = hi.value.median / lo.value.median;
            let mut detail = format!(
                "{} req/s at {} vs {} req/s at {}",
                num(hi.value.median),
                num(hi.live_tasks as f64),
                num(lo.value.median),
                num(lo.live_tasks as f64)
            );
            if let (Some(h), Some(l)) = (hi.server_cpu_us_per_op, lo.server_cpu_us_per_op) {
                let _ = write!(
                    detail,
                    "; server CPU per get {h:.1} vs {l:.1} µs (rate ratio if CPU-bound {:.2})",
                    l / h
                );
            }
            out.push(check(
                &on("tasks/get flat in N", primary),
                "rate at largest N ≥ 0.8 × rate at smallest N",
                r,
                r >= 0.8,
                detail,
            ));
        }
    }
    let rmcp_gets = find(figures, rmcp, Scenario::Get);
    let common = rmcp_gets.iter().rev().find_map(|r| {
        gets.iter()
            .find(|g| g.live_tasks == r.live_tasks)
            .map(|g| (*g, *r))
    });
    if let Some((g, r)) = common {
        let ratio = g.value.median / r.value.median;
        out.push(check(
            &on("tasks/get vs rmcp", primary),
            "≥ 5 × rmcp's rate at 10,000 live tasks",
            ratio,
            ratio >= 5.0,
            format!(
                "{} vs {} req/s at {} live tasks",
                num(g.value.median),
                num(r.value.median),
                num(g.live_tasks as f64)
            ),
        ));
    }
    let worst_cpu = gets
        .iter()
        .filter_map(|f| f.server_cpu_us_per_op.map(|c| (c, f.live_tasks)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((cpu, n)) = worst_cpu {
        out.push(check(
            &on("server CPU per tasks/get", primary),
            "≤ 60 µs",
            cpu,
            cpu <= 60.0,
            format!("worst over sizes, at {} live tasks", num(n as f64)),
        ));
    }
    if let (Some(ping), Some(g)) = (find(figures, primary, Scenario::Ping).first(), gets.first()) {
        let r = g.value.median / ping.value.median;
        let mut detail = format!(
            "{} get/s vs {} ping/s at {} live tasks",
            num(g.value.median),
            num(ping.value.median),
            num(g.live_tasks as f64)
        );
        if let (Some(gc), Some(pc)) = (g.server_cpu_us_per_op, ping.server_cpu_us_per_op) {
            let _ = write!(
                detail,
                "; server CPU per request {gc:.1} vs {pc:.1} µs (rate ratio if CPU-bound {:.2})",
                pc / gc
            );
        }
        out.push(check(
            &on("tasks/get vs ping ceiling", primary),
            "≥ 0.8 × ping rate",
            r,
            r >= 0.8,
            detail,
        ));
    }
}

/// Creation rates (durable and in memory) and memory per task.
fn store_checks(figures: &[Figure], primary: &str, durable: &str, out: &mut Vec<Check>) {
    if let Some(c) = find(figures, durable, Scenario::Create).last() {
        out.push(check(
            &on("durable create rate", durable),
            "≥ 5,000 tasks/s",
            c.value.median,
            c.value.median >= 5000.0,
            format!("creating {} tasks", num(c.live_tasks as f64)),
        ));
    }
    if let Some(c) = find(figures, primary, Scenario::Create).last() {
        out.push(check(
            &on("create rate", primary),
            "≥ 50,000 tasks/s",
            c.value.median,
            c.value.median >= 50_000.0,
            format!("creating {} tasks", num(c.live_tasks as f64)),
        ));
    }
    let mem = find(figures, primary, Scenario::Memory);
    if let Some(m) = mem.last() {
        out.push(check(
            &on("memory per live task", primary),
            "≤ 1,024 bytes",
            m.value.median,
            m.value.median <= 1024.0,
            format!("RSS growth over {} live tasks", num(m.live_tasks as f64)),
        ));
    }
    if let Some(m) = mem.iter().find(|m| m.live_tasks == 1_000_000) {
        if let Some(rss) = m.rss_bytes {
            out.push(check(
                &on("RSS with 1M live tasks", primary),
                "< 1 GiB",
                rss,
                rss < (1u64 << 30) as f64,
                format!("{:.0} MiB", rss / 1048576.0),
            ));
        }
    }
}

/// Instant task against a sync call, and an ordinary client's sync call.
fn e2e_checks(figures: &[Figure], primary: &str, out: &mut Vec<Check>) {
    let task = find(figures, primary, Scenario::E2eTask);
    let sync = find(figures, primary, Scenario::E2eSync);
    let no_get = find(figures, primary, Scenario::E2eTaskNoGet);
    if let (Some(t), Some(s)) = (task.first(), sync.first()) {
        if let (Some(tp), Some(sp)) = (t.p50_us, s.p50_us) {
            let r = tp / sp;
            let mut detail =
                format!("p50 {tp:.0} µs (create + get + result) vs {sp:.0} µs (tools/call)");
            if let Some(np) = no_get.first().and_then(|f| f.p50_us) {
                let _ = write!(detail, "; create + result alone {:.2}×", np / sp);
            }
            if let (Some(tc), Some(sc)) = (t.server_cpu_us_per_op, s.server_cpu_us_per_op) {
                let _ = write!(detail, "; server CPU {:.2}×", tc / sc);
            }
            out.push(check(
                &on("instant task vs sync call", primary),
                "≤ 1.5 × latency",
                r,
                r <= 1.5,
                detail,
            ));
        }
    }
    if let Some(o) = find(figures, primary, Scenario::E2eSyncOrdinary).first() {
        if let Some(op) = o.p50_us {
            out.push(check(
                &on("sync call, ordinary client on a reused connection", primary),
                "< 10 ms",
                op,
                op < 10_000.0,
                format!("p50 {op:.0} µs (default socket options, SSE reply)"),
            ));
        }
    }
}
