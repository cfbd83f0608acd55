//! CI smoke test of `mcp-tasks bench`: a seconds-long `--quick` run against a spawned
//! `mcp-tasks serve --demo --database memory:` must produce parsable JSON lines with
//! positive figures. No timing is asserted: CI machines vary.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::process::Command;

#[test]
fn quick_bench_prints_positive_figures_as_json_lines() {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args(["bench", "--quick", "--spawn", "memory", "--json"])
        .output()
        .expect("run mcp-tasks bench");
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
    let scenarios: Vec<&str> = figures
        .iter()
        .map(|f| f["scenario"].as_str().unwrap())
        .collect();
    for want in [
        "create",
        "memory",
        "get",
        "ping",
        "e2e_task",
        "e2e_task_no_get",
        "e2e_sync",
    ] {
        assert!(
            scenarios.contains(&want),
            "no {want} figure in {scenarios:?}"
        );
    }
    for f in &figures {
        assert_eq!(f["target"], "mcp-tasks/memory");
        assert_eq!(f["wire"], "2025-11-25");
        let value = f["value"]["median"].as_f64().unwrap();
        if f["scenario"] == "memory" {
            // RSS can shrink between two samples; only its presence is checked.
            assert!(f["rss_bytes"].as_f64().unwrap() > 0.0, "{f}");
        } else {
            assert!(value > 0.0, "non-positive figure: {f}");
            assert!(f["p50_us"].as_f64().unwrap() > 0.0, "{f}");
            assert!(f["server_cpu_us_per_op"].as_f64().is_some(), "{f}");
        }
    }
    assert!(records.iter().any(|r| r["kind"] == "check"));
}
