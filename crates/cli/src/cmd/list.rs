//! `mcp-tasks list`: the tasks the server shows this client (every page).

use clap::Args;
use serde_json::Value;

use super::client::{fail, finish, target, usage, ConnectArgs, EXIT_OK};
use super::output::{task_json, task_line};

/// Options of `list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// The server URL (omit it when the server command follows `--`).
    #[arg(value_name = "TARGET", num_args = 0..=1)]
    positionals: Vec<String>,

    /// The stdio server to spawn, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,

    #[command(flatten)]
    connect: ConnectArgs,
}

/// Runs `list`; returns the exit status.
pub async fn run(a: ListArgs) -> u8 {
    let (target, rest) = match target(&a.positionals, &a.command) {
        Ok(t) => t,
        Err(e) => return usage(&e),
    };
    if !rest.is_empty() {
        return usage("list takes only a target");
    }
    let client = match a.connect.builder().connect(&target).await {
        Ok(c) => c,
        Err(e) => return fail("connecting", &e),
    };
    let code = match client.list().await {
        Ok(tasks) if a.connect.json => {
            println!("{}", Value::Array(tasks.iter().map(task_json).collect()));
            EXIT_OK
        }
        Ok(tasks) => {
            if tasks.is_empty() {
                eprintln!("no tasks (a server without authentication lists only this session's)");
            }
            for t in &tasks {
                println!("{}", task_line(t));
            }
            EXIT_OK
        }
        Err(e) => fail("listing tasks", &e),
    };
    finish(client, &a.connect).await;
    code
}
