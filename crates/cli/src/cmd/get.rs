//! `mcp-tasks get`: a task's current state, or with `--result` what it returned.

use clap::Args;
use console::style;

use super::args::TaskArgs;
use super::exit::{exit_for_task, fail, EXIT_OK};
use super::follow::{outcome, resume_command};
use super::output::{out, status_text, task_details, task_json};

/// Options of `get`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 completed or still running, 1 failed (a tool \
    error included), 3 cancelled, 4 no connection. Examples:\n  \
    mcp-tasks get 0e94c1d2…                  the task's state (default server)\n  \
    mcp-tasks get 0e94c1d2… --result         what it returned, as `call` prints it\n  \
    mcp-tasks get https://tasks.example.com/mcp 0e94c1d2… --json"
)]
pub struct GetArgs {
    #[command(flatten)]
    task: TaskArgs,

    /// Print what the task returned (the tool's text, or with --json the whole
    /// result), as `call` prints it, instead of its state. A task that has not ended
    /// has no result yet: that is said on stderr (exit status 0), with the command
    /// that waits for it.
    #[arg(long)]
    result: bool,
}

/// Runs `get`; returns the exit status: how the task stands (see [`exit_for_task`]).
pub async fn run(a: GetArgs) -> u8 {
    let want_result = a.result;
    a.task
        .run(|client, id, target, connect| async move {
            let got = match client.get(&id).await {
                Ok(t) => client.with_tool_error(t).await,
                Err(e) => Err(e),
            };
            let t = match got {
                Ok(t) => t,
                Err(e) => return fail(&format!("getting task {id}"), &e),
            };
            if let Some(j) = connect.journal(&target) {
                j.update([&t]);
            }
            if !want_result {
                if connect.json {
                    out(task_json(&t));
                } else {
                    out(task_details(&t));
                }
                return exit_for_task(&t);
            }
            if !t.status.is_terminal() {
                let wait = resume_command(&target, &connect)
                    .map(|c| format!("; wait for it with: {}", c.replace("{id}", id.as_str())))
                    .unwrap_or_default();
                eprintln!(
                    "{} task {id} has not ended ({}): no result yet{wait}",
                    style("note:").yellow().for_stderr(),
                    status_text(&t)
                );
                return EXIT_OK;
            }
            // An ended task's handle collects its outcome at once, on either wire.
            let collected = match client.resume(&id).await {
                Ok(handle) => handle.result().await,
                Err(e) => Err(e),
            };
            outcome(collected, connect.json)
        })
        .await
}
