//! The figures about durability: the fsync latency of the disk under the SQLite file
//! (the floor of a durable commit), and the memory our SQLite server keeps for tasks
//! that completed and stay retained until their ttl.

use std::time::{Duration, Instant};

use crate::error::BenchError;
use crate::fsync::{measure, sqlite_dir};
use crate::load::create_tasks;
use crate::mcp::{McpConn, Status, Wire};
use crate::measure::{open_sessions, progress, sample, session_options};
use crate::plan::{Database, Launch, Plan, Target, DISK};
use crate::report::{Sample, Scenario};
use crate::server::Server;

/// Sessions per configured connection for creating the completed tasks: durable
/// creations are committed in groups, and more concurrent creations make larger groups.
const COMPLETED_CONNECTION_FACTOR: usize = 4;
/// Completed tasks whose status is read back before the RSS is taken.
const COMPLETION_SAMPLE: usize = 1000;
/// Longest wait for the sampled tasks to be completed.
const COMPLETION_TIMEOUT: Duration = Duration::from_secs(120);

/// Where the first SQLite target keeps its database file.
fn first_sqlite_dir(plan: &Plan) -> Option<std::path::PathBuf> {
    plan.targets.iter().find_map(|t| match &t.launch {
        Launch::Ours {
            database: Database::TempSqlite,
            ..
        } => Some(std::env::temp_dir()),
        Launch::Ours {
            database: Database::Url(u),
            ..
        } => sqlite_dir(u),
        _ => None,
    })
}

/// The fsync figure (`--repeat` runs), when the plan measures a SQLite server.
///
/// # Errors
/// The temporary file cannot be written or synced.
pub async fn fsync_figure(plan: &Plan, out: &mut Vec<Sample>) -> Result<(), BenchError> {
    let Some(dir) = first_sqlite_dir(plan) else {
        return Ok(());
    };
    eprintln!(
        "== {DISK}: 4 KiB write + fdatasync in {} (where the SQLite file lives)",
        dir.display()
    );
    for rep in 0..plan.repeat {
        let run = measure(&dir, plan.warmup, plan.duration).await?;
        let s = Sample {
            target: DISK.into(),
            wire: String::new(),
            scenario: Scenario::Fsync,
            live_tasks: 0,
            connections: 1,
            value: run.rate(),
            latency: run.latencies.summary(),
            polls_per_op: None,
            server_cpu_us: None,
            client_cpu_us: None,
            database_cpu_us: None,
            rss_bytes: None,
            other_cores: None,
        };
        progress(DISK, 0, rep, plan, &s);
        out.push(s);
    }
    Ok(())
}

/// The retained figure of every SQLite target (once per target, whatever its wires),
/// for every `--completed-sizes` count: a fresh server, N instant tasks created on
/// the 2025-11-25 wire (where a task-augmented call always becomes a task), a sample
/// of them read back as completed, then the server's RSS.
///
/// # Errors
/// A server that cannot be started, a failed request, or tasks that never complete.
pub async fn retained_figures(plan: &Plan, out: &mut Vec<Sample>) -> Result<(), BenchError> {
    let mut seen: Vec<&str> = Vec::new();
    for target in plan.targets.iter().filter(|t| Plan::is_sqlite(t)) {
        if seen.contains(&target.name.as_str()) {
            continue;
        }
        seen.push(&target.name);
        let target = Target {
            wire: Wire::V2025_11_25,
            ..target.clone()
        };
        eprintln!(
            "== {} retained completed tasks: {}",
            target.name,
            plan.completed_sizes
                .iter()
                .map(|n| crate::report::num(*n as f64))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for &n in &plan.completed_sizes {
            let mut server = Server::start(&target, &plan.serve_args).await?;
            let result = retained(plan, &target, &server, n).await;
            let result = result.map_err(|e| server.explain(e));
            server.stop().await;
            let s = result?;
            progress(&target.name, n, 0, plan, &s);
            out.push(s);
        }
    }
    Ok(())
}

/// One retained measurement on a fresh server.
async fn retained(
    plan: &Plan,
    target: &Target,
    server: &Server,
    n: usize,
) -> Result<Sample, BenchError> {
    let conns = plan.connections * COMPLETED_CONNECTION_FACTOR;
    let opts = session_options(plan, target.wire, true);
    let sessions = open_sessions(&server.endpoint, conns, &opts).await?;
    let rss0 = server.rss();
    let (mut sessions, ids, run) = create_tasks(
        sessions,
        n,
        &plan.tool,
        &plan.instant_args,
        server.pid.as_slice(),
    )
    .await?;
    if let Some(conn) = sessions.first_mut() {
        wait_completed(conn, &ids).await?;
    }
    drop(sessions);
    let rss1 = server.rss();
    let mut s = sample(target, Scenario::Retained, n, conns, run);
    s.value = match (rss0, rss1) {
        (Some(a), Some(b)) => (b as f64 - a as f64) / n as f64,
        _ => f64::NAN,
    };
    s.rss_bytes = rss1;
    Ok(s)
}

/// Reads up to [`COMPLETION_SAMPLE`] of the tasks, spread over the list, until each is
/// terminal: the RSS is taken once the instant tasks are done, not while they run.
async fn wait_completed(conn: &mut McpConn, ids: &[String]) -> Result<(), BenchError> {
    let step = (ids.len() / COMPLETION_SAMPLE).max(1);
    let deadline = Instant::now() + COMPLETION_TIMEOUT;
    let picks = ids.iter().step_by(step).chain(ids.last());
    for id in picks {
        while conn.get_task(id).await? != Status::Terminal {
            if Instant::now() > deadline {
                return Err(BenchError::Server(format!(
                    "task {id} of the instant tasks was not terminal after {} s",
                    COMPLETION_TIMEOUT.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    Ok(())
}
