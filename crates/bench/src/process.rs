//! Servers the bench starts, and what `/proc` says about a local process: resident
//! memory and CPU time.

use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::error::BenchError;
use crate::http::Endpoint;

/// How long a spawned server may take to print its address.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Stderr lines kept for error messages.
const STDERR_TAIL: usize = 20;
/// Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`, 100 on Linux).
const USER_HZ: f64 = 100.0;

/// A server process the bench started. Killed when dropped.
#[derive(Debug)]
pub struct Spawned {
    child: Child,
    /// Its endpoint, as it printed it.
    pub endpoint: Endpoint,
    /// Its process id.
    pub pid: u32,
    tail: Arc<Mutex<Vec<String>>>,
    _dir: Option<tempfile::TempDir>,
}

impl Spawned {
    /// Starts `program args…` and waits for a stderr line containing
    /// `listening on http://…` (what `mcp-tasks serve`, `rmcp-task-server` and
    /// `turul-task-server` print). `dir` is kept alive (and deleted) with the process.
    ///
    /// # Errors
    /// [`BenchError::Server`] when the program cannot start or never prints an address.
    pub async fn start(
        program: &Path,
        args: &[String],
        dir: Option<tempfile::TempDir>,
    ) -> Result<Self, BenchError> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| BenchError::Server(format!("cannot start {}: {e}", program.display())))?;
        let pid = child.id().unwrap_or(0);
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| BenchError::Server("no stderr pipe".into()))?;
        let mut lines = BufReader::new(stderr).lines();
        let tail = Arc::new(Mutex::new(Vec::new()));
        let wait_for_address = async {
            while let Ok(Some(line)) = lines.next_line().await {
                remember(&tail, &line);
                if let Some(url) = listening_url(&line) {
                    return Some(url);
                }
            }
            None
        };
        let url = tokio::time::timeout(START_TIMEOUT, wait_for_address)
            .await
            .ok()
            .flatten();
        let Some(url) = url else {
            let _ = child.kill().await;
            return Err(BenchError::Server(format!(
                "{} did not report a listening address; its last output:\n{}",
                program.display(),
                tail_text(&tail)
            )));
        };
        // Keep draining stderr so the server never blocks on a full pipe.
        let drain_tail = Arc::clone(&tail);
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                remember(&drain_tail, &line);
            }
        });
        Ok(Spawned {
            child,
            endpoint: Endpoint::parse(&url)?,
            pid,
            tail,
            _dir: dir,
        })
    }

    /// Whether the process has exited.
    pub fn has_exited(&self) -> bool {
        !std::path::Path::new(&format!("/proc/{}/stat", self.pid)).exists()
            || usage(self.pid).is_none()
    }

    /// The server's last stderr lines.
    pub fn stderr_tail(&self) -> String {
        tail_text(&self.tail)
    }

    /// Stops the process (SIGKILL: nothing it holds needs a clean shutdown, and its
    /// temporary database is deleted with it) and waits for it.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

fn remember(tail: &Mutex<Vec<String>>, line: &str) {
    let mut t = tail.lock();
    if t.len() == STDERR_TAIL {
        t.remove(0);
    }
    t.push(line.to_string());
}

fn tail_text(tail: &Mutex<Vec<String>>) -> String {
    tail.lock().join("\n")
}

/// The URL in a `... listening on http://ADDR/PATH` line.
fn listening_url(line: &str) -> Option<String> {
    let at = line.find("listening on http://")?;
    let url = &line[at + "listening on ".len()..];
    Some(url.split_whitespace().next()?.to_string())
}

/// A snapshot of a process's resource use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// User plus system CPU time, in seconds.
    pub cpu_s: f64,
    /// Resident set size, in bytes.
    pub rss_bytes: u64,
}

/// Reads `/proc/<pid>/stat` (utime + stime) and `/proc/<pid>/status` (VmRSS).
/// `None` when the process is not local or has exited.
pub fn usage(pid: u32) -> Option<Usage> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some(Usage {
        cpu_s: cpu_seconds(&stat)?,
        rss_bytes: rss_bytes(&status)?,
    })
}

/// The parent of a local process (field 4 of `/proc/<pid>/stat`).
pub fn parent_pid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// CPU seconds of a process and all its children: its own time, the time of
/// children it has reaped (`cutime`, `cstime`), and the time of those alive now. For
/// a PostgreSQL server, whose main process forks a process per connection and reaps
/// it at its end, that is all the CPU the server spent since it started.
pub fn tree_cpu_s(root: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{root}/stat")).ok()?;
    let mut ticks = own_and_reaped_ticks(&stat)?;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if parent_in(&stat) == Some(root) {
            ticks += cpu_ticks(&stat).unwrap_or(0);
        }
    }
    Some(ticks as f64 / USER_HZ)
}

