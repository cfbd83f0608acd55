//! The project's performance targets, checked against the figures of a run: each
//! check says its goal, the value measured, how far a miss is from the goal and how
//! the value was obtained. Checks are evaluated per task wire.

use std::fmt::Write as _;

use crate::report::{num, Check, Figure, Scenario};
use crate::table::{mib, us};

/// Live tasks at which single-size targets are evaluated (the nearest size below or,
/// failing that, the largest is used when the run has no such size).
pub(crate) const REFERENCE_N: usize = 10_000;
/// One GiB.
const GIB: f64 = 1_073_741_824.0;
/// One MiB.
const MIB: f64 = 1_048_576.0;
/// Resident memory allowed for one million live tasks.
const RSS_1M_LIVE: f64 = 2.5 * GIB;
/// Resident memory allowed for one live task.
const PER_LIVE_TASK: f64 = 2048.0;
/// Resident memory allowed for the durable server with one million completed tasks.
const RSS_1M_COMPLETED: f64 = 256.0 * MIB;

/// Which way a goal points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Goal {
    /// The value must be at least this.
    AtLeast(f64),
    /// The value must be at most this.
    AtMost(f64),
}

impl Goal {
    /// Whether `value` meets the goal.
    pub fn met(self, value: f64) -> bool {
        match self {
            Goal::AtLeast(l) => value >= l,
            Goal::AtMost(l) => value <= l,
        }
    }

    /// How far `value` misses the goal, as a percentage of the goal; `None` when met.
    pub fn missed_by_pct(self, value: f64) -> Option<f64> {
        if self.met(value) {
            return None;
        }
        let (l, off) = match self {
            Goal::AtLeast(l) => (l, l - value),
            Goal::AtMost(l) => (l, value - l),
        };
        Some(if l != 0.0 {
            off / l.abs() * 100.0
        } else {
            100.0
        })
    }

    /// A check record with the goal in words (`goal`), the value and how it was
    /// printed (`measured`), evaluated on `target` over figures of `wire`.
    pub fn check(
        self,
        name: &str,
        target: &str,
        wire: &str,
        value: f64,
        measured: String,
        detail: String,
    ) -> Check {
        Check {
            kind: "check",
            name: name.to_string(),
            target: target.to_string(),
            wire: wire.to_string(),
            goal: String::new(),
            value,
            measured,
            met: self.met(value),
            missed_by_pct: self.missed_by_pct(value),
            detail,
        }
    }
}

/// Sets a check's goal text.
pub(crate) fn goal(mut c: Check, text: &str) -> Check {
    c.goal = text.to_string();
    c
}

/// The targets and wires a run's checks apply to.
#[derive(Debug, Clone, Copy)]
pub struct Roles<'a> {
    /// Our main target: the in-memory store, or a --url server (empty for none).
    pub primary: &'a str,
    /// Our SQLite target.
    pub durable: &'a str,
    /// The rmcp comparison server.
    pub rmcp: &'a str,
    /// The fsync figure's target.
    pub disk: &'a str,
}

/// The figures of one target on one wire (any wire when `wire` is `None`), by size.
pub(crate) fn find<'a>(
    figures: &'a [Figure],
    target: &str,
    wire: Option<&str>,
    scenario: Scenario,
) -> Vec<&'a Figure> {
    let mut v: Vec<&Figure> = figures
        .iter()
        .filter(|f| {
            f.target == target && f.scenario == scenario && wire.is_none_or(|w| f.wire == w)
        })
        .collect();
    v.sort_by_key(|f| f.live_tasks);
    v
}

/// The figure at the reference size, else the largest below it, else the smallest.
pub(crate) fn at_reference<'a>(v: &[&'a Figure]) -> Option<&'a Figure> {
    v.iter()
        .rev()
        .find(|f| f.live_tasks <= REFERENCE_N)
        .or_else(|| v.first())
        .copied()
}

