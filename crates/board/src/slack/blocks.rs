//! The Block Kit messages: a waiting question with its buttons, and the same message
//! once answered (the verdict, who, when; no buttons left).
//!
//! Every button's `value` is a [`QuestionRef`]: the task, the question's key and its
//! fingerprint ([`crate::links::fingerprint`]), so a click names exactly the question as
//! it was posted, whichever replica receives it and also after a restart.

use chrono::{DateTime, Utc};
use mcp_tasks_engine::{InputRequest, TaskRecord};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::links::approval_content;
use crate::view::{question_text, tool_of, QuestionKind};
use crate::Board;

/// `action_id` of the Approve button (a yes/no question, or an approval).
pub(crate) const APPROVE: &str = "mcp_tasks.approve";
/// `action_id` of the Reject button (declines a yes/no question; an approval's opens
/// the reason modal).
pub(crate) const REJECT: &str = "mcp_tasks.reject";
/// `action_id` of the "Answer…" button of a form (opens the form's modal).
pub(crate) const ANSWER: &str = "mcp_tasks.answer";
/// `action_id` of the Decline button of a form.
pub(crate) const DECLINE: &str = "mcp_tasks.decline";
/// `action_id` of the link button to the board (Slack reports its clicks too).
pub(crate) const OPEN: &str = "mcp_tasks.open";

/// The longest text a section block takes is 3000 characters; questions are cut
/// shorter, with room for the markup around them.
const MAX_TEXT: usize = 2500;

/// Which question a button (or a modal) is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct QuestionRef {
    /// The task.
    pub(crate) t: String,
    /// The question's key.
    pub(crate) k: String,
    /// The question's fingerprint as posted.
    pub(crate) q: String,
}

/// How a question is answered from Slack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answering {
    /// An elicitation whose answer is yes or no ([`approval_content`]): Approve /
    /// Reject.
    YesNo,
    /// An elicitation with a form: "Answer…" (a modal) / Decline.
    Form,
    /// An approval question: Approve / Reject (a modal asking why).
    Approval,
    /// Anything else (sampling, URL elicitation): answered on the board only.
    BoardOnly,
}

impl Answering {
    /// How `request` is answered from Slack.
    pub(crate) fn of(request: &InputRequest) -> Self {
        match QuestionKind::of(&request.method, &request.params) {
            QuestionKind::Approval => Answering::Approval,
            QuestionKind::Form if approval_content(&request.method, &request.params).is_some() => {
                Answering::YesNo
            }
            QuestionKind::Form => Answering::Form,
            _ => Answering::BoardOnly,
        }
    }
}

/// Escapes the three characters Slack's `mrkdwn` and plain text reserve.
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `text` cut to at most `max` characters (an ellipsis marks the cut).
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// A question's words as a person reads them (as the board shows them).
pub(crate) fn question_words(request: &InputRequest) -> String {
    question_text(&request.method, &request.params)
}

