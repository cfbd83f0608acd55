//! `POST /board/slack/interactions`: the clicks and modal submissions Slack sends (a
//! form-encoded `payload` field holding JSON).
//!
//! In order: the v0 signature (refused: 401, nothing read), the Slack user mapped to a
//! principal (refused: 403), the task read as that principal (the engine refuses a task
//! they may not see: 403), the question still waiting as posted (refused: 409), then
//! the answer through the engine as that principal. Only an answer the engine took
//! updates the message; a refusal changes nothing, and the person is told why (an
//! ephemeral message, or the modal's error).

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::Utc;
use mcp_tasks_engine::{Caller, EngineError, InputRequest, Outcome, TaskRecord};
use mcp_tasks_protocol::{answer::validate_answer, TaskId};
use serde_json::{json, Value};

use super::blocks::{
    answered_message, question_words, Answering, QuestionRef, Verdict, ANSWER, APPROVE, DECLINE,
    REJECT,
};
use super::modal::{self, ModalMeta};
use super::web::MessageRef;
use super::{signature, Slack};
use crate::links::{fingerprint, outcome, Decision};
use crate::Board;

/// Why an interaction changes nothing, for the person who clicked.
#[derive(Debug)]
struct Refusal {
    status: StatusCode,
    text: String,
}

impl Refusal {
    fn new(status: StatusCode, text: impl Into<String>) -> Self {
        Refusal {
            status,
            text: text.into(),
        }
    }
}

/// Who clicked: their Slack id and the caller they answer as.
struct Person {
    slack_user: String,
    caller: Caller,
}

/// The caller a mapped principal answers as: the board's person for that principal
/// (an operator when listed, with their groups), bound to their own tasks and the
/// questions put to them when the server authenticates, as their board login would
/// be; without authentication tasks have no owner to check, and the mapping decides.
fn caller_for(board: &Board, principal: &str) -> Caller {
    let mut caller = board.person_caller(principal);
    caller.authenticated = board.needs_login();
    caller
}

fn audit_refused(slack_user: Option<&str>, actor: Option<&str>, task: Option<&str>, why: &str) {
    tracing::info!(
        target: "mcp_tasks::audit",
        event = "slack_refused",
        channel = "slack",
        slack_user = slack_user.unwrap_or(""),
        actor = actor.unwrap_or(""),
        task_id = task.unwrap_or(""),
        reason = why,
        "slack interaction refused"
    );
}

/// The interaction endpoint.
pub(crate) async fn receive(
    State(board): State<Board>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(slack) = board.config().slack.clone() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let secret = slack.config().signing_secret.expose();
    if let Err(e) = signature::verify(secret, &headers, &body, Utc::now().timestamp()) {
        let why = e.to_string();
        tracing::warn!(error = %why, "slack: an interaction was refused");
        audit_refused(None, None, None, &why);
        return (StatusCode::UNAUTHORIZED, Json(json!({ "error": why }))).into_response();
    }
    let payload = serde_urlencoded::from_bytes::<Vec<(String, String)>>(&body)
        .ok()
        .and_then(|fields| fields.into_iter().find(|(k, _)| k == "payload"))
        .and_then(|(_, payload)| serde_json::from_str::<Value>(&payload).ok());
    let Some(payload) = payload else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "expected a form with a 'payload' field holding JSON (Slack's interaction shape)"})),
        )
            .into_response();
    };
    match payload["type"].as_str() {
        Some("block_actions") => block_action(&board, &slack, &payload).await,
        Some("view_submission") => view_submission(&board, &slack, &payload).await,
        // Closed modals, shortcuts: nothing to do.
        _ => StatusCode::OK.into_response(),
    }
}

/// The clicking user, mapped to a principal.
fn person(board: &Board, slack: &Slack, payload: &Value) -> Result<Person, Refusal> {
    let slack_user = payload["user"]["id"].as_str().unwrap_or("").to_string();
    let Some(principal) = slack.config().users.get(&slack_user) else {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            format!("Your Slack user ({slack_user}) is not mapped to anyone who answers tasks here; ask an operator to add it under [slack] users. Nothing was changed."),
        ));
    };
    Ok(Person {
        caller: caller_for(board, principal),
        slack_user,
    })
}

