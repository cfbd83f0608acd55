//! Tasks as the page shows them: a summary per row of the list, and the detail of one
//! task with its questions. Only what a person needs; the owner only for operators.

use chrono::{DateTime, Utc};
use mcp_tasks_engine::{Attempt, Outcome, Progress, ResultReading, TaskRecord};
use mcp_tasks_protocol::methods::{ELICITATION_CREATE, SAMPLING_CREATE_MESSAGE};
use mcp_tasks_server::mcp_results::McpResults;
use mcp_tasks_store::TimelineEntry;
use serde_json::{json, Map, Value};

/// The tool a task runs: the `name` of a `tools/call`, else the method itself.
pub(crate) fn tool_of(record: &TaskRecord) -> String {
    record
        .request
        .name()
        .map(String::from)
        .unwrap_or_else(|| record.method.clone())
}

pub(crate) fn millis(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

/// The text of a tool error (the first text of a result flagged `isError`), or `None`
/// when the task did not end with one. Such a task is `completed` in the engine and on
/// the extension wire, `failed` on 2025-11-25; the board, like the CLI, calls it a
/// "tool error" and shows the tool's own words.
pub(crate) fn tool_error_text(record: &TaskRecord) -> Option<String> {
    let Some(Outcome::Result { value }) = record.outcome.as_deref() else {
        return None;
    };
    if !McpResults.result_reports_error(value) {
        return None;
    }
    let text = value["content"]
        .as_array()
        .and_then(|c| c.iter().find_map(|b| b["text"].as_str()))
        .unwrap_or("the tool gave no details");
    Some(text.to_string())
}

/// The state a person reads for `record`, and the list's tabs and filters use: a tool
/// error is `failed` (as the CLI and the 2025-11-25 wire call it), whatever status the
/// wire it ran on gave it; else its status.
pub(crate) fn shown_state(record: &TaskRecord) -> &'static str {
    if record.status.is_terminal()
        && record.status != mcp_tasks_protocol::TaskStatus::Cancelled
        && tool_error_text(record).is_some()
    {
        "failed"
    } else {
        record.status.as_str()
    }
}

/// One row of the list. `toolError` holds the text of a tool error (see
/// [`tool_error_text`]), `null` otherwise; `state` is what a person reads
/// ([`shown_state`]); the owner is there when `show_owner` (an operator, on a board with
/// sign-in: without it every owner is an anonymous session, which says nothing).
pub(crate) fn summary(record: &TaskRecord, progress: Option<&Progress>, show_owner: bool) -> Value {
    let mut row = json!({
        "id": record.id.as_str(),
        "status": record.status.as_str(),
        "state": shown_state(record),
        "toolError": tool_error_text(record),
        "tool": tool_of(record),
        "statusMessage": record.status_message,
        "createdAt": millis(record.created_at),
        "updatedAt": millis(record.last_updated_at),
        "expiresAt": record.expires_at.map(millis),
        "questions": record.input_requests.values().filter(|r| r.is_outstanding()).count(),
        "progress": progress.map(progress_json),
    });
    if show_owner {
        row["owner"] = json!(record.owner);
    }
    row
}

/// A progress report as the page reads it.
pub(crate) fn progress_json(progress: &Progress) -> Value {
    json!({
        "progress": progress.progress,
        "total": progress.total,
        "message": progress.message,
    })
}

/// The `_meta` key (a draft of the MCP spec) under which a call names tasks it relates
/// to: advisory, never an error.
pub(crate) const RELATED_TASK_IDS: &str = "io.modelcontextprotocol/relatedTaskIds";

/// Most related tasks a detail pane links to.
const MAX_RELATED: usize = 20;

/// The task ids a request's `_meta` names as related ([`RELATED_TASK_IDS`]): strings
/// that could be task ids (1 to 128 characters of letters, digits, `-` and `_`), at
/// most [`MAX_RELATED`], each once. Anything else there is ignored: the key is advisory.
pub(crate) fn related_task_ids(meta: Option<&Value>) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    let listed = meta
        .and_then(|m| m.get(RELATED_TASK_IDS))
        .and_then(Value::as_array);
    for id in listed.into_iter().flatten().filter_map(Value::as_str) {
        let plausible = (1..=128).contains(&id.len())
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if plausible && !ids.iter().any(|known| known == id) && ids.len() < MAX_RELATED {
            ids.push(id.to_string());
        }
    }
    ids
}

