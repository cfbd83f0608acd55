//! The JSON the board page reads and the actions it posts. Every handler starts from
//! the viewer ([`Board::viewer`]); every action also checks the CSRF token
//! ([`Board::acting_viewer`]). A task the viewer may not see is answered exactly like
//! one that does not exist.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use mcp_tasks_engine::{EngineError, TaskFilter, TaskRecord};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use serde::Deserialize;
use serde_json::json;

use crate::answer::{to_outcome, AnswerForm};
use crate::view::{self, QuestionKind};
use crate::viewer::{Refused, Viewer};
use crate::Board;

/// Rows per page of the list.
const PAGE_SIZE: usize = 25;

pub(crate) fn engine_refusal(error: EngineError) -> Refused {
    match error {
        EngineError::NotFound => Refused::unknown_task(),
        EngineError::AlreadyTerminal(status) => Refused::new(
            StatusCode::CONFLICT,
            format!("the task already ended ({status}); there is nothing left to do"),
        ),
        EngineError::InvalidInput(message) => Refused::new(StatusCode::BAD_REQUEST, message),
        EngineError::NotAllowed(message) => Refused::new(StatusCode::FORBIDDEN, message),
        other => {
            tracing::warn!(error = %other, "task board request failed");
            Refused::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the task store could not answer ({other}); try again"),
            )
        }
    }
}

/// Records an action a person took on the board, on the audit target, naming them and
/// the task's owner (which differ when an operator acts on someone's task).
pub(crate) fn audit(viewer: &Viewer, action: &str, task: &TaskId, owner: &str) {
    tracing::info!(
        target: "mcp_tasks::audit",
        event = "board_action",
        action,
        task_id = %task,
        actor = %viewer.caller.principal,
        owner,
        operator = viewer.caller.operator,
        "board action"
    );
}

/// `GET /board/api/me`: who is looking, and the CSRF token for actions.
pub(crate) async fn me(State(board): State<Board>, headers: HeaderMap) -> Response {
    match board.viewer(&headers) {
        Ok(viewer) => Json(json!({
            "principal": viewer.caller.principal,
            // The groups approvals and operators are matched against: the provider's
            // (read at sign-in and at each renewal) and `[groups]`'.
            "groups": viewer.caller.groups,
            "operator": viewer.caller.operator,
            "loggedIn": viewer.logged_in,
            "csrf": viewer.csrf,
        }))
        .into_response(),
        Err(refused) => refused.into_response(),
    }
}

/// The list's query string (the JSON API's and the page's: the page's filter form is
/// a plain GET form, so it works without JavaScript).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ListQuery {
    pub(crate) status: Option<String>,
    pub(crate) tool: Option<String>,
    pub(crate) q: Option<String>,
    pub(crate) cursor: Option<String>,
}

impl ListQuery {
    /// A filter field, trimmed; `None` when absent or blank.
    pub(crate) fn field(value: &Option<String>) -> Option<String> {
        value
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    }
}

/// A status from the list's filter: `None` for "any", an error naming the good ones.
pub(crate) fn parse_status(value: &Option<String>) -> Result<Option<TaskStatus>, Refused> {
    ListQuery::field(value)
        .map(|s| {
            s.parse::<TaskStatus>().map_err(|_| {
                Refused::new(
                    StatusCode::BAD_REQUEST,
                    format!("unknown status '{s}': use working, input_required, completed, failed or cancelled"),
                )
            })
        })
        .transpose()
}

/// One page of the list: the rows as [`view::summary`] shapes them, and the cursor of
/// the next page.
pub(crate) struct ListPage {
    pub(crate) tasks: Vec<serde_json::Value>,
    pub(crate) next_cursor: Option<String>,
}

/// Reads one page of the tasks `viewer` may see, newest first, as `query` filters them.
/// The states are those a person reads ([`view::shown_state`]): the failed filter
/// holds tool errors too, the completed one leaves them out (the store knows the wire
/// status only, so those two read the completed tasks and sort them; see
/// `crate::failures`).
pub(crate) async fn list_page(
    board: &Board,
    viewer: &Viewer,
    query: &ListQuery,
) -> Result<ListPage, Refused> {
    let status = parse_status(&query.status)?;
    let filter = TaskFilter {
        status,
        tool: ListQuery::field(&query.tool),
        id_prefix: ListQuery::field(&query.q),
        cursor: ListQuery::field(&query.cursor),
        limit: PAGE_SIZE,
    };
    let (records, next_cursor) =
        crate::failures::page(board.server().engine(), &viewer.caller, filter)
            .await
            .map_err(engine_refusal)?;
    let live = &board.inner.live;
    let tasks = records
        .iter()
        .map(|r| view::summary(r, live.progress(&r.id).as_ref(), board.shows_owner(viewer)))
        .collect();
    Ok(ListPage { tasks, next_cursor })
}