/// The task and the question `reference` names, still waiting as it was posted, as
/// `caller` may see it.
async fn open_question(
    board: &Board,
    caller: &Caller,
    reference: &QuestionRef,
) -> Result<(TaskRecord, InputRequest), Refusal> {
    let id = TaskId::from_string(reference.t.clone());
    let record = board
        .server()
        .engine()
        .get_for_person(&id, caller)
        .await
        .map_err(|e| engine_refusal(&e))?;
    let request = record
        .input_requests
        .get(&reference.k)
        .filter(|r| r.is_outstanding() && !record.status.is_terminal())
        .ok_or_else(already)?
        .clone();
    if fingerprint(&request) != reference.q {
        return Err(Refusal::new(
            StatusCode::CONFLICT,
            "The task asks something else now than when this message was posted; open it on the board. Nothing was changed.",
        ));
    }
    // The engine decides when the answer comes; asking first spares opening a modal
    // for someone it would refuse.
    crate::people::may_answer(&record, &request, caller).map_err(|why| {
        Refusal::new(StatusCode::FORBIDDEN, format!("{why} Nothing was changed."))
    })?;
    Ok((record, request))
}

fn already() -> Refusal {
    Refusal::new(
        StatusCode::CONFLICT,
        "This question no longer waits for an answer (answered already, or the task moved on). Nothing was changed.",
    )
}

fn engine_refusal(error: &EngineError) -> Refusal {
    match error {
        EngineError::NotFound => Refusal::new(
            StatusCode::FORBIDDEN,
            "You may not answer this task (it is not yours to answer, or it no longer exists). Nothing was changed.",
        ),
        EngineError::AlreadyTerminal(status) => Refusal::new(
            StatusCode::CONFLICT,
            format!("The task already ended ({status}). Nothing was changed."),
        ),
        EngineError::InvalidInput(message) => {
            Refusal::new(StatusCode::UNPROCESSABLE_ENTITY, message.clone())
        }
        EngineError::NotAllowed(message) => Refusal::new(
            StatusCode::FORBIDDEN,
            format!("{message} Nothing was changed."),
        ),
        other => {
            tracing::warn!(error = %other, "slack: the task store could not answer");
            Refusal::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "The task store could not answer just now; try again.",
            )
        }
    }
}

/// One answer to hand the engine, and how the message reports it.
struct Answer {
    outcome: Outcome,
    verdict: &'static str,
    reason: Option<String>,
    action: &'static str,
}

impl Answer {
    fn new(outcome: Outcome, verdict: &'static str, action: &'static str) -> Self {
        Answer {
            outcome,
            verdict,
            reason: None,
            action,
        }
    }
}

/// Answers `request` (question `key` of `record`) as `person`; on success audits it
/// and updates the message at `message` (or the one this process posted).
async fn give(
    board: &Board,
    slack: &Slack,
    person: &Person,
    (record, key, request): (&TaskRecord, &str, &InputRequest),
    answer: Answer,
    message: Option<MessageRef>,
) -> Result<(), Refusal> {
    let task = record.id.as_str();
    // Held while answering: the answer's own change must not mark the message
    // "answered elsewhere".
    let held = slack.messages().take(task, key);
    let result = board
        .server()
        .engine()
        .answer_input_as(&record.id, key, answer.outcome, &person.caller, "slack")
        .await;
    let refusal = match result {
        Ok(true) => None,
        Ok(false) => Some(already()),
        Err(e) => Some(engine_refusal(&e)),
    };
    if let Some(refusal) = refusal {
        if let Some(held) = held {
            slack.messages().put(task, key, held);
        }
        return Err(refusal);
    }
    tracing::info!(
        target: "mcp_tasks::audit",
        event = "board_action",
        action = %format!("answer:{}", answer.action),
        channel = "slack",
        task_id = %task,
        actor = %person.caller.principal,
        slack_user = %person.slack_user,
        owner = %record.owner,
        "slack answer"
    );
    let verdict = Verdict {
        what: answer.verdict,
        who: person.caller.principal.clone(),
        at: Utc::now(),
        reason: answer.reason,
    };
    let Some(at) = message.or(held.map(|h| h.at)) else {
        return Ok(());
    };
    let public_url = slack.config().public_url.clone();
    let (text, blocks) = answered_message(record, request, public_url.as_deref(), &verdict);
    let slack = slack.clone();
    let task = task.to_string();
    // Slack wants its answer within 3 seconds; the update follows on its own.
    tokio::spawn(async move {
        if let Err(e) = slack.web().update(&at, &text, blocks).await {
            tracing::warn!(task_id = %task, error = %e, "slack: updating the answered question's message failed");
        }
    });
    Ok(())
}

