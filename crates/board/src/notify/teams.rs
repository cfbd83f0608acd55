//! Microsoft Teams: the body a Teams Workflows webhook ("Post to a channel when a
//! webhook request is received") takes, a message with one Adaptive Card (version
//! [`CARD_VERSION`]): the task, each waiting question with its arguments, who asked and
//! its deadline, Approve / Reject buttons that open the signed one-time links, and a
//! button to the task on the board.

use mcp_tasks_engine::TaskRecord;
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_server::approvals::APPROVAL_METHOD;
use serde_json::{json, Value};

use crate::view::{question_text, tool_of};

/// The Adaptive Card schema version the cards are written against (Teams renders 1.5).
pub const CARD_VERSION: &str = "1.5";

/// The webhook body for `record`: `answers` are the question's signed links (see
/// [`crate::links`]), `link` the task's board page.
pub(crate) fn message(
    record: &TaskRecord,
    tool_error: Option<&str>,
    answers: &[Value],
    link: Option<&str>,
) -> Value {
    let tool = tool_of(record);
    let headline = match record.status {
        TaskStatus::Completed if tool_error.is_some() => {
            format!("Task {tool} ended with a tool error")
        }
        TaskStatus::InputRequired => format!("Task {tool} needs a decision"),
        TaskStatus::Failed => format!("Task {tool} failed"),
        TaskStatus::Completed => format!("Task {tool} completed"),
        TaskStatus::Cancelled => format!("Task {tool} was cancelled"),
        TaskStatus::Working => format!("Task {tool} is working"),
    };
    let mut body = vec![
        json!({"type": "TextBlock", "text": headline, "weight": "Bolder", "size": "Medium", "wrap": true}),
        json!({"type": "FactSet", "facts": [
            {"title": "Tool", "value": tool},
            {"title": "Asked by", "value": record.owner},
            {"title": "Task", "value": record.id.as_str()},
        ]}),
    ];
    if let Some(error) = tool_error {
        body.push(json!({"type": "TextBlock", "text": error, "wrap": true, "color": "Attention"}));
    } else if let (Some(message), false) = (
        &record.status_message,
        record.status == TaskStatus::InputRequired,
    ) {
        body.push(json!({"type": "TextBlock", "text": message, "wrap": true}));
    }
    if record.status == TaskStatus::InputRequired {
        let mut open: Vec<_> = record
            .input_requests
            .iter()
            .filter(|(_, q)| q.is_outstanding())
            .collect();
        open.sort_by_key(|(k, _)| k.as_str());
        for (key, q) in open {
            let approval = q.method == APPROVAL_METHOD;
            let arguments = if approval {
                q.params["arguments"].clone()
            } else {
                record.request.field("arguments").unwrap_or(json!({}))
            };
            let mut facts = vec![json!({
                "title": "Deadline",
                "value": q.deadline.as_ref().map_or_else(
                    || "none".to_string(),
                    |d| d.at.format("%Y-%m-%d %H:%M UTC").to_string(),
                ),
            })];
            if let Some(a) = &q.assignment {
                facts.push(json!({"title": "For", "value": a.to.join(", ")}));
            }
            if approval {
                facts.push(
                    json!({"title": "Approvals needed", "value": q.params["required"].to_string()}),
                );
            }
            let mut items = vec![
                json!({"type": "TextBlock", "text": question_text(&q.method, &q.params), "wrap": true, "weight": "Bolder"}),
                json!({"type": "FactSet", "facts": facts}),
                json!({"type": "TextBlock", "text": "Arguments", "isSubtle": true, "spacing": "Small"}),
                json!({"type": "TextBlock", "text": serde_json::to_string_pretty(&arguments).unwrap_or_default(), "fontType": "Monospace", "wrap": true}),
            ];
            let links = answers.iter().find(|a| a["question"] == key.as_str());
            match links {
                Some(l) => {
                    let (yes, no) = if approval {
                        ("Approve", "Reject")
                    } else {
                        ("Yes", "No")
                    };
                    items.push(json!({"type": "ActionSet", "actions": [
                        {"type": "Action.OpenUrl", "title": yes, "url": l["approve"], "style": "positive"},
                        {"type": "Action.OpenUrl", "title": no, "url": l["reject"], "style": "destructive"},
                    ]}));
                    items.push(json!({"type": "TextBlock", "isSubtle": true, "size": "Small", "wrap": true,
                        "text": format!("Each button works once{}.", l["assignee"].as_str().map(|a| format!(" and answers as {a}")).unwrap_or_default())}));
                }
                None => items.push(json!({"type": "TextBlock", "text": "Answer it on the task board.", "wrap": true})),
            }
            body.push(json!({"type": "Container", "separator": true, "items": items}));
        }
    }
    let mut card = json!({
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": CARD_VERSION,
        "body": body,
    });
    if let Some(link) = link {
        card["actions"] =
            json!([{"type": "Action.OpenUrl", "title": "Open on the task board", "url": link}]);
    }
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "contentUrl": null,
            "content": card,
        }],
    })
}