/// The fields of a `stat` line after the command name.
fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    Some(stat[stat.rfind(')')? + 1..].split_whitespace().collect())
}

fn parent_in(stat: &str) -> Option<u32> {
    stat_fields(stat)?.get(1)?.parse().ok()
}

/// utime + stime, in clock ticks.
fn cpu_ticks(stat: &str) -> Option<u64> {
    let f = stat_fields(stat)?;
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// utime + stime + cutime + cstime, in clock ticks.
fn own_and_reaped_ticks(stat: &str) -> Option<u64> {
    let f = stat_fields(stat)?;
    let reaped = f.get(13)?.parse::<u64>().ok()? + f.get(14)?.parse::<u64>().ok()?;
    Some(cpu_ticks(stat)? + reaped)
}

/// CPU time of the bench itself.
pub fn own_usage() -> Option<Usage> {
    usage(std::process::id())
}

/// CPU seconds the whole machine spent busy (all cores, everything but idle and
/// I/O wait) since boot, from the first line of `/proc/stat`.
pub fn machine_busy_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    busy_seconds(stat.lines().next()?)
}

fn busy_seconds(cpu_line: &str) -> Option<f64> {
    let mut fields = cpu_line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal [guest guest_nice, already
    // counted in user and nice]
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
    Some((total - idle) as f64 / USER_HZ)
}

/// The 1-minute load average.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// utime + stime from a `/proc/<pid>/stat` line, in seconds. Fields are counted after
/// the command name's closing parenthesis (the name may contain spaces).
fn cpu_seconds(stat: &str) -> Option<f64> {
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // After ")": state is field 3 of the full line, so utime (14) and stime (15) are
    // at indexes 11 and 12 here.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / USER_HZ)
}

/// VmRSS from `/proc/<pid>/status`, in bytes.
fn rss_bytes(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The program to run for our own server: `--server-bin`, else this executable (the
/// bench is a subcommand of `mcp-tasks`).
///
/// # Errors
/// [`BenchError::Usage`] when the current executable cannot be found.
pub fn our_server_program(explicit: Option<&Path>) -> Result<PathBuf, BenchError> {
    match explicit {
        Some(p) => Ok(p.to_path_buf()),
        None => std::env::current_exe().map_err(|e| {
            BenchError::Usage(format!(
                "cannot find the mcp-tasks binary ({e}); pass --server-bin PATH"
            ))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_url_is_found_in_every_server_banner() {
        assert_eq!(
            listening_url("mcp-tasks: listening on http://127.0.0.1:4000/mcp").as_deref(),
            Some("http://127.0.0.1:4000/mcp")
        );
        assert_eq!(
            listening_url("rmcp-task-server: listening on http://127.0.0.1:9/mcp (x)").as_deref(),
            Some("http://127.0.0.1:9/mcp")
        );
        assert_eq!(
            listening_url("turul-task-server: listening on http://127.0.0.1:7/mcp").as_deref(),
            Some("http://127.0.0.1:7/mcp")
        );
        assert_eq!(listening_url("INFO starting"), None);
    }

    #[test]
    fn cpu_seconds_skips_a_command_name_with_spaces() {
        let stat = "42 (my prog) S 1 42 42 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 4 0 100 1000 200";
        assert_eq!(cpu_seconds(stat), Some(3.0));
    }

    #[test]
    fn a_tree_counts_reaped_children() {
        let stat =
            "42 (postgres) S 1 42 42 0 -1 4194304 100 0 0 0 250 50 100 100 20 0 4 0 100 1000 200";
        assert_eq!(parent_in(stat), Some(1));
        assert_eq!(cpu_ticks(stat), Some(300));
        assert_eq!(own_and_reaped_ticks(stat), Some(500));
        let me = std::process::id();
        assert!(tree_cpu_s(me).is_some());
    }

    #[test]
    fn busy_time_excludes_idle_and_iowait() {
        let line = "cpu  100 0 50 1000 30 0 10 0 0 0";
        assert_eq!(busy_seconds(line), Some(1.6));
        assert_eq!(busy_seconds("intr 1 2"), None);
    }

    #[test]
    fn rss_is_read_in_kib() {
        let status = "Name:\tx\nVmPeak:\t 10 kB\nVmRSS:\t    2048 kB\n";
        assert_eq!(rss_bytes(status), Some(2 * 1024 * 1024));
    }

    #[test]
    fn own_usage_is_readable() {
        let u = own_usage().expect("this test runs on Linux");
        assert!(u.rss_bytes > 0);
    }
}
