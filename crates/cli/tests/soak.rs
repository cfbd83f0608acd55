//! The short form of `mcp-tasks bench soak` (PostgreSQL under time, docs/operations.md):
//! a few seconds against the test server (`MCP_TASKS_TEST_PG_URL`, in a schema of its
//! own; skipped without it, except under CI) must create tasks, answer some, see the
//! others expire and be swept, and read PostgreSQL's statistics of every table, with
//! no error, and once a second its snapshots (each table's statistics and the
//! interval's latency) and the verdict on the sizes. It fails when expiry, the
//! statistics query or the snapshots break. No timing is asserted: CI machines vary.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_store::suite::postgres::{test_url, TestSchema};
use serde_json::Value;
use std::process::Command;

#[tokio::test]
async fn short_soak_creates_answers_expires_and_reads_the_tables() {
    let Some(server) = test_url() else {
        return;
    };
    let schema = TestSchema::create(&server).await;
    let url = schema.url().to_string();
    // The soak runs as a process of its own (bounded: 4 s of creations, then at most
    // the ttl plus the sweep grace for the last ones, then the statistics).
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
            .args([
                "bench",
                "soak",
                "--postgres-url",
                &url,
                "--duration",
                "4s",
                "--rate",
                "25",
                "--ttl",
                "2s",
                "--connections",
                "4",
                "--snapshot-every",
                "1s",
                "--json",
            ])
            .output()
            .expect("run mcp-tasks bench soak")
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "soak failed:\n{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the report is not JSON ({e}):\n{stderr}"));
    let n = |k: &str| {
        report[k]
            .as_u64()
            .unwrap_or_else(|| panic!("no {k}: {report}"))
    };

    assert_eq!(report["kind"], "soak");
    assert_eq!(n("errors"), 0, "{report}");
    assert!(n("created") > 0, "{report}");
    assert!(n("answered") > 0, "{report}");
    assert!(n("left_to_expire") > 0, "{report}");
    // Every task left to expire was seen gone after its ttl: expiry and the sweep work.
    assert_eq!(n("swept"), n("left_to_expire"), "{report}");
    assert_eq!(n("expiry_late"), 0, "{report}");
    assert_eq!(
        n("created"),
        n("answered") + n("left_to_expire"),
        "{report}"
    );
    assert!(report["achieved_rate"].as_f64().unwrap() > 0.0, "{report}");
    assert!(
        report["create_latency"]["p99_us"].as_f64().is_some(),
        "{report}"
    );
    assert!(
        report["answer_latency"]["p50_us"].as_f64().is_some(),
        "{report}"
    );

    let tables = report["tables"].as_array().expect("tables");
    let table = |name: &str| {
        tables
            .iter()
            .find(|t| t["table"] == name)
            .unwrap_or_else(|| panic!("no statistics of table {name}: {report}"))
    };
    for name in ["tasks", "task_timeline", "sessions", "runners"] {
        let t = table(name);
        for k in ["live_tuples", "dead_tuples", "autovacuum_count"] {
            assert!(t[k].as_i64().is_some_and(|v| v >= 0), "{name}.{k}: {t}");
        }
        assert!(t["total_bytes"].as_i64().unwrap() > 0, "{name}: {t}");
        assert!(
            t["total_bytes"].as_i64().unwrap()
                >= t["table_bytes"].as_i64().unwrap() + t["index_bytes"].as_i64().unwrap(),
            "{name}: {t}"
        );
    }
    let under_load = report["tables_under_load"]
        .as_array()
        .expect("tables_under_load");
    assert!(
        under_load.iter().any(|t| t["table"] == "tasks"),
        "no statistics of table tasks under load: {report}"
    );
    let tasks = table("tasks");
    assert!(
        tasks["inserted"].as_u64().unwrap() >= n("created"),
        "{tasks}"
    );
    // The sweeper's deletes reached PostgreSQL (the statistics were awaited for them),
    // and they left dead tuples or an autovacuum that took them.
    assert!(tasks["deleted"].as_u64().unwrap() >= n("swept"), "{tasks}");
    assert!(tasks["table_bytes"].as_i64().unwrap() > 0, "{tasks}");
    assert!(
        tasks["dead_tuples"].as_i64().unwrap() > 0
            || tasks["autovacuum_count"].as_i64().unwrap() > 0,
        "{tasks}"
    );

    // Over time: a snapshot every second of the 4 s window (the last one as it closed),
    // each with every table's statistics and the latency of its own interval.
    let snapshots = report["snapshots"].as_array().expect("snapshots");
    assert_eq!(snapshots.len(), 4, "{report}");
    let ends: Vec<f64> = snapshots
        .iter()
        .map(|s| s["to_s"].as_f64().unwrap())
        .collect();
    assert_eq!(ends, [1.0, 2.0, 3.0, 4.0], "{report}");
    let with_rows_and_latency = snapshots
        .iter()
        .filter(|s| {
            s["stats_error"].is_null()
                && s["tables"].as_array().is_some_and(|t| {
                    t.iter().any(|t| {
                        t["table"] == "tasks" && t["total_bytes"].as_i64().is_some_and(|b| b > 0)
                    })
                })
                && s["create_latency"]["p99_us"].as_f64().is_some()
                && s["answer_latency"]["p99_us"].as_f64().is_some()
                && s["rate"].as_f64().is_some_and(|r| r > 0.0)
        })
        .count();
    assert!(with_rows_and_latency >= 2, "{report}");
    // The intervals split the run: their creations and answers add up to its own.
    let sum = |k: &str| {
        snapshots
            .iter()
            .map(|s| s[k].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(sum("created"), n("created"), "{report}");
    assert_eq!(sum("answered"), n("answered"), "{report}");
    assert_eq!(sum("errors"), n("errors"), "{report}");
    // The verdict compares the snapshot at a third of the window (2 s) with the last.
    let verdict = &report["size_verdict"];
    assert_eq!(verdict["from_s"].as_f64(), Some(2.0), "{report}");
    assert_eq!(verdict["to_s"].as_f64(), Some(4.0), "{report}");
    assert!(
        verdict["from_bytes"].as_i64().is_some_and(|b| b > 0),
        "{report}"
    );
    assert!(verdict["growth_pct"].as_f64().is_some(), "{report}");
    assert!(verdict["levels_off"].is_boolean(), "{report}");
}

/// The documented one-hour command uses real flags of `bench soak`.
#[test]
fn the_documented_soak_command_uses_real_flags() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let docs = std::fs::read_to_string(root.join("docs/operations.md")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["bench", "soak", "--help"])
        .env_clear()
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let commands: Vec<&str> = docs
        .lines()
        .filter(|l| l.starts_with("target/release/mcp-tasks bench soak"))
        .collect();
    assert!(
        !commands.is_empty(),
        "docs/operations.md shows no soak command"
    );
    for line in commands {
        for flag in line.split_whitespace().filter_map(|w| w.strip_prefix("--")) {
            assert!(
                help.contains(&format!("--{flag}")),
                "{line}: --{flag} is not a flag of bench soak"
            );
        }
    }
}
