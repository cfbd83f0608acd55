//! The fsync figure: how long the disk under the SQLite file takes to make 4 KiB
//! durable, measured in the bench's own process so that the SQLite figures can be read
//! against the physical limit (a durable commit cannot be faster than one fsync).
//!
//! The loop imitates a reused write-ahead log: a 1 MiB file, written and synced once,
//! then 4 KiB blocks overwritten in turn, each followed by `fdatasync`.

use std::fs::File;
use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::BenchError;
use crate::load::LoadRun;
use crate::stats::Latencies;

/// Bytes made durable per operation: one page.
const BLOCK: usize = 4096;
/// Size of the file the blocks cycle through.
const FILE_BYTES: usize = 1 << 20;

/// The directory a SQLite database URL (`sqlite://PATH`, `sqlite:PATH`, with or
/// without `?options`) keeps its file in; `None` for other URLs and in-memory SQLite.
pub fn sqlite_dir(url: &str) -> Option<PathBuf> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or(rest);
    if path.is_empty() || path.starts_with(":memory:") {
        return None;
    }
    match Path::new(path).parent() {
        Some(p) if !p.as_os_str().is_empty() => Some(p.to_path_buf()),
        _ => Some(PathBuf::from(".")),
    }
}

/// Writes and `fdatasync`s 4 KiB blocks in a temporary file in `dir` for `warmup +
/// measure`, timing the operations that start in the measured window.
///
/// # Errors
/// The temporary file cannot be created, written or synced.
pub async fn measure(
    dir: &Path,
    warmup: Duration,
    measure: Duration,
) -> Result<LoadRun, BenchError> {
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || measure_blocking(&dir, warmup, measure))
        .await
        .map_err(|e| BenchError::Server(format!("the fsync measurement died: {e}")))?
}

fn measure_blocking(
    dir: &Path,
    warmup: Duration,
    measure: Duration,
) -> Result<LoadRun, BenchError> {
    let io = |what: &str| {
        let what = format!("{what} (fsync figure, in {})", dir.display());
        move |e| BenchError::Io(what, e)
    };
    let mut tmp = tempfile::Builder::new()
        .prefix("mcp-tasks-bench-fsync")
        .tempfile_in(dir)
        .map_err(io("creating a temporary file"))?;
    let file: &mut File = tmp.as_file_mut();
    file.write_all(&vec![0u8; FILE_BYTES])
        .map_err(io("writing the temporary file"))?;
    file.sync_all().map_err(io("syncing the temporary file"))?;
    let block = vec![0xA5u8; BLOCK];
    let blocks = (FILE_BYTES / BLOCK) as u64;
    let start = Instant::now();
    let window = start + warmup;
    let end = window + measure;
    let mut lat = Latencies::with_capacity(4096);
    let mut ops = 0u64;
    let mut i = 0u64;
    loop {
        let t0 = Instant::now();
        if t0 >= end {
            break;
        }
        file.write_all_at(&block, (i % blocks) * BLOCK as u64)
            .map_err(io("writing a block"))?;
        file.sync_data().map_err(io("fdatasync"))?;
        i += 1;
        if t0 >= window {
            lat.record(t0.elapsed());
            ops += 1;
        }
    }
    Ok(LoadRun {
        ops,
        elapsed: measure,
        latencies: lat,
        polls: 0,
        cross_replica: 0,
        server_cpu_s: None,
        servers_cpu_s: Vec::new(),
        client_cpu_s: None,
        other_cpu_s: None,
        database_cpu_s: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_name_their_directory() {
        assert_eq!(sqlite_dir("sqlite:///var/db/x.db"), Some("/var/db".into()));
        assert_eq!(
            sqlite_dir("sqlite://data/x.db?mode=rwc"),
            Some("data".into())
        );
        assert_eq!(sqlite_dir("sqlite:x.db"), Some(".".into()));
        assert_eq!(sqlite_dir("sqlite::memory:"), None);
        assert_eq!(sqlite_dir("postgres://h/db"), None);
    }

    #[tokio::test]
    async fn fsyncs_are_timed_in_the_window() {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = measure(
            dir.path(),
            Duration::from_millis(5),
            Duration::from_millis(50),
        )
        .await
        .expect("measured");
        assert!(run.ops > 0);
        assert_eq!(run.latencies.len() as u64, run.ops);
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("dir").count(),
            0,
            "file removed"
        );
    }
}
