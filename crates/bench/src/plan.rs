//! What a run will measure: the servers (targets), their sizes and the load shape,
//! decided once from the flags.

use std::path::PathBuf;
use std::time::Duration;

use crate::args::{BenchArgs, FigureSel};
use crate::error::BenchError;
use crate::http::Endpoint;
use crate::mcp::Wire;
use crate::process::our_server_program;

/// Target name of our server on the in-memory store: the figures the targets apply to.
pub const OURS_MEMORY: &str = "mcp-tasks/memory";
/// Target name of our server on SQLite.
pub const OURS_SQLITE: &str = "mcp-tasks/sqlite";
/// Target name of a --url server.
pub const EXTERNAL: &str = "external";
/// Target name of the rmcp comparison server.
pub const RMCP: &str = "rmcp";
/// Target name of the turul comparison server on its in-memory store.
pub const TURUL_MEMORY: &str = "turul/memory";
/// Target name of the turul comparison server on SQLite.
pub const TURUL_SQLITE: &str = "turul/sqlite";
/// Target name of the turul comparison server on PostgreSQL.
pub const TURUL_POSTGRES: &str = "turul/postgres";
/// Target name of the fsync figure: the disk under our SQLite file.
pub const DISK: &str = "disk";

/// How a target's server comes to exist.
#[derive(Debug, Clone)]
pub enum Launch {
    /// `mcp-tasks serve --demo --database …`, started fresh for every size and run.
    Ours {
        /// The binary.
        program: PathBuf,
        /// The database.
        database: Database,
    },
    /// `rmcp-task-server`, started fresh for every size and run.
    Rmcp {
        /// The binary.
        program: PathBuf,
    },
    /// `turul-task-server --store …`, started fresh for every size and run (a new
    /// SQLite file, or its PostgreSQL table emptied).
    Turul {
        /// The binary.
        program: PathBuf,
        /// Its task store ([`Database::Url`] is a PostgreSQL URL).
        store: Database,
    },
    /// Already running; never restarted.
    External {
        /// Where it listens.
        endpoint: Endpoint,
        /// Its pid, when local.
        pid: Option<u32>,
    },
}

/// A database for our spawned server.
#[derive(Debug, Clone)]
pub enum Database {
    /// `memory:`.
    Memory,
    /// A fresh SQLite file in a temporary directory.
    TempSqlite,
    /// Any URL, passed through.
    Url(String),
}

/// One server to measure.
#[derive(Debug, Clone)]
pub struct Target {
    /// Name in the table (`mcp-tasks/memory`, `rmcp`, …).
    pub name: String,
    /// How it starts.
    pub launch: Launch,
    /// The wire to speak.
    pub wire: Wire,
    /// Live-task counts, ascending.
    pub sizes: Vec<usize>,
}

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The servers, in measuring order.
    pub targets: Vec<Target>,
    /// Connections (sessions) per figure.
    pub connections: usize,
    /// Connections that create the live tasks of each size.
    pub create_connections: usize,
    /// Measured time of timed figures.
    pub duration: Duration,
    /// Warm-up before each timed figure.
    pub warmup: Duration,
    /// Runs per figure.
    pub repeat: usize,
    /// Which optional figures run.
    pub figures: Vec<FigureSel>,
    /// Completed-task counts of the retained figure (SQLite targets).
    pub completed_sizes: Vec<usize>,
    /// Extra arguments for every `mcp-tasks serve`.
    pub serve_args: Vec<String>,
    /// Tool measured.
    pub tool: String,
    /// Arguments that keep the tool working.
    pub tool_args: String,
    /// Arguments that make the tool finish at once.
    pub instant_args: String,
    /// Accept SSE replies from our server.
    pub accept_sse: bool,
    /// JSON lines instead of the table.
    pub json: bool,
}

