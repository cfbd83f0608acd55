//! The journal figures: what one journaled step costs (`ctx.step`, the output recorded
//! in the store, fenced by the lease). The demo tool `pipeline` with instant steps
//! (`step_seconds: 0`) is run as a task, so its time is nearly all journal writes. It
//! starts its first step once the task is committed (`journal_every_step`): instant
//! steps would otherwise all end before the task exists and be written with its
//! creation, which is cheaper but not what a step costs in a long task. One
//! task at a time on one connection (the latency of a step), then `--connections`
//! tasks at once (their writes share the store's group commits). Figures are per step:
//! steps per second, latency and server CPU divided by the steps of a task.
//!
//! Measured on each of our servers once (the 2025-11-25 wire, where `tasks/result`
//! waits for the end without polls), the in-memory store giving the engine's share
//! without a disk.

use std::sync::Arc;
use std::time::Duration;

use crate::error::BenchError;
use crate::load::{timed, Collect, Op};
use crate::mcp::Wire;
use crate::measure::{open_sessions, progress, sample, session_options};
use crate::plan::{Launch, Plan, Target};
use crate::report::{Sample, Scenario};
use crate::server::Server;
use crate::stats::LatencySummary;

/// Journaled steps per `pipeline` task: the issue's "tool of 100 short steps", enough
/// that creating and collecting the task is a small share of its time, few enough that
/// tasks end well within the window.
pub const JOURNAL_STEPS: usize = 100;

/// The shortest measured window: a task takes many journal writes, so the windows of
/// `--quick` (300 ms) could end before the first task of a connection does.
const MIN_WINDOW: Duration = Duration::from_secs(3);

/// The window of a second try when no pipeline ended within the first one.
const LONG_WINDOW: Duration = Duration::from_secs(20);

/// The journal figures of every target that is our server (once per target name).
///
/// # Errors
/// A server that cannot be started or a failed request (a server without the
/// `pipeline` demo tool, for one).
pub async fn journal_figures(plan: &Plan, out: &mut Vec<Sample>) -> Result<(), BenchError> {
    let mut seen: Vec<&str> = Vec::new();
    for target in &plan.targets {
        if !matches!(target.launch, Launch::Ours { .. }) || seen.contains(&target.name.as_str()) {
            continue;
        }
        seen.push(&target.name);
        let target = Target {
            wire: Wire::V2025_11_25,
            ..target.clone()
        };
        eprintln!(
            "== {} journal: pipeline of {JOURNAL_STEPS} instant steps",
            target.name
        );
        for rep in 0..plan.repeat {
            let mut server = Server::start(&target, &plan.serve_args).await?;
            let result = measure(plan, &target, &server, rep, out).await;
            let result = result.map_err(|e| server.explain(e));
            server.stop().await;
            result?;
        }
    }
    Ok(())
}

/// Both journal figures on one server.
async fn measure(
    plan: &Plan,
    target: &Target,
    server: &Server,
    rep: usize,
    out: &mut Vec<Sample>,
) -> Result<(), BenchError> {
    let op = Op::TaskFlow {
        tool: Arc::from("pipeline"),
        args: Arc::from(
            format!(r#"{{"steps":{JOURNAL_STEPS},"step_seconds":0,"journal_every_step":true}}"#)
                .as_str(),
        ),
        collect: Collect::Result,
    };
    let opts = session_options(plan, target.wire, true);
    for (scenario, conns) in [
        (Scenario::Journal, 1),
        (Scenario::JournalConcurrent, plan.connections),
    ] {
        let mut window = plan.duration.max(MIN_WINDOW);
        let sessions = open_sessions(&server.endpoint, conns, &opts).await?;
        let (_, mut run) = timed(sessions, &op, plan.warmup, window, server.pid.as_slice()).await?;
        if run.ops == 0 {
            // A machine so busy that no pipeline ended in the window (it happens under a
            // parallel build): once more, with a window long enough for several.
            window = LONG_WINDOW;
            eprintln!(
                "   no pipeline ended within the window; measuring again over {} s",
                window.as_secs()
            );
            let sessions = open_sessions(&server.endpoint, conns, &opts).await?;
            run = timed(sessions, &op, plan.warmup, window, server.pid.as_slice())
                .await?
                .1;
        }
        if run.ops == 0 {
            return Err(BenchError::Server(format!(
                "no pipeline of {JOURNAL_STEPS} steps ended within {} s on {} connection(s)",
                window.as_secs_f64(),
                conns
            )));
        }
        let mut s = per_step(sample(target, scenario, JOURNAL_STEPS, conns, run));
        s.rss_bytes = server.rss();
        progress(&target.name, JOURNAL_STEPS, rep, plan, &s);
        out.push(s);
    }
    Ok(())
}

/// A sample of whole tasks turned into one of steps.
fn per_step(mut s: Sample) -> Sample {
    let k = JOURNAL_STEPS as f64;
    s.value *= k;
    s.latency = s.latency.map(|l| LatencySummary {
        p50_us: l.p50_us / k,
        p99_us: l.p99_us / k,
        p999_us: l.p999_us / k,
    });
    s.server_cpu_us = s.server_cpu_us.map(|c| c / k);
    s.client_cpu_us = s.client_cpu_us.map(|c| c / k);
    s.database_cpu_us = s.database_cpu_us.map(|c| c / k);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_sample_becomes_a_step_sample() {
        let s = Sample {
            target: "t".into(),
            wire: "2025-11-25".into(),
            scenario: Scenario::Journal,
            live_tasks: JOURNAL_STEPS,
            connections: 1,
            value: 2.0,
            latency: Some(LatencySummary {
                p50_us: 100_000.0,
                p99_us: 200_000.0,
                p999_us: 300_000.0,
            }),
            polls_per_op: None,
            server_cpu_us: Some(50_000.0),
            client_cpu_us: None,
            database_cpu_us: None,
            rss_bytes: None,
            other_cores: None,
        };
        let s = per_step(s);
        let k = JOURNAL_STEPS as f64;
        assert_eq!(s.value, 2.0 * k);
        assert_eq!(s.latency.map(|l| l.p50_us), Some(100_000.0 / k));
        assert_eq!(s.server_cpu_us, Some(50_000.0 / k));
    }
}
