//! `mcp-tasks cancel`: cancel a task and show its state afterwards.

use mcp_tasks_client::TaskStatus;

use super::client::{fail, TaskArgs, EXIT_FAILED, EXIT_OK};
use super::output::{task_json, task_line};

/// Runs `cancel`; returns the exit status (1 when the task had already ended).
pub async fn run(a: TaskArgs) -> u8 {
    a.run(|client, id, json| async move {
        match client.cancel(&id).await {
            Ok(t) => {
                if json {
                    println!("{}", task_json(&t));
                } else {
                    println!("{}", task_line(&t));
                }
                if t.status == TaskStatus::Cancelled {
                    EXIT_OK
                } else {
                    EXIT_FAILED
                }
            }
            Err(e) => fail(&format!("cancelling task {id}"), &e),
        }
    })
    .await
}