/// Everything the detail pane shows.
pub(crate) fn detail(
    record: &TaskRecord,
    progress: Option<&Progress>,
    timeline: &[TimelineEntry],
    attempts: &[Attempt],
    show_owner: bool,
    now: DateTime<Utc>,
) -> Value {
    let mut detail = summary(record, progress, show_owner);
    detail["arguments"] = record
        .request
        .field("arguments")
        .unwrap_or_else(|| json!({}));
    detail["relatedTaskIds"] = json!(related_task_ids(record.request.field("_meta").as_ref()));
    // Status changes and the attempts after the first (takeovers, retries), in time
    // order; an attempt shows as an entry of its own kind.
    let mut entries: Vec<(DateTime<Utc>, Value)> = timeline
        .iter()
        .map(|entry| {
            (
                entry.at,
                json!({
                    "version": entry.version,
                    "at": millis(entry.at),
                    "status": entry.status.as_str(),
                    "statusMessage": entry.status_message,
                }),
            )
        })
        .collect();
    entries.extend(attempts.iter().map(|a| {
        (
            a.at,
            json!({
                "at": millis(a.at),
                "status": "attempt",
                "attempt": a.number,
                "reason": a.reason,
                "from": a.from,
                "to": a.to,
                "statusMessage": a.describe(),
            }),
        )
    }));
    entries.sort_by_key(|(at, _)| *at);
    // A tool error ends the timeline as one: "tool error", not "completed". Its words
    // are shown once, above the timeline.
    if detail["toolError"].is_string() && record.status == mcp_tasks_protocol::TaskStatus::Completed
    {
        if let Some((_, last)) = entries
            .iter_mut()
            .rev()
            .find(|(_, e)| e["status"] == "completed")
        {
            last["label"] = json!("tool error");
            last["statusMessage"] = json!("the tool reported an error (its words are above)");
        }
    }
    detail["timeline"] = entries.into_iter().map(|(_, v)| v).collect();
    detail["ttlLeftMs"] = json!(record
        .expires_at
        .map(|at| (at - now).num_milliseconds().max(0)));
    let (result, error) = match record.outcome.as_deref() {
        None => (Value::Null, Value::Null),
        Some(Outcome::Result { value }) => (value.clone(), Value::Null),
        Some(Outcome::Error { code, message, .. }) => {
            (Value::Null, json!({ "code": code, "message": message }))
        }
        Some(Outcome::Failed { failure, message }) => (
            Value::Null,
            json!({ "failure": failure.as_str(), "message": message }),
        ),
    };
    detail["result"] = result;
    detail["error"] = error;
    detail["questions"] = record
        .input_requests
        .iter()
        .filter(|(_, request)| request.is_outstanding())
        .map(|(key, request)| question(key, &request.method, &request.params))
        .collect();
    detail
}

/// What kind of question an input request is, as the page renders it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QuestionKind {
    /// An elicitation with a form (`requestedSchema`).
    Form,
    /// An elicitation that sends the person to a URL.
    Url,
    /// A sampling request: the person writes the model's reply.
    Sampling,
    /// An approval ([`mcp_tasks_server::approvals`]): approve (maybe with changed
    /// arguments) or reject with a reason.
    Approval,
    /// Anything else (roots): shown, not answerable here.
    Other,
}

impl QuestionKind {
    pub(crate) fn of(method: &str, params: &Value) -> Self {
        match method {
            ELICITATION_CREATE if params["mode"] == "url" || params["url"].is_string() => {
                QuestionKind::Url
            }
            ELICITATION_CREATE => QuestionKind::Form,
            SAMPLING_CREATE_MESSAGE => QuestionKind::Sampling,
            mcp_tasks_server::approvals::APPROVAL_METHOD => QuestionKind::Approval,
            _ => QuestionKind::Other,
        }
    }

    fn name(self) -> &'static str {
        match self {
            QuestionKind::Form => "form",
            QuestionKind::Url => "url",
            QuestionKind::Sampling => "sampling",
            QuestionKind::Approval => "approval",
            QuestionKind::Other => "other",
        }
    }
}

