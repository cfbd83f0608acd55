//! `mcp-tasks call` completes the 2026-07-28 input-required round: a plain call whose
//! tool asks mid-call is asked at the terminal like a task's question, and the answer
//! goes back with the call's `requestState`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{serve, state_dir};

/// A person at a terminal answers a plain call's question on the extension wire; the
/// tool's result is printed.
#[test]
fn cli_answers_a_plain_calls_question_on_the_extension_wire() {
    let server = serve(&["--database", "memory:"]);
    let cmd = common::command(
        state_dir(),
        &[
            "call",
            "--no-task",
            "--wire",
            "2026-07-28",
            &server.url,
            "confirm_delete",
            "--arg",
            "filename=notes.txt",
        ],
    );
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn in a pty");
    // Asked in the call's own round: not after a handle to a task that the command
    // then follows (which would also end in the tool's result).
    let before = p.exp_string("Delete the file 'notes.txt'?").unwrap();
    assert!(
        !before.contains("outlived") && !before.contains("following"),
        "{before}"
    );
    p.exp_string("Delete? [y/n]").unwrap();
    p.send_line("y").unwrap();
    let after = p.exp_string("Deleted notes.txt").unwrap();
    assert!(!after.contains("following"), "{after}");
    p.exp_eof().unwrap();
    let status = format!("{:?}", p.process().wait().unwrap());
    assert!(
        status.starts_with("Exited(") && status.ends_with(", 0)"),
        "{status}"
    );
}
