//! Which mails a task's change makes, and what they say.
//!
//! One mail per person per assigned question (the people its assignment stands for,
//! less those it excepts: an approver who already voted), while it is open; one mail
//! per such person when the task ends, with the outcome. A person's first mail about a
//! task is the thread's root; every later one answers it (`In-Reply-To`,
//! `References`, a `Re:` subject), so a mail client shows one conversation per task.

use chrono::{DateTime, Utc};
use mcp_tasks_engine::{InputRequest, TaskRecord};
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_server::approvals::APPROVAL_METHOD;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

use super::EmailConfig;
use crate::html::escape;
use crate::links::{fingerprint, AnswerLinks, Recipient};
use crate::view::{question_text, tool_error_text, tool_of};
use crate::Board;

/// One mail to write into the outbox: its delivery key and what the sender needs.
#[derive(Debug, Clone)]
pub(crate) struct Mail {
    /// The outbox key: the same mail is written once whoever writes it.
    pub(crate) key: String,
    /// `{to, name, subject, messageId, inReplyTo, text, html}`.
    pub(crate) payload: Value,
}

/// Where the links in a mail point and what signs them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Places<'a> {
    /// The board's public address, for the task's link and the answer links.
    pub(crate) public_url: Option<&'a str>,
    /// The key of the answer links.
    pub(crate) links: Option<&'a AnswerLinks>,
}

/// The mails `record` (as it is now) makes; `expand` gives the people a list of
/// principals and groups stands for.
pub(crate) fn mails(
    record: &TaskRecord,
    email: &EmailConfig,
    places: Places<'_>,
    expand: &dyn Fn(&[String]) -> Vec<String>,
    now: DateTime<Utc>,
) -> Vec<Mail> {
    let mut questions: Vec<(&String, &InputRequest)> = record
        .input_requests
        .iter()
        .filter(|(_, q)| q.assignment.is_some())
        .collect();
    // `approval-0`, `approval-1`, … in the order asked.
    questions.sort_by_key(|(key, _)| {
        key.rsplit('-')
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(u64::MAX)
    });
    // Each person's first question: the root of their thread.
    let mut first: BTreeMap<String, String> = BTreeMap::new();
    let mut people_of: Vec<(&String, &InputRequest, Vec<String>)> = Vec::new();
    for (key, q) in questions {
        let Some(a) = &q.assignment else { continue };
        let people: Vec<String> = expand(&a.to)
            .into_iter()
            .filter(|p| !a.except.contains(p))
            .collect();
        for p in &people {
            first.entry(p.clone()).or_insert_with(|| key.clone());
        }
        people_of.push((key, q, people));
    }
    let thread = Thread {
        record,
        domain: email.domain(),
    };
    let mut out = Vec::new();
    let address = |person: &str| {
        let found = email.people.email_of(person);
        if found.is_none() {
            tracing::warn!(task_id = %record.id, person, "email: no address for this person ([people] or the identity provider); they are not mailed");
        }
        found
    };
    // An approval round nobody decided by its deadline and that was escalated: its
    // people are told who is asked now (the new round's people get their own mail).
    let now_asked: Vec<String> = record
        .input_requests
        .values()
        .filter(|r| r.is_outstanding())
        .filter_map(|r| r.assignment.as_ref())
        .flat_map(|a| a.to.iter().cloned())
        .collect();
    for (key, q, people) in &people_of {
        // Told once the next round is asked (a later change of the task, if not yet).
        if now_asked.is_empty() {
            break;
        }
        let escalated = matches!(q.answer.as_ref(), Some(mcp_tasks_engine::Outcome::Result { value })
            if value["decision"] == "escalate" && value["answeredBy"]["via"] == "deadline");
        if !escalated {
            continue;
        }
        for person in people {
            let Some(to) = address(person) else { continue };
            let (text, html) = escalated_body(record, q, &now_asked, places);
            out.push(Mail {
                key: format!("{}:{key}:escalated:email:{person}", record.id),
                payload: thread.payload(
                    &to,
                    person,
                    &format!("{key}.escalated"),
                    false,
                    first.get(person),
                    text,
                    html,
                ),
            });
        }
    }
    if record.status == TaskStatus::InputRequired {
        for (key, q, people) in &people_of {
            if !q.is_outstanding() {
                continue;
            }
            for person in people {
                let Some(to) = address(person) else { continue };
                let root = first.get(person).map(String::as_str) == Some(key.as_str());
                let links = links_for(record, key, q, person, places, now);
                let (text, html) = question_body(record, q, person, &links, places);
                out.push(Mail {
                    key: format!("{}:{key}:email:{person}:{}", record.id, fingerprint(q)),
                    payload: thread.payload(&to, person, key, root, first.get(person), text, html),
                });
            }
        }
    } else if record.status.is_terminal() {
        for (person, root_key) in &first {
            let Some(to) = address(person) else { continue };
            let (text, html) = outcome_body(record, places);
            out.push(Mail {
                key: format!("{}:end:email:{person}", record.id),
                payload: thread.payload(&to, person, "end", false, Some(root_key), text, html),
            });
        }
    }
    out
}

