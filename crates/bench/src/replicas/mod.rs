//! `mcp-tasks bench replicas`: one PostgreSQL database, several replicas of our server
//! on it (docs/replicas.md), and what each replica count does: creations and
//! `tasks/get` per second with their latency, and the CPU per operation of every
//! replica and of PostgreSQL.
//!
//! Every run (each replica count, `--repeat` times) starts from nothing: an empty
//! schema of its own, created by the bench over its own connection and named in the
//! replicas' URL (`options=-c search_path=…`), dropped after the run. That is the same
//! database, so the same PostgreSQL processes, settings and caches, with no data of an
//! earlier run (a `TRUNCATE` would leave the tables' dead tuples and grown files to the
//! next run, and would need the store's table list). The replicas start one after
//! another on the run's schema (the first migrates it), each on its own loopback port.
//!
//! The load reuses [`crate::load`]: the sessions are opened round-robin (connection i
//! to replica i mod N), then [`create_live`] creates `--live` tasks over all of them
//! (the creation figure, as the main bench's create figure) and [`timed`] reads random
//! ones with [`Op::GetAcross`] (the get figure), whichever replica created them, as a
//! load balancer sends them; the reads that reach another replica than the creator are
//! counted. The CPU window counts every replica's pid apart, and PostgreSQL's as the
//! main bench does ([`crate::load::watch_database`]).
//!
//! Files: [`crate::args::replicas`] (flags), this file (the runs), [`report`] (what is
//! printed).

pub mod report;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::args::replicas::ReplicasArgs;
use crate::error::BenchError;
use crate::load::{create_live, timed, watch_database, Op};
use crate::machine::Machine;
use crate::mcp::{McpConn, SessionOptions, Wire};
use crate::pg_stats::{create_schema, drop_schema, with_search_path};
use crate::plan::{Database, Launch, Target};
use crate::process::our_server_program;
use crate::run::local_database_pid;
use crate::server::Server;
use report::{Phase, ReplicasReport, ReplicasRow, RunFigures};

/// Runs every replica count and prints the report on stdout.
///
/// # Errors
/// Bad flags, a schema that cannot be created, a replica that cannot start, or a
/// failed request.
pub async fn run(args: ReplicasArgs) -> Result<(), BenchError> {
    let counts = args.check().map_err(BenchError::Usage)?;
    let machine = Machine::detect();
    if !machine.optimized_build {
        eprintln!(
            "note: this is a debug build of the bench; build with --release for real figures"
        );
    }
    let program = our_server_program(args.server_bin.as_deref())?;
    let postgres = local_database_pid(&args.postgres_url).await;
    watch_database(postgres);
    let mut rows = Vec::with_capacity(counts.len());
    for &n in &counts {
        eprintln!(
            "== {n} replica(s), {} connections, {} live tasks",
            args.connections, args.live
        );
        let mut runs = Vec::with_capacity(args.repeat);
        for rep in 0..args.repeat {
            let figures = one_run(&args, &program, n, rep).await?;
            eprintln!(
                "   run {}/{}: {}; {}, {} cross-replica",
                rep + 1,
                args.repeat,
                figures.create.line("creations/s"),
                figures.get.line("gets/s"),
                figures.get.cross_replica
            );
            runs.push(figures);
        }
        rows.push(ReplicasRow::of(n, &runs));
    }
    let report = ReplicasReport {
        kind: "replicas",
        machine,
        connections: args.connections,
        live_tasks: args.live,
        tool: args.tool.clone(),
        get_duration_s: args.duration.as_secs_f64(),
        repeat: args.repeat,
        postgres_cpu_counted: postgres.is_some(),
        rows,
    };
    let text = if args.json {
        serde_json::to_string(&report)
            .map(|s| s + "\n")
            .map_err(|e| BenchError::Server(format!("cannot encode the report: {e}")))?
    } else {
        report.table()
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| BenchError::Io("writing the report".into(), e))
}

/// One run of `n` replicas in a schema of its own, dropped afterwards (also after a
/// failed run; a schema that cannot be dropped is named on stderr).
async fn one_run(
    args: &ReplicasArgs,
    program: &Path,
    n: usize,
    rep: usize,
) -> Result<RunFigures, BenchError> {
    let schema = format!("mcp_tasks_bench_replicas_{}_{n}_{rep}", std::process::id());
    create_schema(&args.postgres_url, &schema).await?;
    let url = with_search_path(&args.postgres_url, &schema);
    let result = on_replicas(args, program, &url, n).await;
    if let Err(e) = drop_schema(&args.postgres_url, &schema).await {
        eprintln!("note: the run's schema {schema} is left in the database: {e}");
    }
    result
}

/// Starts `n` replicas on `url`, measures, stops them.
async fn on_replicas(
    args: &ReplicasArgs,
    program: &Path,
    url: &str,
    n: usize,
) -> Result<RunFigures, BenchError> {
    let target = Target {
        name: "mcp-tasks/postgres".into(),
        launch: Launch::Ours {
            program: program.to_path_buf(),
            database: Database::Url(url.to_string()),
        },
        wire: Wire::V2026_07_28,
        sizes: Vec::new(),
    };
    // One after another: the first creates the schema's tables, the others find them
    // (each would wait on the migration lock anyway). A replica that fails to start
    // stops the ones before it (they are killed when dropped).
    let mut replicas = Vec::with_capacity(n);
    for _ in 0..n {
        replicas.push(Server::start(&target, &args.serve_arg).await?);
    }
    let result = measure(args, &replicas).await;
    let result = result.map_err(|e| replicas.iter_mut().fold(e, |e, r| r.explain(e)));
    for r in replicas {
        r.stop().await;
    }
    result
}

/// The creations, then the gets, over sessions spread round-robin on `replicas`.
async fn measure(args: &ReplicasArgs, replicas: &[Server]) -> Result<RunFigures, BenchError> {
    let opts = SessionOptions {
        wire: Wire::V2026_07_28,
        declare_tasks: true,
        accept_sse: false,
        ordinary_socket: false,
    };
    let mut conns = Vec::with_capacity(args.connections);
    for i in 0..args.connections {
        let replica = &replicas[i % replicas.len()];
        let mut conn = McpConn::open(&replica.endpoint, &opts).await?;
        if conn.supports_ping() {
            for _ in 0..10 {
                conn.ping().await?;
            }
        }
        conns.push(conn);
    }
    let pids: Vec<u32> = replicas.iter().filter_map(|r| r.pid).collect();
    let (conns, live, create) =
        create_live(conns, args.live, &args.tool, &args.tool_args, &pids).await?;
    let warmup = (args.duration / 5).min(Duration::from_secs(1));
    let (_, get) = timed(
        conns,
        &Op::GetAcross(Arc::new(live)),
        warmup,
        args.duration,
        &pids,
    )
    .await?;
    Ok(RunFigures {
        create: Phase::of(create),
        get: Phase::of(get),
    })
}