/// Principals or groups as a list for a person: "alice, ops".
fn names(value: &Value) -> String {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(escape)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

fn button(text: &str, action_id: &str, value: &str, style: Option<&str>) -> Value {
    let mut b = json!({
        "type": "button",
        "text": {"type": "plain_text", "text": text},
        "action_id": action_id,
        "value": value,
    });
    if let Some(style) = style {
        b["style"] = json!(style);
    }
    b
}

/// The blocks that say what is asked: the tool and the question, an approval's
/// arguments, and the task's id with its board link.
fn question_blocks(
    record: &TaskRecord,
    request: &InputRequest,
    public_url: Option<&str>,
) -> Vec<Value> {
    let tool = tool_of(record);
    let words = cut(&question_words(request), MAX_TEXT);
    let mut blocks = vec![json!({
        "type": "section",
        "text": {"type": "mrkdwn", "text": format!("*{}* asks:\n>{}", escape(&tool), escape(&words).replace('\n', "\n>"))},
    })];
    if Answering::of(request) == Answering::Approval {
        let params = &request.params;
        let arguments = serde_json::to_string_pretty(&params["arguments"]).unwrap_or_default();
        let mut who = format!("Approvers: {}", names(&params["approvers"]));
        let required = params["required"].as_u64().unwrap_or(1);
        if required > 1 {
            let given = params["approvedBy"].as_array().map_or(0, Vec::len);
            who.push_str(&format!(" · {required} approvals needed, {given} given"));
            if given > 0 {
                who.push_str(&format!(" ({})", names(&params["approvedBy"])));
            }
        }
        if params["allowEdit"] == true {
            who.push_str(" · the arguments can be changed on the board");
        }
        blocks.push(json!({
            "type": "section",
            "text": {"type": "mrkdwn", "text": format!("Arguments:\n```{}```\n{who}", escape(&cut(&arguments, MAX_TEXT)))},
        }));
    }
    let mut context = format!("Task `{}`", escape(record.id.as_str()));
    if let Some(url) = public_url {
        context.push_str(&format!(
            " · <{}|Open on the task board>",
            Board::task_link(url, record.id.as_str())
        ));
    }
    blocks.push(json!({
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": context}],
    }));
    blocks
}

/// The message for the waiting question `key` of `record`: its text (the
/// notification's fallback) and its blocks with the buttons that answer it.
pub(crate) fn question_message(
    record: &TaskRecord,
    key: &str,
    request: &InputRequest,
    public_url: Option<&str>,
) -> (String, Value) {
    let reference = QuestionRef {
        t: record.id.as_str().to_string(),
        k: key.to_string(),
        q: crate::links::fingerprint(request),
    };
    let value = serde_json::to_string(&reference).unwrap_or_default();
    let mut buttons = match Answering::of(request) {
        Answering::YesNo | Answering::Approval => vec![
            button("Approve", APPROVE, &value, Some("primary")),
            button("Reject", REJECT, &value, Some("danger")),
        ],
        Answering::Form => vec![
            button("Answer…", ANSWER, &value, Some("primary")),
            button("Decline", DECLINE, &value, None),
        ],
        Answering::BoardOnly => Vec::new(),
    };
    if let Some(url) = public_url {
        let mut open = button("Open on the board", OPEN, &value, None);
        open["url"] = json!(Board::task_link(url, record.id.as_str()));
        buttons.push(open);
    }
    let mut blocks = question_blocks(record, request, public_url);
    if !buttons.is_empty() {
        blocks.push(
            json!({"type": "actions", "block_id": "mcp_tasks.question", "elements": buttons}),
        );
    }
    let text = format!(
        "{} asks: {}",
        tool_of(record),
        cut(&question_words(request), 300)
    );
    (text, Value::Array(blocks))
}

/// What became of a question, for the updated message.
#[derive(Debug, Clone)]
pub(crate) struct Verdict {
    /// "Approved", "Rejected", "Answered", "Declined".
    pub(crate) what: &'static str,
    /// The principal who answered.
    pub(crate) who: String,
    /// When.
    pub(crate) at: DateTime<Utc>,
    /// The reason given with a rejection.
    pub(crate) reason: Option<String>,
}

impl Verdict {
    /// "Approved by @alice at 10:02 UTC" (with the reason after a `:`), in plain text.
    pub(crate) fn plain(&self) -> String {
        let mut text = format!(
            "{} by @{} at {}",
            self.what,
            self.who,
            self.at.format("%H:%M UTC")
        );
        if let Some(reason) = &self.reason {
            text.push_str(&format!(": {reason}"));
        }
        text
    }

    /// The same in `mrkdwn`: the time in each reader's own time zone (Slack's date
    /// formatting), the plain UTC time as its fallback.
    fn mrkdwn(&self) -> String {
        let mut text = format!(
            "*{}* by @{} at <!date^{}^{{time}}|{}>",
            self.what,
            escape(&self.who),
            self.at.timestamp(),
            self.at.format("%H:%M UTC")
        );
        if let Some(reason) = &self.reason {
            text.push_str(&format!(": {}", escape(&cut(reason, MAX_TEXT))));
        }
        text
    }
}

/// The message once its question is answered: what was asked, the verdict, no buttons.
pub(crate) fn answered_message(
    record: &TaskRecord,
    request: &InputRequest,
    public_url: Option<&str>,
    verdict: &Verdict,
) -> (String, Value) {
    let mut blocks = question_blocks(record, request, public_url);
    blocks.push(json!({
        "type": "section",
        "text": {"type": "mrkdwn", "text": verdict.mrkdwn()},
    }));
    let text = format!("{}: {}", tool_of(record), verdict.plain());
    (text, Value::Array(blocks))
}

/// The message once its question no longer waits for another reason (answered on the
/// board or by the agent's client, or the task ended): no buttons.
pub(crate) fn settled_message(
    record: &TaskRecord,
    request: &InputRequest,
    public_url: Option<&str>,
) -> (String, Value) {
    let why = if record.status.is_terminal() {
        format!("The task ended ({}).", record.status.as_str())
    } else {
        "No longer waiting: answered elsewhere (the board or the agent's client).".to_string()
    };
    let mut blocks = question_blocks(record, request, public_url);
    blocks.push(json!({
        "type": "section",
        "text": {"type": "mrkdwn", "text": format!("_{why}_")},
    }));
    (format!("{}: {why}", tool_of(record)), Value::Array(blocks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_cut() {
        assert_eq!(escape("<a> & b"), "&lt;a&gt; &amp; b");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
    }

    #[test]
    fn questions_are_answered_as_their_kind_allows() {
        let yes_no = InputRequest::new(
            "elicitation/create",
            json!({"message": "Go?", "requestedSchema": {"type": "object", "properties": {}}}),
        );
        assert_eq!(Answering::of(&yes_no), Answering::YesNo);
        let form = InputRequest::new(
            "elicitation/create",
            json!({"message": "Who?", "requestedSchema": {"type": "object",
                "properties": {"name": {"type": "string"}}, "required": ["name"]}}),
        );
        assert_eq!(Answering::of(&form), Answering::Form);
        let approval = InputRequest::new(
            mcp_tasks_server::approvals::APPROVAL_METHOD,
            json!({"message": "Deploy?", "tool": "deploy"}),
        );
        assert_eq!(Answering::of(&approval), Answering::Approval);
        assert_eq!(question_words(&approval), "Deploy?");
        let sampling = InputRequest::new("sampling/createMessage", json!({}));
        assert_eq!(Answering::of(&sampling), Answering::BoardOnly);
    }

    #[test]
    fn a_verdict_names_who_and_when() {
        let at = DateTime::parse_from_rfc3339("2026-11-26T10:02:30Z")
            .unwrap()
            .with_timezone(&Utc);
        let verdict = Verdict {
            what: "Rejected",
            who: "alice".into(),
            at,
            reason: Some("not <today>".into()),
        };
        assert_eq!(
            verdict.plain(),
            "Rejected by @alice at 10:02 UTC: not <today>"
        );
        let mrkdwn = verdict.mrkdwn();
        assert!(mrkdwn.contains("<!date^"), "{mrkdwn}");
        assert!(mrkdwn.ends_with(": not &lt;today&gt;"), "{mrkdwn}");
    }
}