/// The headers that make a task's mails one conversation per person.
struct Thread<'a> {
    record: &'a TaskRecord,
    domain: String,
}

impl Thread<'_> {
    fn message_id(&self, part: &str, person: &str) -> String {
        let who = hex::encode(&Sha256::digest(person.as_bytes())[..4]);
        format!("<{}.{part}.{who}@{}>", self.record.id, self.domain)
    }

    #[allow(clippy::too_many_arguments)]
    fn payload(
        &self,
        to: &str,
        person: &str,
        part: &str,
        root: bool,
        root_key: Option<&String>,
        text: String,
        html: String,
    ) -> Value {
        let id8: String = self.record.id.as_str().chars().take(8).collect();
        let subject = format!("[mcp-tasks] {} (task {id8})", tool_of(self.record));
        let in_reply_to = (!root)
            .then(|| root_key.map(|k| self.message_id(k, person)))
            .flatten();
        json!({
            "to": to,
            "name": person,
            "subject": if in_reply_to.is_some() { format!("Re: {subject}") } else { subject },
            "messageId": self.message_id(part, person),
            "inReplyTo": in_reply_to,
            "text": text,
            "html": html,
        })
    }
}

/// The approve / reject (yes / no) links of question `key` for `person`, if it is a
/// yes/no question and links can be made.
fn links_for(
    record: &TaskRecord,
    key: &str,
    q: &InputRequest,
    person: &str,
    places: Places<'_>,
    now: DateTime<Utc>,
) -> Option<Value> {
    let (Some(public_url), Some(links)) = (places.public_url, places.links) else {
        return None;
    };
    let recipient = Recipient {
        public_url,
        task: record.id.as_str(),
        assignee: Some(person),
        ttl: None,
        channel: Some("email"),
    };
    links.for_question(&recipient, key, q, now)
}

