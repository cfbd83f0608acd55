//! The `bench` command line.

use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

use crate::mcp::Wire;

pub mod replicas;
pub mod soak;

/// The tool the load figures call as a task by default (a demo tool that stays
/// working for as long as its arguments say).
pub const DEFAULT_TOOL: &str = "slow_compute";
/// Arguments that keep [`DEFAULT_TOOL`] working for a day: longer than any run.
pub const DEFAULT_TOOL_ARGS: &str = r#"{"seconds":86400,"label":"bench"}"#;

/// Measure an MCP task server on loopback HTTP: task creation rate, `tasks/get` rate
/// and latency as live tasks grow, instant-task overhead against a synchronous call,
/// memory per task, durable-store cost, and the `ping` ceiling of the HTTP + JSON-RPC
/// stack. Prints a table, or JSON lines with --json.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Measure a server already running at this URL (http://HOST:PORT/PATH) instead
    /// of starting ours. Its tasks accumulate, so creations run once per size.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,

    /// Process id of the --url server when it runs on this machine: enables the memory
    /// and server-CPU figures.
    #[arg(long, value_name = "PID", requires = "url")]
    pub server_pid: Option<u32>,

    /// Start our own server (`mcp-tasks serve --demo`) on a free loopback port, fresh
    /// for every size and run, once per database: `memory`, `sqlite` (a temporary file,
    /// WAL with fsync on) or any database URL, passed through as --database.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "DATABASES",
        default_value = "memory,sqlite",
        conflicts_with = "url"
    )]
    pub spawn: Vec<String>,

    /// Also start our server on this PostgreSQL database (passed through as
    /// --database), with the durable sizes.
    #[arg(long, value_name = "URL", conflicts_with = "url")]
    pub postgres_url: Option<String>,

    /// The `mcp-tasks` binary to start [default: this executable].
    #[arg(long, value_name = "PATH")]
    pub server_bin: Option<PathBuf>,

    /// Also start this rmcp task server (bench/rmcp-task-server) and measure it in the
    /// same run, on the extension wire (the only one rmcp speaks), with --rmcp-sizes.
    /// Unless --wire or --wires says otherwise, ours is then measured on both wires.
    #[arg(long, value_name = "PATH", conflicts_with = "url")]
    pub compare_rmcp: Option<PathBuf>,

    /// Also start this turul task server (bench/turul-task-server: turul-mcp-server
    /// with turul-mcp-ext-tasks) and measure it in the same run, on the extension wire
    /// (the only one turul speaks with tasks), once per store: memory (--turul-sizes),
    /// SQLite (a temporary file, --durable-sizes) and, when --postgres-url (or a
    /// PostgreSQL URL in --spawn) names a database, PostgreSQL there (turul's own
    /// table, emptied at every start; --durable-sizes). Unless --wire or --wires says
    /// otherwise, ours is then measured on both wires.
    #[arg(long, value_name = "PATH", conflicts_with = "url")]
    pub compare_turul: Option<PathBuf>,

    /// Task wire to speak to our server or the --url server: 2025-11-25 (`params.task`,
    /// `tasks/get|result`) or 2026-07-28 (`extension`: `io.modelcontextprotocol/tasks`)
    /// [default: 2025-11-25, or both wires with --compare-rmcp or --compare-turul].
    #[arg(long, value_enum, conflicts_with = "wires")]
    pub wire: Option<Wire>,

    /// Several task wires in one run, each a column value of the table: e.g.
    /// `--wires 2025-11-25,2026-07-28`.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "WIRE,…")]
    pub wires: Vec<Wire>,

    /// Live-task counts for the in-memory store (and --url).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "N,…",
        default_value = "1000,10000,30000,1000000"
    )]
    pub sizes: Vec<usize>,

    /// Live-task counts for durable stores (SQLite, PostgreSQL).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "N,…",
        default_value = "1000,10000,30000"
    )]
    pub durable_sizes: Vec<usize>,

    /// Completed-task counts for the retained-tasks figure: our SQLite server's RSS
    /// after that many instant tasks (`--instant-args`) completed and stayed retained.
    /// Measured once per count (not --repeat times), on a fresh server.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "N,…",
        default_value = "1000000"
    )]
    pub completed_sizes: Vec<usize>,

    /// Live-task counts for the rmcp server (its cost per request grows with N).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "N,…",
        default_value = "1000,10000,30000"
    )]
    pub rmcp_sizes: Vec<usize>,

    /// Live-task counts for the turul server on its in-memory store (its durable
    /// stores take --durable-sizes).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "N,…",
        default_value = "1000,10000,30000"
    )]
    pub turul_sizes: Vec<usize>,

    /// Concurrent connections, each with its own session.
    #[arg(long, default_value_t = 16)]
    pub connections: usize,

    /// Connections that create each size's live tasks (the create figure), default
    /// --connections. On the extension wire our server holds every long call for its
    /// --task-after window before it creates the task, so N connections create at most
    /// N per window: a fill of a million tasks wants more calls in flight (e.g. 256).
    /// The sessions are opened before the memory baseline, so they do not count in it.
    #[arg(long, value_name = "N")]
    pub create_connections: Option<usize>,

    /// Measured time of each timed figure (get, ping, end-to-end), after a warm-up of
    /// a fifth of it (at most 1 s).
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    pub duration: Duration,

    /// Runs of every figure; the table shows the median and half the range.
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,

    /// Print JSON lines (machine, figure and check records) instead of the table.
    #[arg(long)]
    pub json: bool,

    /// A seconds-long smoke run: 200 tasks (and 200 completed ones), 300 ms figures,
    /// one run, 4 connections. Overrides the sizes, duration, repeat and connections.
    #[arg(long)]
    pub quick: bool,

    /// The tool whose task calls are measured; it must stay working (not finish)
    /// during the run for the get figures.
    #[arg(long, default_value = DEFAULT_TOOL)]
    pub tool: String,

    /// Arguments for the long-running call (a JSON object).
    #[arg(long, default_value = DEFAULT_TOOL_ARGS)]
    pub tool_args: String,

    /// Arguments for the instant call of the end-to-end figure (a JSON object).
    #[arg(long, default_value = r#"{"seconds":0,"label":"bench"}"#)]
    pub instant_args: String,

    /// Accept `text/event-stream` replies too (some servers require it; ours then
    /// still answers JSON except for tools/call and tasks/result).
    #[arg(long)]
    pub accept_sse: bool,

    /// Which figures to run besides create and memory (which come with every size):
    /// get, e2e, ping, fsync (the disk under SQLite), retained (completed tasks),
    /// journal (journaled steps on the durable stores).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "get,e2e,ping,fsync,retained,journal"
    )]
    pub figures: Vec<FigureSel>,

    /// One more argument for every `mcp-tasks serve` the bench starts (repeat the flag
    /// for several), e.g. `--serve-arg=--some-quota --serve-arg=1000000`.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub serve_arg: Vec<String>,

    /// Instead of the figures, another run: `soak` (PostgreSQL under time) or
    /// `replicas` (one PostgreSQL, several replicas).
    #[command(subcommand)]
    pub command: Option<BenchCommand>,
}

