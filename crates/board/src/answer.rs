//! A person's answer to a pending question: checked against the question (a form's
//! `requestedSchema`, with the one check every answer path uses,
//! [`mcp_tasks_protocol::answer::validate_answer`], whatever the page checked) and
//! turned into the answer a client would have sent, for
//! [`mcp_tasks_engine::Engine::answer_input`] (which checks it once more, as it does
//! every answer).

use mcp_tasks_engine::Outcome;
use mcp_tasks_protocol::answer;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::view::QuestionKind;

/// What the page posts.
#[derive(Debug, Deserialize)]
pub(crate) struct AnswerForm {
    /// The question's key (from the task's detail).
    pub(crate) key: String,
    /// `accept`, `decline` or `cancel` (elicitation); `reply` or `reject` (sampling).
    pub(crate) action: String,
    /// The form's values, for `accept` of a form.
    #[serde(default)]
    pub(crate) content: Option<Map<String, Value>>,
    /// The reply, for `reply` to a sampling request.
    #[serde(default)]
    pub(crate) text: Option<String>,
    /// Why, for `reject` of an approval (the model reads it).
    #[serde(default)]
    pub(crate) reason: Option<String>,
    /// Changed arguments, for `approve` of an approval that allows editing.
    #[serde(default)]
    pub(crate) arguments: Option<Map<String, Value>>,
}

/// The answer the engine gets, or why the posted one cannot be used (for a person).
pub(crate) fn to_outcome(
    kind: QuestionKind,
    params: &Value,
    form: &AnswerForm,
    who: &str,
) -> Result<Outcome, String> {
    let action = form.action.as_str();
    match (kind, action) {
        (QuestionKind::Form, "accept") => {
            let content = form
                .content
                .clone()
                .ok_or("'accept' needs the form's values in 'content'")?;
            answer::validate_answer(&params["requestedSchema"], &content)
                .map_err(|e| plain_words(&e))?;
            Ok(result(json!({ "action": "accept", "content": content })))
        }
        (QuestionKind::Url, "accept") => Ok(result(json!({ "action": "accept" }))),
        (QuestionKind::Form | QuestionKind::Url, "decline" | "cancel") => {
            Ok(result(json!({ "action": action })))
        }
        (QuestionKind::Sampling, "reply") => {
            let text = form
                .text
                .as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .ok_or("'reply' needs the reply's text in 'text'")?;
            Ok(result(json!({
                "role": "assistant",
                "content": { "type": "text", "text": text },
                "model": format!("human ({who}, mcp-tasks board)"),
                "stopReason": "endTurn",
            })))
        }
        (QuestionKind::Sampling, "reject") => Ok(Outcome::Error {
            // The code MCP clients use when their user rejects a sampling request.
            code: -1,
            message: format!("the sampling request was rejected on the task board by {who}"),
            data: None,
        }),
        (QuestionKind::Approval, "approve") => {
            let mut vote = json!({ "decision": "approve" });
            if let Some(arguments) = &form.arguments {
                if params["allowEdit"] != Value::Bool(true) {
                    return Err("this approval does not allow changing the arguments".into());
                }
                vote["arguments"] = Value::Object(arguments.clone());
            }
            Ok(result(vote))
        }
        (QuestionKind::Approval, "reject") => {
            let reason = form
                .reason
                .as_deref()
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .ok_or("say why you reject the call: the reason goes back to the agent")?;
            Ok(result(json!({ "decision": "reject", "reason": reason })))
        }
        (QuestionKind::Approval, other) => Err(format!(
            "unknown action '{other}' for an approval: use approve or reject"
        )),
        (QuestionKind::Other, _) => Err(
            "this question cannot be answered on the board; the client that started the task answers it"
                .into(),
        ),
        (QuestionKind::Form | QuestionKind::Url, other) => Err(format!(
            "unknown action '{other}' for an elicitation: use accept, decline or cancel"
        )),
        (QuestionKind::Sampling, other) => Err(format!(
            "unknown action '{other}' for a sampling request: use reply or reject"
        )),
    }
}

