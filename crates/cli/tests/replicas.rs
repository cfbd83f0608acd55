//! The short form of `mcp-tasks bench replicas` (one PostgreSQL, several replicas,
//! docs/operations.md): against the test server (`MCP_TASKS_TEST_PG_URL`; skipped
//! without it, except under CI), one and two replicas must both create and read tasks,
//! and with two some reads must reach the replica that did not create the task. Every
//! run's schema must be gone afterwards, and the replicas must not have used the
//! schema of the URL given (each run has its own). No timing is asserted: CI machines
//! vary.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_store::suite::postgres::{test_url, TestSchema};
use serde_json::Value;
use sqlx::{Connection, PgConnection};
use std::process::{Command, Stdio};

#[tokio::test]
async fn one_and_two_replicas_create_and_read_across_replicas() {
    let Some(server) = test_url() else {
        return;
    };
    // A URL that already picks a schema: the bench's own search_path must win.
    let given = TestSchema::create(&server).await;
    let url = given.url().to_string();
    let (pid, out) = tokio::task::spawn_blocking(move || {
        let child = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
            .args([
                "bench",
                "replicas",
                "--postgres-url",
                &url,
                "--replicas",
                "1,2",
                "--connections",
                "4",
                "--live",
                "40",
                "--duration",
                "500ms",
                "--repeat",
                "1",
                "--json",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcp-tasks bench replicas");
        let pid = child.id();
        (pid, child.wait_with_output().expect("run bench replicas"))
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench replicas failed:\n{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the report is not JSON ({e}):\n{stderr}"));
    assert_eq!(report["kind"], "replicas");
    let rows = report["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2, "{report}");
    for (row, n) in rows.iter().zip([1u64, 2]) {
        assert_eq!(row["replicas"].as_u64(), Some(n), "{row}");
        for phase in ["create", "get"] {
            let p = &row[phase];
            assert!(
                p["rate"]["median"].as_f64().unwrap() > 0.0,
                "{phase}: {row}"
            );
            assert!(p["p99_us"].as_f64().unwrap() > 0.0, "{phase}: {row}");
            // One CPU figure per replica, each counted (these are local processes).
            let each = p["cpu_us_per_replica"].as_array().expect("per replica");
            assert_eq!(each.len() as u64, n, "{phase}: {row}");
            assert!(each.iter().all(|c| c.as_f64().is_some()), "{phase}: {row}");
        }
    }
    // One replica: every read is on the creator. Two: reads go round-robin whatever
    // the creator, so some tasks created on one replica were read through the other.
    assert_eq!(rows[0]["cross_replica_reads"].as_u64(), Some(0), "{report}");
    assert!(
        rows[1]["cross_replica_reads"].as_u64().unwrap() > 0,
        "{report}"
    );

    let mut conn = PgConnection::connect(&server).await.unwrap();
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_namespace WHERE nspname LIKE $1")
        .bind(format!("mcp_tasks_bench_replicas_{pid}_%"))
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(left, 0, "the bench left its run schemas behind");
    let tables: i64 = sqlx::query_scalar("SELECT count(*) FROM pg_tables WHERE schemaname = $1")
        .bind(given.name())
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        tables, 0,
        "the replicas created tables in the URL's schema, not the run's"
    );
}

/// The documented command uses real flags of `bench replicas`.
#[test]
fn the_documented_replicas_command_uses_real_flags() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let docs = std::fs::read_to_string(root.join("docs/operations.md")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["bench", "replicas", "--help"])
        .env_clear()
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let commands: Vec<&str> = docs
        .lines()
        .filter(|l| l.starts_with("target/release/mcp-tasks bench replicas"))
        .collect();
    assert!(
        !commands.is_empty(),
        "docs/operations.md shows no bench replicas command"
    );
    for line in commands {
        for flag in line.split_whitespace().filter_map(|w| w.strip_prefix("--")) {
            let flag = flag.split('=').next().unwrap_or(flag);
            assert!(
                help.contains(&format!("--{flag}")),
                "{line}: --{flag} is not a flag of bench replicas"
            );
        }
    }
}
