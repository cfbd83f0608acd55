//! `mcp-tasks get`: a task's current state.

use clap::Args;
use mcp_tasks_client::{Client, TaskId};

use super::client::{fail, finish, target, usage, ConnectArgs, EXIT_OK};
use super::output::{task_details, task_json};

/// Options of `get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// `URL TASK-ID`, or just `TASK-ID` when the server command follows `--`.
    #[arg(value_name = "TARGET TASK-ID", required = true, num_args = 1..=2)]
    positionals: Vec<String>,

    /// The stdio server to spawn, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,

    #[command(flatten)]
    connect: ConnectArgs,
}

/// Runs `get`; returns the exit status.
pub async fn run(a: GetArgs) -> u8 {
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
    let code = show(&client, &id, a.connect.json).await;
    finish(client, &a.connect).await;
    code
}

async fn show(client: &Client, id: &TaskId, json: bool) -> u8 {
    match client.get(id).await {
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
}
