//! Runs the example (rmcp's transport and handler, mcp-tasks' engine) as a real process
//! on a free loopback port and drives it with the `mcp-tasks` CLI, as the CLI tests
//! drive our own servers: the tool list, a plain `echo`, `count_to` as a task whose
//! status lines show, whose half-way question is answered at the prompt (a
//! pseudo-terminal) and whose result follows, and a second `count_to` started detached
//! and cancelled; then the same call on the 2025-11-25 wire (`--wire 2025-11-25`,
//! where rmcp carries no tasks): a plain call whose question comes as
//! `elicitation/create` and is answered at the prompt.
//!
//! The CLI is the workspace's `mcp-tasks` binary: `cargo test --workspace` builds it
//! (the CLI's own tests need it); `MCP_TASKS_CLI` names another. Outside CI a missing
//! binary skips the test with a notice; under `CI` it fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_tasks_testkit::cli::{command, json_out, run, state_dir, stderr, stdout};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The example, killed by pid when dropped.
struct Example {
    child: Child,
    url: String,
}

impl Drop for Example {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the example on a free port and waits (at most a minute) for its address.
fn start() -> Example {
    let mut child = Command::new(env!("CARGO_BIN_EXE_example-rmcp-count-to"))
        .args(["--listen", "127.0.0.1:0", "--store", "memory:"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the example");
    let stderr = child.stderr.take().expect("stderr is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if !sent {
                if let Some((_, url)) = line.split_once("listening on ") {
                    let _ = tx.send(url.trim().to_string());
                    sent = true;
                }
            }
        }
    });
    let url = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(url) => url,
        Err(e) => {
            let _ = child.kill();
            panic!("the example did not say where it listens within a minute: {e}");
        }
    };
    Example { child, url }
}

/// The `mcp-tasks` binary: `MCP_TASKS_CLI`, else the one beside this test's own
/// folder (`target/debug/mcp-tasks`).
fn cli() -> Option<String> {
    let path = match std::env::var_os("MCP_TASKS_CLI") {
        Some(p) => PathBuf::from(p),
        None => {
            let exe = std::env::current_exe().expect("the test's path");
            let debug = exe.parent().and_then(|deps| deps.parent())?;
            debug.join(format!("mcp-tasks{}", std::env::consts::EXE_SUFFIX))
        }
    };
    if path.is_file() {
        return Some(path.display().to_string());
    }
    let why = format!(
        "no mcp-tasks CLI at {}: `cargo build -p mcp-tasks-cli` (or `cargo test --workspace`) builds it, or set MCP_TASKS_CLI",
        path.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("skipping the CLI session: {why}");
    None
}

#[test]
fn the_cli_session_of_our_own_servers_passes() {
    let Some(bin) = cli() else { return };
    let server = start();
    let url = server.url.as_str();
    let state = state_dir();

    let tools = run(command(&bin, state, &["tools", url, "--json"]));
    assert_eq!(tools.status.code(), Some(0), "{}", stderr(&tools));
    let names: Vec<String> = json_out(&tools)
        .as_array()
        .expect("a list of tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    assert!(names.contains(&"count_to".to_string()), "{names:?}");
    assert!(names.contains(&"echo".to_string()), "{names:?}");

    // A plain call: the sync tool answers at once, no task.
    let echo = run(command(
        &bin,
        state,
        &["call", url, "echo", "--arg", "text=hi there"],
    ));
    assert_eq!(echo.status.code(), Some(0), "{}", stderr(&echo));
    assert_eq!(stdout(&echo).trim(), "hi there");

    // count_to as a task: status lines, the question at the prompt, the result.
    let args = [
        "call",
        url,
        "count_to",
        "--arg",
        "n=4",
        "--arg",
        "delay_ms=700",
    ];
    let mut p = rexpect::session::spawn_command(command(&bin, state, &args), Some(60_000))
        .expect("spawn the CLI in a pty");
    p.exp_string("started; to follow it again").unwrap();
    p.exp_regex(r"working: [12] of 4").unwrap();
    p.exp_string("Counted to 2. Go on?").unwrap();
    p.exp_string("[y/n]").unwrap();
    p.send_line("y").unwrap();
    p.exp_string("counted to 4").unwrap();
    p.exp_eof().unwrap();
    let status = format!("{:?}", p.process().wait().unwrap());
    assert!(
        status.starts_with("Exited(") && status.ends_with(", 0)"),
        "{status}"
    );

    // A second one, started detached, then cancelled by id.
    let detached = run(command(
        &bin,
        state,
        &[
            "call",
            url,
            "count_to",
            "--arg",
            "n=1000",
            "--arg",
            "delay_ms=1000",
            "--detach",
        ],
    ));
    assert_eq!(detached.status.code(), Some(0), "{}", stderr(&detached));
    let id = stdout(&detached).trim().to_string();
    assert!(
        !id.is_empty() && !id.contains(char::is_whitespace),
        "{id:?}"
    );
    let cancelled = run(command(&bin, state, &["cancel", url, &id, "--json"]));
    assert_eq!(cancelled.status.code(), Some(0), "{}", stderr(&cancelled));
    let seen = json_out(&cancelled);
    assert_eq!(seen["taskId"], id.as_str(), "{seen}");
    let got = run(command(&bin, state, &["get", url, &id, "--json"]));
    // `get` exits as the task ended: 3 for a cancelled task (docs/cli.md).
    assert_eq!(got.status.code(), Some(3), "{}", stderr(&got));
    assert_eq!(json_out(&got)["status"], "cancelled", "{}", stdout(&got));

    // The same call on 2025-11-25: a plain call, its question as elicitation/create.
    let mut args = args.to_vec();
    args.extend(["--wire", "2025-11-25"]);
    let mut p = rexpect::session::spawn_command(command(&bin, state, &args), Some(60_000))
        .expect("spawn the CLI in a pty");
    p.exp_string("Counted to 2. Go on?").unwrap();
    p.exp_string("[y/n]").unwrap();
    p.send_line("y").unwrap();
    p.exp_string("counted to 4").unwrap();
    p.exp_eof().unwrap();
    let status = format!("{:?}", p.process().wait().unwrap());
    assert!(
        status.starts_with("Exited(") && status.ends_with(", 0)"),
        "{status}"
    );
}
