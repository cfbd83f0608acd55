//! The client commands as a new user meets them: a default server instead of a URL on
//! every command, a hint when the URL lacks `/mcp`, "did you mean" for a tool, `tools`
//! with each tool's arguments, `list` with a header and aligned columns, where to
//! answer a call that waits for a person, `get --result`, plain words, and only the
//! flags that do something for each command.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};

mod common;

use common::{command, json_out, run, serve, stderr, stdout, BIN};

/// `args` run with `MCP_TASKS_URL` naming `url`, the journal in `state`.
fn at(url: &str, state: &std::path::Path, args: &[&str]) -> Output {
    let mut c = command(state, args);
    c.env("MCP_TASKS_URL", url).stdin(Stdio::null());
    c.output().unwrap()
}

#[test]
fn commands_without_a_url_talk_to_the_default_server() {
    let server = serve(&["--database", "memory:", "--task-after", "0s"]);
    let url = server.url.as_str();
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path();

    let hello = at(url, st, &["call", "greet", "--arg", "name=Ada"]);
    assert_eq!(hello.status.code(), Some(0), "{}", stderr(&hello));
    assert_eq!(stdout(&hello).trim(), "Hello, Ada!");
    let started = at(url, st, &["call", "slow_compute", "--arg", "seconds=0"]);
    assert_eq!(started.status.code(), Some(0), "{}", stderr(&started));
    // The line that says the task started, in plain words: no wire.
    let err = stderr(&started);
    let line = err.lines().find(|l| l.starts_with("task ")).unwrap();
    assert!(!line.contains("wire"), "{line}");
    let id = line["task ".len()..].split(' ').next().unwrap().to_string();

    let got = at(url, st, &["get", &id]);
    assert_eq!(got.status.code(), Some(0), "{}", stderr(&got));
    let details = stdout(&got);
    assert!(details.contains("status   completed"), "{details}");
    assert!(!details.contains("ttl"), "{details}");
    let result = at(url, st, &["get", &id, "--result"]);
    assert_eq!(
        stdout(&result).trim(),
        "slow_compute 'job' finished after 0 s"
    );
    let result = json_out(&at(url, st, &["get", &id, "--result", "--json"]));
    assert_eq!(result["isError"], false, "{result}");
    assert!(at(url, st, &["tools"]).status.success());

    // Without MCP_TASKS_URL the default is serve's own address.
    let help = Command::new(BIN).args(["call", "--help"]).output().unwrap();
    assert!(stdout(&help).contains("http://127.0.0.1:8080/mcp"));
}

