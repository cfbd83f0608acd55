//! `mcp-tasks-bench`: a load generator for MCP task servers, run as `mcp-tasks bench`.
//!
//! It measures any MCP task server reachable over loopback HTTP (ours, which it can
//! start itself on any database, the rmcp and turul comparison servers, or any `--url`):
//!
//! | figure | what |
//! |---|---|
//! | create | tasks/s to bring N tasks that stay `working` to life, C connections |
//! | memory | server RSS growth per live task (local servers) |
//! | get | `tasks/get` req/s and p50/p99/p99.9 on random live ids, per N |
//! | ping | the HTTP + JSON-RPC ceiling of the same server |
//! | e2e | an instant task (create + `tasks/get` until done, with its polls) against a synchronous call |
//! | fsync | 4 KiB write + `fdatasync` latency of the disk under the SQLite file |
//! | retained | RSS of our SQLite server with N completed tasks retained |
//! | journal | cost of one journaled step (`pipeline` of instant steps) on SQLite and PostgreSQL |
//!
//! `mcp-tasks bench soak` ([`soak`]) is another run: PostgreSQL under time (tasks
//! created, answered and expired for an hour), then the tables' dead tuples and sizes,
//! at the end and over time (a snapshot every `--snapshot-every`).
//! `mcp-tasks bench replicas` ([`replicas`]) measures one PostgreSQL with one, two,
//! three… replicas of our server: creations and gets per second, and the CPU per
//! operation of each replica and of the database.
//!
//! Our servers are measured on one or both task wires (`--wires`), the wire being a
//! column of the table. Every figure runs `--repeat` times (retained: once) and is
//! reported as median and spread, with the server's CPU time per operation from
//! `/proc/<pid>/stat`.
//!
//! Crate map: [`args`] (flags), [`plan`] (targets and sizes), [`mod@run`] (orchestration),
//! [`server`] (a server under measurement), [`load`] (closed-loop drivers),
//! [`durable`] (fsync and retained figures), [`journal`] (journaled steps), [`measure`] (what both share: sessions,
//! samples, progress lines), [`fsync`] (the disk's fsync loop), [`mcp`]
//! (one session, either task wire), [`pg_stats`] (PostgreSQL's own statistics: the
//! soak's tables, the database's CPU), [`http`] (a minimal keep-alive HTTP/1.1 client),
//! [`process`] (spawned servers, `/proc`), [`stats`] (percentiles, median, spread),
//! [`report`] (figures and checks, JSON), [`table`] (the report for people), [`targets`]
//! (the performance targets checked against the figures),
//! [`machine`] (what the machine is, printed with the figures), [`error`] (why a run
//! could not measure).
#![deny(missing_docs)]

pub mod args;
pub mod durable;
pub mod error;
pub mod fsync;
pub mod http;
pub mod journal;
pub mod load;
pub mod machine;
pub mod mcp;
pub mod measure;
pub mod peer_targets;
pub mod pg_stats;
pub mod plan;
pub mod process;
pub mod replicas;
pub mod report;
pub mod run;
pub mod server;
pub mod soak;
pub mod stats;
pub mod table;
pub mod targets;

pub use args::{BenchArgs, BenchCommand};
pub use error::BenchError;

use std::io::Write;

use crate::plan::{
    Plan, DISK, EXTERNAL, OURS_MEMORY, OURS_SQLITE, RMCP, TURUL_MEMORY, TURUL_POSTGRES,
    TURUL_SQLITE,
};

/// Runs `mcp-tasks bench`: measures, then prints the table (or JSON lines) on stdout.
///
/// # Errors
/// Bad flags, a server that cannot be started or reached, or a failed request.
pub async fn run(args: BenchArgs) -> Result<(), BenchError> {
    match args.command {
        Some(BenchCommand::Soak(soak)) => return soak::run(soak).await,
        Some(BenchCommand::Replicas(replicas)) => return replicas::run(replicas).await,
        None => {}
    }
    let plan = Plan::from_args(args)?;
    let machine = machine::Machine::detect();
    if !machine.optimized_build {
        eprintln!(
            "note: this is a debug build of the bench; build with --release for real figures"
        );
    }
    let samples = run::run_plan(&plan).await?;
    let figures = report::aggregate(&samples);
    // Most goals are about our in-memory store (or the server given by --url); the
    // durable ones about SQLite.
    let primary = plan
        .targets
        .iter()
        .find(|t| t.name == OURS_MEMORY || t.name == EXTERNAL)
        .map(|t| t.name.clone())
        .unwrap_or_default();
    let mut checks = targets::checks(
        &figures,
        targets::Roles {
            primary: &primary,
            durable: OURS_SQLITE,
            rmcp: RMCP,
            disk: DISK,
        },
    );
    // Round five's goals: ours against rmcp and turul, and the durable stores' own.
    let postgres = plan
        .targets
        .iter()
        .find(|t| t.name.starts_with("mcp-tasks/postgres"))
        .map(|t| t.name.clone())
        .unwrap_or_default();
    checks.extend(peer_targets::checks(
        &figures,
        peer_targets::PeerRoles {
            memory: &primary,
            sqlite: OURS_SQLITE,
            postgres: &postgres,
            rmcp: RMCP,
            turul: [TURUL_MEMORY, TURUL_SQLITE, TURUL_POSTGRES],
        },
    ));

    let mut stdout = std::io::stdout().lock();
    let text = if plan.json {
        let mut lines = Vec::new();
        let mut push = |v: Result<String, serde_json::Error>| {
            if let Ok(s) = v {
                lines.push(s);
            }
        };
        push(serde_json::to_string(&machine));
        for f in &figures {
            push(serde_json::to_string(f));
        }
        for c in &checks {
            push(serde_json::to_string(c));
        }
        lines.join("\n") + "\n"
    } else {
        table::table(&machine, &plan.describe(), &figures, &checks)
    };
    stdout
        .write_all(text.as_bytes())
        .map_err(|e| BenchError::Io("writing the report".into(), e))?;
    Ok(())
}
