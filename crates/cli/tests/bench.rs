//! CI smoke test of `mcp-tasks bench`: a seconds-long `--quick` run against spawned
//! `mcp-tasks serve --demo` servers (memory and SQLite, both task wires) must produce
//! parsable JSON lines with every figure, positive values and the target checks. No
//! timing is asserted: CI machines vary.
//!
//! With `MCP_TASKS_BENCH_RMCP` pointing at a built `bench/rmcp-task-server` binary the
//! run also measures rmcp (`--compare-rmcp`); without it that part is skipped (CI never
//! builds rmcp). Likewise `MCP_TASKS_BENCH_TURUL` with a built `bench/turul-task-server`
//! adds turul on its memory and SQLite stores (`--compare-turul`).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::process::Command;

const WIRES: [&str; 2] = ["2025-11-25", "2026-07-28"];

#[test]
fn quick_bench_prints_every_figure_on_both_wires_as_json_lines() {
    let rmcp = std::env::var("MCP_TASKS_BENCH_RMCP").ok();
    let turul = std::env::var("MCP_TASKS_BENCH_TURUL").ok();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"));
    cmd.args([
        "bench",
        "--quick",
        "--spawn",
        "memory,sqlite",
        "--wires",
        "2025-11-25,2026-07-28",
        "--json",
    ]);
    match &rmcp {
        Some(path) => {
            cmd.args(["--compare-rmcp", path]);
        }
        None => eprintln!("MCP_TASKS_BENCH_RMCP is not set: rmcp is not measured"),
    }
    match &turul {
        Some(path) => {
            cmd.args(["--compare-turul", path]);
        }
        None => eprintln!("MCP_TASKS_BENCH_TURUL is not set: turul is not measured"),
    }
    let out = cmd.output().expect("run mcp-tasks bench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench failed:\n{stderr}");
    let stdout = String::from_utf8(out.stdout).expect("utf-8 output");
    let records: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
        .collect();

    let machine = &records[0];
    assert_eq!(machine["kind"], "machine");
    assert!(machine["cores"].as_u64().unwrap() >= 1);

    let figures: Vec<&Value> = records.iter().filter(|r| r["kind"] == "figure").collect();
    let has = |target: &str, wire: &str, scenario: &str| {
        figures
            .iter()
            .any(|f| f["target"] == target && f["wire"] == wire && f["scenario"] == scenario)
    };
    for target in ["mcp-tasks/memory", "mcp-tasks/sqlite"] {
        for wire in WIRES {
            for want in ["create", "memory", "get", "ping", "e2e_task", "e2e_sync"] {
                assert!(has(target, wire, want), "no {target} {wire} {want} figure");
            }
        }
        assert!(has(target, "2025-11-25", "e2e_task_no_get"), "{target}");
        for want in ["journal", "journal_concurrent"] {
            assert!(has(target, "2025-11-25", want), "no {target} {want} figure");
        }
    }
    assert!(has("disk", "", "fsync"), "no fsync figure");
    assert!(
        has("mcp-tasks/sqlite", "2025-11-25", "retained"),
        "no retained figure"
    );
    if rmcp.is_some() {
        for want in ["create", "memory", "get", "e2e_task", "e2e_sync"] {
            assert!(has("rmcp", "2026-07-28", want), "no rmcp {want} figure");
        }
    }
    if turul.is_some() {
        for target in ["turul/memory", "turul/sqlite"] {
            for want in ["create", "memory", "get", "e2e_task", "e2e_sync"] {
                assert!(has(target, "2026-07-28", want), "no {target} {want} figure");
            }
        }
    }
    for f in &figures {
        let value = f["value"]["median"].as_f64().unwrap();
        match f["scenario"].as_str().unwrap() {
            // RSS can shrink between two samples; only its presence is checked.
            "memory" | "retained" => assert!(f["rss_bytes"].as_f64().unwrap() > 0.0, "{f}"),
            "fsync" => {
                assert!(value > 0.0, "{f}");
                assert!(f["p50_us"].as_f64().unwrap() > 0.0, "{f}");
            }
            scenario => {
                assert!(value > 0.0, "non-positive figure: {f}");
                assert!(f["p50_us"].as_f64().unwrap() > 0.0, "{f}");
                assert!(f["server_cpu_us_per_op"].as_f64().is_some(), "{f}");
                if scenario == "e2e_task" {
                    // A plain result counts as zero polls; a task needs at least one.
                    assert!(f["polls_per_op"].as_f64().unwrap() >= 0.0, "{f}");
                }
            }
        }
    }

    let checks: Vec<&Value> = records.iter().filter(|r| r["kind"] == "check").collect();
    let check = |name: &str, target: &str| {
        checks
            .iter()
            .find(|c| c["name"] == name && c["target"] == target)
            .unwrap_or_else(|| panic!("no check {name:?} on {target}: {checks:#?}"))
    };
    for c in [
        check("durable create rate", "mcp-tasks/sqlite"),
        check("create vs ping", "mcp-tasks/memory"),
        check("instant task vs sync call", "mcp-tasks/memory"),
        check("durable instant task (create + result)", "mcp-tasks/sqlite"),
        check("memory per live task", "mcp-tasks/memory"),
        check("RSS with 200 completed tasks", "mcp-tasks/sqlite"),
    ] {
        let met = c["met"].as_bool().unwrap();
        assert!(c["value"].as_f64().is_some(), "{c}");
        assert_eq!(c["missed_by_pct"].is_null(), met, "{c}");
    }
    if rmcp.is_some() {
        check("tasks/get vs rmcp", "mcp-tasks/memory");
    }
}