/// The refusal of a click: an ephemeral message to the person (Slack shows no
/// response body for clicks), and the same text as the response.
fn refuse_click(
    slack: &Slack,
    payload: &Value,
    person: Option<&Person>,
    refusal: Refusal,
) -> Response {
    let user = payload["user"]["id"].as_str().unwrap_or("").to_string();
    let channel = payload["channel"]["id"]
        .as_str()
        .or(payload["container"]["channel_id"].as_str())
        .map(str::to_string);
    let task = payload["actions"][0]["value"]
        .as_str()
        .and_then(|v| serde_json::from_str::<QuestionRef>(v).ok())
        .map(|r| r.t);
    audit_refused(
        Some(&user),
        person.map(|p| p.caller.principal.as_str()),
        task.as_deref(),
        &refusal.text,
    );
    if let (Some(channel), false) = (channel, user.is_empty()) {
        let slack = slack.clone();
        let text = refusal.text.clone();
        tokio::spawn(async move {
            if let Err(e) = slack.web().post_ephemeral(&channel, &user, &text).await {
                tracing::warn!(error = %e, "slack: telling a person why their click was refused failed");
            }
        });
    }
    (
        refusal.status,
        Json(
            json!({"response_type": "ephemeral", "replace_original": false, "text": refusal.text}),
        ),
    )
        .into_response()
}

/// A button click.
async fn block_action(board: &Board, slack: &Slack, payload: &Value) -> Response {
    let action = &payload["actions"][0];
    let action_id = action["action_id"].as_str().unwrap_or("");
    if ![APPROVE, REJECT, ANSWER, DECLINE].contains(&action_id) {
        // The board link's button, or another app's: nothing to answer.
        return StatusCode::OK.into_response();
    }
    let person = match person(board, slack, payload) {
        Ok(person) => person,
        Err(refusal) => return refuse_click(slack, payload, None, refusal),
    };
    match click(board, slack, payload, &person, action_id).await {
        Ok(()) => StatusCode::OK.into_response(),
        Err(refusal) => refuse_click(slack, payload, Some(&person), refusal),
    }
}

async fn click(
    board: &Board,
    slack: &Slack,
    payload: &Value,
    person: &Person,
    action_id: &str,
) -> Result<(), Refusal> {
    let reference: QuestionRef = payload["actions"][0]["value"]
        .as_str()
        .and_then(|v| serde_json::from_str(v).ok())
        .ok_or_else(|| Refusal::new(StatusCode::BAD_REQUEST, "This button names no task."))?;
    let (record, request) = open_question(board, &person.caller, &reference).await?;
    let message = match (
        payload["channel"]["id"]
            .as_str()
            .or(payload["container"]["channel_id"].as_str()),
        payload["container"]["message_ts"].as_str(),
    ) {
        (Some(channel), Some(ts)) => Some(MessageRef {
            channel: channel.to_string(),
            ts: ts.to_string(),
        }),
        _ => None,
    };
    let meta = || ModalMeta {
        question: reference.clone(),
        c: message
            .as_ref()
            .map(|m| m.channel.clone())
            .unwrap_or_default(),
        ts: message.as_ref().map(|m| m.ts.clone()).unwrap_or_default(),
    };
    let yes_no = |decision: Decision| {
        outcome(decision, &request.method, &request.params).ok_or_else(|| {
            Refusal::new(
                StatusCode::CONFLICT,
                "This question is no longer a yes/no one; open it on the board.",
            )
        })
    };
    let answer = match (action_id, Answering::of(&request)) {
        (APPROVE, Answering::YesNo) => {
            Answer::new(yes_no(Decision::Approve)?, "Approved", "approve")
        }
        (REJECT, Answering::YesNo) => Answer::new(yes_no(Decision::Reject)?, "Rejected", "reject"),
        (APPROVE, Answering::Approval) => Answer::new(
            Outcome::Result {
                value: json!({"decision": "approve"}),
            },
            "Approved",
            "approve",
        ),
        (DECLINE, Answering::Form) => Answer::new(
            Outcome::Result {
                value: json!({"action": "decline"}),
            },
            "Declined",
            "decline",
        ),
        (REJECT, Answering::Approval) => {
            let view = modal::reason_view(&question_words(&request), &meta());
            return open_modal(slack, payload, view).await;
        }
        (ANSWER, Answering::Form) => {
            let view = modal::form_view(&request.params, &meta());
            return open_modal(slack, payload, view).await;
        }
        _ => {
            return Err(Refusal::new(
                StatusCode::CONFLICT,
                "This button does not fit the question; open it on the board.",
            ))
        }
    };
    give(
        board,
        slack,
        person,
        (&record, &reference.k, &request),
        answer,
        message,
    )
    .await
}

