//! Load drivers: C sessions in closed loops (each sends its next request when the
//! previous one is answered), either for a fixed number of task creations or for a
//! fixed time, measuring rate, latency and the CPU time the processes spent: the
//! bench's, each server's (one, or several replicas of one store) and the database's.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

use crate::error::BenchError;
use crate::mcp::{Created, McpConn, Status};
use crate::process::{machine_busy_s, own_usage, tree_cpu_s, usage};

/// The main process of the database the server under measurement uses (PostgreSQL on
/// this machine), 0 for none: its CPU is counted apart from the server's.
static DATABASE_PID: AtomicU32 = AtomicU32::new(0);

/// Counts the CPU of the database server whose main process is `pid` (and of its
/// children) in the runs that follow, or of none.
pub fn watch_database(pid: Option<u32>) {
    DATABASE_PID.store(pid.unwrap_or(0), Ordering::Relaxed);
}

fn watched_database() -> Option<u32> {
    Some(DATABASE_PID.load(Ordering::Relaxed)).filter(|p| *p != 0)
}
use crate::stats::Latencies;

/// The outcome of one load run.
#[derive(Debug)]
pub struct LoadRun {
    /// Operations completed in the measured window.
    pub ops: u64,
    /// Length of the measured window.
    pub elapsed: Duration,
    /// Latency of each measured operation.
    pub latencies: Latencies,
    /// `tasks/get` polls the measured operations sent (instant-task flows only).
    pub polls: u64,
    /// Server CPU seconds spent in the window (local servers only); with several
    /// servers (replicas), their sum.
    pub server_cpu_s: Option<f64>,
    /// Each server's CPU seconds in the window, in the order their pids were given.
    pub servers_cpu_s: Vec<Option<f64>>,
    /// `tasks/get` requests ([`Op::GetAcross`]) that went to another server than the
    /// one that created the task.
    pub cross_replica: u64,
    /// Bench CPU seconds spent in the window.
    pub client_cpu_s: Option<f64>,
    /// CPU seconds other processes on the machine spent in the window (noise).
    pub other_cpu_s: Option<f64>,
    /// CPU seconds the database server (PostgreSQL on this machine, see
    /// [`watch_database`]) spent in the window; not part of `other_cpu_s`.
    pub database_cpu_s: Option<f64>,
}

impl LoadRun {
    /// Operations per second.
    pub fn rate(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Server CPU microseconds per operation.
    pub fn server_cpu_us(&self) -> Option<f64> {
        per_op_us(self.server_cpu_s, self.ops)
    }

    /// Each server's CPU microseconds per operation (of all servers' operations), in
    /// the order their pids were given.
    pub fn servers_cpu_us(&self) -> Vec<Option<f64>> {
        self.servers_cpu_s
            .iter()
            .map(|s| per_op_us(*s, self.ops))
            .collect()
    }

    /// Database server CPU microseconds per operation.
    pub fn database_cpu_us(&self) -> Option<f64> {
        per_op_us(self.database_cpu_s, self.ops)
    }

    /// Bench CPU microseconds per operation.
    pub fn client_cpu_us(&self) -> Option<f64> {
        per_op_us(self.client_cpu_s, self.ops)
    }

    /// Mean `tasks/get` polls per measured operation.
    pub fn polls_per_op(&self) -> Option<f64> {
        (self.ops > 0).then(|| self.polls as f64 / self.ops as f64)
    }

    /// Cores' worth of CPU that other processes used during the run.
    pub fn other_cores(&self) -> Option<f64> {
        self.other_cpu_s
            .map(|s| (s / self.elapsed.as_secs_f64().max(1e-9)).max(0.0))
    }
}

fn per_op_us(cpu_s: Option<f64>, ops: u64) -> Option<f64> {
    cpu_s.filter(|_| ops > 0).map(|s| s * 1e6 / ops as f64)
}

/// What each session does in a timed run.
#[derive(Debug, Clone)]
pub enum Op {
    /// `ping`.
    Ping,
    /// `tasks/get` of a random id from the list; each must still be live.
    Get(Arc<Vec<String>>),
    /// As [`Op::Get`], on tasks created through several servers (replicas of one
    /// store), counting the reads that reach another server than the creator.
    GetAcross(Arc<LiveTasks>),
    /// Call a tool as a task that finishes at once, then wait for it to be done.
    TaskFlow {
        /// Tool name.
        tool: Arc<str>,
        /// Arguments (JSON object text).
        args: Arc<str>,
        /// How the outcome is awaited.
        collect: Collect,
    },
    /// A synchronous `tools/call`.
    SyncCall {
        /// Tool name.
        tool: Arc<str>,
        /// Arguments (JSON object text).
        args: Arc<str>,
    },
}

/// Live tasks and the server each was created through (its port, see
/// [`McpConn::server_port`]), index for index.
#[derive(Debug, Clone, Default)]
pub struct LiveTasks {
    /// Task ids.
    pub ids: Vec<String>,
    /// The port of the server that created each.
    pub creators: Vec<u16>,
}

/// How an instant-task flow learns that its task is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collect {
    /// `tasks/get` until the status is terminal (a plain result on the extension wire
    /// counts as done with zero polls).
    Poll,
    /// One `tasks/result`, which the server answers once the task is terminal
    /// (2025-11-25 only).
    Result,
}