#[test]
fn a_url_without_mcp_gets_a_hint_and_a_misspelt_tool_its_nearest_name() {
    let server = serve(&["--database", "memory:"]);
    let url = server.url.as_str();
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path();

    let root = url.trim_end_matches("/mcp");
    let out = run(st, &["tools", root]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("try {url}")),
        "{}",
        stderr(&out)
    );

    let out = run(st, &["call", url, "slow_compte", "--arg", "seconds=1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("did you mean 'slow_compute'?"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn tools_shows_arguments_and_list_has_aligned_columns() {
    let server = serve(&["--database", "memory:", "--task-after", "0s"]);
    let url = server.url.as_str();
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path();

    let tools = stdout(&run(st, &["tools", url]));
    assert!(tools.starts_with("TOOL "), "{tools}");
    assert!(
        tools.contains("--arg seconds=<number> (required)"),
        "{tools}"
    );
    assert!(tools.contains("--arg name=<text> (required)"), "{tools}");
    assert!(!tools.contains("declares"), "{tools}");
    assert!(!tools.contains("wire"), "{tools}");
    let listed = json_out(&run(st, &["tools", url, "--json"]));
    let slow = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "slow_compute")
        .unwrap();
    assert!(
        slow["arguments"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!({"name": "seconds", "type": "number", "required": true})),
        "{slow}"
    );

    for (tool, seconds) in [
        ("slow_compute", "0"),
        ("failing_job", ""),
        ("slow_compute", "60"),
    ] {
        let mut args = vec!["call", url, tool, "--detach"];
        let arg = format!("seconds={seconds}");
        if !seconds.is_empty() {
            args.extend(["--arg", &arg]);
        }
        assert!(run(st, &args).status.success());
    }
    let out = run(st, &["list", url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("TASK "), "{text}");
    for column in ["STATUS", "UPDATED", "TOOL", "MESSAGE"] {
        let at = lines[0].find(column).unwrap_or_else(|| panic!("{text}"));
        // A row without a message ends before its column.
        for line in lines[1..].iter().filter(|l| l.len() > at) {
            assert_eq!(
                line.as_bytes()[at - 2..at],
                *b"  ",
                "{column} is not aligned:\n{text}"
            );
            assert_ne!(line.as_bytes()[at], b' ', "{column}:\n{text}");
        }
    }
}

/// A call that waits for approval says where the approvers decide (the board next to
/// the MCP URL); a question at the terminal says it can be answered on the board too.
#[test]
fn a_call_that_waits_for_a_person_says_where_to_answer() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("approvals.toml");
    std::fs::write(
        &config,
        "[groups]\nops = [\"alice\"]\n\n[[approval]]\ntool = \"deploy\"\napprovers = [\"ops\"]\n",
    )
    .unwrap();
    let server = serve(&[
        "--database",
        "memory:",
        "--config",
        config.to_str().unwrap(),
    ]);
    let url = server.url.as_str();
    let board = format!("{}/board/tasks/", url.trim_end_matches("/mcp"));

    let mut call = command(
        dir.path(),
        &[
            "call",
            url,
            "deploy",
            "--arg",
            "service=api",
            "--arg",
            "env=prod",
        ],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut said = String::new();
    for line in BufReader::new(call.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        said.push_str(&line);
        said.push('\n');
        if line.contains("waits for approval") {
            break;
        }
    }
    let _ = call.kill();
    let _ = call.wait();
    let line = said
        .lines()
        .find(|l| l.contains("waits for approval"))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        line.contains(&format!("approvers decide on the task board: {board}")),
        "{said}"
    );

    let mut cmd = Command::new(BIN);
    cmd.args(["call", url, "confirm_delete", "--arg", "filename=notes.txt"])
        .env("MCP_TASKS_STATE_DIR", dir.path());
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn in a pty");
    p.exp_string(&format!("(answer here, or on the task board: {board}"))
        .unwrap();
    p.exp_string("Delete?").unwrap();
    p.send_line("y").unwrap();
    p.exp_string("Deleted notes.txt").unwrap();
    p.exp_eof().unwrap();
}

/// Flags that do nothing for a command are not offered by it, and each command's help
/// says how to call it and what its exit status means.
#[test]
fn each_command_offers_only_its_own_flags_and_explains_itself() {
    let help = |cmd: &str| {
        let out = Command::new(BIN)
            .args([cmd, "--help"])
            .env_clear()
            .output()
            .unwrap();
        assert!(out.status.success(), "{cmd}");
        stdout(&out)
    };
    for cmd in ["call", "watch"] {
        let h = help(cmd);
        assert!(
            h.contains("--log-level") && h.contains("--public-url"),
            "{cmd}: {h}"
        );
        assert!(h.contains("Exit status"), "{cmd}: {h}");
    }
    for cmd in ["get", "list", "cancel", "tools"] {
        let h = help(cmd);
        assert!(
            !h.contains("--log-level") && !h.contains("--public-url"),
            "{cmd}: {h}"
        );
        assert!(h.contains("MCP_TASKS_URL"), "{cmd}: {h}");
    }
    assert!(help("get").contains("--result"));
    assert!(help("get").contains("Exit status"));
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["get", "x", "--log-level", "info"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
