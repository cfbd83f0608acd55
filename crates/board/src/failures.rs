//! One story for failures on the board: a tool error (a result with `isError: true`) is
//! a failure for a person, as in the CLI, although the extension wire calls such a task
//! `completed` and the store keeps that status. The board's failed tab and count hold
//! tool errors, its completed tab and count leave them out.
//!
//! The store filters by the wire status only, so the completed tasks are read and
//! sorted here, a bounded number per request: a page reads at most [`SCAN_PAGES`]
//! store pages of completed tasks, and a count looks through the newest
//! [`crate::console::COUNT_CAP`] of them (past that the tabs say "N+").

use mcp_tasks_engine::{Caller, Engine, EngineError, TaskFilter, TaskRecord};
use mcp_tasks_protocol::TaskStatus;

use crate::view::tool_error_text;

/// Store pages of completed tasks one list page reads at most.
const SCAN_PAGES: usize = 4;

fn is_tool_error(record: &TaskRecord) -> bool {
    record.status == TaskStatus::Completed && tool_error_text(record).is_some()
}

/// One page of the board's list for `filter` as a person reads the states: the tasks
/// and the cursor of the next page.
pub(crate) async fn page(
    engine: &Engine,
    caller: &Caller,
    filter: TaskFilter,
) -> Result<(Vec<TaskRecord>, Option<String>), EngineError> {
    match filter.status {
        Some(TaskStatus::Completed) => completed_page(engine, caller, filter).await,
        Some(TaskStatus::Failed) => failed(engine, caller, filter).await,
        _ => {
            let page = engine.query_tasks(caller, &filter).await?;
            Ok((page.tasks, page.next_cursor))
        }
    }
}

/// What a read of completed tasks found: the tasks kept, and the last task read when
/// more may follow (the next read starts after it).
struct Scan {
    found: Vec<TaskRecord>,
    stopped_at: Option<TaskRecord>,
}

/// The completed tasks without tool errors (`tool_errors` false), or the tool errors
/// only (true), newest first: at most `filter.limit`, reading at most [`SCAN_PAGES`]
/// store pages.
async fn completed(
    engine: &Engine,
    caller: &Caller,
    mut filter: TaskFilter,
    tool_errors: bool,
) -> Result<Scan, EngineError> {
    let want = filter.limit;
    filter.status = Some(TaskStatus::Completed);
    let mut found = Vec::new();
    let mut last = None;
    for _ in 0..SCAN_PAGES {
        let page = engine.query_tasks(caller, &filter).await?;
        for record in page.tasks {
            if is_tool_error(&record) == tool_errors {
                found.push(record.clone());
            }
            last = Some(record);
            if found.len() == want {
                return Ok(Scan {
                    found,
                    stopped_at: last,
                });
            }
        }
        match (&last, page.next_cursor) {
            (Some(at), Some(_)) => filter.cursor = Some(Engine::cursor_after(at)),
            _ => {
                return Ok(Scan {
                    found,
                    stopped_at: None,
                })
            }
        }
    }
    Ok(Scan {
        found,
        stopped_at: last,
    })
}

/// The completed tasks of `filter` that are not tool errors, and the next cursor.
async fn completed_page(
    engine: &Engine,
    caller: &Caller,
    filter: TaskFilter,
) -> Result<(Vec<TaskRecord>, Option<String>), EngineError> {
    let scan = completed(engine, caller, filter, false).await?;
    let next = scan.stopped_at.as_ref().map(Engine::cursor_after);
    Ok((scan.found, next))
}

fn key(r: &TaskRecord) -> (chrono::DateTime<chrono::Utc>, String) {
    (r.created_at, r.id.as_str().to_string())
}

/// The failed tasks and the tool errors, merged newest first. Both are read from the
/// same position; the page ends where the read that stopped first (at the newer task)
/// stopped, so no task is skipped between pages.
async fn failed(
    engine: &Engine,
    caller: &Caller,
    filter: TaskFilter,
) -> Result<(Vec<TaskRecord>, Option<String>), EngineError> {
    let limit = filter.limit;
    let failed = engine.query_tasks(caller, &filter).await?;
    let errors = completed(engine, caller, filter.clone(), true).await?;
    let failed_stop = failed
        .next_cursor
        .as_ref()
        .and(failed.tasks.last())
        .cloned();
    let stop = match (failed_stop, errors.stopped_at) {
        (Some(a), Some(b)) => Some(if key(&a) >= key(&b) { a } else { b }),
        (a, b) => a.or(b),
    };
    let mut merged: Vec<TaskRecord> = failed.tasks.into_iter().chain(errors.found).collect();
    merged.sort_by_key(|r| std::cmp::Reverse(key(r)));
    if let Some(stop) = &stop {
        merged.retain(|r| key(r) >= key(stop));
    }
    merged.truncate(limit);
    let next = if merged.len() == limit {
        merged.last().map(Engine::cursor_after)
    } else {
        stop.as_ref().map(Engine::cursor_after)
    };
    Ok((merged, next))
}

/// How many tool errors are among the completed tasks `filter` shows `caller` (its
/// status is ignored), looking through the newest `cap` + 1 completed tasks; `true`
/// with it when there were more to look through (then it is a lower bound).
pub(crate) async fn tool_errors(
    engine: &Engine,
    caller: &Caller,
    filter: &TaskFilter,
    cap: usize,
) -> Result<(u64, bool), EngineError> {
    let mut filter = TaskFilter {
        status: Some(TaskStatus::Completed),
        cursor: None,
        limit: cap + 1,
        ..filter.clone()
    };
    filter.limit = filter.limit.max(1);
    let page = engine.query_tasks(caller, &filter).await?;
    let n = page.tasks.iter().filter(|r| is_tool_error(r)).count() as u64;
    Ok((n, page.tasks.len() > cap))
}
