//! Input requests of a synchronous `tools/call`: the tool's `elicit`, `create_message`
//! or `list_roots` goes to the client as a request of the server's own, on the call's
//! stream (the POST's SSE stream over HTTP, stdout over stdio), and the call waits for
//! the answer. This is how MCP clients without tasks are asked, so one tool works for
//! them and, as a task, for clients with tasks.

use mcp_tasks_engine::{ClientRequester, InputError};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;

use crate::questions::outgoing::Exchange;
use crate::questions::Questions;
use crate::session::Session;

/// The requester for one synchronous call. `stream` is the call's own stream; without
/// one (a POST that accepts only JSON) nothing can ask: the GET stream is for messages
/// unrelated to running requests. The wait is bounded by the engine's `input_timeout`,
/// as for a task's input requests: a person may be answering.
pub(crate) fn requester(
    questions: &Arc<Questions>,
    session: &Arc<Session>,
    stream: Option<mpsc::Sender<Value>>,
) -> ClientRequester {
    let questions = Arc::clone(questions);
    let session = Arc::clone(session);
    let timeout = questions.engine.config().input_timeout;
    Arc::new(move |method: &str, params: Value| {
        let questions = Arc::clone(&questions);
        let session = Arc::clone(&session);
        let stream = stream.clone();
        let method = method.to_string();
        Box::pin(async move {
            let mut asked = params.clone();
            for attempt in 1..=MAX_ASKS {
                let sent = questions
                    .outgoing
                    .exchange(
                        &session,
                        &method,
                        asked.clone(),
                        timeout,
                        |message| match &stream {
                            Some(tx) => tx.try_send(message).is_ok(),
                            None => false,
                        },
                    )
                    .await;
                let answer = sent.map_err(|e| refusal(e, &method, timeout))?;
                // The same check as every task's answer: the tool sees only an answer
                // that fits its question; a wrong one is asked again, saying why.
                match crate::answers::check_answer(&method, &params, &answer) {
                    Ok(()) => return Ok(answer),
                    Err(problem) if attempt < MAX_ASKS => {
                        let message = params["message"].as_str().unwrap_or_default();
                        asked["message"] = serde_json::json!(format!("{problem}\n\n{message}"));
                    }
                    Err(problem) => {
                        return Err(InputError::Malformed(format!(
                            "{problem} (asked {MAX_ASKS} times, never answered as the form asks)"
                        )))
                    }
                }
            }
            Err(InputError::Malformed("the question was never asked".into()))
        })
    })
}

/// How often a synchronous call asks one question before it gives up on answers that
/// do not fit the form.
const MAX_ASKS: u32 = 3;

/// The input error for an exchange that brought no answer.
fn refusal(e: Exchange, method: &str, timeout: std::time::Duration) -> InputError {
    match e {
        Exchange::NotSent => InputError::Unsupported(format!(
            "could not send {method} to the client: this call has no stream to carry it \
             (accept text/event-stream on the POST, or call the tool as a task)"
        )),
        Exchange::TimedOut => InputError::TimedOut {
            key: "synchronous call".to_string(),
            method: method.to_string(),
            after: timeout,
        },
        Exchange::Refused(e) => InputError::Rejected {
            code: e.code,
            message: e.message,
        },
    }
}
