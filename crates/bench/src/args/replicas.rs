//! The `bench replicas` command line.

use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

use super::{parse_duration, DEFAULT_TOOL, DEFAULT_TOOL_ARGS};

/// Several replicas on one PostgreSQL database: for each replica count, start that
/// many `mcp-tasks serve --demo` on the database (in an empty schema of their own),
/// spread --connections over them round-robin as a load balancer would, create --live
/// tasks that stay working, then read them with `tasks/get` for --duration. Prints
/// creations/s and gets/s with their latency, and the CPU per operation of each replica,
/// of all of them, and of PostgreSQL (docs/operations.md).
#[derive(Debug, Clone, Args)]
pub struct ReplicasArgs {
    /// The PostgreSQL database the replicas share (each run gets an empty schema of
    /// its own in it, created and dropped by the bench: the role needs `CREATE` on the
    /// database).
    #[arg(long, value_name = "URL")]
    pub postgres_url: String,

    /// Replica counts to measure, one row each.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "N,…",
        default_value = "1,2,3"
    )]
    pub replicas: Vec<usize>,

    /// Concurrent connections, each with its own session; connection i goes to replica
    /// i mod N.
    #[arg(long, default_value_t = 16)]
    pub connections: usize,

    /// Measured time of the `tasks/get` figure, after a warm-up of a fifth of it (at
    /// most 1 s).
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    pub duration: Duration,

    /// Runs of every replica count, each on fresh replicas and an empty schema; the
    /// table shows the median.
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,

    /// Tasks created through the replicas (the creation figure) and then read (the
    /// get figure); they stay working for the whole run.
    #[arg(long, default_value_t = 10_000)]
    pub live: usize,

    /// The tool whose task calls are created; it must stay working during the run.
    #[arg(long, default_value = DEFAULT_TOOL)]
    pub tool: String,

    /// Arguments for that call (a JSON object).
    #[arg(long, default_value = DEFAULT_TOOL_ARGS)]
    pub tool_args: String,

    /// The `mcp-tasks` binary to start [default: this executable].
    #[arg(long, value_name = "PATH")]
    pub server_bin: Option<PathBuf>,

    /// One more argument for every `mcp-tasks serve` (repeat the flag for several),
    /// e.g. `--serve-arg=--task-after --serve-arg=0s`.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub serve_arg: Vec<String>,

    /// Print the report as one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

impl ReplicasArgs {
    /// Checks what clap cannot, and returns the replica counts in order, once each.
    ///
    /// # Errors
    /// A message naming the flag.
    pub fn check(&self) -> Result<Vec<usize>, String> {
        let mut counts = self.replicas.clone();
        counts.sort_unstable();
        counts.dedup();
        if counts.is_empty() || counts[0] == 0 {
            return Err("--replicas takes counts of at least 1, e.g. 1,2,3".into());
        }
        if self.connections == 0 {
            return Err("--connections must be at least 1".into());
        }
        if let Some(&n) = counts.iter().find(|&&n| n > self.connections) {
            return Err(format!(
                "--replicas {n} is more than --connections {}: some replica would get no connection",
                self.connections
            ));
        }
        if self.repeat == 0 {
            return Err("--repeat must be at least 1".into());
        }
        if self.live == 0 {
            return Err("--live must be at least 1".into());
        }
        if !serde_json::from_str::<serde_json::Value>(&self.tool_args).is_ok_and(|v| v.is_object())
        {
            return Err(format!(
                "--tool-args must be a JSON object, got {}",
                self.tool_args
            ));
        }
        Ok(counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: ReplicasArgs,
    }

    fn parse(extra: &[&str]) -> ReplicasArgs {
        let mut argv = vec!["x", "--postgres-url", "postgres://u@h/db"];
        argv.extend(extra);
        Cli::parse_from(argv).args
    }

    #[test]
    fn defaults_are_one_two_three_replicas() {
        let a = parse(&[]);
        assert_eq!(a.check(), Ok(vec![1, 2, 3]));
        assert_eq!(a.connections, 16);
        assert_eq!(a.live, 10_000);
        assert_eq!(a.duration, Duration::from_secs(5));
    }

    #[test]
    fn counts_are_sorted_once_and_checked() {
        assert_eq!(parse(&["--replicas", "3,1,3"]).check(), Ok(vec![1, 3]));
        assert!(parse(&["--replicas", "0"]).check().is_err());
        assert!(parse(&["--replicas", "4", "--connections", "2"])
            .check()
            .is_err());
        assert!(parse(&["--tool-args", "[]"]).check().is_err());
        assert!(parse(&["--live", "0"]).check().is_err());
    }
}
