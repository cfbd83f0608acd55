//! Running a plan: for every target, size and run, a server (fresh when we start it),
//! C sessions, N tasks created, then the timed figures. Progress goes to stderr.

use std::sync::Arc;
use std::time::Duration;

use crate::args::FigureSel;
use crate::durable::{fsync_figure, retained_figures};
use crate::error::BenchError;
use crate::journal::journal_figures;
use crate::load::{create_tasks, timed, Collect, Op};
use crate::mcp::{McpConn, Wire};
use crate::measure::{open_sessions, progress, sample, session_options};
use crate::plan::{Database, Launch, Plan, Target};
use crate::report::{num, Sample, Scenario};
use crate::server::Server;

/// Runs the plan, returning every sample.
///
/// A comparison server (rmcp, turul) that fails a request is reported on stderr and
/// the run goes on without its remaining figures: a peer's bug should not throw away
/// half an hour of measurements of everyone else.
///
/// # Errors
/// The first failure of one of our servers; samples so far are lost (a partial run is
/// not comparable).
pub async fn run_plan(plan: &Plan) -> Result<Vec<Sample>, BenchError> {
    let mut samples = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    if plan.wants(FigureSel::Fsync) {
        fsync_figure(plan, &mut samples).await?;
    }
    for target in &plan.targets {
        crate::load::watch_database(database_pid(target).await);
        eprintln!(
            "== {} ({} wire), sizes {}",
            target.name,
            target.wire.as_str(),
            target
                .sizes
                .iter()
                .map(|n| num(*n as f64))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let result = match target.launch {
            Launch::External { .. } => run_external(plan, target, &mut samples).await,
            _ => run_fresh(plan, target, &mut samples).await,
        };
        match result {
            Err(e) if matches!(target.launch, Launch::Rmcp { .. } | Launch::Turul { .. }) => {
                eprintln!(
                    "   {} failed, its remaining figures are left out of the table: {e}",
                    target.name
                );
                failed.push(format!("{} ({}): {e}", target.name, target.wire.as_str()));
            }
            other => other?,
        }
    }
    if plan.wants(FigureSel::Retained) {
        retained_figures(plan, &mut samples).await?;
    }
    if plan.wants(FigureSel::Journal) {
        journal_figures(plan, &mut samples).await?;
    }
    for failure in &failed {
        eprintln!("note: a comparison server failed and is partly missing: {failure}");
    }
    Ok(samples)
}

/// The main process of the PostgreSQL server `target` stores its tasks in, when that
/// runs on this machine: its CPU is then counted apart from the server's.
async fn database_pid(target: &Target) -> Option<u32> {
    let url = match &target.launch {
        Launch::Ours {
            database: Database::Url(url),
            ..
        }
        | Launch::Turul {
            store: Database::Url(url),
            ..
        } if url.starts_with("postgres://") || url.starts_with("postgresql://") => url,
        _ => return None,
    };
    local_database_pid(url).await
}

/// The main process of the PostgreSQL server at `url` when it runs on this machine
/// (the parent of its checkpointer; a server elsewhere has no such local process), for
/// [`crate::load::watch_database`]. Says on stderr why its CPU is not counted when the
/// lookup fails.
pub(crate) async fn local_database_pid(url: &str) -> Option<u32> {
    let checkpointer = match crate::pg_stats::checkpointer_pid(url).await {
        Ok(pid) => pid?,
        Err(e) => {
            eprintln!("   (PostgreSQL's CPU is not counted: {e})");
            return None;
        }
    };
    crate::process::parent_pid(checkpointer).filter(|&p| crate::process::tree_cpu_s(p).is_some())
}

/// Every size and run on a fresh server.
async fn run_fresh(plan: &Plan, target: &Target, out: &mut Vec<Sample>) -> Result<(), BenchError> {
    for (i, &n) in target.sizes.iter().enumerate() {
        for rep in 0..plan.repeat {
            let mut server = Server::start(target, &plan.serve_args).await?;
            let result = one_size(plan, target, &server, n, rep, i == 0, out).await;
            let result = result.map_err(|e| server.explain(e));
            server.stop().await;
            result?;
        }
    }
    Ok(())
}

/// One size and run on one server instance: create, memory, get, and at the first
/// size the ping and end-to-end figures.
async fn one_size(
    plan: &Plan,
    target: &Target,
    server: &Server,
    n: usize,
    rep: usize,
    first_size: bool,
    out: &mut Vec<Sample>,
) -> Result<(), BenchError> {
    let opts = session_options(plan, target.wire, true);
    let conns = open_sessions(&server.endpoint, plan.create_connections, &opts).await?;
    let rss0 = server.rss();
    let (mut conns, ids, run) =
        create_tasks(conns, n, &plan.tool, &plan.tool_args, server.pid.as_slice()).await?;
    let rss1 = server.rss();
    // The other figures run on --connections of them.
    conns.truncate(plan.connections);
    let mut s = sample(target, Scenario::Create, n, plan.create_connections, run);
    s.rss_bytes = rss1;
    progress(&target.name, n, rep, plan, &s);
    out.push(s);
    if let (Some(a), Some(b)) = (rss0, rss1) {
        let s = Sample {
            target: target.name.clone(),
            wire: target.wire.as_str().to_string(),
            polls_per_op: None,
            scenario: Scenario::Memory,
            live_tasks: n,
            connections: plan.create_connections,
            value: (b as f64 - a as f64) / n as f64,
            latency: None,
            server_cpu_us: None,
            client_cpu_us: None,
            database_cpu_us: None,
            rss_bytes: Some(b),
            other_cores: None,
        };
        progress(&target.name, n, rep, plan, &s);
        out.push(s);
    }
    let ids = Arc::new(ids);
    let conns = if plan.wants(FigureSel::Get) {
        let (conns, run) = timed(
            conns,
            &Op::Get(ids),
            plan.warmup,
            plan.duration,
            server.pid.as_slice(),
        )
        .await?;
        let s = sample(target, Scenario::Get, n, plan.connections, run);
        progress(&target.name, n, rep, plan, &s);
        out.push(s);
        conns
    } else {
        conns
    };
    if first_size {
        extras(plan, target, server, conns, n, rep, out).await?;
    }
    Ok(())
}

/// The ping ceiling and the end-to-end figures.
async fn extras(
    plan: &Plan,
    target: &Target,
    server: &Server,
    conns: Vec<McpConn>,
    n: usize,
    rep: usize,
    out: &mut Vec<Sample>,
) -> Result<(), BenchError> {
    let mut conns = conns;
    // rmcp 3.9 answers no `ping` on the stateless 2026-07-28 wire: no ceiling there.
    if plan.wants(FigureSel::Ping) && conns.first().is_some_and(McpConn::supports_ping) {
        let (c, run) = timed(
            conns,
            &Op::Ping,
            plan.warmup,
            plan.duration,
            server.pid.as_slice(),
        )
        .await?;
        conns = c;
        let s = sample(target, Scenario::Ping, n, plan.connections, run);
        progress(&target.name, n, rep, plan, &s);
        out.push(s);
    }
    if !plan.wants(FigureSel::E2e) {
        return Ok(());
    }
    drop(conns);
    let tool: Arc<str> = plan.tool.as_str().into();
    let args: Arc<str> = plan.instant_args.as_str().into();
    let mut flows = vec![(
        Scenario::E2eTask,
        Op::TaskFlow {
            tool: tool.clone(),
            args: args.clone(),
            collect: Collect::Poll,
        },
        true,
    )];
    if target.wire == Wire::V2025_11_25 {
        flows.push((
            Scenario::E2eTaskNoGet,
            Op::TaskFlow {
                tool: tool.clone(),
                args: args.clone(),
                collect: Collect::Result,
            },
            true,
        ));
    }
    flows.push((
        Scenario::E2eSync,
        Op::SyncCall {
            tool: tool.clone(),
            args: args.clone(),
        },
        false,
    ));
    flows.push((
        Scenario::E2eSyncOrdinary,
        Op::SyncCall { tool, args },
        false,
    ));
    for (scenario, op, declare_tasks) in flows {
        let mut opts = session_options(plan, target.wire, declare_tasks);
        if scenario == Scenario::E2eSyncOrdinary {
            opts.ordinary_socket = true;
            opts.accept_sse = true;
        }
        let conn = open_sessions(&server.endpoint, 1, &opts).await?;
        let (_, run) = timed(conn, &op, plan.warmup, plan.duration, server.pid.as_slice()).await?;
        let s = sample(target, scenario, n, 1, run);
        progress(&target.name, n, rep, plan, &s);
        out.push(s);
    }
    Ok(())
}

/// An external server: tasks accumulate, so each size tops up the live set once and
/// the timed figures repeat on it.
async fn run_external(
    plan: &Plan,
    target: &Target,
    out: &mut Vec<Sample>,
) -> Result<(), BenchError> {
    let server = Server::start(target, &plan.serve_args).await?;
    let opts = session_options(plan, target.wire, true);
    let mut conns = open_sessions(&server.endpoint, plan.connections, &opts).await?;
    let rss0 = server.rss();
    let mut ids: Vec<String> = Vec::new();
    let mut shared = Arc::new(Vec::new());
    for &n in &target.sizes {
        let more = n.saturating_sub(ids.len());
        if more > 0 {
            let (c, new_ids, run) = create_tasks(
                conns,
                more,
                &plan.tool,
                &plan.tool_args,
                server.pid.as_slice(),
            )
            .await?;
            conns = c;
            ids.extend(new_ids);
            let s = sample(target, Scenario::Create, n, plan.connections, run);
            progress(&target.name, n, 0, plan, &s);
            out.push(s);
            if let (Some(a), Some(b)) = (rss0, server.rss()) {
                out.push(Sample {
                    target: target.name.clone(),
                    wire: target.wire.as_str().to_string(),
                    polls_per_op: None,
                    scenario: Scenario::Memory,
                    live_tasks: n,
                    connections: plan.connections,
                    value: (b as f64 - a as f64) / ids.len() as f64,
                    latency: None,
                    server_cpu_us: None,
                    client_cpu_us: None,
                    database_cpu_us: None,
                    rss_bytes: Some(b),
                    other_cores: None,
                });
            }
            shared = Arc::new(ids.clone());
        }
        if plan.wants(FigureSel::Get) {
            for rep in 0..plan.repeat {
                let (c, run) = timed(
                    conns,
                    &Op::Get(shared.clone()),
                    plan.warmup,
                    plan.duration,
                    server.pid.as_slice(),
                )
                .await?;
                conns = c;
                let s = sample(target, Scenario::Get, n, plan.connections, run);
                progress(&target.name, n, rep, plan, &s);
                out.push(s);
            }
        }
    }
    let n = ids.len();
    for rep in 0..plan.repeat {
        let fresh = open_sessions(&server.endpoint, plan.connections, &opts).await?;
        extras(plan, target, &server, fresh, n, rep, out).await?;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(conns);
    server.stop().await;
    Ok(())
}
