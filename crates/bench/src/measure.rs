//! What every measurement shares, whichever module runs it ([`crate::run`](mod@crate::run) for the
//! load figures, [`crate::durable`] for the durability ones): opening the sessions of a
//! load, turning a load run into a sample, and the progress line each sample prints.
//! Kept apart so that those two modules need only this one, not each other.

use crate::error::BenchError;
use crate::http::Endpoint;
use crate::load::LoadRun;
use crate::mcp::{McpConn, SessionOptions, Wire};
use crate::plan::{Plan, Target};
use crate::report::{num, Sample, Scenario};

/// Session options for the plan's load.
pub(crate) fn session_options(plan: &Plan, wire: Wire, declare_tasks: bool) -> SessionOptions {
    SessionOptions {
        wire,
        declare_tasks,
        accept_sse: plan.accept_sse,
        ordinary_socket: false,
    }
}

/// Opens `n` initialized sessions, each warmed up with a few pings.
pub(crate) async fn open_sessions(
    endpoint: &Endpoint,
    n: usize,
    opts: &SessionOptions,
) -> Result<Vec<McpConn>, BenchError> {
    let mut conns = Vec::with_capacity(n);
    for _ in 0..n {
        let mut c = McpConn::open(endpoint, opts).await?;
        if c.supports_ping() {
            for _ in 0..10 {
                c.ping().await?;
            }
        }
        conns.push(c);
    }
    Ok(conns)
}

/// A sample of a load run on a target.
pub(crate) fn sample(
    target: &Target,
    scenario: Scenario,
    n: usize,
    conns: usize,
    run: LoadRun,
) -> Sample {
    let polls_per_op = match scenario {
        Scenario::E2eTask => run.polls_per_op(),
        _ => None,
    };
    Sample {
        target: target.name.clone(),
        wire: target.wire.as_str().to_string(),
        scenario,
        live_tasks: n,
        connections: conns,
        polls_per_op,
        value: run.rate(),
        server_cpu_us: run.server_cpu_us(),
        client_cpu_us: run.client_cpu_us(),
        database_cpu_us: run.database_cpu_us(),
        other_cores: run.other_cores(),
        latency: run.latencies.summary(),
        rss_bytes: None,
    }
}

/// One progress line on stderr.
pub(crate) fn progress(target: &str, n: usize, rep: usize, plan: &Plan, s: &Sample) {
    let lat = s
        .latency
        .map(|l| format!(", p50 {:.0} µs, p99 {:.0} µs", l.p50_us, l.p99_us))
        .unwrap_or_default();
    let cpu = s
        .server_cpu_us
        .map(|c| format!(", server {c:.1} µs CPU/op"))
        .unwrap_or_default();
    let db = s
        .database_cpu_us
        .map(|c| format!(" + PostgreSQL {c:.1} µs"))
        .unwrap_or_default();
    let polls = s
        .polls_per_op
        .map(|p| format!(", {p:.2} polls/op"))
        .unwrap_or_default();
    eprintln!(
        "   {} [{}] N={} run {}/{}: {} {} {}{lat}{cpu}{db}{polls}",
        target,
        if s.wire.is_empty() { "-" } else { &s.wire },
        num(n as f64),
        rep + 1,
        plan.repeat,
        s.scenario.name(),
        num(s.value),
        s.scenario.unit()
    );
}
