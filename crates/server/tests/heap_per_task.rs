//! What a live task costs the heap through the whole server (the HTTP transport, the
//! session, the tool's future, the engine and the memory store), counted by the
//! allocator: the bytes and allocations still held per running task once its
//! `tools/call` has been answered. The bound sits a little above what the server
//! holds today (`docs/benchmarks.md`, round six), so that a structure that grows back
//! fails here before it shows in a benchmark. Its own test binary with one test, so
//! that the counting allocator sees nothing else.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{start_server_with_engine, test_engine_config, Client};
use mcp_tasks_engine::EngineConfig;
use mcp_tasks_server::ServerConfig;
use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::json;

/// dhat's allocator counts the bytes and allocations held (testing mode: no profile
/// written). With `HEAP_PROFILE=FILE` set, the test writes a dhat profile there instead,
/// whose sites at the heap's peak say where a task's bytes go (view it with dhat's
/// `dh_view.html`).
#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

/// Live tasks measured: enough that the maps' doubling averages out.
const N: usize = 2_000;
/// Tasks created before the baseline (the session's first state, the first timers).
const WARM: usize = 100;
/// Most heap bytes a running task may hold through the server on the memory store (in
/// a test build: a tool's future is larger than in a release build). Measured at
/// 1,832 to 1,840 B in round six (2,364 to 2,391 B before it).
const BYTES: f64 = 1_900.0;
/// Most allocations a running task may hold through the server. Measured at 11.1 in
/// round six (19.7 before it).
const BLOCKS: f64 = 11.5;

/// Bytes and allocations held now.
fn held() -> (f64, f64) {
    let stats = dhat::HeapStats::get();
    (stats.curr_bytes as f64, stats.curr_blocks as f64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_task_holds_at_most_its_measured_heap_through_the_server() {
    let _profiler = match std::env::var("HEAP_PROFILE") {
        Ok(file) => dhat::Profiler::builder()
            .file_name(file)
            .trim_backtraces(Some(40))
            .build(),
        Err(_) => dhat::Profiler::builder().testing().build(),
    };
    let config = EngineConfig {
        max_active_tasks: N + WARM,
        max_tasks_per_principal: N + WARM,
        max_tasks_per_session: N + WARM,
        ..test_engine_config()
    };
    let s = start_server_with_engine(config, ServerConfig::default()).await;
    let mut c = Client::connect(&s.url).await;
    // The test's `sleep` tool, for a day: a select of its cancellation and a timer,
    // like a real long tool (the demo's `slow_compute`).
    let day = json!({"ms": 86_400_000u64});
    for _ in 0..WARM {
        c.create_task("sleep", day.clone()).await;
    }
    let engine = s.server.engine().clone();
    eventually(WAIT, || async { engine.running_count() == WARM }).await;
    let (bytes0, blocks0) = held();
    for _ in 0..N {
        c.create_task("sleep", day.clone()).await;
    }
    eventually(WAIT, || async { engine.running_count() == WARM + N }).await;
    let (bytes1, blocks1) = held();
    let bytes = (bytes1 - bytes0) / N as f64;
    let blocks = (blocks1 - blocks0) / N as f64;
    println!("heap per live task through the server: {bytes:.0} B in {blocks:.1} allocations");
    assert!(
        bytes <= BYTES,
        "a live task holds {bytes:.0} B of heap through the server (at most {BYTES})"
    );
    assert!(
        blocks <= BLOCKS,
        "a live task holds {blocks:.1} allocations through the server (at most {BLOCKS})"
    );
}
