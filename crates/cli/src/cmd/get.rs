//! `mcp-tasks get`: a task's current state.

use super::client::{fail, TaskArgs, EXIT_OK};
use super::output::{task_details, task_json};

/// Runs `get`; returns the exit status.
pub async fn run(a: TaskArgs) -> u8 {
    a.run(|client, id, json| async move {
        match client.get(&id).await {
            Ok(t) if json => {
                println!("{}", task_json(&t));
                EXIT_OK
            }
            Ok(t) => {
                println!("{}", task_details(&t));
                EXIT_OK
            }
            Err(e) => fail(&format!("getting task {id}"), &e),
        }
    })
    .await
}