/// The runs `mcp-tasks bench` offers besides its figures.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum BenchCommand {
    /// PostgreSQL under time: tasks created, answered and expired at a steady rate for
    /// a long run, then dead tuples, autovacuum and table sizes (docs/operations.md).
    ///
    /// Starts our server on the PostgreSQL database and, for --duration, creates tasks
    /// at --rate with the demo tool `confirm_delete` (one question each); answers the
    /// question of an --answer share of them and lets the others wait until their --ttl
    /// runs out, so that the expiry sweeper deletes them during the run. Autovacuum is
    /// left as the database has it. Prints the achieved rate, errors, latency, and
    /// PostgreSQL's view of every mcp-tasks table under load and at the end.
    Soak(soak::SoakArgs),
    /// One PostgreSQL database, one, two, three… replicas: creations and `tasks/get`
    /// per second, their latency, and the CPU per operation of each replica and of
    /// PostgreSQL (docs/operations.md).
    ///
    /// For each replica count N: N `mcp-tasks serve --demo` on the database, in an
    /// empty schema of their own, each on its own loopback port, on the 2026-07-28
    /// wire; --connections sessions spread round-robin over them (connection i to
    /// replica i mod N, as a load balancer would); --live tasks of --tool created over
    /// them, then `tasks/get` of random ones for --duration, wherever they were
    /// created (the cross-replica reads are counted). --repeat runs each, fresh.
    Replicas(replicas::ReplicasArgs),
}

/// The optional timed figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FigureSel {
    /// `tasks/get` on random live tasks at every size.
    Get,
    /// Instant task (create + get + result) against a synchronous call, at the
    /// smallest size.
    E2e,
    /// `ping` ceiling, at the smallest size.
    Ping,
    /// 4 KiB write + `fdatasync` latency of the disk under the SQLite file, once per
    /// run when a SQLite server is measured.
    Fsync,
    /// RSS of our SQLite server with --completed-sizes completed tasks retained.
    Retained,
    /// Cost of a journaled step on our durable stores (SQLite, PostgreSQL): the demo
    /// tool `pipeline` with instant steps, one task at a time and `--connections` at once.
    Journal,
}

/// Parses `500ms`, `5s`, `2m` or a bare number of seconds.
///
/// # Errors
/// A message for anything else.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a duration like 500ms, 5s or 2m"))?;
    let secs = match unit {
        "ms" => v / 1000.0,
        "s" => v,
        "m" | "min" => v * 60.0,
        _ => return Err(format!("'{s}': unknown unit '{unit}' (use ms, s or m)")),
    };
    if !(secs.is_finite() && secs > 0.0) {
        return Err(format!("'{s}' must be positive"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("5h").is_err());
        assert!(parse_duration("fast").is_err());
    }
}
