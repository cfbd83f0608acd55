//! `mcp-tasks cancel`: cancel a task and show its state afterwards.

use clap::Args;
use mcp_tasks_client::{TaskId, TaskStatus};

use super::client::{fail, finish, target, usage, ConnectArgs, EXIT_FAILED, EXIT_OK};
use super::output::{task_json, task_line};

/// Options of `cancel`.
#[derive(Debug, Args)]
pub struct CancelArgs {
    /// `URL TASK-ID`, or just `TASK-ID` when the server command follows `--`.
    #[arg(value_name = "TARGET TASK-ID", required = true, num_args = 1..=2)]
    positionals: Vec<String>,

    /// The stdio server to spawn, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,

    #[command(flatten)]
    connect: ConnectArgs,
}

/// Runs `cancel`; returns the exit status (1 when the task had already ended).
pub async fn run(a: CancelArgs) -> u8 {
    let (target, rest) = match target(&a.positionals, &a.command) {
        Ok(t) => t,
        Err(e) => return usage(&e),
    };
    let [id] = rest.as_slice() else {
        return usage("give exactly one task id after the target");
    };
    let id = TaskId::from_string(id.clone());
    let client = match a.connect.builder().connect(&target).await {
        Ok(c) => c,
        Err(e) => return fail("connecting", &e),
    };
    let code = match client.cancel(&id).await {
        Ok(t) => {
            if a.connect.json {
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
    };
    finish(client, &a.connect).await;
    code
}