/// One pending question: what the page needs to render it, and nothing it does not.
pub(crate) fn question(key: &str, method: &str, params: &Value) -> Value {
    let kind = QuestionKind::of(method, params);
    let mut q = Map::new();
    q.insert("key".into(), json!(key));
    q.insert("method".into(), json!(method));
    q.insert("kind".into(), json!(kind.name()));
    q.insert("message".into(), json!(question_text(method, params)));
    let copy = |q: &mut Map<String, Value>, field: &str| {
        if let Some(v) = params.get(field) {
            q.insert(field.into(), v.clone());
        }
    };
    match kind {
        QuestionKind::Form => copy(&mut q, "requestedSchema"),
        QuestionKind::Url => copy(&mut q, "url"),
        QuestionKind::Sampling => {
            for field in ["messages", "systemPrompt", "maxTokens"] {
                copy(&mut q, field);
            }
        }
        QuestionKind::Approval => {
            for field in [
                "tool",
                "arguments",
                "approvers",
                "required",
                "approvedBy",
                "allowEdit",
                "escalated",
                "argumentsHash",
                "changed",
            ] {
                copy(&mut q, field);
            }
        }
        QuestionKind::Other => {}
    }
    Value::Object(q)
}

/// A question in one line of text (the notification's "questions' messages").
pub(crate) fn question_text(method: &str, params: &Value) -> String {
    match QuestionKind::of(method, params) {
        QuestionKind::Form | QuestionKind::Url => params["message"]
            .as_str()
            .unwrap_or("the task asks a question")
            .to_string(),
        QuestionKind::Sampling => {
            let last = params["messages"]
                .as_array()
                .and_then(|m| m.last())
                .and_then(|m| m["content"]["text"].as_str());
            match last {
                Some(text) => format!("the task asks for a model reply to: {text}"),
                None => "the task asks for a model reply".to_string(),
            }
        }
        QuestionKind::Approval => params["message"]
            .as_str()
            .unwrap_or("the call waits for approval")
            .to_string(),
        QuestionKind::Other => format!("the task asks the client for '{method}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_tasks_protocol::{TaskId, TaskStatus};

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap_or_default()
    }

    /// The detail's timeline shows takeovers and retries among the status changes, in
    /// time order, saying from which process to which.
    #[test]
    fn related_task_ids_are_advisory_and_only_plausible_ids_are_kept() {
        let meta = json!({ RELATED_TASK_IDS: ["abc123", "abc123", "x y", 7, "<script>", "d-e_f"] });
        assert_eq!(related_task_ids(Some(&meta)), vec!["abc123", "d-e_f"]);
        for junk in [
            json!({ RELATED_TASK_IDS: 42 }),
            json!({ RELATED_TASK_IDS: "abc" }),
            json!({}),
        ] {
            assert!(related_task_ids(Some(&junk)).is_empty(), "{junk}");
        }
        assert!(related_task_ids(None).is_empty());
        let many: Vec<String> = (0..50).map(|i| format!("t{i}")).collect();
        assert_eq!(
            related_task_ids(Some(&json!({ RELATED_TASK_IDS: many }))).len(),
            20
        );
    }

    #[test]
    fn attempts_join_the_timeline_in_time_order() {
        let record = TaskRecord {
            id: TaskId::generate(),
            owner: "o".into(),
            session: None,
            status: TaskStatus::Working,
            status_message: None,
            created_at: at(0),
            last_updated_at: at(0),
            ttl: None,
            expires_at: None,
            poll_interval: None,
            method: "tools/call".into(),
            request: json!({"name": "pipeline"}).into(),
            outcome: None,
            runner: None,
            version: 1,
            input_requests: Default::default(),
            lease_until: None,
            lease_generation: 0,
            external: None,
        };
        let timeline = [
            TimelineEntry {
                task: record.id.clone(),
                version: 1,
                at: at(0),
                status: TaskStatus::Working,
                status_message: None,
            },
            TimelineEntry {
                task: record.id.clone(),
                version: 5,
                at: at(9_000),
                status: TaskStatus::Completed,
                status_message: None,
            },
        ];
        let attempts = [Attempt {
            number: 2,
            at: at(5_000),
            reason: "takeover".into(),
            from: Some("aaaaaaaaaaaa".into()),
            to: Some("bbbbbbbbbbbb".into()),
            error: None,
        }];
        let detail = detail(&record, None, &timeline, &attempts, false, at(10_000));
        let kinds: Vec<&str> = detail["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["status"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["working", "attempt", "completed"]);
        let said = detail["timeline"][1]["statusMessage"].as_str().unwrap();
        assert!(
            said.contains("attempt 2") && said.contains("bbbbbbbb") && said.contains("aaaaaaaa"),
            "{said}"
        );
    }
}
