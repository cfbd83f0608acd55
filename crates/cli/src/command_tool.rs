//! Command tools: a program from the config run with arguments filled from the call.
//! Each stdout line becomes the status message; stdout and stderr are captured into
//! the result; a non-zero exit is a tool error (`isError: true`); cancellation kills the
//! whole process group (SIGTERM, then SIGKILL after a grace period).

use anyhow::Result;
use mcp_tasks_engine::TaskContext;
use mcp_tasks_protocol::error_code::INTERNAL_ERROR;
use mcp_tasks_protocol::RpcError;
use mcp_tasks_server::{Tool, ToolResult};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde_json::{json, Map, Value};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;

use crate::command_template::expand;
use crate::config::CommandToolConfig;

/// How long a cancelled process group has between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// Most output kept per stream; the rest is cut with a note.
const MAX_CAPTURE: usize = 1024 * 1024;

/// Builds the tool for one `[[tools]]` entry.
pub fn build(cfg: CommandToolConfig) -> Result<Tool> {
    let schema = cfg.schema_json()?;
    let description = if cfg.description.is_empty() {
        format!("Runs `{}`", cfg.command.join(" "))
    } else {
        cfg.description.clone()
    };
    let name = cfg.name.clone();
    let support = cfg.task_support;
    let resumable = cfg.resumable;
    let retry = match &cfg.retry {
        Some(settings) => Some(
            settings
                .policy()
                .map_err(|problem| anyhow::anyhow!("tool '{name}': [tools.retry]: {problem}"))?,
        ),
        None => None,
    };
    let ttl = cfg.ttl;
    let cfg = Arc::new(cfg);
    let tool = Tool::new(name, description, schema, move |args, ctx| {
        let cfg = Arc::clone(&cfg);
        Box::pin(async move { run(&cfg, &args, ctx).await })
    })?
    .task_support(support);
    let tool = if resumable { tool.resumable() } else { tool };
    let tool = match retry {
        Some(policy) => tool.retry_policy(policy),
        None => tool,
    };
    Ok(match ttl {
        Some(ttl) => tool.default_ttl(ttl),
        None => tool,
    })
}

/// Kills the process group if the call is dropped before the process ended (a
/// synchronous call cancelled by the client).
struct GroupGuard {
    pgid: Option<Pid>,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }
}

/// Runs the command for one call: stdout lines become the status message, cancellation
/// stops the whole process group (TERM, then KILL after a grace), and the exit status,
/// stdout and stderr make the tool result.
async fn run(
    cfg: &CommandToolConfig,
    args: &Map<String, Value>,
    ctx: TaskContext,
) -> Result<Value, RpcError> {
    let argv = match expand(&cfg.command, args) {
        Ok(argv) => argv,
        Err(why) => return Ok(ToolResult::error(format!("tool '{}': {why}", cfg.name)).into()),
    };
    let mut child = spawn(cfg, &argv, args, &ctx)?;
    let pgid = child
        .id()
        .and_then(|p| i32::try_from(p).ok())
        .map(Pid::from_raw);
    let mut guard = GroupGuard { pgid };

    let out_task = tokio::spawn(stdout_as_status(child.stdout.take(), ctx.clone()));
    let err_task = tokio::spawn(capture_stderr(child.stderr.take()));
    let status = tokio::select! {
        s = child.wait() => s,
        _ = ctx.cancelled() => stop_group(&mut child, pgid).await,
    };
    // The leader exited; kill stragglers it left in the group.
    if let Some(pgid) = guard.pgid.take() {
        let _ = killpg(pgid, Signal::SIGKILL);
    }
    let stdout = out_task.await.unwrap_or_default();
    let stderr = err_task.await.unwrap_or_default();
    let status = status.map_err(|e| {
        RpcError::new(
            INTERNAL_ERROR,
            format!("tool '{}': waiting for the process failed: {e}", cfg.name),
        )
    })?;
    Ok(tool_result(cfg, &ctx, status, stdout, stderr))
}

