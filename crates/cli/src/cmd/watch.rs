//! `mcp-tasks watch`: pick up a task by id (after `call --detach`, a Ctrl-C detach, or
//! a restart) and follow it to its end, answering its questions.

use clap::Args;
use mcp_tasks_client::{Target, TaskId};
use std::sync::Arc;

use super::client::{fail, target, usage, ConnectArgs};
use super::follow::{follow, with_prompts, Followed};
use super::terminal::Terminal;

/// Options of `watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// `URL TASK-ID`, or just `TASK-ID` when the server command follows `--`.
    #[arg(value_name = "TARGET TASK-ID", required = true, num_args = 1..=2)]
    positionals: Vec<String>,

    /// The stdio server to spawn, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,

    #[command(flatten)]
    connect: ConnectArgs,
}

/// Runs `watch`; returns the exit status.
pub async fn run(a: WatchArgs) -> u8 {
    let (target, rest) = match target(&a.positionals, &a.command) {
        Ok(t) => t,
        Err(e) => return usage(&e),
    };
    let [id] = rest.as_slice() else {
        return usage("give exactly one task id after the target");
    };
    let id = TaskId::from_string(id.clone());
    let term = Arc::new(Terminal::new(a.connect.json));
    let client = match with_prompts(a.connect.builder(), &term)
        .connect(&target)
        .await
    {
        Ok(c) => c,
        Err(e) => return fail("connecting", &e),
    };
    let followed = match client.resume(&id).await {
        Ok(handle) => {
            let resume = match &target {
                Target::Http(url) => format!("mcp-tasks watch {url} {{id}}"),
                Target::Stdio { program, args } => {
                    format!("mcp-tasks watch {{id}} -- {program} {}", args.join(" "))
                }
            };
            follow(&client, handle, &term, a.connect.json, &resume).await
        }
        Err(e) => Followed::done(fail(&format!("finding task {id}"), &e)),
    };
    followed.finish(client, a.connect.session.is_some()).await
}
