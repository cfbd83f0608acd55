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

/// The wires to speak to our servers: `--wires`, else `--wire`, else both with
/// `--compare-rmcp` (so the comparison shows both), else 2025-11-25.
fn resolve_wires(wire: Option<Wire>, wires: &[Wire], compare_rmcp: bool) -> Vec<Wire> {
    let mut out: Vec<Wire> = Vec::new();
    let chosen: Vec<Wire> = match (wires, wire) {
        ([_, ..], _) => wires.to_vec(),
        ([], Some(w)) => vec![w],
        ([], None) if compare_rmcp => vec![Wire::V2025_11_25, Wire::V2026_07_28],
        ([], None) => vec![Wire::V2025_11_25],
    };
    for w in chosen {
        if !out.contains(&w) {
            out.push(w);
        }
    }
    out
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
        let wires = resolve_wires(args.wire, &args.wires, args.compare_rmcp.is_some());

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
        if targets.is_empty() {
            return Err(BenchError::Usage(
                "nothing to measure: give --spawn DATABASES, --url or --compare-rmcp".into(),
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
