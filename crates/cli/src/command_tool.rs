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
    let cfg = Arc::new(cfg);
    let tool = Tool::new(name, description, schema, move |args, ctx| {
        let cfg = Arc::clone(&cfg);
        Box::pin(async move { run(&cfg, &args, ctx).await })
    })?
    .task_support(support);
    Ok(if resumable { tool.resumable() } else { tool })
}

/// One piece of a command word: literal text or a `{name}` placeholder.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// Text passed as written.
    Text(String),
    /// The argument of this name.
    Arg(String),
}

/// Splits a command word into literal text and `{name}` placeholders, where `name` is
/// a letter or `_` followed by letters, digits, `_` or `-`. Other braces stay literal:
/// `${HOME}` (a shell's), `{ echo; }`, `{"json": 1}`.
fn pieces(word: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = word;
    while let Some(open) = rest.find('{') {
        let (before, from_brace) = rest.split_at(open);
        text.push_str(before);
        let after = &from_brace[1..];
        let name = after.find('}').map(|close| &after[..close]).filter(|n| {
            let mut chars = n.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
        match name {
            Some(n) if !text.ends_with('$') => {
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(Piece::Arg(n.to_string()));
                rest = &after[n.len() + 1..];
            }
            _ => {
                text.push('{');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    out
}

/// Checks a command template when the config is loaded: the program (first word) has
/// no placeholder, and every placeholder names a property of the input schema.
pub fn check(command: &[String], schema: &Value) -> Result<(), String> {
    let properties: Vec<&str> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    for (i, word) in command.iter().enumerate() {
        for piece in pieces(word) {
            let Piece::Arg(name) = piece else { continue };
            if i == 0 {
                return Err(format!(
                    "the program '{word}' contains the placeholder {{{name}}}: a call's \
                     arguments may not choose the program"
                ));
            }
            if !properties.contains(&name.as_str()) {
                let known = if properties.is_empty() {
                    "it has no properties".to_string()
                } else {
                    format!("its properties: {}", properties.join(", "))
                };
                return Err(format!(
                    "the command uses {{{name}}}, which is not a property of input_schema ({known})"
                ));
            }
        }
    }
    Ok(())
}

/// The text an argument value stands for in a command word.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The argv of one call: each word of `command` with its placeholders filled, never
/// split and never seen by a shell. A word that is only a placeholder whose argument
/// is absent (or null) is left out.
///
/// A value must not turn into an option of the program: before the first `--` word, a
/// word that starts with a placeholder (a positional value) must not expand to text
/// starting with `-`; such a call is refused with the returned message. After `--`,
/// and in words the template itself starts with `-` (`--file={path}`), any value goes.
pub fn expand(command: &[String], args: &Map<String, Value>) -> Result<Vec<String>, String> {
    let mut argv = Vec::with_capacity(command.len());
    let mut options_ended = false;
    for (i, word) in command.iter().enumerate() {
        let parts = pieces(word);
        if i == 0 && parts.iter().any(|p| matches!(p, Piece::Arg(_))) {
            return Err(format!(
                "the program '{word}' may not contain a placeholder"
            ));
        }
        if let [Piece::Arg(name)] = parts.as_slice() {
            if args.get(name).is_none_or(Value::is_null) {
                continue;
            }
        }
        let mut text = String::new();
        for p in &parts {
            match p {
                Piece::Text(t) => text.push_str(t),
                Piece::Arg(name) => text.push_str(&args.get(name).map(text_of).unwrap_or_default()),
            }
        }
        if let (false, Some(Piece::Arg(name))) = (options_ended, parts.first()) {
            if text.starts_with('-') {
                return Err(format!(
                    "argument '{name}' would start the word '{text}' with '-', which '{}' could \
                     read as an option; give a value that does not start with '-' (the tool's \
                     command must put \"--\" before {{{name}}} to accept such values)",
                    command.first().map(String::as_str).unwrap_or("the program"),
                ));
            }
        }
        if i > 0 && word == "--" {
            options_ended = true;
        }
        argv.push(text);
    }
    Ok(argv)
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
        Err(why) => return Ok(ToolResult::error(format!("tool '{}': {why}", cfg.name))),
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
        ToolResult::error(format!("tool '{}' was cancelled", cfg.name))
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn words(v: &[&str]) -> Vec<String> {
        v.iter().map(|w| w.to_string()).collect()
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn placeholders_fill_one_word_each_and_shell_braces_stay() {
        let a = args(json!({"path": "/tmp/a b; rm -rf x", "n": 3, "opt": null}));
        let argv = expand(
            &words(&[
                "sh",
                "-c",
                "echo ${HOME} { x; }",
                "--",
                "{path}",
                "--file={path}",
                "n{n}",
                "{opt}",
                "{missing}",
            ]),
            &a,
        )
        .unwrap();
        assert_eq!(
            argv,
            words(&[
                "sh",
                "-c",
                "echo ${HOME} { x; }",
                "--",
                "/tmp/a b; rm -rf x",
                "--file=/tmp/a b; rm -rf x",
                "n3"
            ])
        );
    }

    #[test]
    fn a_value_never_becomes_an_option() {
        let a = args(json!({"path": "--version", "n": -5}));
        let err = expand(&words(&["du", "-sh", "{path}"]), &a).unwrap_err();
        assert!(err.contains("'path'") && err.contains("\"--\""), "{err}");
        assert!(expand(&words(&["seq", "{n}"]), &a).is_err());
        assert!(expand(&words(&["ls", "{path}x"]), &a).is_err());
        // After `--`, or as an option's own value, it is just a value.
        assert_eq!(
            expand(&words(&["du", "-sh", "--", "{path}"]), &a).unwrap(),
            words(&["du", "-sh", "--", "--version"])
        );
        assert_eq!(
            expand(&words(&["du", "--files0-from={path}"]), &a).unwrap(),
            words(&["du", "--files0-from=--version"])
        );
        assert!(expand(&words(&["{path}"]), &a).is_err());
    }

    #[test]
    fn templates_are_checked_against_the_schema() {
        let schema = json!({"properties": {"path": {"type": "string"}}});
        assert!(check(&words(&["du", "--", "{path}", "${HOME}"]), &schema).is_ok());
        let err = check(&words(&["du", "--", "{pth}"]), &schema).unwrap_err();
        assert!(err.contains("{pth}") && err.contains("path"), "{err}");
        assert!(check(&words(&["{path}"]), &schema).is_err());
        assert!(check(&words(&["true", "{x}"]), &json!({})).is_err());
    }
}
