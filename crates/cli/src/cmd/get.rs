//! `mcp-tasks get`: a task's current state.

use super::args::TaskArgs;
use super::exit::{fail, EXIT_OK};
use super::output::{out, task_details, task_json};
use crate::journal::Journal;

/// Runs `get`; returns the exit status.
pub async fn run(a: TaskArgs) -> u8 {
    a.run(|client, id, target, json| async move {
        let got = match client.get(&id).await {
            Ok(t) => client.with_tool_error(t).await,
            Err(e) => Err(e),
        };
        match got {
            Ok(t) => {
                if let Some(j) = Journal::for_target(&target) {
                    j.update([&t]);
                }
                if json {
                    out(task_json(&t));
                } else {
                    out(task_details(&t));
                }
                EXIT_OK
            }
            Err(e) => fail(&format!("getting task {id}"), &e),
        }
    })
    .await
}
