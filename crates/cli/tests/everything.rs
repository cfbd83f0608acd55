//! The `mcp-tasks` CLI, run as a person would, against
//! `@modelcontextprotocol/server-everything` 2026.8.31 (2025-11-25 tasks through the
//! TypeScript SDK), over Streamable HTTP (one server per test, free loopback port) and
//! stdio.
//!
//! Checks: without `--wire` the CLI falls back to 2025-11-25 (the "task started" line
//! and `--detach --json` say so); the task-required `simulate-research-query` shows its
//! status messages and its clarification is answered at the prompt in a
//! pseudo-terminal; a sampling request answered at the prompt; progress lines of
//! `trigger-long-running-operation`; `--detach`, then `watch` and `cancel` by id from
//! new processes rejoining the session. Runs when `MCP_TASKS_INTEROP_EVERYTHING` is set
//! (`tests/interop/run.sh` sets it), else prints a notice and passes.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_testkit::peers;

mod common;

use common::{command, json_out, run, stderr, stdout};

/// Waits for the program in the pseudo-terminal to end with status 0.
fn exits_zero(mut p: rexpect::session::PtySession) {
    p.exp_eof().unwrap();
    let status = format!("{:?}", p.process().wait().unwrap());
    assert!(
        status.starts_with("Exited(") && status.ends_with(", 0)"),
        "{status}"
    );
}

#[test]
fn the_research_task_asks_at_the_prompt_on_2025_11_25_without_flags() {
    let Some(server) = peers::everything_http() else {
        return;
    };
    let state = tempfile::tempdir().unwrap();
    let cmd = command(
        state.path(),
        &[
            "call",
            &server.url,
            "simulate-research-query",
            "--arg",
            "topic=python",
            "--arg",
            "ambiguous=true",
        ],
    );
    let mut p = rexpect::session::spawn_command(cmd, Some(60_000)).expect("spawn in a pty");
    p.exp_string("(wire 2025-11-25)").unwrap();
    p.exp_string("2) Python snake species").unwrap();
    p.exp_string("Clarification").unwrap();
    p.send_line("2").unwrap();
    p.exp_string("# Research Report: python (snake)").unwrap();
    exits_zero(p);
}

#[test]
fn status_messages_and_progress_lines_without_a_terminal() {
    let Some(server) = peers::everything_http() else {
        return;
    };
    let state = tempfile::tempdir().unwrap();
    let url = server.url.as_str();
    let out = run(
        state.path(),
        &["call", url, "simulate-research-query", "--arg", "topic=go"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(stdout(&out).contains("# Research Report: go"));
    assert!(err.contains("(wire 2025-11-25)"), "{err}");
    assert!(err.contains("working: Gathering sources..."), "{err}");
    assert!(err.contains("working: Generating report..."), "{err}");

    let out = run(
        state.path(),
        &[
            "call",
            url,
            "trigger-long-running-operation",
            "--arg",
            "duration=1",
            "--arg",
            "steps=3",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for line in ["progress 1/3", "progress 2/3", "progress 3/3"] {
        assert!(err.contains(line), "{err}");
    }
}

#[test]
fn sampling_is_answered_at_the_prompt() {
    let Some(server) = peers::everything_http() else {
        return;
    };
    let state = tempfile::tempdir().unwrap();
    let cmd = command(
        state.path(),
        &[
            "call",
            &server.url,
            "trigger-sampling-request",
            "--arg",
            "prompt=autumn",
        ],
    );
    let mut p = rexpect::session::spawn_command(cmd, Some(60_000)).expect("spawn in a pty");
    p.exp_string("context: autumn").unwrap();
    p.exp_string("Reply (as the model)").unwrap();
    p.send_line("leaves fall").unwrap();
    p.exp_string("\"text\": \"leaves fall\"").unwrap();
    exits_zero(p);
}

#[test]
fn detach_then_watch_and_cancel_by_id_rejoining_the_session() {
    let Some(server) = peers::everything_http() else {
        return;
    };
    let state = tempfile::tempdir().unwrap();
    let st = state.path();
    let url = server.url.as_str();

    let detached = json_out(&run(
        st,
        &[
            "call",
            url,
            "simulate-research-query",
            "--arg",
            "topic=rust",
            "--detach",
            "--json",
        ],
    ));
    assert_eq!(detached["wire"], "2025-11-25", "{detached}");
    let id = detached["taskId"].as_str().unwrap();
    // The server keeps tasks per session: later commands rejoin it.
    let session = detached["sessionId"].as_str().expect("a session");
    let watched = run(st, &["watch", url, "--session", session, id]);
    assert_eq!(watched.status.code(), Some(0), "{}", stderr(&watched));
    assert!(stdout(&watched).contains("# Research Report: rust"));

    let long = json_out(&run(
        st,
        &[
            "call",
            url,
            "simulate-research-query",
            "--arg",
            "topic=cancel me",
            "--detach",
            "--json",
        ],
    ));
    let long_id = long["taskId"].as_str().unwrap();
    let session = long["sessionId"].as_str().unwrap();
    let cancelled = run(
        st,
        &["cancel", url, "--session", session, long_id, "--json"],
    );
    assert_eq!(cancelled.status.code(), Some(0), "{}", stderr(&cancelled));
    assert_eq!(json_out(&cancelled)["status"], "cancelled");
    let watched = run(st, &["watch", url, "--session", session, long_id, "--json"]);
    assert_eq!(watched.status.code(), Some(3), "{}", stderr(&watched));
    assert_eq!(json_out(&watched)["status"], "cancelled");
}

#[test]
fn over_stdio_a_task_runs_to_its_report() {
    let Some((node, args)) = peers::everything_stdio() else {
        return;
    };
    let state = tempfile::tempdir().unwrap();
    let mut argv = vec![
        "call",
        "simulate-research-query",
        "--arg",
        "topic=zig",
        "--json",
        "--",
        node.as_str(),
    ];
    argv.extend(args.iter().map(String::as_str));
    let out = run(state.path(), &argv);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_out(&out)["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(report.contains("# Research Report: zig"), "{report}");
}