fn sorted(mut v: Vec<usize>) -> Result<Vec<usize>, BenchError> {
    v.sort_unstable();
    v.dedup();
    if v.is_empty() || v[0] == 0 {
        return Err(BenchError::Usage("sizes must be positive numbers".into()));
    }
    Ok(v)
}

fn check_json_object(flag: &str, text: &str) -> Result<(), BenchError> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        _ => Err(BenchError::Usage(format!(
            "{flag} must be a JSON object, got {text}"
        ))),
    }
}

/// The wires to speak to our servers: `--wires`, else `--wire`, else both when
/// comparing with rmcp or turul (so the comparison shows both), else 2025-11-25.
fn resolve_wires(wire: Option<Wire>, wires: &[Wire], comparing: bool) -> Vec<Wire> {
    let mut out: Vec<Wire> = Vec::new();
    let chosen: Vec<Wire> = match (wires, wire) {
        ([_, ..], _) => wires.to_vec(),
        ([], Some(w)) => vec![w],
        ([], None) if comparing => vec![Wire::V2025_11_25, Wire::V2026_07_28],
        ([], None) => vec![Wire::V2025_11_25],
    };
    for w in chosen {
        if !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// Whether a database URL names PostgreSQL.
fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// The turul targets, all on the extension wire: memory with `sizes`, SQLite (a
/// temporary file) with `durable_sizes`, and PostgreSQL at `postgres` when given, with
/// `durable_sizes`.
fn turul_targets(
    program: &std::path::Path,
    sizes: &[usize],
    durable_sizes: &[usize],
    postgres: Option<&str>,
) -> Vec<Target> {
    let mut stores = vec![
        (TURUL_MEMORY, Database::Memory, sizes),
        (TURUL_SQLITE, Database::TempSqlite, durable_sizes),
    ];
    if let Some(url) = postgres {
        stores.push((
            TURUL_POSTGRES,
            Database::Url(url.to_string()),
            durable_sizes,
        ));
    }
    stores
        .into_iter()
        .map(|(name, store, sizes)| Target {
            name: name.into(),
            launch: Launch::Turul {
                program: program.to_path_buf(),
                store,
            },
            wire: Wire::V2026_07_28,
            sizes: sizes.to_vec(),
        })
        .collect()
}

impl Plan {
    /// Builds the plan from the flags.
    ///
    /// # Errors
    /// [`BenchError::Usage`] for inconsistent flags.
    pub fn from_args(args: BenchArgs) -> Result<Self, BenchError> {
        let mut args = args;
        if args.quick {
            args.sizes = vec![200];
            args.durable_sizes = vec![200];
            args.rmcp_sizes = vec![200];
            args.turul_sizes = vec![200];
            args.completed_sizes = vec![200];
            args.duration = Duration::from_millis(300);
            args.repeat = 1;
            args.connections = args.connections.min(4);
            args.create_connections = args.create_connections.map(|c| c.min(4));
        }
        if args.connections == 0 || args.repeat == 0 || args.create_connections == Some(0) {
            return Err(BenchError::Usage(
                "--connections, --create-connections and --repeat must be at least 1".into(),
            ));
        }
        check_json_object("--tool-args", &args.tool_args)?;
        check_json_object("--instant-args", &args.instant_args)?;
        let sizes = sorted(args.sizes)?;
        let durable_sizes = sorted(args.durable_sizes)?;
        let rmcp_sizes = sorted(args.rmcp_sizes)?;
        let completed_sizes = sorted(args.completed_sizes)?;
        let turul_sizes = sorted(args.turul_sizes)?;
        let comparing = args.compare_rmcp.is_some() || args.compare_turul.is_some();
        let wires = resolve_wires(args.wire, &args.wires, comparing);

        let mut targets = Vec::new();
        if let Some(url) = &args.url {
            targets.push(Target {
                name: EXTERNAL.into(),
                launch: Launch::External {
                    endpoint: Endpoint::parse(url)?,
                    pid: args.server_pid,
                },
                wire: wires[0],
                sizes: sizes.clone(),
            });
        } else {
            let program = our_server_program(args.server_bin.as_deref())?;
            let mut databases: Vec<String> = args.spawn.clone();
            if let Some(pg) = &args.postgres_url {
                databases.push(pg.clone());
            }
            for db in databases {
                let (name, database, sizes) = match db.as_str() {
                    "memory" | "memory:" => {
                        (OURS_MEMORY.to_string(), Database::Memory, sizes.clone())
                    }
                    "sqlite" => (
                        OURS_SQLITE.to_string(),
                        Database::TempSqlite,
                        durable_sizes.clone(),
                    ),
                    url => {
                        let scheme = url.split(':').next().unwrap_or("db");
                        (
                            format!("mcp-tasks/{scheme}"),
                            Database::Url(url.to_string()),
                            durable_sizes.clone(),
                        )
                    }
                };
                for &wire in &wires {
                    targets.push(Target {
                        name: name.clone(),
                        launch: Launch::Ours {
                            program: program.clone(),
                            database: database.clone(),
                        },
                        wire,
                        sizes: sizes.clone(),
                    });
                }
            }
        }
        if let Some(program) = &args.compare_rmcp {
            targets.push(Target {
                name: RMCP.into(),
                launch: Launch::Rmcp {
                    program: program.clone(),
                },
                wire: Wire::V2026_07_28,
                sizes: rmcp_sizes,
            });
        }
        if let Some(program) = &args.compare_turul {
            // turul on PostgreSQL where ours is: --postgres-url, else a PostgreSQL URL
            // among --spawn.
            let postgres = args.postgres_url.as_deref().or_else(|| {
                args.spawn
                    .iter()
                    .map(String::as_str)
                    .find(|d| is_postgres(d))
            });
            targets.extend(turul_targets(
                program,
                &turul_sizes,
                &durable_sizes,
                postgres,
            ));
        }
        if targets.is_empty() {
            return Err(BenchError::Usage(
                "nothing to measure: give --spawn DATABASES, --url, --compare-rmcp or --compare-turul"
                    .into(),
            ));
        }
        let warmup = (args.duration / 5).min(Duration::from_secs(1));
        Ok(Plan {
            targets,
            connections: args.connections,
            create_connections: args.create_connections.unwrap_or(args.connections),
            duration: args.duration,
            warmup,
            repeat: args.repeat,
            figures: args.figures,
            completed_sizes,
            serve_args: args.serve_arg,
            tool: args.tool,
            tool_args: args.tool_args,
            instant_args: args.instant_args,
            accept_sse: args.accept_sse,
            json: args.json,
        })
    }

    /// Whether a timed figure is selected.
    pub fn wants(&self, f: FigureSel) -> bool {
        self.figures.contains(&f)
    }

    /// Whether a target is our server on SQLite (the fsync and retained figures
    /// apply to it).
    pub fn is_sqlite(target: &Target) -> bool {
        match &target.launch {
            Launch::Ours { database, .. } => match database {
                Database::TempSqlite => true,
                Database::Url(u) => u.starts_with("sqlite:"),
                Database::Memory => false,
            },
            _ => false,
        }
    }

    /// One line describing the load shape, for the table's header.
    pub fn describe(&self) -> String {
        format!(
            "{} connections (one session each), timed figures {:.1} s after {:.1} s warm-up, {} run(s) per figure: median, ± half the range; tool {} {}",
            self.connections,
            self.duration.as_secs_f64(),
            self.warmup.as_secs_f64(),
            self.repeat,
            self.tool,
            self.tool_args
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// The bench's flags, parsed as the command line would.
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        bench: BenchArgs,
    }

    fn plan(flags: &[&str]) -> Result<Plan, BenchError> {
        let cli = Cli::try_parse_from(std::iter::once("bench").chain(flags.iter().copied()))
            .map_err(|e| BenchError::Usage(e.to_string()))?;
        Plan::from_args(cli.bench)
    }

    fn names(p: &Plan) -> Vec<(String, &'static str)> {
        p.targets
            .iter()
            .map(|t| (t.name.clone(), t.wire.as_str()))
            .collect()
    }

    fn turul_store(t: &Target) -> String {
        match &t.launch {
            Launch::Turul { program, store } => {
                assert_eq!(program, &PathBuf::from("/x/turul-task-server"));
                format!("{store:?}")
            }
            other => panic!("not a turul target: {other:?}"),
        }
    }

    #[test]
    fn compare_turul_adds_memory_and_sqlite_on_the_extension_wire() {
        let p = plan(&[
            "--spawn",
            "memory",
            "--compare-turul",
            "/x/turul-task-server",
            "--turul-sizes",
            "300,100",
            "--durable-sizes",
            "50",
        ])
        .unwrap();
        let x = Wire::V2026_07_28.as_str();
        let l = Wire::V2025_11_25.as_str();
        assert_eq!(
            names(&p),
            vec![
                (OURS_MEMORY.to_string(), l),
                (OURS_MEMORY.to_string(), x),
                (TURUL_MEMORY.to_string(), x),
                (TURUL_SQLITE.to_string(), x),
            ]
        );
        assert_eq!(p.targets[2].sizes, vec![100, 300]);
        assert_eq!(p.targets[3].sizes, vec![50]);
        assert_eq!(turul_store(&p.targets[2]), "Memory");
        assert_eq!(turul_store(&p.targets[3]), "TempSqlite");
    }

    #[test]
    fn compare_turul_runs_on_postgres_where_ours_does() {
        let url = "postgres://bench@127.0.0.1:5432/bench";
        for flags in [
            vec!["--spawn", "memory", "--postgres-url", url],
            vec!["--spawn", &format!("memory,{url}")],
        ] {
            let mut flags: Vec<&str> = flags.iter().map(|s| &**s).collect();
            flags.extend([
                "--wire",
                "2026-07-28",
                "--compare-turul",
                "/x/turul-task-server",
            ]);
            let p = plan(&flags).unwrap();
            let turul: Vec<&Target> = p
                .targets
                .iter()
                .filter(|t| t.name.starts_with("turul/"))
                .collect();
            assert_eq!(turul.len(), 3, "{:?}", names(&p));
            assert_eq!(turul[2].name, TURUL_POSTGRES);
            assert_eq!(turul_store(turul[2]), format!("Url({url:?})"));
        }
    }

    #[test]
    fn quick_shrinks_turul_sizes_and_bad_turul_flags_are_refused() {
        let p = plan(&[
            "--spawn",
            "memory",
            "--quick",
            "--compare-turul",
            "/x/turul-task-server",
        ])
        .unwrap();
        assert!(p.targets.iter().all(|t| t.sizes == vec![200]));
        assert!(p.targets.iter().any(|t| t.name == TURUL_MEMORY));
        assert!(plan(&["--url", "http://127.0.0.1:1/mcp", "--compare-turul", "/x/t"]).is_err());
        assert!(plan(&["--compare-turul", "/x/t", "--turul-sizes", "0"]).is_err());
    }

    #[test]
    fn wires_default_to_both_when_comparing_with_rmcp() {
        let both = vec![Wire::V2025_11_25, Wire::V2026_07_28];
        assert_eq!(resolve_wires(None, &[], true), both);
        assert_eq!(resolve_wires(None, &[], false), vec![Wire::V2025_11_25]);
        assert_eq!(
            resolve_wires(Some(Wire::V2026_07_28), &[], true),
            vec![Wire::V2026_07_28]
        );
        let twice = [Wire::V2026_07_28, Wire::V2026_07_28, Wire::V2025_11_25];
        assert_eq!(
            resolve_wires(None, &twice, false),
            vec![Wire::V2026_07_28, Wire::V2025_11_25]
        );
    }
}
