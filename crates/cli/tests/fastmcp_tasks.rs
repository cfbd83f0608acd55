//! The `mcp-tasks` CLI, run as a person would, against a server written with FastMCP
//! and `fastmcp-tasks` 4.1.4 (the 2026-07-28 Tasks extension on a Docket `memory://`
//! queue): `tests/interop/fastmcp_tasks_server.py`, one per test on a free loopback port.
//!
//! Checks: without `--wire` the CLI speaks the extension (the "task started" line and
//! `--detach --json` say which wire); status messages shown while the task works; a
//! question answered at the prompt in a pseudo-terminal; `--detach`, then `watch ID`
//! and `cancel ID` from new processes. Runs when `MCP_TASKS_INTEROP_FASTMCP_PYTHON` is
//! set (`tests/interop/run.sh` sets it), else prints a notice and passes.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_testkit::peers;
use serde_json::Value;

mod common;

use common::{command, json_out, run, stderr, stdout};

#[test]
fn call_speaks_the_extension_without_flags_and_shows_status_messages() {
    let Some(server) = peers::fastmcp_tasks() else {
        return;
    };
    let state = tempfile::tempdir().unwrap();
    let out = run(
        state.path(),
        &[
            "call",
            &server.url,
            "slow_steps",
            "--arg",
            "steps=3",
            "--arg",
            "step_ms=600",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout(&out).trim(), "done after 3 steps");
    assert!(err.contains("(wire 2026-07-28, Tasks extension)"), "{err}");
    assert!(err.contains("working: step 1 of 3"), "{err}");
    assert!(err.contains("working: step 3 of 3"), "{err}");

    let detached = json_out(&run(
        state.path(),
        &[
            "call",
            &server.url,
            "slow_steps",
            "--arg",
            "steps=1",
            "--detach",
            "--json",
        ],
    ));
    assert_eq!(detached["wire"], "2026-07-28", "{detached}");
    assert_eq!(detached["sessionId"], Value::Null, "stateless: no session");
}

#[test]
fn a_question_in_a_task_is_answered_at_the_prompt() {
    let Some(server) = peers::fastmcp_tasks() else {
        return;
    };
    let state = tempfile::tempdir().unwrap();
    let cmd = command(
        state.path(),
        &["call", &server.url, "ask_name", "--arg", "greeting=Hi"],
    );
    let mut p = rexpect::session::spawn_command(cmd, Some(60_000)).expect("spawn in a pty");
    p.exp_string("What is your name?").unwrap();
    p.send_line("Ada").unwrap();
    p.exp_string("Hi, Ada!").unwrap();
    p.exp_eof().unwrap();
    let status = format!("{:?}", p.process().wait().unwrap());
    assert!(
        status.starts_with("Exited(") && status.ends_with(", 0)"),
        "{status}"
    );
}

#[test]
fn detach_then_watch_and_cancel_by_id_from_new_processes() {
    let Some(server) = peers::fastmcp_tasks() else {
        return;
    };
    let state = tempfile::tempdir().unwrap();
    let st = state.path();
    let url = server.url.as_str();

    let started = run(
        st,
        &[
            "call",
            url,
            "slow_steps",
            "--arg",
            "steps=2",
            "--arg",
            "step_ms=300",
            "--detach",
        ],
    );
    assert_eq!(started.status.code(), Some(0), "{}", stderr(&started));
    let id = stdout(&started).trim().to_string();
    assert!(!id.is_empty());
    let watched = run(st, &["watch", url, &id, "--json"]);
    assert_eq!(watched.status.code(), Some(0), "{}", stderr(&watched));
    assert_eq!(
        json_out(&watched)["structuredContent"]["result"],
        "done after 2 steps"
    );

    let long = json_out(&run(
        st,
        &["call", url, "run_until_cancelled", "--detach", "--json"],
    ));
    let long_id = long["taskId"].as_str().unwrap();
    let got = json_out(&run(st, &["get", url, long_id, "--json"]));
    assert_eq!(got["taskId"], long_id);
    assert_eq!(got["status"], "working");
    let cancelled = run(st, &["cancel", url, long_id, "--json"]);
    assert_eq!(cancelled.status.code(), Some(0), "{}", stderr(&cancelled));
    assert_eq!(json_out(&cancelled)["status"], "cancelled");
    let watched = run(st, &["watch", url, long_id, "--json"]);
    assert_eq!(watched.status.code(), Some(3), "{}", stderr(&watched));
    assert_eq!(json_out(&watched)["status"], "cancelled");
}