/// Evaluates the project's performance targets on whatever figures exist.
pub fn checks(figures: &[Figure], roles: Roles<'_>) -> Vec<Check> {
    let mut wires: Vec<&str> = Vec::new();
    for f in figures {
        if (f.target == roles.primary || f.target == roles.durable)
            && !f.wire.is_empty()
            && !wires.contains(&f.wire.as_str())
        {
            wires.push(&f.wire);
        }
    }
    let mut out = Vec::new();
    for wire in wires {
        get_checks(figures, roles, wire, &mut out);
        create_checks(figures, roles, wire, &mut out);
        e2e_checks(figures, roles, wire, &mut out);
    }
    memory_checks(figures, roles, &mut out);
    out
}

/// `tasks/get`: flat in N, against rmcp, CPU per get, against the ping ceiling.
fn get_checks(figures: &[Figure], roles: Roles<'_>, wire: &str, out: &mut Vec<Check>) {
    let primary = roles.primary;
    let gets = find(figures, primary, Some(wire), Scenario::Get);
    if let (Some(lo), Some(hi)) = (gets.first(), gets.last()) {
        if hi.live_tasks > lo.live_tasks {
            let r = hi.value.median / lo.value.median;
            let mut detail = format!(
                "{} req/s at {} vs {} req/s at {} live",
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
            out.push(goal(
                Goal::AtLeast(0.8).check(
                    "tasks/get flat in N",
                    primary,
                    wire,
                    r,
                    format!("{r:.2}×"),
                    detail,
                ),
                "rate at largest N ≥ 0.8 × at smallest",
            ));
        }
    }
    let rmcp_gets = find(figures, roles.rmcp, None, Scenario::Get);
    for ours in [primary, roles.durable] {
        let mine = find(figures, ours, Some(wire), Scenario::Get);
        let pairs: Vec<(&Figure, &Figure)> = rmcp_gets
            .iter()
            .filter_map(|r| {
                mine.iter()
                    .find(|g| g.live_tasks == r.live_tasks)
                    .map(|g| (*g, *r))
            })
            .collect();
        let pick = pairs
            .iter()
            .rev()
            .find(|(g, _)| g.live_tasks <= REFERENCE_N)
            .or_else(|| pairs.first());
        if let Some((g, r)) = pick {
            let ratio = g.value.median / r.value.median;
            out.push(goal(
                Goal::AtLeast(20.0).check(
                    "tasks/get vs rmcp",
                    ours,
                    wire,
                    ratio,
                    format!("{ratio:.1}×"),
                    format!(
                        "{} vs {} req/s at {} live (rmcp on {})",
                        num(g.value.median),
                        num(r.value.median),
                        num(g.live_tasks as f64),
                        r.wire
                    ),
                ),
                "≥ 20 × rmcp at 10,000 live",
            ));
        }
    }
    let worst_cpu = gets
        .iter()
        .filter_map(|f| f.server_cpu_us_per_op.map(|c| (c, f.live_tasks)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((cpu, n)) = worst_cpu {
        out.push(goal(
            Goal::AtMost(60.0).check(
                "server CPU per tasks/get",
                primary,
                wire,
                cpu,
                us(Some(cpu)),
                format!("worst over sizes, at {} live", num(n as f64)),
            ),
            "≤ 60 µs",
        ));
    }
    let ping = find(figures, primary, Some(wire), Scenario::Ping);
    if let (Some(ping), Some(g)) = (ping.first(), gets.first()) {
        let r = g.value.median / ping.value.median;
        let mut detail = format!(
            "{} get/s vs {} ping/s at {} live",
            num(g.value.median),
            num(ping.value.median),
            num(g.live_tasks as f64)
        );
        if let (Some(gc), Some(pc)) = (g.server_cpu_us_per_op, ping.server_cpu_us_per_op) {
            let _ = write!(
                detail,
                "; server CPU {gc:.1} vs {pc:.1} µs (CPU-bound ratio {:.2})",
                pc / gc
            );
        }
        out.push(goal(
            Goal::AtLeast(0.8).check(
                "tasks/get vs ping",
                primary,
                wire,
                r,
                format!("{r:.2}×"),
                detail,
            ),
            "≥ 0.8 × ping rate",
        ));
    }
}

/// Creation: durable rate, and the in-memory rate against our own `ping` rate.
fn create_checks(figures: &[Figure], roles: Roles<'_>, wire: &str, out: &mut Vec<Check>) {
    let durable = find(figures, roles.durable, Some(wire), Scenario::Create);
    if let Some(c) = at_reference(&durable) {
        out.push(goal(
            Goal::AtLeast(10_000.0).check(
                "durable create rate",
                roles.durable,
                wire,
                c.value.median,
                format!("{} tasks/s", num(c.value.median)),
                format!(
                    "creating {} tasks, {} connections, p50 {}",
                    num(c.live_tasks as f64),
                    c.connections,
                    us(c.p50_us)
                ),
            ),
            "≥ 10,000 tasks/s",
        ));
    }
    let creates = find(figures, roles.primary, Some(wire), Scenario::Create);
    let ping = find(figures, roles.primary, Some(wire), Scenario::Ping);
    if let (Some(c), Some(p)) = (at_reference(&creates), ping.first()) {
        let r = c.value.median / p.value.median;
        let mut detail = format!(
            "{} tasks/s creating {} vs {} ping/s",
            num(c.value.median),
            num(c.live_tasks as f64),
            num(p.value.median)
        );
        if let (Some(cc), Some(pc)) = (c.server_cpu_us_per_op, p.server_cpu_us_per_op) {
            let _ = write!(
                detail,
                "; server CPU {cc:.1} vs {pc:.1} µs (CPU-bound ratio {:.2})",
                pc / cc
            );
        }
        out.push(goal(
            Goal::AtLeast(0.8).check(
                "create vs ping",
                roles.primary,
                wire,
                r,
                format!("{r:.2}×"),
                detail,
            ),
            "≥ 0.8 × ping rate",
        ));
    }
}

/// Instant task against a sync call, the durable instant task against the disk's
/// fsync, and an ordinary client's sync call.
fn e2e_checks(figures: &[Figure], roles: Roles<'_>, wire: &str, out: &mut Vec<Check>) {
    // The instant-task goal is the extension wire's, where the server may answer a quick
    // call without a task; it holds on every store of ours: memory and SQLite.
    if wire != "2025-11-25" {
        for target in [roles.primary, roles.durable] {
            instant_task_check(figures, target, wire, out);
        }
    }
    let no_get = find(figures, roles.durable, Some(wire), Scenario::E2eTaskNoGet);
    let fsync = find(figures, roles.disk, None, Scenario::Fsync);
    if let (Some(t), Some(f)) = (no_get.first(), fsync.first()) {
        if let (Some(tp), Some(fp)) = (t.p50_us, f.p50_us) {
            let limit = fp + 1000.0;
            out.push(goal(
                Goal::AtMost(limit).check(
                    "durable instant task (create + result)",
                    roles.durable,
                    wire,
                    tp,
                    us(Some(tp)),
                    format!("p50; the disk's fsync p50 is {}", us(Some(fp))),
                ),
                &format!("≤ fsync p50 + 1 ms = {}", us(Some(limit))),
            ));
        }
    }
    let primary = roles.primary;
    if let Some(o) = find(figures, primary, Some(wire), Scenario::E2eSyncOrdinary).first() {
        if let Some(op) = o.p50_us {
            out.push(goal(
                Goal::AtMost(10_000.0).check(
                    "sync call, ordinary client",
                    primary,
                    wire,
                    op,
                    us(Some(op)),
                    "p50 on a reused connection, default socket options, SSE reply".into(),
                ),
                "< 10 ms",
            ));
        }
    }
}

/// An instant task (create + get until done) against a synchronous call of the same
/// tool on `target`: the goal is at most 1.2 × the sync p50.
fn instant_task_check(figures: &[Figure], target: &str, wire: &str, out: &mut Vec<Check>) {
    let task = find(figures, target, Some(wire), Scenario::E2eTask);
    let sync = find(figures, target, Some(wire), Scenario::E2eSync);
    if let (Some(t), Some(s)) = (task.first(), sync.first()) {
        if let (Some(tp), Some(sp)) = (t.p50_us, s.p50_us) {
            let r = tp / sp;
            let mut detail = format!("p50 {} vs {} (tools/call)", us(Some(tp)), us(Some(sp)));
            if let Some(p) = t.polls_per_op {
                let _ = write!(detail, "; {p:.2} polls per task");
            }
            if let (Some(tc), Some(sc)) = (t.server_cpu_us_per_op, s.server_cpu_us_per_op) {
                let _ = write!(detail, "; server CPU {:.2}×", tc / sc);
            }
            out.push(goal(
                Goal::AtMost(1.2).check(
                    "instant task vs sync call",
                    target,
                    wire,
                    r,
                    format!("{r:.2}×"),
                    detail,
                ),
                "≤ 1.2 × p50",
            ));
        }
    }
}

/// Memory: per live task, one million live tasks, and retained completed tasks.
fn memory_checks(figures: &[Figure], roles: Roles<'_>, out: &mut Vec<Check>) {
    // Per live task, on every wire (the wires keep different state per task), at the
    // reference size: at most 2 KB, and less than rmcp's in the same run.
    let mut wires: Vec<&str> = find(figures, roles.primary, None, Scenario::Memory)
        .iter()
        .map(|f| f.wire.as_str())
        .collect();
    wires.dedup();
    wires.sort_unstable();
    wires.dedup();
    for wire in wires {
        let mem = find(figures, roles.primary, Some(wire), Scenario::Memory);
        let Some(m) = at_reference(&mem) else {
            continue;
        };
        out.push(goal(
            Goal::AtMost(PER_LIVE_TASK).check(
                "memory per live task",
                roles.primary,
                wire,
                m.value.median,
                format!("{} B", num(m.value.median)),
                format!("RSS growth over {} live tasks", num(m.live_tasks as f64)),
            ),
            "≤ 2,048 B",
        ));
        let rmcp = find(figures, roles.rmcp, Some(wire), Scenario::Memory);
        if let Some(r) = rmcp.iter().find(|r| r.live_tasks == m.live_tasks) {
            out.push(goal(
                Goal::AtMost(r.value.median).check(
                    "memory per live task vs rmcp",
                    roles.primary,
                    wire,
                    m.value.median,
                    format!("{} B", num(m.value.median)),
                    format!(
                        "rmcp {} B at {} live tasks",
                        num(r.value.median),
                        num(m.live_tasks as f64)
                    ),
                ),
                "below rmcp's",
            ));
        }
    }
    if let Some(wire) = first_wire(figures, roles.primary, Scenario::Memory) {
        let mem = find(figures, roles.primary, Some(&wire), Scenario::Memory);
        if let Some(rss) = mem
            .iter()
            .find(|m| m.live_tasks == 1_000_000)
            .and_then(|m| m.rss_bytes)
        {
            out.push(goal(
                Goal::AtMost(RSS_1M_LIVE).check(
                    "RSS with 1M live tasks",
                    roles.primary,
                    &wire,
                    rss,
                    mib(Some(rss)),
                    "server RSS after creating them".into(),
                ),
                "< 2.5 GiB",
            ));
        }
    }
    let retained = find(figures, roles.durable, None, Scenario::Retained);
    if let Some(r) = retained.last() {
        if let Some(rss) = r.rss_bytes {
            out.push(goal(
                Goal::AtMost(RSS_1M_COMPLETED).check(
                    &format!("RSS with {} completed tasks", num(r.live_tasks as f64)),
                    roles.durable,
                    &r.wire,
                    rss,
                    mib(Some(rss)),
                    format!(
                        "server RSS after they completed ({} B per task of growth)",
                        num(r.value.median)
                    ),
                ),
                "< 256 MiB at 1M",
            ));
        }
    }
}

/// The wire of a target's first figure of a scenario (memory does not depend on the
/// wire, so it is checked once).
fn first_wire(figures: &[Figure], target: &str, scenario: Scenario) -> Option<String> {
    figures
        .iter()
        .find(|f| f.target == target && f.scenario == scenario)
        .map(|f| f.wire.clone())
}

#[cfg(test)]
mod tests;
