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
mod board;
pub mod call;
pub mod cancel;
pub mod exit;
mod follow;
pub mod get;
pub mod list;
mod output;
pub mod policy;
mod prompt;
pub mod serve;
mod terminal;
pub mod tools;
pub mod watch;

/// The client subcommands (flattened into the top-level command list). Each talks to
/// the server at the URL given first, else at $MCP_TASKS_URL, else at
/// `http://127.0.0.1:8080/mcp` (where `mcp-tasks serve` listens by default), or to a
/// stdio server started for the command after `--`.
#[derive(Debug, Subcommand)]
pub enum ClientCommand {
    /// Call a tool: `mcp-tasks call [URL] TOOL --arg key=value`. A long call runs as
    /// a task: progress is shown, its questions are asked at the terminal, and Ctrl-C
    /// offers to cancel it or leave it running. Prints the result.
    Call(call::CallArgs),
    /// Follow a task started earlier (by `call --detach`, a Ctrl-C, or another
    /// terminal) to its end, answering its questions: `mcp-tasks watch [URL] TASK-ID`.
    Watch(watch::WatchArgs),
    /// Show a task's state (`--result`: what it returned): `mcp-tasks get [URL]
    /// TASK-ID`.
    Get(get::GetArgs),
    /// List the tasks you started with `call` at this server, with their current
    /// state: `mcp-tasks list [URL]`.
    #[command(
        after_help = "The tasks are kept for 7 days in a journal per server and \
        bearer token, in this account's own folder: $MCP_TASKS_STATE_DIR, else \
        $XDG_STATE_HOME/mcp-tasks, else ~/.local/state/mcp-tasks. On the 2025-11-25 \
        wire the tasks the server lists for this session are added."
    )]
    List(ServerArgs),
    /// Cancel a task: `mcp-tasks cancel [URL] TASK-ID` (exit status 5 when it had
    /// already ended).
    Cancel(TaskArgs),
    /// List the server's tools, their arguments, and whether a call runs as a task:
    /// `mcp-tasks tools [URL]`.
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
