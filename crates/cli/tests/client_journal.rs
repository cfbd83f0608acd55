//! The client commands' journal of started tasks and their behaviour at the edges:
//! `list` on both wires, the task id shown when a task starts, `cancel` of a finished
//! task, a closed stdout pipe, `--detach` with a stdio server, and a second Ctrl-C.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::process::{Command, Output, Stdio};

mod common;

use common::{command, json_out, run, serve, stderr, Server, BIN};

fn start() -> Server {
    // Every call a task, however quick: the journal is of tasks.
    serve(&[
        "--database",
        "memory:",
        "--poll-interval",
        "200ms",
        "--task-after",
        "0s",
    ])
}

/// The id in the "task ID started" line a call prints on stderr.
fn started_id(o: &Output) -> String {
    let err = stderr(o);
    let line = err
        .lines()
        .find(|l| l.starts_with("task ") && l.contains(" started"))
        .unwrap_or_else(|| panic!("no task line in: {err}"));
    line["task ".len()..].split(' ').next().unwrap().to_string()
}

/// The listed task with `id`, if listed.
fn listed<'a>(list: &'a Value, id: &str) -> Option<&'a Value> {
    list.as_array().unwrap().iter().find(|t| t["taskId"] == id)
}

#[test]
fn list_shows_the_tasks_started_here_on_both_wires() {
    let server = start();
    let url = server.url.as_str();
    let state = tempfile::tempdir().unwrap();
    let st = state.path();

    // The default wire against our server is the extension: the id and the command
    // that follows the task again are shown when it starts.
    let done = run(st, &["call", url, "slow_compute", "--arg", "seconds=0.2"]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    let id = started_id(&done);
    assert!(
        stderr(&done).contains(&format!("mcp-tasks watch {url} {id}")),
        "{}",
        stderr(&done)
    );
    let long = json_out(&run(
        st,
        &[
            "call",
            url,
            "slow_compute",
            "--arg",
            "seconds=60",
            "--detach",
            "--json",
        ],
    ));
    let long_id = long["taskId"].as_str().unwrap();

    for wire in ["2026-07-28", "2025-11-25"] {
        let out = run(st, &["list", "--wire", wire, url, "--json"]);
        assert_eq!(out.status.code(), Some(0), "{wire}: {}", stderr(&out));
        let list = json_out(&out);
        let first = listed(&list, &id).unwrap_or_else(|| panic!("{wire}: {list}"));
        assert_eq!(first["status"], "completed");
        assert_eq!(first["tool"], "slow_compute");
        assert_eq!(listed(&list, long_id).unwrap()["status"], "working");
    }

    // A task the server no longer knows is shown once as unknown, then forgotten.
    let file = std::fs::read_dir(st)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&format!(
        "{{\"taskId\":\"feedbeef\",\"tool\":\"gone\",\"createdMs\":{},\"wire\":\"extension\",\"status\":\"working\"}}\n",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    ));
    std::fs::write(&file, text).unwrap();
    let list = json_out(&run(st, &["list", url, "--json"]));
    assert_eq!(listed(&list, "feedbeef").unwrap()["status"], "unknown");
    let list = json_out(&run(st, &["list", url, "--json"]));
    assert!(listed(&list, "feedbeef").is_none(), "{list}");

    // Another user's journal (another folder) lists nothing, and that is no error.
    let other = tempfile::tempdir().unwrap();
    let out = run(other.path(), &["list", url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert!(stderr(&out).contains("no tasks"), "{}", stderr(&out));
}

#[test]
fn cancelling_a_finished_task_says_it_had_finished() {
    let server = start();
    let url = server.url.as_str();
    let state = tempfile::tempdir().unwrap();
    let done = run(
        state.path(),
        &["call", url, "slow_compute", "--arg", "seconds=0"],
    );
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    let id = started_id(&done);
    for wire in ["2026-07-28", "2025-11-25"] {
        let out = run(state.path(), &["cancel", "--wire", wire, url, &id]);
        assert_eq!(out.status.code(), Some(5), "{wire}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("had already finished (completed)"),
            "{wire}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    let server = start();
    let url = server.url.as_str();
    let state = tempfile::tempdir().unwrap();
    let done = run(
        state.path(),
        &["call", url, "slow_compute", "--arg", "seconds=0"],
    );
    let id = started_id(&done);
    for args in [vec!["get", url, &id], vec!["list", url], vec!["tools", url]] {
        // The reader is gone before the command writes anything (`| head -0`).
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = command(state.path(), &args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(writer))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
}

#[test]
fn detach_from_a_stdio_server_is_refused_with_one_reason() {
    let state = tempfile::tempdir().unwrap();
    let out = run(
        state.path(),
        &[
            "call",
            "slow_compute",
            "--detach",
            "--",
            BIN,
            "serve",
            "--stdio",
            "--demo",
            "--database",
            "memory:",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--detach needs an HTTP server"), "{err}");
}

/// Ctrl-C asks what to do; a second Ctrl-C at that question leaves at once (130),
/// saying how to follow the task, which goes on.
#[test]
fn a_second_ctrl_c_at_the_question_leaves_at_once() {
    let server = start();
    let url = server.url.as_str();
    let state = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(BIN);
    cmd.args(["call", url, "slow_compute", "--arg", "seconds=60"])
        .env("MCP_TASKS_STATE_DIR", state.path());
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn in a pty");
    let (_, id) = p.exp_regex(r"task [0-9a-f]+").unwrap();
    let id = id.trim_start_matches("task ").to_string();
    p.exp_string("to follow it again").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("Interrupted.").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("follow it with").unwrap();
    p.exp_eof().unwrap();
    let status = format!("{:?}", p.process().wait().unwrap());
    assert!(status.ends_with(", 130)"), "{status}");
    let got = json_out(&run(state.path(), &["get", url, &id, "--json"]));
    assert_eq!(got["status"], "working");
}

/// Ctrl-C at a question's prompt answers nothing: detaching leaves the question open on
/// the server (the board or another client can answer it), and watching on asks it
/// again. (It used to answer `cancel` at once, so a detached task went on without its
/// answer.)
#[test]
fn ctrl_c_at_a_prompt_leaves_the_question_open_or_asks_it_again() {
    let server = start();
    let url = server.url.as_str();
    let state = tempfile::tempdir().unwrap();
    let spawn = || {
        let mut cmd = Command::new(BIN);
        cmd.args(["call", url, "confirm_delete", "--arg", "filename=notes.txt"])
            .env("MCP_TASKS_STATE_DIR", state.path());
        rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn in a pty")
    };

    // Detach: the task still waits for its answer.
    let mut p = spawn();
    let (_, id) = p.exp_regex(r"task [0-9a-f]+").unwrap();
    let id = id.trim_start_matches("task ").to_string();
    p.exp_string("Delete?").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("Interrupted.").unwrap();
    p.send_line("d").unwrap();
    p.exp_string("follow it with").unwrap();
    p.exp_eof().unwrap();
    let got = json_out(&run(state.path(), &["get", url, &id, "--json"]));
    assert_eq!(got["status"], "input_required", "{got}");

    // Watch on: the question is asked again, and the answer ends the task.
    let mut p = spawn();
    p.exp_string("Delete?").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("Interrupted.").unwrap();
    p.send_line("w").unwrap();
    p.exp_string("Delete?").unwrap();
    p.send_line("y").unwrap();
    p.exp_string("Deleted notes.txt").unwrap();
    p.exp_eof().unwrap();
}

/// The journal is kept per server and bearer token: another principal's `list` at the
/// same URL neither shows nor forgets the agent's task (it used to list it as
/// "unknown" and drop it, so the agent's own `list` then said "no tasks"). It lives in
/// a folder only this account enters, its files readable by it alone.
#[test]
fn each_principal_has_its_own_journal_in_a_private_folder() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(
        &tokens,
        "\"tok-alice\" = \"alice\"\n\"tok-agent\" = \"agent\"\n",
    )
    .unwrap();
    let server = serve(&[
        "--database",
        "memory:",
        "--auth-tokens",
        tokens.to_str().unwrap(),
    ]);
    let url = server.url.as_str();
    // A folder that does not exist yet: the journal creates it.
    let st = dir.path().join("state/mcp-tasks");
    let started = run(
        &st,
        &[
            "call",
            url,
            "slow_compute",
            "--arg",
            "seconds=60",
            "--detach",
            "--token",
            "tok-agent",
        ],
    );
    assert_eq!(started.status.code(), Some(0), "{}", stderr(&started));
    let id = String::from_utf8_lossy(&started.stdout).trim().to_string();

    for _ in 0..2 {
        let alice = run(&st, &["list", url, "--token", "tok-alice", "--json"]);
        assert_eq!(alice.status.code(), Some(0), "{}", stderr(&alice));
        assert_eq!(json_out(&alice), serde_json::json!([]));
    }
    let agent = json_out(&run(&st, &["list", url, "--token", "tok-agent", "--json"]));
    let task = listed(&agent, &id).unwrap_or_else(|| panic!("{agent}"));
    assert_eq!(task["status"], "working");
    assert_eq!(task["tool"], "slow_compute");

    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&st), 0o700);
    for file in std::fs::read_dir(&st).unwrap() {
        let path = file.unwrap().path();
        assert_eq!(mode(&path), 0o600, "{}", path.display());
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            !name.contains("tok-"),
            "the file name shows the token: {name}"
        );
    }
}
