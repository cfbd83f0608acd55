//! `mcp-tasks watch`: pick up a task by id (after `call --detach`, a Ctrl-C detach, or
//! a restart) and follow it to its end, answering its questions.

use clap::Args;

use super::args::{FollowArgs, TaskArgs};
use super::exit::fail;
use super::follow::{connect_and_follow, follow, resume_command, Followed, Watching};

/// Options of `watch`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 completed, 1 failed (a tool error included), \
    3 cancelled, 4 no connection, 130 interrupted (the task goes on)."
)]
pub struct WatchArgs {
    #[command(flatten)]
    task: TaskArgs,

    #[command(flatten)]
    follow: FollowArgs,
}

/// Runs `watch`; returns the exit status.
pub async fn run(a: WatchArgs) -> u8 {
    let (target, id) = match a.task.read() {
        Ok(t) => t,
        Err(code) => return code,
    };
    let connect = &a.task.connect;
    let watching = Watching {
        json: connect.json,
        resume: resume_command(&target, connect),
        journal: connect.journal(&target),
        board: a.follow.public_url.clone(),
        target: target.clone(),
    };
    connect_and_follow(&target, connect, &a.follow, |client, term| async move {
        match client.resume(&id).await {
            Ok(handle) => follow(&client, handle, &term, &watching).await,
            Err(e) => Followed::done(fail(&format!("finding task {id}"), &e)),
        }
    })
    .await
}
