//! The client crate and the `mcp-tasks` client commands against our own server: both
//! wires over HTTP, stdio, `--json` output parsed, exit codes, and a person answering
//! an elicitation in a pseudo-terminal.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use futures::StreamExt;
use mcp_tasks_client::{
    input, Client, ClientError, Target, TaskOptions, TaskOutcome, TaskStatus, TaskUpdate,
    WirePreference,
};
use serde_json::{json, Value};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

mod common;

use common::{json_out, serve, state_dir, Server, BIN};

/// The arguments that make `mcp-tasks` serve the demo tools over stdio.
const STDIO_SERVER: [&str; 7] = [
    "serve",
    "--demo",
    "--stdio",
    "--database",
    "memory:",
    "--log",
    "warn",
];

fn start() -> Server {
    serve(&["--database", "memory:", "--poll-interval", "200ms"])
}

/// The binary with `args`, its journal in the test binary's shared folder.
fn command(args: &[&str]) -> Command {
    common::command(state_dir(), args)
}

fn cli(args: &[&str]) -> Output {
    common::run(state_dir(), args)
}

async fn connect(url: &str, wire: WirePreference, answers: Arc<AtomicUsize>) -> Client {
    Client::builder()
        .wire(wire)
        .on_elicitation(move |q| {
            answers.fetch_add(1, Ordering::SeqCst);
            async move {
                let props = &q.requested_schema().unwrap()["properties"];
                let content = if props.get("confirm").is_some() {
                    json!({"confirm": true})
                } else if props.get("name").is_some() {
                    json!({"name": "Ada"})
                } else {
                    json!({"colour": "green"})
                };
                Ok(input::accept(content))
            }
        })
        .connect(&Target::Http(url.to_string()))
        .await
        .unwrap()
}

/// Calls `tool` as a task and waits for its outcome.
async fn run_task(client: &Client, tool: &str, args: Value) -> TaskOutcome {
    client
        .call_tool_as_task(tool, args, TaskOptions::default())
        .await
        .unwrap()
        .result()
        .await
        .unwrap()
}

