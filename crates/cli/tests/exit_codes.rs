//! One story for how a task ended, in every client command that shows it: `call`,
//! `watch` and `get` exit 0 completed, 1 failed (a tool error included, on both wires),
//! 3 cancelled, and each says a failure once (the text appears exactly once in all
//! they print).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Output, Stdio};

mod common;

use common::{command, json_out, run, serve_tools, stderr, stdout, Server};

/// The demo's `failing_job` text (a tool error).
const TOOL_ERROR: &str = "failing_job failed on purpose after 1 s";
/// The fixtures' `protocol_error_job` text (a JSON-RPC error).
const PROTOCOL_ERROR: &str = "protocol_error_job failed on purpose with a protocol error";
/// What our server says of a task the client cancelled.
const CANCELLED: &str = "cancelled by the client";

const WIRES: [&str; 2] = ["2025-11-25", "2026-07-28"];

fn start() -> Server {
    serve_tools(
        "--conformance-fixtures",
        // Every call a task, however quick.
        &[
            "--database",
            "memory:",
            "--poll-interval",
            "200ms",
            "--task-after",
            "0s",
        ],
    )
}

/// How often `text` appears in everything the command printed.
fn times(o: &Output, text: &str) -> usize {
    format!("{}{}", stdout(o), stderr(o)).matches(text).count()
}

/// Checks the exit status and that `text` was said exactly once.
fn ends(o: &Output, code: i32, text: &str, what: &str) {
    let all = format!("stdout:\n{}\nstderr:\n{}", stdout(o), stderr(o));
    assert_eq!(o.status.code(), Some(code), "{what}: {all}");
    assert_eq!(times(o, text), 1, "{what}: '{text}' not said once: {all}");
}

/// Starts `tool` detached on `wire`; its id.
fn detach(state: &std::path::Path, url: &str, wire: &str, tool: &str, args: &[&str]) -> String {
    let mut argv = vec!["call", "--wire", wire, url, tool, "--detach", "--json"];
    argv.extend_from_slice(args);
    let out = run(state, &argv);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_out(&out);
    v["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{wire} {tool}: {v} {}", stderr(&out)))
        .to_string()
}

#[test]
fn call_watch_and_get_exit_by_how_the_task_ended_and_say_a_failure_once() {
    let server = start();
    let url = server.url.as_str();
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path();
    for wire in WIRES {
        // call: completed 0 (the result once), tool error 1, failed 1.
        let done = run(
            st,
            &[
                "call",
                "--wire",
                wire,
                url,
                "slow_compute",
                "--arg",
                "seconds=0",
            ],
        );
        ends(
            &done,
            0,
            "finished after 0 s",
            &format!("{wire} call completed"),
        );
        let tool = run(st, &["call", "--wire", wire, url, "failing_job"]);
        ends(&tool, 1, TOOL_ERROR, &format!("{wire} call tool error"));
        assert!(stderr(&tool).contains(&format!("✘ failed: {TOOL_ERROR}")));
        let failed = run(st, &["call", "--wire", wire, url, "protocol_error_job"]);
        ends(&failed, 1, PROTOCOL_ERROR, &format!("{wire} call failed"));

        // watch and get of detached tasks, once each has ended.
        let cases = [
            (
                "slow_compute",
                vec!["--arg", "seconds=0"],
                0,
                "finished after 0 s",
            ),
            ("failing_job", vec![], 1, TOOL_ERROR),
            ("protocol_error_job", vec![], 1, PROTOCOL_ERROR),
        ];
        for (tool, args, code, text) in cases {
            let id = detach(st, url, wire, tool, &args);
            let watched = run(st, &["watch", "--wire", wire, url, &id]);
            ends(&watched, code, text, &format!("{wire} watch {tool}"));
            let got = run(st, &["get", "--wire", wire, url, &id]);
            let all = format!("{}{}", stdout(&got), stderr(&got));
            assert_eq!(got.status.code(), Some(code), "{wire} get {tool}: {all}");
            if code != 0 {
                assert_eq!(times(&got, text), 1, "{wire} get {tool}: {all}");
                assert!(stdout(&got).contains("status   failed"), "{all}");
            }
            let result = run(st, &["get", "--wire", wire, url, &id, "--result"]);
            ends(&result, code, text, &format!("{wire} get --result {tool}"));
        }

        // Cancelled: 3 from cancel's task, from watch, get and get --result.
        let id = detach(st, url, wire, "slow_compute", &["--arg", "seconds=60"]);
        let cancelled = run(st, &["cancel", "--wire", wire, url, &id]);
        assert_eq!(cancelled.status.code(), Some(0), "{}", stderr(&cancelled));
        let watched = run(st, &["watch", "--wire", wire, url, &id]);
        ends(&watched, 3, CANCELLED, &format!("{wire} watch cancelled"));
        assert!(
            stderr(&watched).contains("⊘ cancelled"),
            "{}",
            stderr(&watched)
        );
        let got = run(st, &["get", "--wire", wire, url, &id]);
        ends(&got, 3, CANCELLED, &format!("{wire} get cancelled"));
        let got = run(st, &["get", "--wire", wire, url, &id, "--json"]);
        assert_eq!(got.status.code(), Some(3));
        assert_eq!(json_out(&got)["status"], "cancelled");
    }
}

/// A `call` whose task is cancelled elsewhere (another terminal, the board) ends with
/// 3 and says so once.
#[test]
fn a_call_cancelled_elsewhere_exits_3_and_says_it_once() {
    let server = start();
    let url = server.url.as_str();
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path();
    for wire in WIRES {
        let mut call = command(
            st,
            &[
                "call",
                "--wire",
                wire,
                url,
                "slow_compute",
                "--arg",
                "seconds=60",
            ],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        let mut lines = BufReader::new(call.stderr.take().unwrap()).lines();
        let mut seen = String::new();
        let id = loop {
            let line = lines.next().expect("the call said its task").unwrap();
            seen.push_str(&line);
            seen.push('\n');
            if let Some(rest) = line.strip_prefix("task ") {
                break rest
                    .split(' ')
                    .next()
                    .unwrap()
                    .trim_end_matches(';')
                    .to_string();
            }
        };
        let cancelled = run(st, &["cancel", url, &id]);
        assert_eq!(cancelled.status.code(), Some(0), "{}", stderr(&cancelled));
        for line in lines {
            seen.push_str(&line.unwrap());
            seen.push('\n');
        }
        let out = call.wait_with_output().unwrap();
        let all = format!("{}{seen}", stdout(&out));
        assert_eq!(out.status.code(), Some(3), "{wire}: {all}");
        assert_eq!(all.matches(CANCELLED).count(), 1, "{wire}: {all}");
    }
}