/// Starts the command in its own process group with the call's arguments and task id
/// in its environment.
fn spawn(
    cfg: &CommandToolConfig,
    argv: &[String],
    args: &Map<String, Value>,
    ctx: &TaskContext,
) -> Result<tokio::process::Child, RpcError> {
    let (program, rest) = argv.split_first().ok_or_else(|| {
        RpcError::new(
            INTERNAL_ERROR,
            format!("tool '{}' has an empty command", cfg.name),
        )
    })?;
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .envs(&cfg.env)
        .env(
            "MCP_TASKS_ARGUMENTS",
            Value::Object(args.clone()).to_string(),
        );
    if let Some(id) = ctx.task_id() {
        cmd.env("MCP_TASKS_TASK_ID", id.as_str());
    }
    if let Some(dir) = &cfg.cwd {
        cmd.current_dir(dir);
    }
    cmd.spawn().map_err(|e| {
        RpcError::new(
            INTERNAL_ERROR,
            format!("tool '{}': cannot start '{program}': {e}", cfg.name),
        )
    })
}

/// Reads stdout line by line: each non-empty line becomes the task's status message;
/// the first [`MAX_CAPTURE`] bytes are kept for the result.
async fn stdout_as_status(stdout: Option<tokio::process::ChildStdout>, ctx: TaskContext) -> String {
    let mut captured = String::new();
    if let Some(out) = stdout {
        let mut lines = BufReader::new(out).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let trimmed = line.trim();
            if !trimmed.is_empty() {
                ctx.set_status_message(trimmed.to_string()).await;
            }
            if captured.len() < MAX_CAPTURE {
                captured.push_str(&line);
                captured.push('\n');
            }
        }
    }
    captured
}

/// Keeps the first [`MAX_CAPTURE`] bytes of stderr and drains the rest, so the child
/// never blocks on a full pipe.
async fn capture_stderr(stderr: Option<tokio::process::ChildStderr>) -> String {
    let mut buf = Vec::new();
    if let Some(mut err) = stderr {
        let _ = (&mut err)
            .take(MAX_CAPTURE as u64)
            .read_to_end(&mut buf)
            .await;
        let _ = tokio::io::copy(&mut err, &mut tokio::io::sink()).await;
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Cancellation: SIGTERM to the group, SIGKILL if it has not exited after
/// [`KILL_GRACE`].
async fn stop_group(
    child: &mut tokio::process::Child,
    pgid: Option<Pid>,
) -> std::io::Result<std::process::ExitStatus> {
    if let Some(pgid) = pgid {
        let _ = killpg(pgid, Signal::SIGTERM);
    }
    match tokio::time::timeout(KILL_GRACE, child.wait()).await {
        Ok(s) => s,
        Err(_) => {
            if let Some(pgid) = pgid {
                let _ = killpg(pgid, Signal::SIGKILL);
            }
            child.wait().await
        }
    }
}

/// The tool result: stdout (and stderr) as text, `isError` from the exit status, and
/// the same facts as structured content.
fn tool_result(
    cfg: &CommandToolConfig,
    ctx: &TaskContext,
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
) -> Value {
    let mut content = vec![json!({ "type": "text", "text": stdout })];
    if !stderr.is_empty() {
        content.push(json!({ "type": "text", "text": format!("stderr:\n{stderr}") }));
    }
    let exit = status.code();
    let mut result = if ctx.is_cancelled() {
        ToolResult::error(format!("tool '{}' was cancelled", cfg.name)).into()
    } else if status.success() {
        json!({ "content": content, "isError": false })
    } else {
        let why = match exit {
            Some(code) => format!("exited with status {code}"),
            None => "was killed by a signal".to_string(),
        };
        content.insert(
            0,
            json!({ "type": "text", "text": format!("command {why}") }),
        );
        json!({ "content": content, "isError": true })
    };
    result["structuredContent"] = json!({ "exitCode": exit, "stdout": stdout, "stderr": stderr });
    result
}
