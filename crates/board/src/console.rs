//! The board as a console: how many tasks are in each state (the list's tabs), cancelling
//! every unfinished task a filter shows (operators), and running a failed or cancelled
//! task's call again.
//!
//! Everything here is bounded: a count stops at [`COUNT_CAP`] (the store counts index
//! rows up to a limit, [`mcp_tasks_engine::Engine::count_tasks`]), a bulk cancel cancels
//! at most [`BULK_CANCEL_LIMIT`] tasks per request and says how many remain, and the
//! re-runs of a task are looked for among the newest calls of its tool (`rerun`).

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures::future::try_join_all;
use mcp_tasks_engine::{Caller, EngineError, TaskFilter, TaskRecord};
use mcp_tasks_protocol::TaskStatus;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::api::{audit, engine_refusal, parse_status, read_task, ListQuery};
use crate::rerun::{may_run_again, who_may_run_again};
use crate::view::{self, RELATED_TASK_IDS};
use crate::viewer::{Refused, Viewer};
use crate::Board;

/// Counts stop here: past it the board shows "1000+".
pub(crate) const COUNT_CAP: usize = 1000;

/// Most tasks one bulk cancel cancels; the answer says how many matching ones remain.
pub(crate) const BULK_CANCEL_LIMIT: usize = 500;

/// Tasks read per page while cancelling in bulk.
const BULK_PAGE: usize = 100;

/// The states the list has a tab for, in the tabs' order (after "All").
pub(crate) const TAB_STATES: [TaskStatus; 5] = [
    TaskStatus::Working,
    TaskStatus::InputRequired,
    TaskStatus::Completed,
    TaskStatus::Failed,
    TaskStatus::Cancelled,
];

/// The filter of `query` without its status and cursor, `limit` as given.
fn filter_of(query: &ListQuery, status: Option<TaskStatus>, limit: usize) -> TaskFilter {
    TaskFilter {
        status,
        tool: ListQuery::field(&query.tool),
        id_prefix: ListQuery::field(&query.q),
        cursor: None,
        limit,
    }
}

/// How many of the tasks `viewer` may see match `query`'s tool and search, in all and
/// per state (its status is ignored: each tab is a status), each counted up to one
/// past [`COUNT_CAP`]: `{"all": n, "working": n, …, "cap": 1000}`.
pub(crate) async fn counts_json(
    board: &Board,
    viewer: &Viewer,
    query: &ListQuery,
) -> Result<Value, Refused> {
    let engine = board.server().engine();
    let statuses: Vec<Option<TaskStatus>> = std::iter::once(None)
        .chain(TAB_STATES.iter().copied().map(Some))
        .collect();
    let counted = try_join_all(statuses.iter().map(|status| {
        let filter = filter_of(query, *status, COUNT_CAP + 1);
        async move { engine.count_tasks(&viewer.caller, &filter).await }
    }))
    .await
    .map_err(engine_refusal)?;
    let mut out = json!({ "cap": COUNT_CAP });
    for (status, n) in statuses.iter().zip(counted) {
        out[status.map_or("all", |s| s.as_str())] = json!(n);
    }
    // A tool error is a failure for a person (`failures`): counted under failed, not
    // under completed. Past the cap the number found is a lower bound: "N+".
    if out["completed"].as_u64().unwrap_or(0) > 0 {
        let (errors, more) = crate::failures::tool_errors(
            engine,
            &viewer.caller,
            &filter_of(query, None, COUNT_CAP),
            COUNT_CAP,
        )
        .await
        .map_err(engine_refusal)?;
        let completed = out["completed"].as_u64().unwrap_or(0);
        let failed = out["failed"].as_u64().unwrap_or(0);
        if !more {
            out["completed"] = json!(completed.saturating_sub(errors));
        }
        out["failed"] = json!(failed + errors);
        out["toolErrors"] = json!(errors);
        if more {
            out["failedAtLeast"] = json!(true);
        }
    }
    Ok(out)
}

/// `GET /board/api/counts`: the counts per state for the list's tool and search.
pub(crate) async fn counts(
    State(board): State<Board>,
    headers: HeaderMap,
    Query(query): Query<ListQuery>,
) -> Result<Response, Refused> {
    let viewer = board.viewer(&headers)?;
    Ok(Json(counts_json(&board, &viewer, &query).await?).into_response())
}

/// A count as the tabs show it: the number, or "1000+" past the cap.
pub(crate) fn count_text(n: u64) -> String {
    if n > COUNT_CAP as u64 {
        format!("{COUNT_CAP}+")
    } else {
        n.to_string()
    }
}

/// What a bulk cancel posts: the list's filter.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct BulkCancel {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    q: Option<String>,
}

