//! How client commands show tasks and results: a neutral JSON form of a task for
//! `--json` (the same on both wires), and short human forms.

use console::style;
use mcp_tasks_client::{TaskStatus, TaskView};
use mcp_tasks_protocol::codec::timestamp;
use mcp_tasks_protocol::task::TOOL_ERROR;
use serde_json::{json, Value};
use std::fmt::Display;
use std::io::Write;

/// Prints one line on stdout. When stdout is a pipe its reader closed (`| head -1`),
/// nobody wants the rest: the process ends at once, quietly, with status 0 (the task
/// on the server is not touched). Any other write error ends it with status 1.
pub fn out(line: impl Display) {
    let mut stdout = std::io::stdout().lock();
    let written = writeln!(stdout, "{line}").and_then(|()| stdout.flush());
    if let Err(e) = written {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("mcp-tasks: error: writing to stdout: {e}");
        std::process::exit(1);
    }
}

/// A task as `--json` prints it: `taskId`, `status`, `toolError`, `statusMessage`,
/// `createdAt`, `lastUpdatedAt`, `ttlMs` (null: unlimited), `pollIntervalMs`. A task
/// whose tool reported an error reads `"status": "failed", "toolError": true` on both
/// wires (2025-11-25 says `failed`, the extension `completed`).
pub fn task_json(t: &TaskView) -> Value {
    let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let tool_error = t.shown_status() == TOOL_ERROR;
    let status = if tool_error {
        TaskStatus::Failed
    } else {
        t.status
    };
    json!({
        "taskId": t.id,
        "status": status.as_str(),
        "toolError": tool_error,
        "statusMessage": t.status_message,
        "createdAt": timestamp(&t.created_at),
        "lastUpdatedAt": timestamp(&t.last_updated_at),
        "ttlMs": t.ttl.map(ms),
        "pollIntervalMs": t.poll_interval.map(ms),
    })
}

/// The task's state in a word for people: its status, with a tool that reported an
/// error `failed` on either wire (2025-11-25 says `failed`, the Tasks extension
/// `completed`), as the exit status and the board say.
pub fn status_text(t: &TaskView) -> &'static str {
    if t.shown_status() == TOOL_ERROR {
        TaskStatus::Failed.as_str()
    } else {
        t.status.as_str()
    }
}

/// [`status_text`] padded to `width` and coloured by how things stand.
pub fn status_word(t: &TaskView, width: usize) -> String {
    let text = format!("{:<width$}", status_text(t));
    let styled = match t.status {
        _ if t.shown_status() == TOOL_ERROR => style(text).red(),
        TaskStatus::Completed => style(text).green(),
        TaskStatus::Failed => style(text).red(),
        TaskStatus::Cancelled => style(text).yellow(),
        TaskStatus::InputRequired => style(text).magenta(),
        TaskStatus::Working => style(text).cyan(),
    };
    styled.to_string()
}

/// One line per task: id, status, last update, message.
pub fn task_line(t: &TaskView) -> String {
    format!(
        "{}  {}  {}  {}",
        t.id,
        status_word(t, 0),
        t.last_updated_at.format("%Y-%m-%d %H:%M:%S"),
        t.status_message.as_deref().unwrap_or("")
    )
}

/// A task in detail, one field a line.
pub fn task_details(t: &TaskView) -> String {
    let mut out = format!("task     {}\nstatus   {}\n", t.id, status_word(t, 0));
    if let Some(m) = &t.status_message {
        out.push_str(&format!("message  {m}\n"));
    }
    out.push_str(&format!("created  {}\n", timestamp(&t.created_at)));
    out.push_str(&format!("updated  {}\n", timestamp(&t.last_updated_at)));
    match t.ttl {
        Some(d) => out.push_str(&format!(
            "kept     {} after it was created\n",
            humantime::format_duration(d)
        )),
        None => out.push_str("kept     until deleted\n"),
    }
    out.trim_end().to_string()
}

/// What a result shows people: its text content, else its structured content, else
/// the whole result, as indented JSON.
pub fn result_text(result: &Value, text: Option<String>) -> String {
    if let Some(t) = text {
        return t;
    }
    let shown = result.get("structuredContent").unwrap_or(result);
    serde_json::to_string_pretty(shown).unwrap_or_else(|_| shown.to_string())
}
