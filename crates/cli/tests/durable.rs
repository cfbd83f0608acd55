//! Durable execution with the real binary and the demo tool `pipeline`: a server killed
//! with SIGKILL in the middle of a pipeline leaves it to the next process (a restart on
//! the same SQLite file, another PostgreSQL replica), which finishes it without running
//! again the steps already recorded: only the step in flight at the kill runs twice.
//! The step bodies append `TASK_ID STEP ATTEMPT` to a ledger file
//! (`MCP_TASKS_DEMO_LEDGER`), which this test reads from outside the processes.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

mod common;

use common::rpc::Session;
use common::{spawn_listening_with_env, Server};
use mcp_tasks_testkit::eventually;

/// `serve --demo` on `database` with the ledger at `ledger`.
fn start(database: &str, ledger: &Path, extra: &[&str]) -> Server {
    let mut args = vec![
        "serve",
        "--demo",
        "--database",
        database,
        "--log",
        "warn",
        "--listen",
        "127.0.0.1:0",
    ];
    args.extend_from_slice(extra);
    let ledger = ledger.display().to_string();
    spawn_listening_with_env(&args, &[("MCP_TASKS_DEMO_LEDGER", ledger.as_str())])
}

/// The ledger's lines for `task`: (step, attempt), in the order the bodies ran.
fn ledger_of(ledger: &Path, task: &str) -> Vec<(u32, u32)> {
    std::fs::read_to_string(ledger)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            (parts.next()? == task).then_some(())?;
            Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
        })
        .collect()
}

/// Waits (bounded) until `task` has run the body of step `step` in attempt 1.
async fn reached(ledger: &Path, task: &str, step: u32) {
    eventually(Duration::from_secs(30), || async {
        ledger_of(ledger, task).contains(&(step, 1)).then_some(())
    })
    .await;
}

fn kill_9(server: &mut Server) {
    server.child.kill().unwrap();
    server.child.wait().unwrap();
}

/// Checks a pipeline of `steps` steps finished in attempt 2 after a kill during step
/// `killed_in`: every step ran, those before `killed_in` once, `killed_in` at most
/// twice (it was in flight), those after it once, in attempt 2.
async fn finished_without_rerunning(
    s: &Session,
    id: &str,
    ledger: &Path,
    steps: u32,
    killed_in: u32,
) {
    let done = s
        .wait_status(id, "completed", Duration::from_secs(30))
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    let result = s.rpc("tasks/result", json!({"taskId": id})).await;
    let structured = &result["result"]["structuredContent"];
    assert_eq!(structured["completed_steps"], steps, "{result}");
    assert_eq!(structured["attempts"], 2, "{result}");
    let runs = ledger_of(ledger, id);
    let mut per_step: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (step, attempt) in &runs {
        per_step.entry(*step).or_default().push(*attempt);
    }
    for step in 1..=steps {
        let attempts = per_step.get(&step).cloned().unwrap_or_default();
        if step < killed_in {
            assert_eq!(
                attempts,
                vec![1],
                "step {step} finished before the kill: {runs:?}"
            );
        } else if step == killed_in {
            assert!(
                attempts == vec![1, 2] || attempts == vec![1],
                "step {step} was in flight at the kill: {runs:?}"
            );
        } else {
            assert_eq!(
                attempts,
                vec![2],
                "step {step} ran after the takeover: {runs:?}"
            );
        }
    }
}

#[tokio::test]
async fn a_pipeline_killed_with_sigkill_resumes_on_restart_without_rerunning_steps_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let ledger = dir.path().join("ledger");
    let mut first = start(&database, &ledger, &[]);
    let s = Session::open(&first.url).await;
    let id = s
        .create_with("pipeline", json!({"steps": 4, "step_seconds": 1}))
        .await;
    reached(&ledger, &id, 3).await;
    kill_9(&mut first);
    // The next process on the file sees at once that its predecessor is gone.
    let second = start(&database, &ledger, &[]);
    // (Over SQLite each process keeps its own sessions: a new one there.)
    let s = Session::open(&second.url).await;
    finished_without_rerunning(&s, &id, &ledger, 4, 3).await;
}

#[tokio::test]
async fn a_pipeline_killed_with_sigkill_finishes_on_another_postgres_replica_without_rerunning_steps(
) {
    let Some(server) = mcp_tasks_store::suite::postgres::test_url() else {
        return;
    };
    let schema = mcp_tasks_store::suite::postgres::TestSchema::create(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger");
    let mut doomed = start(schema.url(), &ledger, &[]);
    let survivor = start(schema.url(), &ledger, &[]);
    let s = Session::open(&doomed.url).await;
    let id = s
        .create_with("pipeline", json!({"steps": 4, "step_seconds": 1}))
        .await;
    reached(&ledger, &id, 2).await;
    kill_9(&mut doomed);
    let s = s.on(&survivor.url);
    finished_without_rerunning(&s, &id, &ledger, 4, 2).await;
}
