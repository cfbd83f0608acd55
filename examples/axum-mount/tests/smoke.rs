//! Starts the example on a free port: the app's own route answers, and an MCP client
//! runs a task at /mcp on the same listener.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_client::{Client, Target, TaskOptions, TaskStatus};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

struct Kill(std::process::Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn app_routes_and_mcp_share_the_listener() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_example-axum-mount"))
        .arg("127.0.0.1:0")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let _guard = Kill(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .expect("address line")
        .to_string();

    let health = reqwest::get(format!("{base}/health")).await.unwrap();
    assert_eq!(health.text().await.unwrap(), "ok");

    let client = Client::connect(&Target::Http(format!("{base}/mcp")))
        .await
        .expect("connect");
    let outcome = client
        .call_tool_as_task(
            "render_report",
            json!({"name": "q3"}),
            TaskOptions::default(),
        )
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert_eq!(outcome.status(), TaskStatus::Completed);
    assert_eq!(outcome.text().as_deref(), Some("report 'q3' is ready"));
    client.close().await;
}