/// Text and HTML of the mail asking `person` question `q`.
fn question_body(
    record: &TaskRecord,
    q: &InputRequest,
    person: &str,
    links: &Option<Value>,
    places: Places<'_>,
) -> (String, String) {
    let approval = q.method == APPROVAL_METHOD;
    let p = &q.params;
    let tool = tool_of(record);
    let message = question_text(&q.method, p);
    let mut lines: Vec<(String, String)> = Vec::new(); // (label, value)
    let headline = if approval {
        if p["escalated"] == true {
            format!("Escalated to you: {message}")
        } else {
            format!("Approval needed: {message}")
        }
    } else {
        format!("A question for you: {message}")
    };
    lines.push(("Tool".into(), tool.clone()));
    let args = if approval {
        p["arguments"].clone()
    } else {
        record.request.field("arguments").unwrap_or(json!({}))
    };
    let args_text = serde_json::to_string_pretty(&args).unwrap_or_default();
    lines.push(("Asked by".into(), record.owner.clone()));
    if approval {
        let approvers = names(&p["approvers"]);
        let required = p["required"].as_u64().unwrap_or(1);
        let so_far = names(&p["approvedBy"]);
        let mut who = format!("{approvers} ({required} must approve)");
        if !so_far.is_empty() {
            who.push_str(&format!("; approved so far by {so_far}"));
        }
        lines.push(("Approvers".into(), who));
        if let Some(by) = p["changed"]["by"].as_str() {
            lines.push((
                "Changed".into(),
                format!(
                    "{by} changed the arguments (from {}): this is a new approval",
                    p["changed"]["from"]
                ),
            ));
        }
    }
    let deadline = q.deadline.as_ref().map_or_else(
        || "none (it waits as long as the task lives)".to_string(),
        |d| d.at.format("%Y-%m-%d %H:%M UTC").to_string(),
    );
    lines.push(("Deadline".into(), deadline));
    let form = (!approval)
        .then(|| p.get("requestedSchema").cloned())
        .flatten()
        .filter(|s| s["properties"].as_object().is_some_and(|o| !o.is_empty()));
    let (yes, no) = if approval {
        ("Approve", "Reject")
    } else {
        ("Yes", "No")
    };
    let board = places
        .public_url
        .map(|url| Board::task_link(url, record.id.as_str()));

    let mut text = format!("{headline}\n\n");
    for (label, value) in &lines {
        text.push_str(&format!("{label}: {value}\n"));
    }
    text.push_str(&format!("Arguments:\n{args_text}\n"));
    if let Some(form) = &form {
        text.push_str(&format!(
            "\nThe form to fill in (on the board):\n{}\n",
            serde_json::to_string_pretty(form).unwrap_or_default()
        ));
    }
    let mut html = format!(
        "<!doctype html><html><body style=\"font-family:sans-serif\">\n<h2>{}</h2>\n<table>\n",
        escape(&headline)
    );
    for (label, value) in &lines {
        html.push_str(&format!(
            "<tr><th align=\"left\">{}</th><td>{}</td></tr>\n",
            escape(label),
            escape(value)
        ));
    }
    html.push_str(&format!(
        "</table>\n<p>Arguments:</p>\n<pre>{}</pre>\n",
        escape(&args_text)
    ));
    if let Some(form) = &form {
        html.push_str(&format!(
            "<p>The form to fill in (on the board):</p>\n<pre>{}</pre>\n",
            escape(&serde_json::to_string_pretty(form).unwrap_or_default())
        ));
    }
    match links {
        Some(l) => {
            let (approve, reject) = (
                l["approve"].as_str().unwrap_or_default(),
                l["reject"].as_str().unwrap_or_default(),
            );
            text.push_str(&format!("\n{yes}: {approve}\n{no}: {reject}\n"));
            text.push_str(&format!(
                "Each link works once, answers as {person}, and expires at {}.\n",
                l["expiresAt"].as_str().unwrap_or("its deadline")
            ));
            html.push_str(&format!(
                "<p><a href=\"{}\" style=\"background:#1a7f37;color:#fff;padding:8px 16px;text-decoration:none;border-radius:4px\">{yes}</a> \
                 <a href=\"{}\" style=\"background:#cf222e;color:#fff;padding:8px 16px;text-decoration:none;border-radius:4px\">{no}</a></p>\n\
                 <p><small>Each link works once, answers as {}, and expires at {}.</small></p>\n",
                escape(approve),
                escape(reject),
                escape(person),
                escape(l["expiresAt"].as_str().unwrap_or("its deadline"))
            ));
        }
        None => {
            text.push_str("\nAnswer it on the task board.\n");
            html.push_str("<p>Answer it on the task board.</p>\n");
        }
    }
    if let Some(board) = &board {
        text.push_str(&format!("Open the task on the board: {board}\n"));
        html.push_str(&format!(
            "<p><a href=\"{}\">Open the task on the board</a></p>\n",
            escape(board)
        ));
    }
    html.push_str("</body></html>\n");
    (text, html)
}

