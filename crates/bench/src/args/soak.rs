//! The `bench soak` command line.

use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// PostgreSQL under time: start our server on a PostgreSQL database and, for
/// --duration, create tasks at --rate with the demo tool `confirm_delete` (one question
/// each); answer the question of an --answer share of them and let the others wait
/// until their --ttl runs out, so that the expiry sweeper deletes them during the run.
/// Autovacuum is left as the database has it. Every --snapshot-every, read the tables'
/// statistics and the latency of that interval. At the end, print the achieved rate,
/// errors, latency, and what PostgreSQL says of every mcp-tasks table: live and dead
/// tuples, autovacuum runs, table and index sizes, and how they developed over time.
#[derive(Debug, Clone, Args)]
pub struct SoakArgs {
    /// The PostgreSQL database to soak (passed to `mcp-tasks serve --database`); its
    /// current schema holds the tables (`?options=-c%20search_path%3DNAME` picks one).
    #[arg(long, value_name = "URL")]
    pub postgres_url: String,

    /// How long tasks are created (then the last ones are given their --ttl to
    /// expire): `90s`, `2m`, `1h`.
    #[arg(long, value_parser = parse_long_duration, default_value = "1h")]
    pub duration: Duration,

    /// Tasks created per second (an open loop: the schedule does not slow down when
    /// the server does; a server that falls behind shows as a lower achieved rate).
    #[arg(long, default_value_t = 200.0)]
    pub rate: f64,

    /// Retention of every task (the server's --default-ttl): an unanswered question
    /// waits this long, then its task expires and the sweeper deletes it.
    #[arg(long, value_parser = parse_long_duration, default_value = "30s")]
    pub ttl: Duration,

    /// How often, during the creation window, to read every table's statistics and
    /// the latency, rate and errors of the interval since the last reading (and once
    /// more as the window closes): the report's "over time" rows, from which it judges
    /// whether the sizes level off. `10s`, `10m`; at least 1s (PostgreSQL flushes its
    /// counters about once a second).
    #[arg(long, value_parser = parse_long_duration, default_value = "10m")]
    pub snapshot_every: Duration,

    /// Share of tasks whose question is answered (the task then completes); the rest
    /// expire unanswered.
    #[arg(long, default_value_t = 0.5)]
    pub answer: f64,

    /// Connections (sessions) the creations are spread over.
    #[arg(long, default_value_t = 16)]
    pub connections: usize,

    /// The `mcp-tasks` binary to start [default: this executable].
    #[arg(long, value_name = "PATH")]
    pub server_bin: Option<PathBuf>,

    /// One more argument for `mcp-tasks serve` (repeat the flag for several).
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub serve_arg: Vec<String>,

    /// Print the report as one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
}

impl SoakArgs {
    /// Checks the numbers that clap cannot.
    ///
    /// # Errors
    /// A message naming the flag.
    pub fn check(&self) -> Result<(), String> {
        if !(self.rate.is_finite() && self.rate > 0.0) {
            return Err(format!("--rate must be positive, got {}", self.rate));
        }
        if !(0.0..=1.0).contains(&self.answer) {
            return Err(format!(
                "--answer is a share between 0 and 1, got {}",
                self.answer
            ));
        }
        if self.connections == 0 {
            return Err("--connections must be at least 1".into());
        }
        if self.snapshot_every < Duration::from_secs(1) {
            return Err(
                "--snapshot-every must be at least 1s (PostgreSQL's counters move about once a second)"
                    .into(),
            );
        }
        if self.ttl < Duration::from_secs(1) {
            return Err("--ttl must be at least 1s (the server's shortest retention)".into());
        }
        Ok(())
    }
}

/// Parses `500ms`, `90s`, `2m`, `1h` or a bare number of seconds.
///
/// # Errors
/// A message for anything else.
pub fn parse_long_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, "s"),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a duration like 90s, 2m or 1h"))?;
    let secs = match unit {
        "ms" => v / 1000.0,
        "s" => v,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(format!("'{s}': unknown unit '{unit}' (use ms, s, m or h)")),
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
    fn long_durations_parse_with_hours() {
        assert_eq!(parse_long_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_long_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_long_duration("5"), Ok(Duration::from_secs(5)));
        assert!(parse_long_duration("0s").is_err());
        assert!(parse_long_duration("1d").is_err());
    }
}