/// A small, fast PRNG (xorshift64*) for choosing task ids: the generator must not
/// spend its CPU on cryptographic randomness.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded; a zero seed is replaced (xorshift needs a non-zero state).
    pub fn new(seed: u64) -> Self {
        Rng(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
    }
}

/// What one operation counted besides itself.
#[derive(Debug, Clone, Copy, Default)]
struct Counted {
    /// `tasks/get` polls it sent.
    polls: u32,
    /// Whether it read a task through another server than its creator.
    cross_replica: bool,
}

impl Counted {
    fn polls(polls: u32) -> Self {
        Counted {
            polls,
            cross_replica: false,
        }
    }
}

/// `tasks/get` of `id`, which must still be live.
async fn get_live(conn: &mut McpConn, id: &str) -> Result<(), BenchError> {
    match conn.get_task(id).await? {
        Status::Live => Ok(()),
        Status::Terminal => Err(BenchError::Rpc {
            method: "tasks/get".into(),
            message: format!(
                "task {id} is already terminal; the get benchmark needs tasks that stay working (raise the tool's duration)"
            ),
        }),
    }
}

/// One operation.
async fn run_op(conn: &mut McpConn, op: &Op, rng: &mut Rng) -> Result<Counted, BenchError> {
    match op {
        Op::Ping => conn.ping().await.map(|_| Counted::default()),
        Op::Get(ids) => {
            let id = &ids[rng.below(ids.len())];
            get_live(conn, id).await.map(|_| Counted::default())
        }
        Op::GetAcross(live) => {
            let i = rng.below(live.ids.len());
            get_live(conn, &live.ids[i]).await?;
            Ok(Counted {
                polls: 0,
                cross_replica: live.creators.get(i) != Some(&conn.server_port()),
            })
        }
        Op::TaskFlow {
            tool,
            args,
            collect,
        } => match (conn.call_as_task(tool, args).await?, collect) {
            (Created::Done, _) => Ok(Counted::default()),
            (Created::Task(id), Collect::Poll) => {
                conn.poll_until_done(&id).await.map(Counted::polls)
            }
            (Created::Task(id), Collect::Result) => {
                conn.task_result(&id).await.map(|_| Counted::default())
            }
        },
        Op::SyncCall { tool, args } => conn.call_sync(tool, args).await.map(|_| Counted::default()),
    }
}

/// Samples the servers', the bench's and the whole machine's CPU at the start and end
/// of a window (and the watched database's, see [`watch_database`]).
struct CpuWindow {
    servers: Vec<u32>,
    servers0: Vec<Option<f64>>,
    client0: Option<f64>,
    machine0: Option<f64>,
    database: Option<(u32, f64)>,
}

