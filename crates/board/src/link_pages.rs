//! `/board/answer/{token}`: the pages behind a signed answer link ([`crate::links`]).
//!
//! `GET` only shows what the link would do and a button (link scanners and mail
//! previews fetch URLs; a fetch must change nothing); `POST` answers through the
//! engine, as the link's assignee, exactly as the board's own answer does. Every
//! refusal (altered, expired, used, another assignee's, a question that changed or a
//! task that ended) is a page saying so, and changes nothing.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use chrono::Utc;
use mcp_tasks_engine::{Caller, EngineError, TaskRecord};
use mcp_tasks_protocol::TaskId;

use crate::html::escape;
use crate::links::{fingerprint, outcome, Claims, TokenError};
use crate::view::{question_text, tool_of};
use crate::Board;

/// The name an answer by a link without an assignee is recorded under.
const NO_ASSIGNEE: &str = "answer-link";

/// A page saying why the link does nothing (and that nothing changed).
fn refused(status: StatusCode, title: &str, why: &str) -> Response {
    let body = format!(
        "<main class=\"link\">\n<h1>{}</h1>\n<p>{}</p>\n<p>Nothing was changed.</p>\n</main>",
        escape(title),
        escape(why)
    );
    crate::pages::link_page(status, title, &body)
}

/// The claims of `token` and the task it names, or the page refusing it.
async fn check(
    board: &Board,
    headers: &HeaderMap,
    token: &str,
) -> Result<(Claims, Caller, TaskRecord), Response> {
    let Some(links) = board.config().answer_links.as_ref() else {
        return Err(refused(
            StatusCode::NOT_FOUND,
            "No answer links here",
            "This server does not send answer links.",
        ));
    };
    let claims = links.open(token, Utc::now()).map_err(|e| match e {
        TokenError::Invalid => refused(
            StatusCode::FORBIDDEN,
            "This link is not valid",
            "It was altered or cut short, or it was made by a server that no longer holds its key (a restart without a board secret). Open the task on the board instead.",
        ),
        TokenError::Expired(at) => refused(
            StatusCode::GONE,
            "This link has expired",
            &format!(
                "It was valid until {}. Open the task on the board instead.",
                chrono::DateTime::<Utc>::from_timestamp(at, 0)
                    .map(|t| t.to_rfc3339())
                    .unwrap_or_default()
            ),
        ),
    })?;
    let assignee = claims.w.clone();
    if let (Some(principal), Some(assignee)) = (board.logged_in_principal(headers), &assignee) {
        if &principal != assignee {
            return Err(refused(
                StatusCode::FORBIDDEN,
                "This link is someone else's",
                &format!(
                    "It was sent to {assignee}, and you are logged in as {principal}. Answer on the board if the task is yours to answer."
                ),
            ));
        }
    }
    // The link is the authority: it acts as its assignee on the one question it names.
    let caller = match assignee {
        Some(a) => board.person_caller(&a).as_operator(),
        None => Caller::anonymous(NO_ASSIGNEE, None).as_operator(),
    };
    let id = TaskId::from_string(claims.t.clone());
    let record = board
        .server()
        .engine()
        .get_for_person(&id, &caller)
        .await
        .map_err(|e| engine_refused(&e))?;
    let question = record.input_requests.get(&claims.k);
    match question {
        Some(q) if !q.is_outstanding() => Err(already()),
        None => Err(already()),
        Some(q) if fingerprint(q) != claims.q => Err(refused(
            StatusCode::CONFLICT,
            "The question changed",
            "The task asks something else now than when this link was sent. Open the task on the board.",
        )),
        Some(_) if record.status.is_terminal() => Err(refused(
            StatusCode::CONFLICT,
            "The task already ended",
            &format!("It is {} now; there is nothing left to answer.", record.status.as_str()),
        )),
        Some(_) => Ok((claims, caller, record)),
    }
}

fn already() -> Response {
    refused(
        StatusCode::CONFLICT,
        "Already answered",
        "This question no longer waits for an answer: it was answered (by this link, another one, the board or the agent's client), or the task moved on. A link works once.",
    )
}

