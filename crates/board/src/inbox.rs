//! `GET /board/api/inbox`: the questions waiting for the viewer ("Waiting for me").

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Json, Response};
use chrono::Utc;
use serde_json::{json, Value};

use crate::api::engine_refusal;
use crate::people::may_answer;
use crate::view::{millis, question_text, QuestionKind};
use crate::viewer::Refused;
use crate::Board;

/// `GET /board/api/inbox`: the open questions assigned to the viewer (by name or
/// group), soonest deadline first, overdue ones marked.
pub(crate) async fn inbox(
    State(board): State<Board>,
    headers: HeaderMap,
) -> Result<Response, Refused> {
    let viewer = board.viewer(&headers)?;
    let inbox = board
        .server()
        .engine()
        .inbox(&viewer.caller)
        .await
        .map_err(engine_refusal)?;
    let now = Utc::now();
    let items: Vec<Value> = inbox
        .items
        .iter()
        .map(|item| {
            let mut row = json!({
                "taskId": item.task.id.as_str(),
                "tool": item.task.request.name().unwrap_or_default(),
                "key": item.key,
                "kind": match QuestionKind::of(&item.question.method, &item.question.params) {
                    QuestionKind::Approval => "approval",
                    _ => "question",
                },
                "message": question_text(&item.question.method, &item.question.params),
                "createdAt": millis(item.task.created_at),
                "overdue": item.overdue(now),
                "mayAnswer": may_answer(&item.task, &item.question, &viewer.caller).is_ok(),
            });
            if let Some(d) = &item.question.deadline {
                row["deadline"] = json!(millis(d.at));
            }
            if board.shows_owner(&viewer) {
                row["owner"] = json!(item.task.owner);
            }
            row
        })
        .collect();
    Ok(Json(json!({ "items": items, "truncated": inbox.truncated })).into_response())
}