/// `POST /board/api/bulk-cancel` (operators): cancels the working and waiting tasks
/// the filter shows, at most [`BULK_CANCEL_LIMIT`], each audited and saying who
/// cancelled it; answers how many were cancelled and how many matching ones remain.
pub(crate) async fn bulk_cancel(
    State(board): State<Board>,
    headers: HeaderMap,
    Json(form): Json<BulkCancel>,
) -> Result<Response, Refused> {
    let viewer = board.acting_viewer(&headers)?;
    if !viewer.caller.operator {
        return Err(Refused::new(
            StatusCode::FORBIDDEN,
            "only operators can cancel tasks in bulk; cancel your tasks one by one on their pages",
        ));
    }
    let query = ListQuery {
        status: form.status,
        tool: form.tool,
        q: form.q,
        cursor: None,
    };
    let active: Vec<TaskStatus> = match parse_status(&query.status)? {
        None => vec![TaskStatus::Working, TaskStatus::InputRequired],
        Some(s) if !s.is_terminal() => vec![s],
        Some(_) => Vec::new(),
    };
    let engine = board.server().engine();
    let reason = format!(
        "cancelled on the task board by {} (bulk)",
        viewer.caller.principal
    );
    let (mut cancelled, mut failed) = (0usize, 0usize);
    'statuses: for status in &active {
        let mut filter = filter_of(&query, Some(*status), BULK_PAGE);
        loop {
            let budget = BULK_CANCEL_LIMIT - cancelled - failed;
            if budget == 0 {
                break 'statuses;
            }
            filter.limit = BULK_PAGE.min(budget);
            let page = engine
                .query_tasks(&viewer.caller, &filter)
                .await
                .map_err(engine_refusal)?;
            for record in &page.tasks {
                match engine
                    .cancel_saying(&record.id, &viewer.caller, &reason)
                    .await
                {
                    Ok(done) => {
                        audit(&viewer, "cancel (bulk)", &done.id, &done.owner);
                        cancelled += 1;
                    }
                    // Ended meanwhile: nothing left to cancel.
                    Err(EngineError::AlreadyTerminal(_) | EngineError::NotFound) => {}
                    Err(other) => {
                        tracing::warn!(task_id = %record.id, error = %other, "bulk cancel: one task could not be cancelled");
                        failed += 1;
                    }
                }
            }
            match page.next_cursor {
                Some(cursor) => filter.cursor = Some(cursor),
                None => break,
            }
        }
    }
    let mut remaining = 0u64;
    for status in &active {
        remaining += engine
            .count_tasks(
                &viewer.caller,
                &filter_of(&query, Some(*status), COUNT_CAP + 1),
            )
            .await
            .map_err(engine_refusal)?;
    }
    let mut message = match cancelled {
        1 => "1 task cancelled".to_string(),
        n => format!("{n} tasks cancelled"),
    };
    if failed > 0 {
        message.push_str(&format!(
            "; {failed} could not be cancelled (see the server log)"
        ));
    }
    if remaining > 0 {
        message.push_str(&format!(
            "; {} more match (at most {BULK_CANCEL_LIMIT} are cancelled at a time): cancel again",
            count_text(remaining)
        ));
    }
    Ok(Json(json!({
        "ok": true,
        "cancelled": cancelled,
        "failed": failed,
        "remaining": remaining,
        "limit": BULK_CANCEL_LIMIT,
        "message": message,
    }))
    .into_response())
}

/// The caller a re-run is made as: the task's owner, so that the owner's client finds
/// it (its session too, for status notifications), never the person who clicked.
fn owner_caller(board: &Board, record: &TaskRecord) -> Caller {
    let session = record.session.as_ref().map(|s| s.to_string());
    if board.needs_login() {
        Caller::authenticated(record.owner.clone(), session)
    } else {
        Caller::anonymous(record.owner.clone(), session)
    }
}

/// `POST /board/api/tasks/{id}/rerun` (the owner, or an operator who did not decide the
/// call's approval; anyone else: 403 with the reason): a new task with the same tool
/// and arguments, owned by the task's owner, whose request names this one as related
/// (`_meta` `io.modelcontextprotocol/relatedTaskIds`) and the person who ran it again.
/// The new call meets its approval rule from the start, and that person has no vote
/// on it.
pub(crate) async fn run_again(
    State(board): State<Board>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, Refused> {
    let viewer = board.acting_viewer(&headers)?;
    let (id, record) = read_task(&board, &viewer, id).await?;
    who_may_run_again(&record, &viewer.caller)
        .map_err(|why| Refused::new(StatusCode::FORBIDDEN, why))?;
    may_run_again(&record).map_err(|why| Refused::new(StatusCode::CONFLICT, why))?;
    let tool = view::tool_of(&record);
    if board.server().tools().get(&tool).is_none() {
        return Err(Refused::new(
            StatusCode::CONFLICT,
            format!("the tool '{tool}' is no longer offered by this server, so this task cannot be run again"),
        ));
    }
    let params = json!({
        "name": tool,
        "arguments": record.request.field("arguments").unwrap_or_else(|| json!({})),
        "_meta": { RELATED_TASK_IDS: [id.as_str()] },
    });
    let created = board
        .server()
        .start_tool_task_again(
            owner_caller(&board, &record),
            params,
            Some(&viewer.caller.principal),
        )
        .await
        .map_err(|e| {
            Refused::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("the task could not be run again: {}", e.message),
            )
        })?;
    audit(
        &viewer,
        &format!("run_again:{}", created.id),
        &id,
        &record.owner,
    );
    Ok(Json(json!({ "ok": true, "id": created.id.as_str() })).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_past_the_cap_read_as_cap_plus() {
        assert_eq!(count_text(0), "0");
        assert_eq!(count_text(1000), "1000");
        assert_eq!(count_text(1001), "1000+");
    }

    #[test]
    fn a_status_filter_is_checked() {
        assert_eq!(parse_status(&None).ok(), Some(None));
        assert_eq!(parse_status(&Some(" ".into())).ok(), Some(None));
        assert_eq!(
            parse_status(&Some("failed".into())).ok(),
            Some(Some(TaskStatus::Failed))
        );
        assert!(parse_status(&Some("nope".into())).is_err());
    }
}