fn engine_refused(error: &EngineError) -> Response {
    match error {
        EngineError::NotFound => refused(
            StatusCode::NOT_FOUND,
            "No such task",
            "The task no longer exists (it expired or was removed).",
        ),
        EngineError::AlreadyTerminal(status) => refused(
            StatusCode::CONFLICT,
            "The task already ended",
            &format!("It is {status} now; there is nothing left to answer."),
        ),
        // An approval whose approvers the link's assignee is not among.
        EngineError::NotAllowed(why) => refused(StatusCode::FORBIDDEN, "Not yours to answer", why),
        other => {
            tracing::warn!(error = %other, "answer link: the task store could not answer");
            refused(
                StatusCode::SERVICE_UNAVAILABLE,
                "Try again",
                "The task store could not answer just now.",
            )
        }
    }
}

/// `GET /board/answer/{token}`: what the link would do, and the button that does it.
pub(crate) async fn confirm(
    State(board): State<Board>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Response {
    let (claims, caller, record) = match check(&board, &headers, &token).await {
        Ok(checked) => checked,
        Err(page) => return page,
    };
    let question = record
        .input_requests
        .get(&claims.k)
        .map(|q| question_text(&q.method, &q.params))
        .unwrap_or_default();
    let verb = claims.d.verb();
    let body = format!(
        "<main class=\"link\">\n<h1>{verb}?</h1>\n<p>Task <strong>{tool}</strong> (<code>{id}</code>) asks:</p>\n\
         <blockquote>{question}</blockquote>\n<p>Answering as <strong>{who}</strong>. The link works once.</p>\n\
         <form method=\"post\" action=\"/board/answer/{token}\">\n\
         <button type=\"submit\" class=\"{class}\">{verb}</button>\n</form>\n</main>",
        tool = escape(&tool_of(&record)),
        id = escape(record.id.as_str()),
        question = escape(&question),
        who = escape(&caller.principal),
        token = escape(&token),
        class = if verb == "Approve" { "primary" } else { "danger" },
    );
    crate::pages::link_page(StatusCode::OK, verb, &body)
}

/// `POST /board/answer/{token}`: answers the question through the engine as the
/// link's assignee, once.
pub(crate) async fn answer(
    State(board): State<Board>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Response {
    if let Err(refusal) = board.check_origin(&headers) {
        return refused(refusal.status, "Refused", &refusal.message);
    }
    let (claims, caller, record) = match check(&board, &headers, &token).await {
        Ok(checked) => checked,
        Err(page) => return page,
    };
    let Some(answer) = record
        .input_requests
        .get(&claims.k)
        .and_then(|q| outcome(claims.d, &q.method, &q.params))
    else {
        return refused(
            StatusCode::CONFLICT,
            "The question changed",
            "This question cannot be answered by a link. Open the task on the board.",
        );
    };
    let id = record.id.clone();
    match board
        .server()
        .engine()
        .answer_input_as(&id, &claims.k, answer, &caller, claims.via())
        .await
    {
        Ok(true) => {}
        Ok(false) => return already(),
        Err(e) => return engine_refused(&e),
    }
    tracing::info!(
        target: "mcp_tasks::audit",
        event = "board_action",
        action = %format!("answer:{}", claims.d.verb().to_ascii_lowercase()),
        channel = "answer_link",
        via = claims.via(),
        task_id = %id,
        actor = %caller.principal,
        owner = %record.owner,
        "answer link used"
    );
    let verb = match claims.d.verb() {
        "Approve" => "Approved",
        _ => "Rejected",
    };
    let body = format!(
        "<main class=\"link\">\n<h1>{verb}</h1>\n<p>Task <strong>{tool}</strong> (<code>{id}</code>) got your answer and carries on.</p>\n</main>",
        tool = escape(&tool_of(&record)),
        id = escape(id.as_str()),
    );
    crate::pages::link_page(StatusCode::OK, verb, &body)
}