/// Text and HTML of the mail telling an approval's people that nobody decided by its
/// deadline and who is asked now.
fn escalated_body(
    record: &TaskRecord,
    q: &InputRequest,
    now_asked: &[String],
    places: Places<'_>,
) -> (String, String) {
    let tool = tool_of(record);
    let line = format!(
        "Nobody decided \"{}\" by its deadline, so it was escalated to {}. You no longer need to answer it.",
        question_text(&q.method, &q.params),
        now_asked.join(", ")
    );
    let board = places
        .public_url
        .map(|url| Board::task_link(url, record.id.as_str()));
    let mut text = format!("Task {tool}: {line}\n");
    let mut html = format!(
        "<!doctype html><html><body style=\"font-family:sans-serif\">\n<p>Task {}: {}</p>\n",
        escape(&tool),
        escape(&line)
    );
    if let Some(board) = &board {
        text.push_str(&format!("Open the task on the board: {board}\n"));
        html.push_str(&format!(
            "<p><a href=\"{}\">Open the task on the board</a></p>\n",
            escape(board)
        ));
    }
    html.push_str("</body></html>\n");
    (text, html)
}

/// Text and HTML of the mail saying how the task ended and who decided what.
fn outcome_body(record: &TaskRecord, places: Places<'_>) -> (String, String) {
    let tool = tool_of(record);
    let error = tool_error_text(record);
    let status = match (&error, record.status) {
        (Some(_), _) | (None, TaskStatus::Failed) => "failed",
        (None, TaskStatus::Completed) => "completed",
        (None, TaskStatus::Cancelled) => "was cancelled",
        (None, _) => "ended",
    };
    let mut lines = vec![format!("The task {tool} {status}.")];
    if let Some(message) = &record.status_message {
        lines.push(message.clone());
    }
    if let Some(error) = &error {
        lines.push(format!("The tool said: {error}"));
    }
    let mut answered: Vec<(&String, &InputRequest)> = record
        .input_requests
        .iter()
        .filter(|(_, q)| q.assignment.is_some())
        .collect();
    answered.sort_by_key(|(k, _)| k.as_str());
    for (key, q) in answered {
        let decided = match (&q.answered_by, &q.answer) {
            (Some(by), Some(answer)) => {
                let what = match answer {
                    mcp_tasks_engine::Outcome::Result { value } => value["decision"]
                        .as_str()
                        .or_else(|| value["action"].as_str())
                        .unwrap_or("answered")
                        .to_string(),
                    _ => "answered".to_string(),
                };
                if by.via == "deadline" {
                    format!("{key}: nobody decided by the deadline ({what})")
                } else {
                    format!(
                        "{key}: {what} by {} via {} at {}",
                        by.principal,
                        by.via,
                        by.at.format("%Y-%m-%d %H:%M UTC")
                    )
                }
            }
            _ => format!("{key}: not answered"),
        };
        lines.push(decided);
    }
    let board = places
        .public_url
        .map(|url| Board::task_link(url, record.id.as_str()));
    let mut text = lines.join("\n");
    text.push('\n');
    let mut html = String::from("<!doctype html><html><body style=\"font-family:sans-serif\">\n");
    for line in &lines {
        html.push_str(&format!("<p>{}</p>\n", escape(line)));
    }
    if let Some(board) = &board {
        text.push_str(&format!("Open the task on the board: {board}\n"));
        html.push_str(&format!(
            "<p><a href=\"{}\">Open the task on the board</a></p>\n",
            escape(board)
        ));
    }
    html.push_str("</body></html>\n");
    (text, html)
}

/// A JSON list of names as `a, b`.
fn names(list: &Value) -> String {
    list.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}