async fn open_modal(slack: &Slack, payload: &Value, view: Value) -> Result<(), Refusal> {
    let trigger = payload["trigger_id"].as_str().ok_or_else(|| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            "The click carries no trigger_id to open a form with.",
        )
    })?;
    slack.web().open_view(trigger, view).await.map_err(|e| {
        tracing::warn!(error = %e, "slack: opening a modal failed");
        Refusal::new(
            StatusCode::BAD_GATEWAY,
            "The form could not be opened in Slack; try again, or answer on the board.",
        )
    })
}

/// A modal's submission: a form's values, or a reject reason.
async fn view_submission(board: &Board, slack: &Slack, payload: &Value) -> Response {
    let view = &payload["view"];
    let callback = view["callback_id"].as_str().unwrap_or("");
    if callback != modal::FORM && callback != modal::REASON {
        return StatusCode::OK.into_response();
    }
    let Some(meta) = view["private_metadata"]
        .as_str()
        .and_then(|m| serde_json::from_str::<ModalMeta>(m).ok())
    else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "the modal's private_metadata names no question"})),
        )
            .into_response();
    };
    let user = payload["user"]["id"].as_str().unwrap_or("");
    let person = match person(board, slack, payload) {
        Ok(person) => person,
        Err(refusal) => {
            audit_refused(Some(user), None, Some(&meta.question.t), &refusal.text);
            return Json(modal::refusal(&first_block(callback, None), &refusal.text))
                .into_response();
        }
    };
    match submit(board, slack, &person, view, &meta, callback).await {
        Ok(()) => StatusCode::OK.into_response(),
        Err(errors) => Json(errors).into_response(),
    }
}

fn first_block(callback: &str, request: Option<&InputRequest>) -> String {
    match (callback, request) {
        (modal::FORM, Some(r)) => modal::first_block(&r.params["requestedSchema"]),
        _ => modal::REASON_BLOCK.to_string(),
    }
}

async fn submit(
    board: &Board,
    slack: &Slack,
    person: &Person,
    view: &Value,
    meta: &ModalMeta,
    callback: &str,
) -> Result<(), Value> {
    let refused = |request: Option<&InputRequest>, refusal: Refusal| {
        audit_refused(
            Some(&person.slack_user),
            Some(&person.caller.principal),
            Some(&meta.question.t),
            &refusal.text,
        );
        modal::refusal(&first_block(callback, request), &refusal.text)
    };
    let (record, request) = open_question(board, &person.caller, &meta.question)
        .await
        .map_err(|r| refused(None, r))?;
    let values = &view["state"]["values"];
    let answer = match (callback, Answering::of(&request)) {
        (modal::FORM, Answering::Form) => {
            let schema = &request.params["requestedSchema"];
            let content = modal::content(schema, values);
            validate_answer(schema, &content).map_err(|e| modal::errors(schema, &e))?;
            Answer::new(
                Outcome::Result {
                    value: json!({"action": "accept", "content": content}),
                },
                "Answered",
                "accept",
            )
        }
        (modal::REASON, Answering::Approval) => {
            let Some(reason) = modal::reason(values) else {
                return Err(modal::refusal(
                    modal::REASON_BLOCK,
                    "Say why: the agent is told the reason.",
                ));
            };
            Answer {
                outcome: Outcome::Result {
                    value: json!({"decision": "reject", "reason": reason}),
                },
                verdict: "Rejected",
                reason: Some(reason),
                action: "reject",
            }
        }
        _ => {
            return Err(refused(
                Some(&request),
                Refusal::new(
                    StatusCode::CONFLICT,
                    "The question changed; open it on the board.",
                ),
            ))
        }
    };
    let message = (!meta.c.is_empty() && !meta.ts.is_empty()).then(|| MessageRef {
        channel: meta.c.clone(),
        ts: meta.ts.clone(),
    });
    give(
        board,
        slack,
        person,
        (&record, &meta.question.k, &request),
        answer,
        message,
    )
    .await
    .map_err(|r| refused(Some(&request), r))
}