/// A refused form answer in words for the person who filled it in: each problem as a
/// sentence that starts with the field's label (its `title`, else its key) and says
/// what is wrong, without quotes or the value echoed back ("Age must be at least 18.").
/// The engine's message (with the value, for API users) is
/// [`answer::AnswerError`]'s `Display`; this is the board's wording of the same
/// problems.
pub(crate) fn plain_words(error: &answer::AnswerError) -> String {
    let sentences: Vec<String> = error
        .problems
        .iter()
        .map(|p| {
            let problem = without_echo(&p.problem);
            let sentence = match &p.field {
                Some(field) => format!("{} {problem}", capitalized(field)),
                None => capitalized(problem),
            };
            if sentence.ends_with('.') {
                sentence
            } else {
                format!("{sentence}.")
            }
        })
        .collect();
    sentences.join(" ")
}

/// A problem without the value echoed at its end (" (got 12)").
fn without_echo(problem: &str) -> &str {
    match problem.rfind(" (got ") {
        Some(at) if problem.ends_with(')') => &problem[..at],
        _ => problem,
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn result(value: Value) -> Outcome {
    Outcome::Result { value }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "email": { "type": "string", "format": "email" },
                "age": { "type": "integer", "minimum": 18, "maximum": 120 },
                "day": { "type": "string", "format": "date" },
                "colours": { "type": "array", "items": { "enum": ["red", "green"] } },
                "ok": { "type": "boolean" }
            },
            "required": ["email", "age"]
        })
    }

    fn form(content: Value) -> Map<String, Value> {
        content.as_object().cloned().unwrap()
    }

    #[test]
    fn a_wrong_form_answer_is_refused_naming_the_field() {
        let params = json!({"message": "?", "requestedSchema": schema()});
        let wrong = AnswerForm {
            key: "k".into(),
            action: "accept".into(),
            content: Some(form(json!({"email": "a@b.co", "age": 12}))),
            text: None,
            reason: None,
            arguments: None,
        };
        let refused = to_outcome(QuestionKind::Form, &params, &wrong, "op").unwrap_err();
        assert_eq!(refused, "Age must be at least 18.");
        // The label is the field's title when it has one; every problem is named.
        let mut titled = schema();
        titled["properties"]["age"]["title"] = json!("Your age");
        titled["properties"]["email"]["title"] = json!("E-mail");
        let params = json!({"message": "?", "requestedSchema": titled});
        let both = AnswerForm {
            content: Some(form(json!({"age": 200}))),
            ..wrong
        };
        let refused = to_outcome(QuestionKind::Form, &params, &both, "op").unwrap_err();
        assert_eq!(refused, "E-mail is required. Your age must be at most 120.");
        assert!(
            !refused.contains('\'') && !refused.contains("got"),
            "{refused}"
        );
    }

    #[test]
    fn actions_become_the_answers_a_client_sends() {
        let params = json!({"message": "?", "requestedSchema": schema()});
        let answer = |action: &str, content: Option<Value>, text: Option<&str>| AnswerForm {
            key: "k".into(),
            action: action.into(),
            content: content.map(form),
            text: text.map(str::to_string),
            reason: None,
            arguments: None,
        };
        let accepted = to_outcome(
            QuestionKind::Form,
            &params,
            &answer("accept", Some(json!({"email": "a@b.co", "age": 40})), None),
            "op",
        )
        .unwrap();
        assert_eq!(
            accepted,
            Outcome::Result {
                value: json!({"action": "accept", "content": {"email": "a@b.co", "age": 40}})
            }
        );
        let declined = to_outcome(
            QuestionKind::Form,
            &params,
            &answer("decline", None, None),
            "op",
        );
        assert_eq!(
            declined.unwrap(),
            Outcome::Result {
                value: json!({"action": "decline"})
            }
        );
        assert!(to_outcome(
            QuestionKind::Form,
            &params,
            &answer("accept", None, None),
            "op"
        )
        .is_err());
        let reply = to_outcome(
            QuestionKind::Sampling,
            &json!({}),
            &answer("reply", None, Some("hi")),
            "op",
        )
        .unwrap();
        let Outcome::Result { value } = reply else {
            panic!("a reply is a result")
        };
        assert_eq!(value["role"], "assistant");
        assert_eq!(value["content"]["text"], "hi");
        let rejected = to_outcome(
            QuestionKind::Sampling,
            &json!({}),
            &answer("reject", None, None),
            "op",
        )
        .unwrap();
        assert!(rejected.is_error());
        assert!(to_outcome(
            QuestionKind::Other,
            &json!({}),
            &answer("accept", None, None),
            "op"
        )
        .is_err());
    }
}