/// CPU seconds spent in a window by the servers (each, and their sum), the bench, the
/// database and everything else.
struct CpuSpent {
    server: Option<f64>,
    servers: Vec<Option<f64>>,
    client: Option<f64>,
    other: Option<f64>,
    database: Option<f64>,
}

impl CpuWindow {
    fn open(servers: &[u32]) -> Self {
        CpuWindow {
            servers: servers.to_vec(),
            servers0: servers.iter().map(|&p| usage(p).map(|u| u.cpu_s)).collect(),
            client0: own_usage().map(|u| u.cpu_s),
            machine0: machine_busy_s(),
            database: watched_database().and_then(|p| Some((p, tree_cpu_s(p)?))),
        }
    }

    fn close(self) -> CpuSpent {
        let delta = |a: Option<f64>, b: Option<f64>| Some(b? - a?);
        let servers: Vec<Option<f64>> = self
            .servers
            .iter()
            .zip(&self.servers0)
            .map(|(&p, &before)| delta(before, usage(p).map(|u| u.cpu_s)))
            .collect();
        let client1 = own_usage().map(|u| u.cpu_s);
        let machine1 = machine_busy_s();
        // The sum only when every server could be read (none: no figure).
        let server = if servers.is_empty() {
            None
        } else {
            servers.iter().copied().sum::<Option<f64>>()
        };
        let client = delta(self.client0, client1);
        let database = self
            .database
            .and_then(|(pid, before)| Some(tree_cpu_s(pid)? - before));
        let other = delta(self.machine0, machine1)
            .map(|m| m - server.unwrap_or(0.0) - client.unwrap_or(0.0) - database.unwrap_or(0.0));
        CpuSpent {
            server,
            servers,
            client,
            other,
            database,
        }
    }
}

/// What workers hand back: their sessions, latencies and counts.
#[derive(Default)]
struct Worked {
    conns: Vec<McpConn>,
    latencies: Latencies,
    ops: u64,
    polls: u64,
    cross_replica: u64,
}

impl Worked {
    /// Counts one measured operation.
    fn count(&mut self, c: Counted) {
        self.ops += 1;
        self.polls += u64::from(c.polls);
        self.cross_replica += u64::from(c.cross_replica);
    }

    fn merge(&mut self, o: Worked) {
        self.conns.extend(o.conns);
        self.latencies.merge(o.latencies);
        self.ops += o.ops;
        self.polls += o.polls;
        self.cross_replica += o.cross_replica;
    }

    /// The run these counts and `cpu` make, over `elapsed`.
    fn run(self, elapsed: Duration, cpu: CpuSpent) -> (Vec<McpConn>, LoadRun) {
        (
            self.conns,
            LoadRun {
                ops: self.ops,
                elapsed,
                latencies: self.latencies,
                polls: self.polls,
                cross_replica: self.cross_replica,
                server_cpu_s: cpu.server,
                servers_cpu_s: cpu.servers,
                client_cpu_s: cpu.client,
                other_cpu_s: cpu.other,
                database_cpu_s: cpu.database,
            },
        )
    }
}

/// What one worker hands back.
type WorkerResult = Result<Worked, BenchError>;

async fn join_workers(mut set: JoinSet<WorkerResult>) -> Result<Worked, BenchError> {
    let mut all = Worked::default();
    let mut first_error = None;
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok(Ok(w)) => all.merge(w),
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(e) => {
                first_error.get_or_insert(BenchError::Server(format!("a load worker died: {e}")));
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(all),
    }
}

