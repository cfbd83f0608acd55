//! The real binary over stdio: framing errors, and command tools from a config file
//! (status from stdout lines, exit codes, process-group kill on cancel).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

mod common;

use common::BIN;
use mcp_tasks_testkit::{eventually, WAIT};

struct StdioServer {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    notifications: Vec<Value>,
}

impl StdioServer {
    async fn start(extra: &[&str]) -> StdioServer {
        let mut command = Command::new(BIN);
        command
            .args(["serve", "--stdio", "--database", "memory:", "--log", "warn"])
            .args(extra)
            .stderr(Stdio::null());
        StdioServer::spawn(command).await
    }

    /// Starts `command` (a `serve --stdio`) and initializes a session.
    async fn spawn(mut command: Command) -> StdioServer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start mcp-tasks");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut s = StdioServer {
            _child: child,
            stdin,
            lines,
            notifications: Vec::new(),
        };
        let init = s
            .rpc(0, "initialize", json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdio-test","version":"0"}}))
            .await;
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
        s.send_line(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string())
            .await;
        s
    }

    async fn send_line(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Reads messages until the response with `id` (or an id-less error when `id` is null).
    async fn read_response(&mut self, id: &Value) -> Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
                .await
                .expect("server answered in time")
                .unwrap()
                .expect("server still running");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("method").is_some() && v.get("id").is_none() {
                self.notifications.push(v);
                continue;
            }
            if &v["id"] == id {
                return v;
            }
        }
    }

    /// Ends the session (closes stdin) and waits for the process to exit.
    async fn close(self) -> std::process::Output {
        drop(self.stdin);
        tokio::time::timeout(Duration::from_secs(30), self._child.wait_with_output())
            .await
            .expect("the server exits once stdin closes")
            .unwrap()
    }

    async fn rpc(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send_line(
            &json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string(),
        )
        .await;
        self.read_response(&json!(id)).await
    }
}

fn write_config(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("tasks.toml");
    let pidfile = dir.join("grandchild.pid");
    std::fs::write(
        &path,
        format!(
            r#"
[[tools]]
name = "steps"
command = ["sh", "-c", "echo step one; sleep 0.2; echo step two; sleep 0.2; echo all done"]

[[tools]]
name = "exit_code"
command = ["sh", "-c", "echo about to fail; echo oops >&2; exit $0", "{{code}}"]
input_schema = {{ type = "object", properties = {{ code = {{ type = "integer" }} }}, required = ["code"] }}

[[tools]]
name = "spawns_grandchild"
task_support = "required"
command = ["sh", "-c", "sleep 300 & echo $! > {pidfile}; echo started; wait"]
"#,
            pidfile = pidfile.display()
        ),
    )
    .unwrap();
    path
}

#[tokio::test]
async fn framing_errors_are_answered_and_the_session_goes_on() {
    let mut s = StdioServer::start(&["--demo", "--max-body-bytes", "2000"]).await;
    s.send_line("{oops").await;
    assert_eq!(s.read_response(&Value::Null).await["error"]["code"], -32700);
    s.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":99,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(5000)
    ))
    .await;
    let r = s.read_response(&Value::Null).await;
    assert_eq!(r["error"]["code"], -32600);
    assert!(r["error"]["message"].as_str().unwrap().contains("2000"));
    assert_eq!(s.rpc(1, "ping", json!({})).await["result"], json!({}));
    assert_eq!(
        s.rpc(
            2,
            "tools/call",
            json!({"name": "greet", "arguments": {"name": "Ada"}})
        )
        .await["result"]["content"][0]["text"],
        "Hello, Ada!"
    );
}

#[tokio::test]
async fn command_tools_report_status_output_and_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    let mut s = StdioServer::start(&["--config", config.to_str().unwrap()]).await;

    let tools = s.rpc(1, "tools/list", json!({})).await;
    let names: Vec<_> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    // The configured tools, then the task tools: this client declared no `tasks`.
    assert_eq!(
        names,
        vec![
            json!("steps"),
            json!("exit_code"),
            json!("spawns_grandchild"),
            json!("task_wait"),
            json!("task_status"),
            json!("task_answer"),
            json!("task_cancel"),
            json!("task_list")
        ]
    );

    let created = s
        .rpc(
            2,
            "tools/call",
            json!({"name": "steps", "arguments": {}, "task": {}}),
        )
        .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let result = s.rpc(3, "tasks/result", json!({"taskId": id})).await;
    assert_eq!(
        result["result"]["content"][0]["text"],
        "step one\nstep two\nall done\n"
    );
    assert_eq!(result["result"]["isError"], false);
    let got = s.rpc(4, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(
        got["result"]["statusMessage"], "all done",
        "last stdout line is the status"
    );
    // A line the tool prints before its task is written goes into the creation (the
    // task starts with it as its message); later lines are status notifications. Which
    // one "step one" is depends on the scheduler, so either counts.
    let seen_at_creation = created["result"]["task"]["statusMessage"] == "step one";
    assert!(
        seen_at_creation
            || s.notifications
                .iter()
                .any(|n| n["params"]["statusMessage"] == "step one"),
        "each line was a status update: {created} {:?}",
        s.notifications
    );
    assert!(
        s.notifications
            .iter()
            .any(|n| n["params"]["statusMessage"] == "step two"),
        "a line printed while the task runs is a status notification: {:?}",
        s.notifications
    );

    let sync = s
        .rpc(
            5,
            "tools/call",
            json!({"name": "exit_code", "arguments": {"code": 3}}),
        )
        .await;
    assert_eq!(sync["result"]["isError"], true);
    assert_eq!(sync["result"]["structuredContent"]["exitCode"], 3);
    assert_eq!(sync["result"]["structuredContent"]["stderr"], "oops\n");
    let created = s
        .rpc(
            6,
            "tools/call",
            json!({"name": "exit_code", "arguments": {"code": 1}, "task": {}}),
        )
        .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.rpc(7, "tasks/result", json!({"taskId": id})).await;
    assert_eq!(
        s.rpc(8, "tasks/get", json!({"taskId": id})).await["result"]["status"],
        "failed"
    );
}

