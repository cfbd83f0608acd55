//! `mcp-tasks bench soak`: PostgreSQL under time. Our server runs on a PostgreSQL
//! database while tasks are created at a fixed rate for a long time (an hour by
//! default): each a `confirm_delete` that asks one question; some are answered and
//! complete, the others wait until their ttl runs out and the expiry sweeper deletes
//! them, all during the run, so the tables see inserts, updates and deletes at a steady
//! pace with autovacuum at the database's settings. Every `--snapshot-every` (and as
//! the creation window closes) PostgreSQL's statistics are read, and the interval's
//! latency, rate and errors go with them. At the end: achieved rate, errors, latency,
//! PostgreSQL's dead tuples, autovacuum runs and sizes of every table, and the same
//! over time with a verdict on whether the sizes level off.
//!
//! Files: [`crate::args::soak`] (flags), this file (the load: an open-loop schedule over
//! `--connections` sessions), [`intervals`] (timed requests split by interval),
//! [`over_time`] (the readings, snapshots and the size verdict), [`report`] (what is
//! printed).

pub mod intervals;
pub mod over_time;
pub mod report;

use std::collections::VecDeque;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

use crate::args::soak::SoakArgs;
use crate::error::BenchError;
use crate::http::Endpoint;
use crate::mcp::{Created, McpConn, SessionOptions, Wire};
use crate::pg_stats::{table_stats, TableStats};
use crate::plan::{Database, Launch, Target};
use crate::process::{our_server_program, usage};
use crate::server::Server;
use intervals::{latencies, snapshot_times, Finished, Timed};
use over_time::{read_over_time, size_verdict, Reading, Snapshot};
use report::SoakReport;

/// After its ttl, how long an expired task may still be readable before it counts as
/// not swept: the sweeper runs every second, and a loaded store may lag a little.
const SWEEP_GRACE: Duration = Duration::from_secs(15);
/// Time between two reads of a task that outlived its ttl.
const RECHECK: Duration = Duration::from_millis(500);
/// Most `tasks/get` polls while waiting for a question to appear or an answered task
/// to complete, 10 ms apart: 10 s.
const MAX_POLLS: u32 = 1000;
/// The client capability `confirm_delete` needs: it asks its question by elicitation.
const ELICITATION: &str = r#""elicitation":{}"#;
/// Error messages kept for the report.
const KEPT_ERRORS: usize = 5;
/// How long the end waits for PostgreSQL's statistics to count the run's deletes (the
/// server has stopped by then, and its backends flush their counters as they exit).
const STATS_SETTLE: Duration = Duration::from_secs(15);