/// Runs `op` on every session for `warmup + measure`, counting only operations that
/// start inside the measured window. Returns the sessions for reuse (in no particular
/// order). `servers` are the pids whose CPU is counted (none for a remote server;
/// several for replicas).
///
/// # Errors
/// The first error any session met (the run stops being meaningful then).
pub async fn timed(
    conns: Vec<McpConn>,
    op: &Op,
    warmup: Duration,
    measure: Duration,
    servers: &[u32],
) -> Result<(Vec<McpConn>, LoadRun), BenchError> {
    let start = Instant::now();
    let window_start = start + warmup;
    let end = window_start + measure;
    let mut set = JoinSet::new();
    for (i, mut conn) in conns.into_iter().enumerate() {
        let op = op.clone();
        set.spawn(async move {
            let mut rng =
                Rng::new(0x5EED ^ ((i as u64 + 1) << 20) ^ start.elapsed().as_nanos() as u64);
            let mut w = Worked {
                latencies: Latencies::with_capacity(64 * 1024),
                ..Worked::default()
            };
            loop {
                let t0 = Instant::now();
                if t0 >= end {
                    break;
                }
                let c = run_op(&mut conn, &op, &mut rng).await?;
                if t0 >= window_start {
                    w.latencies.record(t0.elapsed());
                    w.count(c);
                }
            }
            w.conns.push(conn);
            Ok(w)
        });
    }
    tokio::time::sleep_until(window_start.into()).await;
    let cpu = CpuWindow::open(servers);
    tokio::time::sleep_until(end.into()).await;
    let cpu = cpu.close();
    Ok(join_workers(set).await?.run(measure, cpu))
}

/// Creates `count` tasks of `tool` with `args` over all sessions; returns the sessions,
/// the new task ids and the run (rate = tasks per second of wall time).
///
/// # Errors
/// The first error any session met.
pub async fn create_tasks(
    conns: Vec<McpConn>,
    count: usize,
    tool: &str,
    args: &str,
    servers: &[u32],
) -> Result<(Vec<McpConn>, Vec<String>, LoadRun), BenchError> {
    let (conns, live, run) = create_live(conns, count, tool, args, servers).await?;
    Ok((conns, live.ids, run))
}

/// [`create_tasks`], also saying which server created each task (the port of the
/// session that created it): the sessions may reach several replicas.
///
/// # Errors
/// The first error any session met.
pub async fn create_live(
    conns: Vec<McpConn>,
    count: usize,
    tool: &str,
    args: &str,
    servers: &[u32],
) -> Result<(Vec<McpConn>, LiveTasks, LoadRun), BenchError> {
    let next = Arc::new(AtomicUsize::new(0));
    let live = Arc::new(parking_lot::Mutex::new(LiveTasks {
        ids: Vec::with_capacity(count),
        creators: Vec::with_capacity(count),
    }));
    let tool: Arc<str> = tool.into();
    let args: Arc<str> = args.into();
    let cpu = CpuWindow::open(servers);
    let start = Instant::now();
    let mut set = JoinSet::new();
    for mut conn in conns {
        let (next, live, tool, args) = (next.clone(), live.clone(), tool.clone(), args.clone());
        set.spawn(async move {
            let mut lat = Latencies::with_capacity(count / 8 + 16);
            let mut mine = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < count {
                let t0 = Instant::now();
                mine.push(conn.create_task(&tool, &args).await?);
                lat.record(t0.elapsed());
            }
            let port = conn.server_port();
            {
                let mut live = live.lock();
                live.creators.extend(std::iter::repeat_n(port, mine.len()));
                live.ids.extend(mine);
            }
            Ok(Worked {
                conns: vec![conn],
                ops: lat.len() as u64,
                latencies: lat,
                ..Worked::default()
            })
        });
    }
    let worked = join_workers(set).await?;
    let elapsed = start.elapsed();
    let cpu = cpu.close();
    let live = std::mem::take(&mut *live.lock());
    let (conns, run) = worked.run(elapsed, cpu);
    Ok((conns, live, run))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_stays_in_range_and_spreads() {
        let mut r = Rng::new(0);
        let mut seen = [false; 10];
        for _ in 0..1000 {
            let x = r.below(10);
            assert!(x < 10);
            seen[x] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn per_op_cpu_needs_ops() {
        assert_eq!(per_op_us(Some(1.0), 0), None);
        assert_eq!(per_op_us(Some(1.0), 1_000_000), Some(1.0));
        assert_eq!(per_op_us(None, 10), None);
    }
}
