//! The gateway, end to end with no npm or PyPI: `mcp-tasks wrap` in front of another
//! `mcp-tasks serve --stdio --demo` (an upstream that knows nothing of the gateway),
//! driven by the Rust client. The interop suite repeats this with real upstreams from
//! npm and PyPI (tests/interop/gateway.mjs).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::BIN;
use mcp_tasks_client::{input, Client, Target, TaskOptions, TaskStatus};
use mcp_tasks_testkit::WAIT;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// `mcp-tasks wrap` (stdio) in front of the demo server, with `extra` wrap flags.
fn wrapped(extra: &[&str]) -> Target {
    let mut args: Vec<String> = vec!["wrap".into(), "--database".into(), "memory:".into()];
    args.extend(["--log".into(), "warn".into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("--".into());
    args.extend(
        [
            BIN,
            "serve",
            "--stdio",
            "--demo",
            "--database",
            "memory:",
            "--log",
            "warn",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    Target::Stdio {
        program: BIN.into(),
        args,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrapped_tools_run_as_tasks_with_progress_and_questions() {
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&asked);
    let client = Client::builder()
        .on_elicitation(move |_q| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok(input::accept(json!({"confirm": true}))) }
        })
        .connect(&wrapped(&["--prefix", "up_"]))
        .await
        .expect("connect through the gateway");

    let tools = client.tools().await.unwrap();
    let slow = tools
        .iter()
        .find(|t| t.name == "up_slow_compute")
        .expect("prefixed tool");
    assert_eq!(slow.task_support, mcp_tasks_client::TaskSupport::Optional);
    assert_eq!(
        slow.title.as_deref(),
        Some("Slow computation"),
        "title kept"
    );
    assert!(
        slow.definition.get("outputSchema").is_some(),
        "output schema kept"
    );

    // Progress of the upstream call becomes the task's status message.
    let task = client
        .call_tool_as_task(
            "up_slow_compute",
            json!({"seconds": 0.6}),
            TaskOptions::default(),
        )
        .await
        .unwrap();
    let id = task.task_id().cloned().expect("a task");
    let outcome = tokio::time::timeout(WAIT, task.result())
        .await
        .unwrap()
        .unwrap();
    assert!(outcome.succeeded(), "{outcome:?}");
    assert!(outcome.text().unwrap().contains("finished"), "{outcome:?}");
    let view = client.get(&id).await.unwrap();
    let message = view.status_message.unwrap_or_default();
    // The demo tool's own progress text ("job: 100% done"), relayed as progress.
    assert!(
        message.contains("job: 100%"),
        "progress as status message: {message:?}"
    );

    // The upstream's question becomes this task's input request; the answer goes back.
    let task = client
        .call_tool_as_task(
            "up_confirm_delete",
            json!({"filename": "a.txt"}),
            TaskOptions::default(),
        )
        .await
        .unwrap();
    let outcome = tokio::time::timeout(WAIT, task.result())
        .await
        .unwrap()
        .unwrap();
    assert!(outcome.succeeded(), "{outcome:?}");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    let structured = &outcome.result.unwrap()["structuredContent"];
    assert_eq!(structured["deleted"], json!(true), "{structured}");

    // A plain call is forwarded as a plain call.
    let greeting = client
        .call_tool("up_greet", json!({"name": "Ada"}))
        .await
        .unwrap();
    assert!(greeting.to_string().contains("Ada"), "{greeting}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_frees_its_upstream_connection() {
    // One upstream connection: the call after the cancel needs the same one.
    let client = Client::connect(&wrapped(&["--max-upstream-connections", "1"]))
        .await
        .unwrap();
    let id = start_slow_task(&client, json!({"seconds": 60})).await;
    let cancelled = client.cancel(&id).await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    let greeting = tokio::time::timeout(WAIT, client.call_tool("greet", json!({"name": "Bo"})))
        .await
        .expect("the connection was given back")
        .unwrap();
    assert!(greeting.to_string().contains("Bo"), "{greeting}");
    assert_eq!(client.get(&id).await.unwrap().status, TaskStatus::Cancelled);
    client.close().await;
}

/// Runs `serve --stdio` (stdin closed at once) with `config` as its config file and
/// `--log log`; returns its exit success and stderr.
fn serve_with_config(config: &str, log: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gw.toml");
    std::fs::write(&path, config).unwrap();
    let out = std::process::Command::new(BIN)
        .args([
            "serve",
            "--stdio",
            "--database",
            "memory:",
            "--log",
            log,
            "--config",
        ])
        .arg(&path)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Starts `slow_compute` with `args` as a task and waits until it reports progress.
async fn start_slow_task(client: &Client, args: serde_json::Value) -> mcp_tasks_client::TaskId {
    let task = client
        .call_tool_as_task("slow_compute", args, TaskOptions::default())
        .await
        .unwrap();
    let id = task.task_id().cloned().unwrap();
    mcp_tasks_testkit::eventually(WAIT, || async {
        client.get(&id).await.unwrap().status_message.is_some()
    })
    .await;
    id
}

#[test]
fn two_upstreams_offering_one_tool_name_are_refused_at_start() {
    let upstream = |name: &str| {
        format!(
            "[[upstream]]\nname = \"{name}\"\ncommand = [\"{BIN}\", \"serve\", \"--stdio\", \"--demo\", \"--database\", \"memory:\", \"--log\", \"warn\"]\n"
        )
    };
    let (ok, stderr) =
        serve_with_config(&format!("{}{}", upstream("one"), upstream("two")), "warn");
    assert!(!ok);
    assert!(
        stderr.contains("by upstream 'one' and by upstream 'two'") && stderr.contains("prefix"),
        "{stderr}"
    );
}

#[test]
fn an_upstream_tool_named_like_a_task_tool_is_refused_at_start_naming_both() {
    // An upstream that offers a `task_wait` of its own (here another mcp-tasks told to
    // offer its task tools to every client, the gateway included).
    let upstream = |prefix: &str| {
        format!(
            "[[upstream]]\nname = \"inner\"\n{prefix}command = [\"{BIN}\", \"serve\", \"--stdio\", \"--demo\", \"--task-tools\", \"always\", \"--database\", \"memory:\", \"--log\", \"warn\"]\n"
        )
    };
    let (ok, stderr) = serve_with_config(&upstream(""), "warn");
    assert!(!ok);
    assert!(
        stderr.contains("upstream 'inner' offers a tool named 'task_wait'")
            && stderr.contains("mcp-tasks' own task tool 'task_wait'")
            && stderr.contains("prefix"),
        "{stderr}"
    );
    // With a prefix the names no longer collide.
    let (ok, stderr) = serve_with_config(&upstream("prefix = \"inner_\"\n"), "warn");
    assert!(ok, "{stderr}");
}

#[test]
fn a_task_support_name_that_is_not_a_tool_of_the_upstream_is_refused_at_start() {
    let upstream = |extra: &str| {
        format!(
            "[[upstream]]\nname = \"demo\"\nprefix = \"d_\"\ncommand = [\"{BIN}\", \"serve\", \"--stdio\", \"--demo\", \"--database\", \"memory:\", \"--log\", \"warn\"]\n[upstream.task_support]\n{extra}"
        )
    };
    let (ok, stderr) = serve_with_config(&upstream("slow_compte = \"required\"\n"), "warn");
    assert!(!ok);
    assert!(
        stderr.contains("`slow_compte`") && stderr.contains("did you mean `slow_compute`?"),
        "{stderr}"
    );
    let (ok, stderr) = serve_with_config(&upstream("d_greet = \"forbidden\"\n"), "warn");
    assert!(!ok);
    assert!(
        stderr.contains("`d_greet`") && stderr.contains("without the prefix `d_`: write `greet`"),
        "{stderr}"
    );
    let (ok, stderr) = serve_with_config(&upstream("greet = \"forbidden\"\n"), "warn");
    assert!(ok, "{stderr}");
}

#[test]
fn an_upstream_entry_without_an_endpoint_is_refused_with_the_fix() {
    let (ok, stderr) = serve_with_config("[[upstream]]\nname = \"x\"\n", "info");
    assert!(!ok);
    assert!(stderr.contains("give exactly one of `command"), "{stderr}");
}

/// `mcp-tasks wrap` over HTTP on `db`, in front of the demo server, with `extra` flags;
/// a lease of one second, so that a restart takes over what a killed process held.
fn wrap_http(db: &std::path::Path, extra: &[&str]) -> common::Server {
    let database = format!("sqlite://{}", db.display());
    let mut args = vec![
        "wrap",
        "--log",
        "warn",
        "--listen",
        "127.0.0.1:0",
        "--lease-ttl",
        "1s",
        "--database",
        &database,
    ];
    args.extend_from_slice(extra);
    args.extend([
        "--",
        BIN,
        "serve",
        "--stdio",
        "--demo",
        "--database",
        "memory:",
        "--log",
        "warn",
    ]);
    common::spawn_listening(&args)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumable_upstream_call_runs_again_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gateway.db");
    let mut first = wrap_http(&db, &["--resumable"]);
    let client = Client::builder()
        .wire(mcp_tasks_client::WirePreference::V2025_11_25)
        .connect(&Target::Http(first.url.clone()))
        .await
        .unwrap();
    let id = start_slow_task(&client, json!({"seconds": 2, "label": "again"})).await;
    first.child.kill().unwrap(); // SIGKILL: the upstream call is lost with the process
    first.child.wait().unwrap();
    drop(first);

    let second = wrap_http(&db, &["--resumable"]);
    let client = Client::builder()
        .wire(mcp_tasks_client::WirePreference::V2025_11_25)
        .connect(&Target::Http(second.url.clone()))
        .await
        .unwrap();
    // The lease runs out, the new process takes the task over and calls upstream again.
    let done = mcp_tasks_testkit::eventually(std::time::Duration::from_secs(20), || async {
        let view = client.get(&id).await.unwrap();
        view.status.is_terminal().then_some(view)
    })
    .await;
    assert_eq!(done.status, TaskStatus::Completed, "{done:?}");
    let outcome = client.resume(&id).await.unwrap().result().await.unwrap();
    assert!(
        outcome.text().unwrap().contains("'again' finished"),
        "{outcome:?}"
    );
}

#[test]
fn wrap_of_a_command_that_cannot_start_fails_at_once_saying_why() {
    let out = std::process::Command::new(BIN)
        .args([
            "wrap",
            "--database",
            "memory:",
            "--log",
            "error",
            "--",
            "no-such-mcp-server-here",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot start 'no-such-mcp-server-here'"),
        "{stderr}"
    );
}

/// Credentials given to an upstream (header values, here of an upstream that cannot be
/// reached) appear in no log line or error, even at debug level.
#[test]
fn upstream_credentials_never_reach_the_logs() {
    let (_held, closed_port) = common::refused_port();
    let (_, stderr) = serve_with_config(
        &format!(
            "[[upstream]]\nname = \"remote\"\nurl = \"http://127.0.0.1:{closed_port}/mcp\"\n\
             headers = {{ Authorization = \"Bearer sk-very-secret-value\", X-Api-Key = \"key-very-secret\" }}\n"
        ),
        "debug",
    );
    assert!(
        stderr.contains("upstream 'remote'"),
        "the failure is logged: {stderr}"
    );
    assert!(
        !stderr.contains("very-secret"),
        "a credential leaked into the log:\n{stderr}"
    );
}
