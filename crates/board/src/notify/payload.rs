//! The bodies webhooks receive.
//!
//! Our JSON event:
//!
//! ```json
//! {
//!   "event": "task.input_required",
//!   "task": { "id": "…", "tool": "deploy", "status": "input_required", "toolError": null,
//!             "statusMessage": "…", "owner": "alice", "createdAt": "…", "updatedAt": "…" },
//!   "questions": ["Deploy to production?"],
//!   "link": "https://tasks.example.com/board/tasks/…",
//!   "answers": [{ "question": "…", "message": "Deploy to production?", "assignee": "alice",
//!                 "approve": "https://…/board/answer/…", "reject": "https://…/board/answer/…",
//!                 "expiresAt": "…" }]
//! }
//! ```
//!
//! `answers` is there only for a sink with `answer_links`, on a waiting task, and lists
//! its yes/no questions (see [`crate::links`]).
//!
//! A task that ended with a tool error (a result flagged `isError`) is a `task.failed`
//! event with `status: "failed"` and the tool's words in `toolError`, as the CLI and the
//! board tell it. `link` is null when no `--public-url` is configured. Slack's shape is one `text`
//! with the same facts and a `<link|Open on the task board>`.

use chrono::{DateTime, Utc};
use mcp_tasks_engine::TaskRecord;
use mcp_tasks_protocol::TaskStatus;
use serde_json::{json, Value};

use super::{NotifyConfig, NotifyFormat, NotifySink};
use crate::links::Recipient;
use crate::view::{question_text, tool_error_text, tool_of};
use crate::Board;

/// The signed answer links of `record`'s outstanding yes/no questions for `sink`, when
/// it wants them and the task waits.
fn answers(
    record: &TaskRecord,
    sink: &NotifySink,
    config: &NotifyConfig,
    now: DateTime<Utc>,
) -> Vec<Value> {
    let (true, Some(links), Some(public_url), TaskStatus::InputRequired) = (
        sink.answer_links,
        config.answer_links.as_ref(),
        config.public_url.as_deref(),
        record.status,
    ) else {
        return Vec::new();
    };
    let recipient = Recipient {
        public_url,
        task: record.id.as_str(),
        assignee: sink.assignee.as_deref(),
        ttl: sink.answer_link_ttl,
        // A button in Teams records its answer as given there.
        channel: (sink.format == NotifyFormat::Teams).then_some("teams"),
    };
    record
        .input_requests
        .iter()
        .filter(|(_, r)| r.is_outstanding())
        .filter_map(|(key, request)| links.for_question(&recipient, key, request, now))
        .collect()
}

/// The body of the event for `record` to `sink`.
pub(crate) fn body(
    record: &TaskRecord,
    sink: &NotifySink,
    config: &NotifyConfig,
    now: DateTime<Utc>,
) -> Value {
    let public_url = config.public_url.as_deref();
    let format = sink.format;
    let answers = answers(record, sink, config, now);
    let link = public_url.map(|url| Board::task_link(url, record.id.as_str()));
    let questions: Vec<String> = record
        .input_requests
        .values()
        .filter(|r| r.is_outstanding())
        .map(|r| question_text(&r.method, &r.params))
        .collect();
    // A tool error reads as a failure with the tool's words, as in the CLI's JSON.
    let tool_error = tool_error_text(record);
    let status = match &tool_error {
        Some(_) => TaskStatus::Failed.as_str(),
        None => record.status.as_str(),
    };
    match format {
        NotifyFormat::Json if !answers.is_empty() => {
            let mut event = json_event(record, status, tool_error, questions, link);
            event["answers"] = Value::Array(answers);
            event
        }
        NotifyFormat::Json => json_event(record, status, tool_error, questions, link),
        NotifyFormat::Slack => json!({
            "text": slack_text(record, tool_error.as_deref(), &questions, link.as_deref(), &answers)
        }),
        NotifyFormat::Teams => {
            super::teams::message(record, tool_error.as_deref(), &answers, link.as_deref())
        }
    }
}

/// Our JSON event, without `answers`.
fn json_event(
    record: &TaskRecord,
    status: &str,
    tool_error: Option<String>,
    questions: Vec<String>,
    link: Option<String>,
) -> Value {
    json!({
        "event": format!("task.{status}"),
        "task": {
            "id": record.id.as_str(),
            "tool": tool_of(record),
            "status": status,
            "toolError": tool_error,
            "statusMessage": record.status_message,
            "owner": record.owner,
            "createdAt": record.created_at.to_rfc3339(),
            "updatedAt": record.last_updated_at.to_rfc3339(),
        },
        "questions": questions,
        "link": link,
    })
}

/// Slack's mrkdwn treats `&`, `<` and `>` as markup.
fn slack_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn slack_text(
    record: &TaskRecord,
    tool_error: Option<&str>,
    questions: &[String],
    link: Option<&str>,
    answers: &[Value],
) -> String {
    let tool = slack_escape(&tool_of(record));
    let headline = match record.status {
        TaskStatus::Completed if tool_error.is_some() => {
            format!(":x: Task *{tool}* ended with a tool error")
        }
        TaskStatus::InputRequired => format!(":raising_hand: Task *{tool}* needs an answer"),
        TaskStatus::Failed => format!(":x: Task *{tool}* failed"),
        TaskStatus::Completed => format!(":white_check_mark: Task *{tool}* completed"),
        TaskStatus::Cancelled => format!(":no_entry_sign: Task *{tool}* was cancelled"),
        TaskStatus::Working => format!("Task *{tool}* is working"),
    };
    let mut text = headline;
    for question in questions {
        text.push_str(&format!("\n> {}", slack_escape(question)));
    }
    if let Some(message) = &record.status_message {
        if questions.is_empty() {
            text.push_str(&format!("\n{}", slack_escape(message)));
        }
    }
    for answer in answers {
        if let (Some(approve), Some(reject)) =
            (answer["approve"].as_str(), answer["reject"].as_str())
        {
            text.push_str(&format!("\n<{approve}|Approve> · <{reject}|Reject>"));
        }
    }
    match link {
        Some(link) => text.push_str(&format!("\n<{link}|Open on the task board>")),
        None => text.push_str(&format!("\ntask `{}`", record.id)),
    }
    text
}
