//! One module per subcommand, and the client subcommands' enum with its dispatch:
//! `main` flattens [`ClientCommand`] into the top-level command list, and
//! [`ClientCommand::run`] hands each to its module. What those modules share lives
//! below them: [`args`] (targets, connection flags, argument sets) and [`exit`]
//! (exit codes and error reporting).

use anyhow::Result;
use clap::Subcommand;

use args::{ServerArgs, TaskArgs};
use exit::{Exit, EXIT_OK};

pub mod args;
pub mod call;
pub mod cancel;
pub mod exit;
mod follow;
pub mod get;
pub mod list;
mod output;
mod prompt;
pub mod serve;
mod terminal;
pub mod tools;
pub mod watch;

/// The client subcommands (flattened into the top-level command list).
#[derive(Debug, Subcommand)]
pub enum ClientCommand {
    /// Call a tool (as a task when it allows one), show progress, answer its
    /// questions at the terminal, print the result.
    Call(call::CallArgs),
    /// Follow a task created earlier (e.g. with `call --detach`) to its end.
    Watch(TaskArgs),
    /// Show a task's current state.
    Get(TaskArgs),
    /// List the tasks started from this machine with `call` (kept in a journal per
    /// server under $MCP_TASKS_STATE_DIR, else $XDG_STATE_HOME/mcp-tasks, else
    /// ~/.local/state/mcp-tasks, for 7 days), each refreshed from the server, and
    /// those the server lists for this session (2025-11-25).
    List(ServerArgs),
    /// Cancel a task (exit status 5 when it had already completed or failed).
    Cancel(TaskArgs),
    /// List the server's tools and whether each runs as a task.
    Tools(ServerArgs),
}

impl ClientCommand {
    /// Runs the subcommand. A non-zero exit is an [`Exit`] error whose message was
    /// already printed.
    pub async fn run(self) -> Result<()> {
        let code = match self {
            ClientCommand::Call(a) => call::run(a).await,
            ClientCommand::Watch(a) => watch::run(a).await,
            ClientCommand::Get(a) => get::run(a).await,
            ClientCommand::List(a) => list::run(a).await,
            ClientCommand::Cancel(a) => cancel::run(a).await,
            ClientCommand::Tools(a) => tools::run(a).await,
        };
        match code {
            EXIT_OK => Ok(()),
            c => Err(Exit(c).into()),
        }
    }
}
