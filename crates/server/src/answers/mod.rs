//! What a question's answer must look like, for every question the server asks: an
//! elicitation's answer against its form, an approval's vote (`approval`), what a
//! client must have declared to be asked, and an answer said in words for the
//! timeline. The engine's answer entry point ([`crate::mcp_results::McpResults`]),
//! a plain call's questions and both wires' input rounds check answers here, so one
//! answer is judged the same whichever way it came.

mod approval;

pub use approval::{check_answer as check_approval, describe_answer as describe_approval};

use mcp_tasks_protocol::answer;
use mcp_tasks_protocol::methods;
use serde_json::Value;

/// The method of an approval question. Not an MCP method: no client is ever asked it.
pub const APPROVAL_METHOD: &str = "mcp-tasks/approval";

/// Whether `answer` fits the question `method` with `params` asked: an elicitation's
/// answer is checked against its form ([`answer::check_elicit_result`]); other
/// questions (sampling, roots) are taken as they come.
pub fn check_answer(method: &str, params: &Value, answer: &Value) -> Result<(), String> {
    match method {
        methods::ELICITATION_CREATE => {
            answer::check_elicit_result(params, answer).map_err(|e| e.to_string())
        }
        APPROVAL_METHOD => check_approval(params, answer),
        _ => Ok(()),
    }
}

/// What a client must have declared at initialize to be asked `method`: form
/// elicitation needs `capabilities.elicitation`, URL mode `elicitation.url`, sampling
/// `sampling`, roots `roots`. Other methods are not checked.
pub fn check_input(caps: &Value, method: &str, params: &Value) -> Result<(), String> {
    let (path, what): (&[&str], &str) = match method {
        methods::ELICITATION_CREATE
            if params.get("mode").and_then(Value::as_str) == Some("url") =>
        {
            (
                &["elicitation", "url"],
                "URL-mode elicitation (capabilities.elicitation.url)",
            )
        }
        methods::ELICITATION_CREATE => (&["elicitation"], "elicitation (capabilities.elicitation)"),
        methods::SAMPLING_CREATE_MESSAGE => (&["sampling"], "sampling (capabilities.sampling)"),
        methods::ROOTS_LIST => (&["roots"], "roots (capabilities.roots)"),
        // An approval is for people (the approvers), never for a client.
        APPROVAL_METHOD => {
            return Err("an approval is answered by its approvers, not by the client".into())
        }
        _ => return Ok(()),
    };
    let mut at = caps;
    for p in path {
        match at.get(p) {
            Some(v) if !v.is_null() => at = v,
            _ => {
                return Err(format!(
                    "this tool needs the client to support {what}, which the client did not declare at initialize"
                ))
            }
        }
    }
    Ok(())
}

/// How long a question's own words may run in a status message before they are cut.
const MAX_QUESTION_CHARS: usize = 80;

/// A person's answer to an elicitation, in words for the timeline: what was asked
/// (the question's own message, cut at [`MAX_QUESTION_CHARS`]) and how it was
/// answered, never the question's internal key.
fn describe_elicitation_answer(params: &Value, answer: &mcp_tasks_engine::Outcome) -> String {
    let asked = params
        .get("message")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(|m| {
            let mut cut: String = m.chars().take(MAX_QUESTION_CHARS).collect();
            if cut.len() < m.len() {
                cut.push('…');
            }
            format!("\"{cut}\"")
        })
        .unwrap_or_else(|| "the question".to_string());
    let action = match answer {
        mcp_tasks_engine::Outcome::Result { value } => value
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or("accept"),
        _ => "error",
    };
    match action {
        "decline" => format!("{asked} declined"),
        "cancel" => format!("{asked} dismissed"),
        "error" => format!("{asked} refused"),
        _ => format!("{asked} answered"),
    }
}

/// A person's answer to the question `method` asked with `params`, in words for the
/// timeline (an elicitation, an approval, a sampling request); `None` for questions
/// not said in words.
pub fn describe_answer(
    method: &str,
    params: &Value,
    answer: &mcp_tasks_engine::Outcome,
) -> Option<String> {
    match method {
        APPROVAL_METHOD => describe_approval(params, answer),
        methods::ELICITATION_CREATE => Some(describe_elicitation_answer(params, answer)),
        methods::SAMPLING_CREATE_MESSAGE => Some(match answer {
            mcp_tasks_engine::Outcome::Result { .. } => "the model's reply given".to_string(),
            _ => "the model's reply refused".to_string(),
        }),
        _ => None,
    }
}
