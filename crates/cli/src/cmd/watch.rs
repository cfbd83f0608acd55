//! `mcp-tasks watch`: pick up a task by id (after `call --detach`, a Ctrl-C detach, or
//! a restart) and follow it to its end, answering its questions.

use super::args::TaskArgs;
use super::exit::fail;
use super::follow::{connect_and_follow, follow, resume_command, Followed, Watching};
use crate::journal::Journal;

/// Runs `watch`; returns the exit status.
pub async fn run(a: TaskArgs) -> u8 {
    let (target, id) = match a.read() {
        Ok(t) => t,
        Err(code) => return code,
    };
    let watching = Watching {
        json: a.connect.json,
        resume: resume_command(&target, &a.connect),
        journal: Journal::for_target(&target),
        public_url: a.connect.public_url.clone(),
    };
    connect_and_follow(&target, &a.connect, |client, term| async move {
        match client.resume(&id).await {
            Ok(handle) => follow(&client, handle, &term, &watching).await,
            Err(e) => Followed::done(fail(&format!("finding task {id}"), &e)),
        }
    })
    .await
}
