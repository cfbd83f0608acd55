//! The external job outlives the server: start an export as a task, kill -9 the
//! server, start it again on the same SQLite file, let the (fake) batch worker finish
//! the job by writing its result file, and collect the result. Then cancel another
//! export and check the worker was asked to stop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_testkit::{eventually, WAIT};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// One server process spoken to in JSON lines.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(spool: &Path, db: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_example-external-job"))
            .arg(spool)
            .arg(format!("sqlite://{}", db.display()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut s = Server {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        s.request("initialize", json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"smoke","version":"1"}}));
        writeln!(
            s.stdin,
            "{}",
            json!({"jsonrpc":"2.0","method":"notifications/initialized"})
        )
        .unwrap();
        s
    }

    /// Sends a request and returns its response, skipping notifications.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
        )
        .unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "server closed stdout"
            );
            let m: Value = serde_json::from_str(&line).unwrap();
            if m["id"] == id {
                return m;
            }
        }
    }

    fn get(&mut self, task: &str) -> Value {
        self.request("tasks/get", json!({"taskId": task}))["result"].clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until the export `job` reached the batch system (its request file exists).
async fn submitted(spool: &Path, job: &str) {
    let request = spool.join(format!("{job}.request"));
    eventually(WAIT, || {
        let there = request.exists();
        async move { there }
    })
    .await;
}

#[tokio::test]
async fn an_external_job_survives_a_crash_and_can_be_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    std::fs::create_dir(&spool).unwrap();
    let db = dir.path().join("tasks.db");

    let mut server = Server::start(&spool, &db);
    let created = server.request(
        "tools/call",
        json!({"name":"export_table","arguments":{"table":"orders"},"task":{}}),
    );
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let job = format!("export-orders-{task}");
    // The start ran in the task: wait until the request reached the batch system.
    submitted(&spool, &job).await;
    std::fs::write(spool.join(format!("{job}.status")), "40% exported").unwrap();
    // A poll of the job reads the worker's status into the task's status message.
    let got = eventually(WAIT, || {
        let got = server.get(&task);
        async move { (got["statusMessage"] == "40% exported").then_some(got) }
    })
    .await;
    assert_eq!(got["status"], "working");

    // kill -9: no process holds the task any more, and none needs to.
    drop(server);
    let mut server = Server::start(&spool, &db);
    assert_eq!(
        server.get(&task)["status"],
        "working",
        "not failed by the restart"
    );
    std::fs::write(spool.join(format!("{job}.done")), "exported 1200 rows").unwrap();
    let result = server.request("tasks/result", json!({"taskId": task}));
    assert_eq!(result["result"]["content"][0]["text"], "exported 1200 rows");
    assert_eq!(server.get(&task)["status"], "completed");

    let created = server.request(
        "tools/call",
        json!({"name":"export_table","arguments":{"table":"users"},"task":{}}),
    );
    let task2 = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let job2 = format!("export-users-{task2}");
    submitted(&spool, &job2).await;
    // Cancel once the job state is stored (the task's status message says so), so that
    // this is the cancel of a running external job.
    eventually(WAIT, || {
        let stored = !server.get(&task2)["statusMessage"].is_null();
        async move { stored }
    })
    .await;
    let cancelled = server.request("tasks/cancel", json!({"taskId": task2}));
    assert_eq!(cancelled["result"]["status"], "cancelled");
    assert!(
        spool.join(format!("{job2}.cancel")).exists(),
        "the worker was asked to stop"
    );
}
