//! The `mcp-tasks` client commands against task servers written with other Rust MCP
//! libraries, built from `tests/interop/rmcp-server` (rmcp 3.11, Tasks extension wire
//! only) and `tests/interop/tower-mcp-server` (tower-mcp 0.25, both wires at one URL):
//! `call` (following a task, answering a question at the terminal), `call --detach`,
//! `watch`, `cancel`, each wire forced with `--wire`, and `--wire auto` (the default)
//! picking the extension wire by itself, as `call --detach --json` shows.
//!
//! `tests/interop/run.sh` builds the servers and points `MCP_TASKS_INTEROP_RMCP_SERVER`
//! and `MCP_TASKS_INTEROP_TOWER_MCP_SERVER` at the binaries; without them each test
//! prints a notice and passes (the plain `cargo test --workspace` runs before the
//! peers are built). Each test starts its own server on a free loopback port.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_testkit::peers::{RustPeer, RMCP, TOWER_MCP};

use std::process::{Command, Output};

mod common;

use common::{json_out, state_dir, stderr};

const EXTENSION: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

/// The binary with `args` (and `--wire WIRE` when given), its journal in the test
/// binary's shared folder.
fn command(args: &[&str], wire: Option<&str>) -> Command {
    let mut c = common::command(state_dir(), args);
    if let Some(w) = wire {
        c.args(["--wire", w]);
    }
    c
}

fn cli(args: &[&str], wire: Option<&str>) -> Output {
    mcp_tasks_testkit::cli::run(command(args, wire))
}

/// `call` follows `slow_steps` to its end (the status lines count the steps);
/// `call --detach` then `watch` picks a task up by id.
fn call_detach_and_watch(peer: RustPeer, wire: Option<&str>, expect: &str) {
    let Some(server) = peer.start() else { return };
    let url = server.url.as_str();

    let done = cli(
        &[
            "call",
            url,
            "slow_steps",
            "--arg",
            "steps=3",
            "--arg",
            // tower-mcp suggests polling every 2 s: steps long enough for one to show.
            "step_ms=1500",
        ],
        wire,
    );
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    assert_eq!(String::from_utf8_lossy(&done.stdout).trim(), "done 3 steps");
    let log = stderr(&done);
    assert!(log.contains("task "), "not run as a task: {log}");
    assert!(
        log.lines()
            .any(|l| l.contains(": step ") && l.ends_with(" of 3")),
        "no status lines: {log}"
    );

    let detached = cli(
        &[
            "call",
            url,
            "slow_steps",
            "--arg",
            "steps=2",
            "--arg",
            "step_ms=300",
            "--detach",
            "--json",
        ],
        wire,
    );
    assert_eq!(detached.status.code(), Some(0), "{}", stderr(&detached));
    let detached = json_out(&detached);
    assert_eq!(detached["wire"], expect, "{}: {detached}", peer.name);
    let id = detached["taskId"].as_str().unwrap();
    let watched = cli(&["watch", url, id, "--json"], wire);
    assert_eq!(watched.status.code(), Some(0), "{}", stderr(&watched));
    assert_eq!(json_out(&watched)["content"][0]["text"], "done 2 steps");
    let got = json_out(&cli(&["get", url, id, "--json"], wire));
    assert_eq!(got["status"], "completed");
}

/// `cancel` of a detached `until_cancelled`; watching it then exits 3, `cancelled`.
fn cancel_a_detached_task(peer: RustPeer, wire: Option<&str>, expect: &str) {
    let Some(server) = peer.start() else { return };
    let url = server.url.as_str();
    let detached = cli(
        &["call", url, "until_cancelled", "--detach", "--json"],
        wire,
    );
    assert_eq!(detached.status.code(), Some(0), "{}", stderr(&detached));
    let detached = json_out(&detached);
    assert_eq!(detached["wire"], expect, "{}: {detached}", peer.name);
    let id = detached["taskId"].as_str().unwrap();
    let running = json_out(&cli(&["get", url, id, "--json"], wire));
    assert_eq!(running["status"], "working");
    let cancelled = cli(&["cancel", url, id, "--json"], wire);
    assert_eq!(cancelled.status.code(), Some(0), "{}", stderr(&cancelled));
    let watched = cli(&["watch", url, id, "--json"], wire);
    assert_eq!(watched.status.code(), Some(3), "{}", stderr(&watched));
    assert_eq!(json_out(&watched)["status"], "cancelled");
}

/// A person at the terminal answers `ask_name`'s question; the greeting is printed.
fn answer_at_the_prompt(peer: RustPeer, wire: Option<&str>) {
    let Some(server) = peer.start() else { return };
    let cmd = command(&["call", &server.url, "ask_name"], wire);
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn in a pty");
    p.exp_string("What is your name?").unwrap();
    p.exp_string("Name: ").unwrap();
    p.send_line("Ada").unwrap();
    p.exp_string("hello Ada").unwrap();
    p.exp_eof().unwrap();
    let status = format!("{:?}", p.process().wait().unwrap());
    assert!(
        status.starts_with("Exited(") && status.ends_with(", 0)"),
        "{status}"
    );
}

// ---------------------------------------------------------------- rmcp (extension only)

#[test]
fn rmcp_call_detach_and_watch_with_auto_wire() {
    call_detach_and_watch(RMCP, None, EXTENSION);
}

#[test]
fn rmcp_cancel_with_auto_wire() {
    cancel_a_detached_task(RMCP, None, EXTENSION);
}

#[test]
fn rmcp_cancel_on_the_extension_wire() {
    cancel_a_detached_task(RMCP, Some(EXTENSION), EXTENSION);
}

#[test]
fn rmcp_question_answered_at_the_prompt() {
    answer_at_the_prompt(RMCP, None);
}

// ---------------------------------------------------------------- tower-mcp (both wires)

#[test]
fn tower_mcp_call_detach_and_watch_with_auto_wire() {
    call_detach_and_watch(TOWER_MCP, None, EXTENSION);
}

#[test]
fn tower_mcp_call_detach_and_watch_on_the_2025_wire() {
    call_detach_and_watch(TOWER_MCP, Some(LEGACY), LEGACY);
}

#[test]
fn tower_mcp_cancel_on_the_extension_wire() {
    cancel_a_detached_task(TOWER_MCP, Some(EXTENSION), EXTENSION);
}

#[test]
fn tower_mcp_cancel_on_the_2025_wire() {
    cancel_a_detached_task(TOWER_MCP, Some(LEGACY), LEGACY);
}

#[test]
fn tower_mcp_question_answered_at_the_prompt_with_auto_wire() {
    answer_at_the_prompt(TOWER_MCP, None);
}

#[test]
fn tower_mcp_question_answered_at_the_prompt_on_the_extension_wire() {
    answer_at_the_prompt(TOWER_MCP, Some(EXTENSION));
}
