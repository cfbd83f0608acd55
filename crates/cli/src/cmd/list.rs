//! `mcp-tasks list`: the tasks the server shows this client (every page).

use serde_json::Value;

use super::client::{fail, ServerArgs, EXIT_OK};
use super::output::{task_json, task_line};

/// Runs `list`; returns the exit status.
pub async fn run(a: ServerArgs) -> u8 {
    a.run("list", |client, json| async move {
        match client.list().await {
            Ok(tasks) if json => {
                println!("{}", Value::Array(tasks.iter().map(task_json).collect()));
                EXIT_OK
            }
            Ok(tasks) => {
                if tasks.is_empty() {
                    eprintln!(
                        "no tasks (a server without authentication lists only this session's)"
                    );
                }
                for t in &tasks {
                    println!("{}", task_line(t));
                }
                EXIT_OK
            }
            Err(e) => fail("listing tasks", &e),
        }
    })
    .await
}
