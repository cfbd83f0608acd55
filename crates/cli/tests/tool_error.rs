//! One story for a tool error (`isError: true`) in the front ends: whichever wire the CLI
//! speaks (2025-11-25 says `failed`, the Tasks extension `completed`), `call`, `watch`,
//! `get` and `list` say "failed" with the tool's text, and the board's API names the
//! tool error.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod board_support;
mod common;

use board_support::{base_of, Person};
use common::{json_out, run, serve, stderr, stdout};

/// The demo's `failing_job` result text.
const TEXT: &str = "failing_job failed on purpose after 1 s";

#[tokio::test]
async fn a_tool_error_reads_tool_error_in_the_cli_on_both_wires_and_on_the_board() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path();
    // A store every read goes back to (no record kept in memory between reads).
    let db = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let server = serve(&["--database", &db, "--poll-interval", "200ms"]);
    let url = server.url.as_str();
    let mut ids = Vec::new();
    for wire in ["2025-11-25", "2026-07-28"] {
        let started = run(
            state,
            &[
                "call",
                "--wire",
                wire,
                url,
                "failing_job",
                "--detach",
                "--json",
            ],
        );
        let id = json_out(&started)["taskId"].as_str().unwrap().to_string();
        // `watch` follows it to its end: failed, exit status 1, the tool's words.
        let watched = run(state, &["watch", "--wire", wire, url, &id]);
        assert_eq!(watched.status.code(), Some(1), "{wire}");
        let err = stderr(&watched);
        assert!(err.contains(&format!("✘ failed: {TEXT}")), "{wire}: {err}");
        let got = stdout(&run(state, &["get", "--wire", wire, url, &id]));
        assert!(got.contains("status   failed"), "{wire}: {got}");
        assert!(got.contains(TEXT), "{wire}: {got}");
        let got = json_out(&run(state, &["get", "--wire", wire, url, &id, "--json"]));
        assert_eq!(
            (&got["status"], &got["toolError"]),
            (&"failed".into(), &true.into()),
            "{wire}: {got}"
        );
        let listed = stdout(&run(state, &["list", "--wire", wire, url]));
        let line = listed
            .lines()
            .find(|l| l.starts_with(&id))
            .unwrap_or_else(|| panic!("{wire}: {id} not listed: {listed}"));
        assert!(
            line.contains("failed") && line.contains(TEXT),
            "{wire}: {line}"
        );
        ids.push(id);
    }
    // `call` itself ends the same way.
    let called = run(state, &["call", url, "failing_job"]);
    assert_eq!(called.status.code(), Some(1));
    assert!(stderr(&called).contains(&format!("✘ failed: {TEXT}")));

    let board = Person::login_local(&base_of(url)).await;
    let (status, list) = board.get("/board/api/tasks").await;
    assert_eq!(status, 200, "{list}");
    for id in &ids {
        let row = list["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id.as_str())
            .unwrap_or_else(|| panic!("{id} not on the board: {list}"));
        assert_eq!(row["toolError"], TEXT, "{row}");
        let (_, detail) = board.get(&format!("/board/api/tasks/{id}")).await;
        assert_eq!(detail["toolError"], TEXT, "{detail}");
        assert_eq!(detail["result"]["isError"], true);
    }
}
