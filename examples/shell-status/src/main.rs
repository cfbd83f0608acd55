//! A tool that shells out and streams status: it runs a child process (here a small
//! `sh` script standing in for a build), turns each line it prints into the task's
//! status message and a progress report, and kills the child when the task is
//! cancelled. Serves stdio.

use mcp_tasks::prelude::*;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

#[derive(Deserialize, JsonSchema)]
struct Build {
    /// How many build steps to run.
    #[schemars(range(min = 1, max = 100))]
    steps: u32,
}

async fn build(args: Build, ctx: TaskContext) -> Result<String, String> {
    // The command is fixed; only a number reaches it, so no input is ever parsed by a
    // shell.
    let script = "i=1; while [ $i -le $1 ]; do echo \"step $i of $1\"; sleep 0.2; i=$((i+1)); done";
    let mut child = Command::new("sh")
        .args(["-c", script, "build", &args.steps.to_string()])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("could not start sh: {e}"))?;
    let stdout = child.stdout.take().ok_or("the child has no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let mut done = 0;
    loop {
        tokio::select! {
            _ = ctx.cancelled() => {
                let _ = child.kill().await;
                return Err(format!("cancelled after {done} steps"));
            }
            line = lines.next_line() => match line {
                Ok(Some(line)) => {
                    done += 1;
                    ctx.report_progress(f64::from(done), Some(f64::from(args.steps)), Some(line.clone()));
                    ctx.set_status_message(line).await;
                }
                Ok(None) => break,
                Err(e) => return Err(format!("reading the child's output: {e}")),
            }
        }
    }
    let status = child
        .wait()
        .await
        .map_err(|e| format!("waiting for sh: {e}"))?;
    if !status.success() {
        return Err(format!("the build failed: {status}"));
    }
    Ok(format!("built in {done} steps"))
}

#[tokio::main]
async fn main() -> Result<(), BuildError> {
    Server::builder()
        .name("shell-status-example")
        .tool(
            Tool::from_fn("build", "Runs the build, streaming its output.", build)
                .task_support(TaskSupport::Optional),
        )
        .build()
        .await?
        .serve_stdio()
        .await
}