/// Runs the soak and prints its report on stdout.
///
/// # Errors
/// Bad flags, a server that cannot start, or statistics that cannot be read.
pub async fn run(args: SoakArgs) -> Result<(), BenchError> {
    args.check().map_err(BenchError::Usage)?;
    let report = soak(&args).await?;
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

/// Starts the server, runs the load, reads the statistics.
async fn soak(args: &SoakArgs) -> Result<SoakReport, BenchError> {
    let target = Target {
        name: "mcp-tasks/postgres".into(),
        launch: Launch::Ours {
            program: our_server_program(args.server_bin.as_deref())?,
            database: Database::Url(args.postgres_url.clone()),
        },
        wire: Wire::V2026_07_28,
        sizes: Vec::new(),
    };
    let mut extra = vec![
        "--default-ttl".to_string(),
        format!("{}ms", args.ttl.as_millis()),
    ];
    extra.extend(args.serve_arg.iter().cloned());
    let mut server = Server::start(&target, &extra).await?;
    eprintln!(
        "soak: {} tasks/s for {:.0} s on PostgreSQL, ttl {:.0} s, {:.0}% answered, {} connections, snapshots every {:.0} s",
        args.rate,
        args.duration.as_secs_f64(),
        args.ttl.as_secs_f64(),
        args.answer * 100.0,
        args.connections,
        args.snapshot_every.as_secs_f64()
    );
    let cpu0 = server.pid.and_then(usage).map(|u| u.cpu_s);
    let result = load(args, &server.endpoint).await;
    let cpu1 = server.pid.and_then(usage).map(|u| u.cpu_s);
    let rss = server.rss();
    let result = result.map_err(|e| server.explain(e));
    server.stop().await;
    let Ran {
        mut tally,
        readings,
    } = result?;
    let tables = settled_stats(&args.postgres_url, tally.swept).await?;
    // A failed reading is an error of its interval (the run went on without it).
    for r in &readings {
        if let Err(e) = &r.tables {
            tally.error_at(r.at, e.clone());
        }
    }
    // The tables under load: the last reading, as the creation window closed, while
    // about rate x ttl tasks were live and the churn was at its steadiest.
    let tables_under_load = readings
        .last()
        .and_then(|r| r.tables.as_ref().ok())
        .cloned()
        .unwrap_or_default();
    let ends: Vec<Duration> = readings.iter().map(|r| r.at).collect();
    let snapshots = Snapshot::pair(readings, intervals::intervals(&tally.timed, &ends));
    let size_verdict = size_verdict(&snapshots, args.duration);
    let created = tally.created;
    Ok(SoakReport {
        kind: "soak",
        duration_s: args.duration.as_secs_f64(),
        target_rate: args.rate,
        achieved_rate: created as f64 / args.duration.as_secs_f64(),
        ttl_s: args.ttl.as_secs_f64(),
        created,
        answered: tally.answered,
        left_to_expire: tally.left,
        swept: tally.swept,
        expiry_late: tally.late,
        unchecked: tally.left.saturating_sub(tally.swept + tally.late),
        errors: tally.errors,
        first_errors: tally.first_errors,
        create_latency: latencies(&tally.timed.creates).summary(),
        answer_latency: latencies(&tally.timed.answers).summary(),
        server_cpu_us_per_task: match (cpu0, cpu1) {
            (Some(a), Some(b)) if created > 0 => Some((b - a) * 1e6 / created as f64),
            _ => None,
        },
        server_rss_bytes: rss,
        tables_under_load,
        tables,
        snapshot_every_s: args.snapshot_every.as_secs_f64(),
        snapshots,
        size_verdict,
    })
}

/// The table statistics, once they count the deletes the run saw (bounded wait).
async fn settled_stats(url: &str, swept: u64) -> Result<Vec<TableStats>, BenchError> {
    let read = || async {
        table_stats(url)
            .await
            .map_err(|e| BenchError::Server(format!("reading PostgreSQL's statistics: {e}")))
    };
    let deadline = Instant::now() + STATS_SETTLE;
    loop {
        let tables = read().await?;
        let deleted = tables
            .iter()
            .find(|t| t.table == "tasks")
            .map_or(0, |t| t.deleted);
        if u64::try_from(deleted).unwrap_or(0) >= swept || Instant::now() >= deadline {
            return Ok(tables);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// What one worker counted.
struct Tally {
    /// The start of the creation window, from which events are timed.
    start: Instant,
    created: u64,
    answered: u64,
    left: u64,
    swept: u64,
    late: u64,
    errors: u64,
    first_errors: Vec<String>,
    /// Latencies and errors with their times, for the whole run and its intervals.
    timed: Timed,
}

impl Tally {
    fn new(start: Instant) -> Self {
        Tally {
            start,
            created: 0,
            answered: 0,
            left: 0,
            swept: 0,
            late: 0,
            errors: 0,
            first_errors: Vec::new(),
            timed: Timed::default(),
        }
    }

    /// Now, from the start of the creation window.
    fn now(&self) -> Duration {
        Instant::now().saturating_duration_since(self.start)
    }

    fn error(&mut self, what: String) {
        self.error_at(self.now(), what);
    }

    fn error_at(&mut self, at: Duration, what: String) {
        self.errors += 1;
        self.timed.errors.push(at);
        if self.first_errors.len() < KEPT_ERRORS {
            self.first_errors.push(what);
        }
    }

    fn merge(&mut self, o: Tally) {
        self.created += o.created;
        self.answered += o.answered;
        self.left += o.left;
        self.swept += o.swept;
        self.late += o.late;
        self.errors += o.errors;
        for e in o.first_errors {
            if self.first_errors.len() < KEPT_ERRORS {
                self.first_errors.push(e);
            }
        }
        self.timed.merge(o.timed);
    }
}

/// A task left to expire: when it should be gone, and when being there is late.
struct Expiring {
    id: String,
    check_at: Instant,
    late_at: Instant,
}

/// Everything a worker shares with the others.
struct Shared {
    endpoint: Endpoint,
    opts: SessionOptions,
    next: AtomicU64,
    start: Instant,
    end: Instant,
    interval: Duration,
    answer_per_mille: u64,
    ttl: Duration,
}

/// What the load returns: the workers' tally and the statistics read during it.
struct Ran {
    tally: Tally,
    readings: Vec<Reading>,
}

/// The open-loop schedule: ticket k is due at start + k / rate; each worker takes the
/// next ticket, waits for it, creates one task and, between tickets, checks the tasks
/// it left to expire. After the window each worker checks its remaining ones. Beside
/// them, the statistics are read at every snapshot time from the same start.
async fn load(args: &SoakArgs, endpoint: &Endpoint) -> Result<Ran, BenchError> {
    let opts = SessionOptions {
        wire: Wire::V2026_07_28,
        declare_tasks: true,
        accept_sse: false,
        ordinary_socket: false,
    };
    let mut conns = Vec::with_capacity(args.connections);
    for _ in 0..args.connections {
        conns.push(McpConn::open_with(endpoint, &opts, ELICITATION).await?);
    }
    let start = Instant::now();
    let shared = Arc::new(Shared {
        endpoint: endpoint.clone(),
        opts,
        next: AtomicU64::new(0),
        start,
        end: start + args.duration,
        interval: Duration::from_secs_f64(1.0 / args.rate),
        answer_per_mille: (args.answer * 1000.0).round() as u64,
        ttl: args.ttl,
    });
    let reader = tokio::spawn(read_over_time(
        args.postgres_url.clone(),
        start,
        snapshot_times(args.duration, args.snapshot_every),
    ));
    let mut set = JoinSet::new();
    for conn in conns {
        set.spawn(worker(conn, shared.clone()));
    }
    let mut total = Tally::new(start);
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok(t) => total.merge(t),
            Err(e) => total.error(format!("a soak worker died: {e}")),
        }
    }
    let readings = match reader.await {
        Ok(r) => r,
        Err(e) => {
            total.error(format!("the statistics reader died: {e}"));
            Vec::new()
        }
    };
    Ok(Ran {
        tally: total,
        readings,
    })
}

async fn worker(conn: McpConn, shared: Arc<Shared>) -> Tally {
    let mut conn = conn;
    let mut tally = Tally::new(shared.start);
    let mut expiring: VecDeque<Expiring> = VecDeque::new();
    loop {
        let k = shared.next.fetch_add(1, Ordering::Relaxed);
        let due = shared.start + shared.interval.mul_f64(k as f64);
        if due >= shared.end {
            break;
        }
        check_expired(
            &mut conn,
            &shared,
            &mut expiring,
            &mut tally,
            Instant::now(),
        )
        .await;
        tokio::time::sleep_until(due.into()).await;
        one_task(&mut conn, &shared, k, &mut expiring, &mut tally).await;
    }
    // The tail: every task left to expire is checked once its ttl has passed. Bounded:
    // each entry is dropped at its late_at at the latest.
    while let Some(front) = expiring.front() {
        let at = front.check_at;
        tokio::time::sleep_until(at.into()).await;
        check_expired(&mut conn, &shared, &mut expiring, &mut tally, at).await;
    }
    tally
}

/// Reopens a session after a transport failure (the connection is then unusable).
async fn recover(conn: &mut McpConn, shared: &Shared, e: &BenchError, tally: &mut Tally) {
    if matches!(e, BenchError::Io(..) | BenchError::Http(_)) {
        match McpConn::open_with(&shared.endpoint, &shared.opts, ELICITATION).await {
            Ok(c) => *conn = c,
            Err(e) => tally.error(format!("reopening a session: {e}")),
        }
    }
}

/// Creates task `k`, then answers its question or leaves it to expire.
async fn one_task(
    conn: &mut McpConn,
    shared: &Shared,
    k: u64,
    expiring: &mut VecDeque<Expiring>,
    tally: &mut Tally,
) {
    let t0 = Instant::now();
    let args = format!(r#"{{"filename":"soak-{k}.txt"}}"#);
    let id = match conn.call_as_task("confirm_delete", &args).await {
        Ok(Created::Task(id)) => id,
        Ok(Created::Done) => {
            tally.error("confirm_delete answered without a task (it asks a question)".into());
            return;
        }
        Err(e) => {
            tally.error(format!("creating a task: {e}"));
            recover(conn, shared, &e, tally).await;
            return;
        }
    };
    let took = t0.elapsed();
    tally.timed.creates.push(Finished {
        at: tally.now(),
        took,
    });
    tally.created += 1;
    if answers(k, shared.answer_per_mille) {
        match answer(conn, &id).await {
            Ok(took) => {
                tally.answered += 1;
                let at = tally.now();
                tally.timed.answers.push(Finished { at, took });
            }
            Err(e) => {
                tally.error(format!("answering task {id}: {e}"));
                recover(conn, shared, &e, tally).await;
            }
        }
    } else {
        tally.left += 1;
        expiring.push_back(Expiring {
            id,
            check_at: t0 + shared.ttl,
            late_at: t0 + shared.ttl + SWEEP_GRACE,
        });
    }
}

/// Whether ticket `k` answers its question: the answered ones spread evenly over the
/// tickets, `per_mille` of every thousand consecutive ones.
fn answers(k: u64, per_mille: u64) -> bool {
    (k + 1) * per_mille / 1000 > k * per_mille / 1000
}

/// `tasks/get` of `id`: its status, or `None` when the server no longer knows it.
async fn status_of(conn: &mut McpConn, id: &str) -> Result<Option<serde_json::Value>, BenchError> {
    let params = format!(r#"{{"taskId":"{id}"}}"#);
    let reply = conn.request_json("tasks/get", Some(id), &params).await?;
    if let Some(err) = reply.get("error") {
        let message = err["message"].as_str().unwrap_or_default().to_lowercase();
        if message.contains("not found") || message.contains("unknown task") {
            return Ok(None);
        }
        return Err(BenchError::Rpc {
            method: "tasks/get".into(),
            message: err.to_string(),
        });
    }
    Ok(Some(reply["result"].clone()))
}

/// Waits for the question, answers it, waits for the task to complete; returns the
/// time from the answer to the completion.
async fn answer(conn: &mut McpConn, id: &str) -> Result<Duration, BenchError> {
    let gone = || BenchError::Rpc {
        method: "tasks/get".into(),
        message: format!("task {id} vanished before its ttl"),
    };
    let mut key = None;
    for i in 0..MAX_POLLS {
        let task = status_of(conn, id).await?.ok_or_else(gone)?;
        if let Some(k) = task["inputRequests"]
            .as_object()
            .and_then(|q| q.keys().next())
        {
            key = Some(k.clone());
            break;
        }
        if task["status"] != "working" {
            return Err(BenchError::Rpc {
                method: "tasks/get".into(),
                message: format!("task {id} is {} before its question", task["status"]),
            });
        }
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    let key = key.ok_or_else(|| BenchError::Rpc {
        method: "tasks/get".into(),
        message: format!("task {id} asked no question within {MAX_POLLS} polls"),
    })?;
    let t0 = Instant::now();
    let params = serde_json::json!({
        "taskId": id,
        "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}},
    })
    .to_string();
    let reply = conn.request_json("tasks/update", Some(id), &params).await?;
    if let Some(err) = reply.get("error") {
        return Err(BenchError::Rpc {
            method: "tasks/update".into(),
            message: err.to_string(),
        });
    }
    for i in 0..MAX_POLLS {
        let task = status_of(conn, id).await?.ok_or_else(gone)?;
        match task["status"].as_str() {
            Some("completed") => return Ok(t0.elapsed()),
            Some("failed" | "cancelled") => {
                return Err(BenchError::Rpc {
                    method: "tasks/get".into(),
                    message: format!("answered task {id} ended {}", task["status"]),
                })
            }
            _ => {}
        }
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    Err(BenchError::Rpc {
        method: "tasks/get".into(),
        message: format!("answered task {id} did not complete within {MAX_POLLS} polls"),
    })
}

/// Reads the tasks left to expire whose ttl has passed by `now`: gone is swept, still
/// there is read again later, until its grace ends (then it is late).
async fn check_expired(
    conn: &mut McpConn,
    shared: &Shared,
    expiring: &mut VecDeque<Expiring>,
    tally: &mut Tally,
    now: Instant,
) {
    while expiring.front().is_some_and(|e| e.check_at <= now) {
        let Some(mut e) = expiring.pop_front() else {
            break;
        };
        match status_of(conn, &e.id).await {
            Ok(None) => tally.swept += 1,
            Ok(Some(_)) if Instant::now() >= e.late_at => {
                tally.late += 1;
                tally.error(format!(
                    "task {} still there {:.0} s after its ttl ran out",
                    e.id,
                    SWEEP_GRACE.as_secs_f64()
                ));
            }
            Ok(Some(_)) => {
                e.check_at = Instant::now() + RECHECK;
                expiring.push_back(e);
                // Entries behind it are no older than it: read again next round.
                break;
            }
            Err(err) => {
                tally.error(format!("reading expired task {}: {err}", e.id));
                recover(conn, shared, &err, tally).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answered_tickets_spread_evenly() {
        let first = |n: u64, pm: u64| (0..n).filter(|&k| answers(k, pm)).count();
        assert_eq!(first(10, 500), 5);
        assert_eq!(first(100, 250), 25);
        assert_eq!(first(1000, 0), 0);
        assert_eq!(first(1000, 1000), 1000);
        assert_eq!(first(20, 100), 2);
    }
}
