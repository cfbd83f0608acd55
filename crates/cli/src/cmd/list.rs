//! `mcp-tasks list`: the tasks this user started on the server (from the client's
//! journal, each refreshed with `tasks/get`), and on 2025-11-25 also those the server
//! lists for this session (`tasks/list`). Works on both wires: the Tasks extension has
//! no `tasks/list`.

use futures::StreamExt;
use mcp_tasks_client::{Client, ClientError, TaskId, TaskView, Wire};
use serde_json::{json, Value};
use std::collections::HashSet;

use super::args::ServerArgs;
use super::exit::{fail, EXIT_OK};
use super::output::{out, status_text, status_word, task_json};
use crate::journal::{Entry, Journal, STATE_DIR_ENV};

/// `tasks/get` requests in flight at once while refreshing the journal.
const REFRESH_CONCURRENCY: usize = 8;

/// What the listing says of the tasks the server no longer knows.
const GONE: &str = "the server no longer knows this task: expired or deleted";

/// One row of the listing.
enum Row {
    /// The server's current view of the task, and its tool when the journal has it.
    Known(TaskView, Option<String>),
    /// A journal entry the server no longer knows.
    Gone(Entry),
}

impl Row {
    fn created_ms(&self) -> i64 {
        match self {
            Row::Known(t, _) => t.created_at.timestamp_millis(),
            Row::Gone(e) => e.created_ms,
        }
    }

    fn json(&self) -> Value {
        match self {
            Row::Known(t, tool) => {
                let mut v = task_json(t);
                v["tool"] = json!(tool);
                v
            }
            Row::Gone(e) => json!({
                "taskId": e.task_id,
                "status": "unknown",
                "statusMessage": GONE,
                "createdAt": e.created_text(),
                "tool": e.tool,
            }),
        }
    }

    /// The row's cells, plain (no colour): task, status, last update, tool, message.
    fn cells(&self) -> [String; 5] {
        match self {
            Row::Known(t, tool) => [
                t.id.to_string(),
                status_text(t).to_string(),
                t.last_updated_at.format("%Y-%m-%d %H:%M:%S").to_string(),
                tool.clone().unwrap_or_else(|| "-".into()),
                t.status_message.clone().unwrap_or_default(),
            ],
            Row::Gone(e) => [
                e.task_id.clone(),
                "unknown".into(),
                e.created_text()
                    .replace('T', " ")
                    .trim_end_matches('Z')
                    .to_string(),
                e.tool.clone(),
                GONE.into(),
            ],
        }
    }
}

/// The column titles of the human listing.
const HEADER: [&str; 5] = ["TASK", "STATUS", "UPDATED", "TOOL", "MESSAGE"];

/// The human listing: a header, then a line per row, each column as wide as its widest
/// cell (the message, last, as long as it is); statuses coloured on a terminal.
fn table(rows: &[Row]) -> Vec<String> {
    let cells: Vec<[String; 5]> = rows.iter().map(Row::cells).collect();
    let mut widths = HEADER.map(str::len);
    for c in &cells {
        for (w, cell) in widths.iter_mut().zip(c) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |c: [&str; 5], status: String| {
        format!(
            "{:<w0$}  {status}  {:<w2$}  {:<w3$}  {}",
            c[0],
            c[2],
            c[3],
            c[4],
            w0 = widths[0],
            w2 = widths[2],
            w3 = widths[3],
        )
        .trim_end()
        .to_string()
    };
    let mut lines = vec![line(HEADER, format!("{:<w$}", HEADER[1], w = widths[1]))];
    for (row, c) in rows.iter().zip(&cells) {
        let status = match row {
            Row::Known(t, _) => status_word(t, widths[1]),
            Row::Gone(_) => format!("{:<w$}", c[1], w = widths[1]),
        };
        lines.push(line([&c[0], &c[1], &c[2], &c[3], &c[4]], status));
    }
    lines
}

/// Runs `list`; returns the exit status.
pub async fn run(a: ServerArgs) -> u8 {
    a.run("list", |client, target, connect| async move {
        let journal = connect.journal(&target);
        let rows = match rows(&client, journal.as_ref()).await {
            Ok(r) => r,
            Err(e) => return fail("listing tasks", &e),
        };
        if connect.json {
            out(Value::Array(rows.iter().map(Row::json).collect()));
            return EXIT_OK;
        }
        if rows.is_empty() {
            let kept = journal.as_ref().map_or_else(
                || format!("no journal: set {STATE_DIR_ENV} or HOME"),
                |j| format!("journal: {}", j.path().display()),
            );
            eprintln!(
                "no tasks: `list` shows the tasks started from this account with `mcp-tasks call` \
                 in the last 7 days, kept per server and bearer token ({kept}), and, on 2025-11-25, \
                 those the server lists for this session"
            );
        }
        if !rows.is_empty() {
            for line in table(&rows) {
                out(line);
            }
        }
        EXIT_OK
    })
    .await
}

/// The rows, oldest first: the server's list (when the wire has one), then every
/// journal entry it did not include, refreshed with `tasks/get`. The journal learns
/// the new states and forgets the tasks the server no longer knows.
async fn rows(client: &Client, journal: Option<&Journal>) -> Result<Vec<Row>, ClientError> {
    let entries = journal.map(Journal::entries).unwrap_or_default();
    let tool_of = |id: &TaskId| {
        entries
            .iter()
            .find(|e| e.task_id == id.as_str())
            .map(|e| e.tool.clone())
    };
    let mut rows = Vec::new();
    let mut listed = HashSet::new();
    if client.wire() != Wire::V2026_07_28 {
        match client.list().await {
            Ok(tasks) => {
                for t in tasks {
                    let t = client.with_tool_error(t).await?;
                    listed.insert(t.id.as_str().to_string());
                    let tool = tool_of(&t.id);
                    rows.push(Row::Known(t, tool));
                }
            }
            Err(ClientError::Unsupported(_)) => {}
            Err(e) => return Err(e),
        }
    }
    let unlisted: Vec<Entry> = entries
        .iter()
        .filter(|e| !listed.contains(&e.task_id))
        .cloned()
        .collect();
    let refreshed: Vec<(Entry, Result<TaskView, ClientError>)> =
        futures::stream::iter(unlisted.into_iter().map(|e| async move {
            let got = match client.get(&TaskId::from_string(e.task_id.clone())).await {
                Ok(t) => client.with_tool_error(t).await,
                Err(e) => Err(e),
            };
            (e, got)
        }))
        .buffered(REFRESH_CONCURRENCY)
        .collect()
        .await;
    let mut gone = Vec::new();
    for (entry, got) in refreshed {
        match got {
            Ok(t) => rows.push(Row::Known(t, Some(entry.tool))),
            Err(e) if e.code() == Some(mcp_tasks_protocol::error_code::INVALID_PARAMS) => {
                gone.push(entry.task_id.clone());
                rows.push(Row::Gone(entry));
            }
            Err(e) => return Err(e),
        }
    }
    if let Some(j) = journal {
        j.update(rows.iter().filter_map(|r| match r {
            Row::Known(t, Some(_)) => Some(t),
            _ => None,
        }));
        j.forget(&gone);
    }
    rows.sort_by_key(Row::created_ms);
    Ok(rows)
}
