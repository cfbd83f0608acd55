//! Durable creates per second on a SQLite file, from 1 and from 32 concurrent creators:
//! group commit lets concurrent creates share one transaction (one fsync) while each
//! still returns only after its commit. Prints the rates; what they are depends on the
//! disk, so nothing is asserted (the `sqlite` test checks the behaviour).
//!
//! `cargo bench -p mcp-tasks-store --features test-suite --bench sqlite_group_commit`
#![allow(clippy::unwrap_used, missing_docs)]

use mcp_tasks_store::suite::{at, record};
use mcp_tasks_store::{SqliteStore, TaskStore};
use std::time::Instant;

const TOTAL: usize = 320;

/// Creates `total` records from `creators` concurrent callers on a fresh file store;
/// returns creates per second.
async fn creates_per_second(creators: usize, total: usize) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let store = SqliteStore::open(&url).await.unwrap();
    let per_creator = total / creators;
    let started = Instant::now();
    let handles: Vec<_> = (0..creators)
        .map(|c| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in 0..per_creator {
                    let rec = record("alice", None, at((c * per_creator + i) as i64));
                    store.create(&rec).await.unwrap();
                }
            })
        })
        .collect();
    for handle in handles {
        handle.await.unwrap();
    }
    (creators * per_creator) as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let one = creates_per_second(1, TOTAL).await;
        let many = creates_per_second(32, TOTAL).await;
        println!(
            "SQLite group commit, {TOTAL} durable creates: 1 creator {one:.0}/s, \
             32 creators {many:.0}/s ({:.1}x)",
            many / one
        );
    });
}