#[tokio::test]
async fn cancel_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    let mut s = StdioServer::start(&["--config", config.to_str().unwrap()]).await;
    let created = s
        .rpc(
            1,
            "tools/call",
            json!({"name": "spawns_grandchild", "arguments": {}, "task": {}}),
        )
        .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let pidfile = dir.path().join("grandchild.pid");
    // The tool started its grandchild (a file another process writes: no signal).
    let pid = eventually(WAIT, || async {
        std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|text| text.trim().parse::<i32>().ok())
    })
    .await;
    let alive = |pid: i32| {
        Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ")
    };
    assert!(alive(pid));
    assert_eq!(
        s.rpc(2, "tasks/cancel", json!({"taskId": id})).await["result"]["status"],
        "cancelled"
    );
    // The grandchild was killed with its process group (not our child: no wait()).
    eventually(WAIT, || async { !alive(pid) }).await;
    assert_eq!(
        s.rpc(3, "tasks/get", json!({"taskId": id})).await["result"]["status"],
        "cancelled"
    );
}

#[tokio::test]
async fn audit_events_go_to_their_own_target_without_arguments() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-tasks"))
        .args([
            "serve",
            "--stdio",
            "--demo",
            "--database",
            "memory:",
            "--log",
            "warn,mcp_tasks::audit=info",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start mcp-tasks");
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let lines = [
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"audit","version":"0"}}}),
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0,"label":"secret-label"},"task":{}}}),
    ];
    for l in &lines {
        stdin.write_all(format!("{l}\n").as_bytes()).await.unwrap();
    }
    let mut task = String::new();
    while let Ok(Some(line)) = out.next_line().await {
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 1 {
            task = v["result"]["task"]["taskId"].as_str().unwrap().to_string();
            break;
        }
    }
    let result = json!({"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId": task}});
    stdin
        .write_all(format!("{result}\n").as_bytes())
        .await
        .unwrap();
    while let Ok(Some(line)) = out.next_line().await {
        if serde_json::from_str::<Value>(&line).unwrap()["id"] == 2 {
            break;
        }
    }
    drop(stdin); // end of input: the server exits
    let output = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    for event in [
        "event=\"created\"",
        "event=\"status_changed\"",
        "event=\"result_retrieved\"",
    ] {
        assert!(
            log.lines()
                .any(|l| l.contains("mcp_tasks::audit") && l.contains(event) && l.contains(&task)),
            "{event} missing in:\n{log}"
        );
    }
    assert!(
        !log.contains("secret-label"),
        "arguments are not logged by default:\n{log}"
    );
}

/// A host starts a stdio server in a folder of its choosing: without --database the
/// tasks go to the user's data folder, said on stderr, and nothing to that folder.
#[tokio::test]
async fn without_a_database_stdio_keeps_tasks_in_the_user_data_folder() {
    let cwd = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut command = Command::new(BIN);
    command
        .args(["serve", "--stdio", "--demo", "--log", "info"])
        .current_dir(cwd.path())
        .env("XDG_DATA_HOME", data.path())
        .env_remove("MCP_TASKS_DATABASE")
        .env_remove("MCP_TASKS_CONFIG")
        .stderr(Stdio::piped());
    let mut s = StdioServer::spawn(command).await;
    let r = s
        .rpc(
            1,
            "tools/call",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "Hello, Ada!");
    let out = s.close().await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");

    let db = data.path().join("mcp-tasks").join("mcp-tasks.db");
    assert!(db.is_file(), "no {}: {stderr}", db.display());
    let left: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
    assert!(left.is_empty(), "written to the working folder: {left:?}");
    assert!(stderr.contains(&db.display().to_string()), "{stderr}");
}

/// A data folder that cannot be created stops the server, naming it.
#[tokio::test]
async fn an_unusable_data_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "not a folder").unwrap();
    let xdg = file.join("data");
    let out = Command::new(BIN)
        .args(["serve", "--stdio", "--demo", "--log", "warn"])
        .current_dir(dir.path())
        .env("XDG_DATA_HOME", &xdg)
        .env_remove("MCP_TASKS_DATABASE")
        .env_remove("MCP_TASKS_CONFIG")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot create {}",
            xdg.join("mcp-tasks").display()
        )),
        "{stderr}"
    );
}