/// `GET /board/api/tasks`: one page of the tasks the viewer may see, newest first.
pub(crate) async fn list(
    State(board): State<Board>,
    headers: HeaderMap,
    Query(query): Query<ListQuery>,
) -> Result<Response, Refused> {
    let viewer = board.viewer(&headers)?;
    let page = list_page(&board, &viewer, &query).await?;
    Ok(Json(json!({ "tasks": page.tasks, "nextCursor": page.next_cursor })).into_response())
}

/// The task `id` names, as `viewer` may see it (a foreign task is an unknown one).
pub(crate) async fn read_task(
    board: &Board,
    viewer: &Viewer,
    id: String,
) -> Result<(TaskId, TaskRecord), Refused> {
    let id = TaskId::from_string(id);
    let record = board
        .server()
        .engine()
        .get_for_person(&id, &viewer.caller)
        .await
        .map_err(engine_refusal)?;
    Ok((id, record))
}

/// Everything about one task, as `viewer` may see it: what the detail pane shows (the
/// script's JSON, and the page rendered on the server).
pub(crate) async fn detail_json(
    board: &Board,
    viewer: &Viewer,
    id: String,
) -> Result<serde_json::Value, Refused> {
    let (id, record) = read_task(board, viewer, id).await?;
    let timeline = board
        .server()
        .engine()
        .timeline(&record)
        .await
        .map_err(engine_refusal)?;
    let attempts = board
        .server()
        .engine()
        .attempts(&record)
        .await
        .map_err(engine_refusal)?;
    let progress = board.inner.live.progress(&id);
    let now = chrono::Utc::now();
    let mut detail = view::detail(
        &record,
        progress.as_ref(),
        &timeline,
        &attempts,
        board.shows_owner(viewer),
        now,
    );
    crate::people::annotate(&mut detail, &record, &viewer.caller, now);
    crate::rerun::add_run_again(board, &record, &viewer.caller, &mut detail).await;
    Ok(detail)
}

/// `GET /board/api/tasks/{id}`: everything about one task.
pub(crate) async fn detail(
    State(board): State<Board>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, Refused> {
    let viewer = board.viewer(&headers)?;
    Ok(Json(detail_json(&board, &viewer, id).await?).into_response())
}

/// `POST /board/api/tasks/{id}/answer`: a person's answer to one pending question.
pub(crate) async fn answer(
    State(board): State<Board>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Json(form): Json<AnswerForm>,
) -> Result<Response, Refused> {
    let viewer = board.acting_viewer(&headers)?;
    let (id, record) = read_task(&board, &viewer, id).await?;
    let engine = board.server().engine();
    let already = || {
        Refused::new(
            StatusCode::CONFLICT,
            "this question is no longer waiting for an answer (answered already, or the task moved on): reload the task",
        )
    };
    let request = record
        .input_requests
        .get(&form.key)
        .filter(|r| r.is_outstanding())
        .ok_or_else(already)?;
    let kind = QuestionKind::of(&request.method, &request.params);
    let outcome = to_outcome(kind, &request.params, &form, &viewer.caller.principal)
        .map_err(|message| Refused::new(StatusCode::UNPROCESSABLE_ENTITY, message))?;
    let applied = engine
        .answer_input_as(&id, &form.key, outcome, &viewer.caller, "board")
        .await
        .map_err(engine_refusal)?;
    if !applied {
        return Err(already());
    }
    audit(
        &viewer,
        &format!("answer:{}", form.action),
        &id,
        &record.owner,
    );
    Ok(Json(json!({ "ok": true })).into_response())
}

/// `POST /board/api/tasks/{id}/cancel`: cancels a working or waiting task.
pub(crate) async fn cancel(
    State(board): State<Board>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, Refused> {
    let viewer = board.acting_viewer(&headers)?;
    let id = TaskId::from_string(id);
    let reason = format!("cancelled on the task board by {}", viewer.caller.principal);
    let record = board
        .server()
        .engine()
        .cancel_saying(&id, &viewer.caller, &reason)
        .await
        .map_err(engine_refusal)?;
    audit(&viewer, "cancel", &id, &record.owner);
    Ok(Json(json!({ "ok": true, "status": record.status.as_str() })).into_response())
}