async fn follow_tasks_on(wire: WirePreference) {
    let server = start();
    let answers = Arc::new(AtomicUsize::new(0));
    let client = connect(&server.url, wire, Arc::clone(&answers)).await;

    // A slow task: status updates and progress arrive, the result comes back.
    let mut task = client
        .call_tool_as_task(
            "slow_compute",
            json!({"seconds": 1, "label": "t"}),
            TaskOptions::default(),
        )
        .await
        .unwrap();
    let id = task.task_id().cloned().unwrap();
    let mut updates = task.updates();
    let watcher = tokio::spawn(async move {
        let mut n = 0;
        while let Some(u) = updates.next().await {
            if matches!(u, TaskUpdate::Status(_) | TaskUpdate::Progress(_)) {
                n += 1;
            }
        }
        n
    });
    let outcome = task.result().await.unwrap();
    assert!(outcome.succeeded(), "{outcome:?}");
    assert_eq!(
        outcome.text().unwrap(),
        "slow_compute 't' finished after 1 s"
    );
    assert!(watcher.await.unwrap() >= 2);

    // Resumed by id from another connection.
    let other = Client::builder()
        .wire(wire)
        .connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    let again = other.resume(&id).await.unwrap().result().await.unwrap();
    assert_eq!(again.text(), outcome.text());

    // A tool error: failed on 2025-11-25, completed with isError on the extension.
    let failing = run_task(&client, "failing_job", json!({})).await;
    assert!(failing.is_tool_error() && !failing.succeeded());
    let expected = match wire {
        WirePreference::V2026_07_28 => TaskStatus::Completed,
        _ => TaskStatus::Failed,
    };
    assert_eq!(failing.status(), expected);

    // One question, answered by the handler.
    let confirmed = run_task(&client, "confirm_delete", json!({"filename": "notes.txt"})).await;
    assert!(confirmed.text().unwrap().starts_with("Deleted notes.txt"));
    assert_eq!(answers.load(Ordering::SeqCst), 1);

    // Two questions at once, each answered once.
    let both = run_task(&client, "multi_input", json!({})).await;
    assert_eq!(both.text().as_deref(), Some("Ada likes green"));
    assert_eq!(answers.load(Ordering::SeqCst), 3);

    // Cancel a running task.
    let long = client
        .call_tool_as_task(
            "slow_compute",
            json!({"seconds": 60}),
            TaskOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(long.cancel().await.unwrap().status, TaskStatus::Cancelled);
    assert_eq!(long.result().await.unwrap().status(), TaskStatus::Cancelled);

    // Unknown tasks keep the server's code.
    let err = client
        .get(&mcp_tasks_client::TaskId::from_string("nope"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(-32602), "{err}");

    // A synchronous tool answers at once.
    let hello = client
        .call_tool("greet", json!({"name": "Bo"}))
        .await
        .unwrap();
    assert_eq!(hello["content"][0]["text"], "Hello, Bo!");

    match wire {
        WirePreference::V2026_07_28 => {
            assert!(matches!(
                client.list().await,
                Err(ClientError::Unsupported(_))
            ));
        }
        _ => {
            let listed = client.list().await.unwrap();
            assert!(listed.iter().any(|t| t.id == id));
        }
    }
    client.close().await;
    other.close().await;
}

#[tokio::test]
async fn client_follows_tasks_on_the_2025_wire() {
    follow_tasks_on(WirePreference::V2025_11_25).await;
}

#[tokio::test]
async fn client_follows_tasks_on_the_extension_wire() {
    follow_tasks_on(WirePreference::V2026_07_28).await;
}

#[tokio::test]
async fn auto_negotiation_picks_the_extension_on_our_server() {
    let server = start();
    let client = Client::connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    assert_eq!(client.wire(), mcp_tasks_client::Wire::V2026_07_28);
    client.close().await;
}

#[tokio::test]
async fn client_over_stdio_runs_a_task_and_answers_a_question() {
    let client = Client::builder()
        .on_elicitation(|_| async { Ok(input::accept(json!({"confirm": false}))) })
        .connect(&Target::Stdio {
            program: BIN.into(),
            args: STDIO_SERVER.map(String::from).to_vec(),
        })
        .await
        .unwrap();
    assert_eq!(client.wire(), mcp_tasks_client::Wire::V2025_11_25);
    let outcome = run_task(&client, "slow_compute", json!({"seconds": 0.5})).await;
    assert!(outcome.succeeded());
    let kept = run_task(&client, "confirm_delete", json!({"filename": "a"})).await;
    assert!(kept.text().unwrap().starts_with("kept a"), "{kept:?}");
    client.close().await;
}

#[tokio::test]
async fn a_server_that_exits_at_start_is_a_connect_error() {
    let err = Client::connect(&Target::Stdio {
        program: BIN.into(),
        args: vec!["serve".into(), "--no-such-flag".into()],
    })
    .await
    .unwrap_err();
    assert!(err.is_connection(), "{err}");
}

#[test]
fn cli_json_output_and_exit_codes() {
    let server = start();
    let url = server.url.as_str();

    let tools = cli(&["tools", url, "--json"]);
    assert!(tools.status.success());
    let tools = json_out(&tools);
    let slow = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "slow_compute")
        .unwrap();
    assert_eq!(slow["taskSupport"], "optional");

    let done = cli(&[
        "call",
        url,
        "slow_compute",
        "--arg",
        "seconds=0.3",
        "--arg",
        "label=j",
        "--json",
    ]);
    assert_eq!(done.status.code(), Some(0));
    assert_eq!(
        json_out(&done)["content"][0]["text"],
        "slow_compute 'j' finished after 0.3 s"
    );

    let failed = cli(&["call", url, "failing_job", "--json"]);
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(json_out(&failed)["isError"], true);

    let sync = cli(&["call", url, "greet", "--args", r#"{"name":"Cy"}"#]);
    assert_eq!(sync.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&sync.stdout).trim(), "Hello, Cy!");

    // Detach, then pick the task up by id: get, watch.
    let detached = cli(&[
        "call",
        "--wire",
        "2025-11-25",
        url,
        "slow_compute",
        "--arg",
        "seconds=0.5",
        "--detach",
        "--ttl",
        "10m",
        "--json",
    ]);
    assert_eq!(detached.status.code(), Some(0));
    let id = json_out(&detached)["taskId"].as_str().unwrap().to_string();
    let got = json_out(&cli(&["get", url, &id, "--json"]));
    assert_eq!(got["taskId"], id.as_str());
    assert_eq!(got["ttlMs"], 600_000);
    let watched = cli(&["watch", url, &id, "--json"]);
    assert_eq!(watched.status.code(), Some(0));
    assert_eq!(json_out(&watched)["structuredContent"]["seconds"], 0.5);

    // Cancel a long task; watching it then exits 3.
    let long = json_out(&cli(&[
        "call",
        url,
        "slow_compute",
        "--arg",
        "seconds=60",
        "--detach",
        "--json",
    ]));
    let long_id = long["taskId"].as_str().unwrap();
    let cancelled = cli(&["cancel", url, long_id, "--json"]);
    assert_eq!(cancelled.status.code(), Some(0));
    assert_eq!(json_out(&cancelled)["status"], "cancelled");
    let watched = cli(&["watch", url, long_id, "--json"]);
    assert_eq!(watched.status.code(), Some(3));
    assert_eq!(json_out(&watched)["status"], "cancelled");
    // Cancelling it again (refused on 2025-11-25: already terminal) says it is cancelled.
    let again = cli(&["cancel", "--wire", "2025-11-25", url, long_id]);
    assert_eq!(again.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&again.stdout).contains("cancelled"));

    // Usage and connection errors.
    assert_eq!(cli(&["call", url, "no_such_tool"]).status.code(), Some(2));
    // An address without http:// is not taken for a tool name (cli_edges.rs has the
    // default server a command without a URL talks to).
    assert_eq!(
        cli(&["call", "localhost:1/mcp", "greet"]).status.code(),
        Some(2)
    );
    assert_eq!(
        cli(&["call", url, "greet", "--arg", "novalue"])
            .status
            .code(),
        Some(2)
    );
    // A task id may begin with `-` (fastmcp-tasks mints such ids): it is taken as the id,
    // before or after the flags, and reaches the server, which does not know it.
    for args in [
        &["get", url, "-Gno-such-task", "--json"][..],
        &["cancel", "--json", url, "-Gno-such-task"][..],
        &["watch", url, "--json", "-Gno-such-task"][..],
    ] {
        let out = cli(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("-Gno-such-task"), "{args:?}: {err}");
    }
    let (_held, port) = common::refused_port();
    let closed = format!("http://127.0.0.1:{port}/mcp");
    assert_eq!(cli(&["tools", &closed]).status.code(), Some(4));
}

/// Every client command, against `url`, in the forms that reach the server.
fn every_client_command(url: &str) -> Vec<Vec<String>> {
    [
        &["call", url, "greet", "--arg", "name=Ada"][..],
        &["watch", url, "some-task"],
        &["get", url, "some-task"],
        &["list", url],
        &["cancel", url, "some-task"],
        &["tools", url],
    ]
    .iter()
    .map(|args| args.iter().map(|s| s.to_string()).collect())
    .collect()
}

#[test]
fn a_refused_connection_names_the_url_and_says_to_start_a_server() {
    // A port bound but not listening: connections to it are refused, and no other
    // process can take it while the test runs.
    let (_held, port) = common::refused_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    for args in every_client_command(&url) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = cli(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{args:?}: {err}");
        assert!(
            err.contains(&format!("no server answers at {url}"))
                && err.contains("start one with `mcp-tasks serve`"),
            "{args:?}: {err}"
        );
        assert!(
            err.to_lowercase().contains("connection refused"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_server_that_wants_a_token_gets_the_hint_to_pass_one() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(&tokens, "\"s3cret\" = \"alice\"\n").unwrap();
    let server = serve(&[
        "--database",
        "memory:",
        "--auth-tokens",
        tokens.to_str().unwrap(),
    ]);
    for token in [None, Some("wrong")] {
        for mut args in every_client_command(&server.url) {
            if let Some(t) = token {
                args.extend(["--token".to_string(), t.to_string()]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = command(&args)
                .env_remove("MCP_TASKS_TOKEN")
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(4), "{args:?}: {err}");
            assert!(
                err.contains("401") && err.contains("pass --token TOKEN"),
                "{args:?}: {err}"
            );
        }
    }
    // With the token, the same command works.
    let out = cli(&["tools", &server.url, "--token", "s3cret"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn cli_over_stdio_lists_tools_and_calls_one() {
    let call = [
        "call",
        "slow_compute",
        "--arg",
        "seconds=0.2",
        "--json",
        "--",
        BIN,
    ];
    let out = cli(&[&call[..], &STDIO_SERVER].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json_out(&out)["structuredContent"]["seconds"], 0.2);
}

/// Waits for the program in the pseudo-terminal to end; it must exit with status 0.
fn exits_zero(mut p: rexpect::session::PtySession) {
    p.exp_eof().unwrap();
    let status = format!("{:?}", p.process().wait().unwrap());
    assert!(
        status.starts_with("Exited(") && status.ends_with(", 0)"),
        "{status}"
    );
}

/// A person at a terminal answers the elicitation prompt; the result is printed.
#[test]
fn cli_asks_the_question_at_the_terminal() {
    let server = start();
    let cmd = command(&[
        "call",
        &server.url,
        "confirm_delete",
        "--arg",
        "filename=notes.txt",
    ]);
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn in a pty");
    p.exp_string("Delete the file 'notes.txt'?").unwrap();
    p.exp_string("Delete? [y/n]").unwrap();
    p.send_line("maybe").unwrap();
    p.exp_string("answer y or n").unwrap();
    p.send_line("y").unwrap();
    p.exp_string("Deleted notes.txt").unwrap();
    exits_zero(p);
}

/// Two questions at once are asked one after the other; a choice is picked by number.
#[test]
fn cli_asks_two_questions_in_turn() {
    let server = start();
    let cmd = command(&["call", &server.url, "multi_input"]);
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn in a pty");
    let mut answered = 0;
    while answered < 2 {
        let (_, matched) = p.exp_regex(r"Name: |Colour: ").unwrap();
        if matched.contains("Name") {
            p.send_line("Ada").unwrap();
        } else {
            p.send_line("3").unwrap();
        }
        answered += 1;
    }
    p.exp_string("Ada likes blue").unwrap();
    exits_zero(p);
}

/// Without a task (a plain `call_tool` on the 2025-11-25 wire) the question comes on the
/// call's own stream, over HTTP and stdio, and the handler's answer reaches the tool.
#[tokio::test]
async fn a_plain_call_is_asked_on_its_own_stream_over_http_and_stdio() {
    let server = start();
    let answers = Arc::new(AtomicUsize::new(0));
    let http = connect(&server.url, WirePreference::V2025_11_25, answers.clone()).await;
    let stdio = Client::builder()
        .on_elicitation(|_| async { Ok(input::accept(json!({"confirm": true}))) })
        .connect(&Target::Stdio {
            program: BIN.into(),
            args: STDIO_SERVER.map(String::from).to_vec(),
        })
        .await
        .unwrap();
    for (client, name) in [(&http, "over-http"), (&stdio, "over-stdio")] {
        let result = client
            .call_tool("confirm_delete", json!({"filename": name}))
            .await
            .unwrap();
        assert_eq!(
            result["content"][0]["text"],
            format!("Deleted {name} (demo: nothing was really deleted)"),
            "{result}"
        );
    }
    assert_eq!(answers.load(Ordering::SeqCst), 1);
    http.close().await;
    stdio.close().await;
}

/// A plain call (no task) with a progress token: the server's progress notifications
/// for it reach the caller's callback, and the CLI shows them while it waits (tools
/// that do not run as tasks report progress only so).
#[tokio::test]
async fn a_plain_call_reports_progress_to_its_caller() {
    let server = start();
    let client = Client::builder()
        .wire(WirePreference::V2025_11_25)
        .connect(&Target::Http(server.url.clone()))
        .await
        .unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let result = client
        .call_tool_with_progress("slow_compute", json!({"seconds": 1}), move |p| {
            sink.lock().unwrap().push(p);
        })
        .await
        .unwrap();
    assert_eq!(result["structuredContent"]["seconds"], 1.0);
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "no progress reached the callback");
    assert!(
        seen.windows(2).all(|w| w[0].progress <= w[1].progress),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|p| p.message.as_deref().is_some_and(|m| m.starts_with("job"))),
        "{seen:?}"
    );
    client.close().await;

    let out = cli(&[
        "call",
        "--no-task",
        "--wire",
        "2025-11-25",
        &server.url,
        "slow_compute",
        "--arg",
        "seconds=1",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("job: 100%"), "{err}");
}
